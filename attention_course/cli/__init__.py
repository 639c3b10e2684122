"""The `attention-course` command line: a thin layer over the library."""
