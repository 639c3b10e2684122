"""Grading one submission: the hidden graders' harness, the notebook run, feedback, nbgrader's steps."""
