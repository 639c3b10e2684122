"""Errors every command reports as one line."""


class UserError(Exception):
    """Bad input from the user: reported as one line, exit code 2."""
