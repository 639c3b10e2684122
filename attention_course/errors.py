"""Errors every command reports as one line."""


class UserError(Exception):
    """Bad input from the user: reported as one line, exit code 2."""


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made on this machine; the message says why and how to fix it."""


class SubmissionRefused(ValueError):
    """A submission that is not graded at all (a link, a special file, too large); the message
    says why in words for the student and the instructor."""


class GradebookUnavailable(RuntimeError):
    """The gradebook cannot be reached (a PostgreSQL server that does not answer, a database
    that does not exist, a URL that names neither); the message says which, in one line."""
