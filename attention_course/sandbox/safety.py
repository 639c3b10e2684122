"""Files that students control are never followed: every path grading touches is checked first.

Students write the submitted folder (and, through the exchange, what `collect` copies into it).
Before nbgrader reads, copies or chmods anything there, `check_submission_folder` walks it with
`lstat` and refuses a symbolic link, a special file (fifo, socket, device), an oversized
notebook, or a folder too large to be a submission. `check_tree` does the same for the folders
grading writes and later copies from (autograded/, feedback/).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from attention_course.errors import SubmissionRefused

MAX_FILES = 200
MAX_FOLDER_BYTES = 256 * 1024**2


def _describe(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    return "a special file"


def check_tree(folder: Path, what: str = "the folder") -> list[Path]:
    """Every regular file under `folder`; SubmissionRefused at the first link or special file
    (the folder itself included)."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        raise SubmissionRefused(f"{what} {folder} does not exist") from None
    if not stat.S_ISDIR(mode):
        raise SubmissionRefused(f"{what} {folder} is {_describe(mode)}, not a folder")
    files = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                rel = path.relative_to(folder)
                raise SubmissionRefused(f"{what} holds {_describe(mode)} ({rel}): refused")
            files.append(path)
            if len(files) > MAX_FILES:
                raise SubmissionRefused(f"{what} holds more than {MAX_FILES} files: refused")
    return files


def check_submission_folder(folder: Path, notebook_bytes: int) -> list[Path]:
    """The submission's regular files, or SubmissionRefused saying why it cannot be graded."""
    files = check_tree(folder, "the submission")
    total = 0
    for path in files:
        size = os.lstat(path).st_size
        total += size
        if path.suffix == ".ipynb" and size > notebook_bytes:
            raise SubmissionRefused(
                f"{path.name} is {size // 1024**2} MB, more than the "
                f"{notebook_bytes // 1024**2} MB a notebook may be: refused"
            )
    if total > MAX_FOLDER_BYTES:
        raise SubmissionRefused(
            f"the submission holds {total // 1024**2} MB, more than "
            f"{MAX_FOLDER_BYTES // 1024**2} MB: refused"
        )
    return files


def open_regular(path: Path, flags: int = os.O_RDONLY) -> int:
    """Open a file that must be a regular file reached without any link in its last step."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SubmissionRefused(f"{path} is not a regular file")
    return fd
