"""Nothing a student writes is followed: a named pipe, a socket or a device file in a submission
folder (or in a folder grading copies from) is refused before anything reads it, with a reason
that names what it is and where."""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from pathlib import Path

import nbformat
import pytest

from attention_course.errors import SubmissionRefused
from attention_course.grading.preprocessors import CheckSubmission
from attention_course.sandbox.safety import check_submission_folder, check_tree
from attention_course.settings import DEFAULT
from tests.course import COURSE_ROOT

ASSIGNMENT = "attention_basics"
KINDS = {"fifo": "a named pipe", "socket": "a socket", "device": "a device file"}


def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would wait for a writer for ever
    elif kind == "socket":  # bound at a short path (a socket's is at most 107 bytes), moved in
        short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(short))
        short.rename(path)
        short.parent.rmdir()
    else:
        if os.geteuid() != 0:
            pytest.skip("only root makes device files")
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 3))  # a /dev/null of its own
    assert not path.is_file() and os.path.lexists(path)


def _submission(tmp_path: Path) -> Path:
    folder = tmp_path / "submitted" / "someone" / ASSIGNMENT
    (folder / "data").mkdir(parents=True)
    released = COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    (folder / f"{ASSIGNMENT}.ipynb").write_bytes(released.read_bytes())
    return folder


@pytest.mark.parametrize("where", ["beside the notebook", "in a subfolder"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_special_file_in_a_submission_is_refused_with_the_reason(tmp_path, kind, where):
    folder = _submission(tmp_path)
    name = "answers.ipynb" if where == "beside the notebook" else "data/input"
    _special(folder / name, kind)
    reason = f"the submission holds {KINDS[kind]} ({name}): refused"
    with pytest.raises(SubmissionRefused) as refused:
        check_submission_folder(folder, DEFAULT.submission_bytes)
    assert str(refused.value) == reason
    # the same refusal where nbgrader reads the submission (its sanitizing pass)
    nb = nbformat.v4.new_notebook()
    with pytest.raises(SubmissionRefused, match=reason.replace("(", r"\(").replace(")", r"\)")):
        CheckSubmission().preprocess(nb, {"metadata": {"path": str(folder)}})


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_special_file_in_a_folder_grading_copies_from_is_refused(tmp_path, kind):
    folder = tmp_path / "feedback" / "someone" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.html").write_text("<p>feedback</p>")
    _special(folder / "extra", kind)
    with pytest.raises(SubmissionRefused, match=f"the feedback holds {KINDS[kind]} \\(extra\\)"):
        check_tree(folder, "the feedback")


def test_a_submission_of_regular_files_is_accepted(tmp_path):
    """The control: the same folder without the special file passes, every file listed."""
    folder = _submission(tmp_path)
    (folder / "data" / "input").write_text("1 2 3\n")
    found = check_submission_folder(folder, DEFAULT.submission_bytes)
    assert sorted(p.relative_to(folder).as_posix() for p in found) == [
        f"{ASSIGNMENT}.ipynb",
        "data/input",
    ]
