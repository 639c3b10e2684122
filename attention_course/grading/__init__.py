"""Grading one submission: the graders' harness, the notebook run, feedback, nbgrader steps."""
