"""Where the course is deployed: Gradescope, the students' JupyterLab, the engine's wheel."""
