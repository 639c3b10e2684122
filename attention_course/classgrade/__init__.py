"""Grading a class: nbgrader's gradebook, incremental runs, parallel jobs and Dask workers."""
