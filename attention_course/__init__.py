"""attention-course: autograded nbgrader exercises and quizzes on the attention mechanism."""

__version__ = "0.2.0"
