"""Question banks: plain YAML data files, one quiz per file (a package only so they install)."""
