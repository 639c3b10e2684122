"""Files students control are never followed (sandbox/safety.py): each kind of file that is not
a plain file or folder, and each size past its cap, refused with words that name it, before
anything reads it."""

from __future__ import annotations

import os
import socket
import stat
import time

import pytest

from attention_course.errors import SubmissionRefused
from attention_course.sandbox import safety

MiB = 1024**2


def refusal(folder, notebook_bytes: int = 32 * MiB) -> str:
    with pytest.raises(SubmissionRefused) as refused:
        safety.check_submission_folder(folder, notebook_bytes)
    return str(refused.value)


@pytest.fixture
def submission(tmp_path):
    folder = tmp_path / "submitted"
    (folder / "data").mkdir(parents=True)
    (folder / "work.ipynb").write_text("{}")
    (folder / "data" / "notes.txt").write_text("notes")
    return folder


def test_a_plain_submission_gives_its_files(submission):
    files = safety.check_submission_folder(submission, 32 * MiB)
    assert sorted(p.relative_to(submission).as_posix() for p in files) == [
        "data/notes.txt",
        "work.ipynb",
    ]


def make_fifo(path):
    os.mkfifo(path)


def make_socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()


def make_device(path):
    os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers


def make_link(path):
    path.symlink_to("/etc/passwd")


@pytest.mark.parametrize(
    "make, words",
    [
        (make_fifo, "a named pipe"),
        (make_socket, "a socket"),
        (make_device, "a device file"),
        (make_link, "a symbolic link"),
    ],
)
def test_every_file_that_is_not_plain_is_refused_by_name(submission, make, words):
    make(submission / "data" / "trap")
    start = time.monotonic()
    said = refusal(submission)
    assert said == f"the submission holds {words} (data/trap): refused"
    assert time.monotonic() - start < 5  # a pipe is looked at, never opened


def test_a_folder_that_is_a_link_or_missing_is_refused(tmp_path, submission):
    link = tmp_path / "linked"
    link.symlink_to(submission, target_is_directory=True)
    assert refusal(link) == f"the submission {link} is a symbolic link, not a folder"
    assert refusal(tmp_path / "gone") == f"the submission {tmp_path / 'gone'} does not exist"
    plain = submission / "work.ipynb"
    assert refusal(plain) == f"the submission {plain} is a special file, not a folder"


def test_two_hundred_files_are_a_submission_and_more_are_refused(submission):
    for i in range(198):  # with the two already there: 200
        (submission / "data" / f"f{i}").write_text("")
    assert len(safety.check_submission_folder(submission, 32 * MiB)) == 200
    (submission / "data" / "one more").write_text("")
    assert refusal(submission) == "the submission holds more than 200 files: refused"


def test_a_notebook_past_its_cap_is_refused_and_other_files_are_not_notebooks(submission):
    with open(submission / "work.ipynb", "wb") as f:
        f.truncate(3 * MiB + 1)  # sparse: no disk used
    with open(submission / "data" / "big.csv", "wb") as f:
        f.truncate(10 * MiB)
    assert refusal(submission, 3 * MiB) == (
        "work.ipynb is 3 MB, more than the 3 MB a notebook may be: refused"
    )
    with open(submission / "work.ipynb", "wb") as f:
        f.truncate(3 * MiB)  # exactly at the cap
    assert len(safety.check_submission_folder(submission, 3 * MiB)) == 3
    with open(submission / "work.ipynb", "wb") as f:  # sizes in MB of 1024 * 1024 bytes
        f.truncate(700 * MiB)
    assert refusal(submission, 600 * MiB) == (
        "work.ipynb is 700 MB, more than the 600 MB a notebook may be: refused"
    )


def test_a_folder_past_256_mb_in_all_is_refused(submission):
    for name, size in (("a.npy", 128 * MiB), ("b.npy", 128 * MiB - 7)):  # 7: the two others
        with open(submission / "data" / name, "wb") as f:
            f.truncate(size)
    assert len(safety.check_submission_folder(submission, 32 * MiB)) == 4  # 256 MB exactly
    with open(submission / "data" / "c.npy", "wb") as f:
        f.write(b"!")  # one byte more
    refusal(submission)
    with open(submission / "data" / "c.npy", "wb") as f:
        f.truncate(1 * MiB)
    assert refusal(submission) == "the submission holds 257 MB, more than 256 MB: refused"
    with open(submission / "data" / "c.npy", "wb") as f:  # sizes in MB of 1024 * 1024 bytes
        f.truncate(1000 * MiB)
    assert refusal(submission) == "the submission holds 1256 MB, more than 256 MB: refused"


def test_a_grading_folder_is_walked_the_same_way(tmp_path):
    folder = tmp_path / "autograded"
    folder.mkdir()
    (folder / "out.ipynb").write_text("{}")
    assert safety.check_tree(folder, "autograded/s1/a") == [folder / "out.ipynb"]
    os.mkfifo(folder / "pipe")
    with pytest.raises(SubmissionRefused, match=r"^autograded/s1/a holds a named pipe \(pipe\)"):
        safety.check_tree(folder, "autograded/s1/a")


def test_a_file_opened_for_grading_must_be_plain_and_reached_without_a_link(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("text")
    fd = safety.open_regular(plain)
    try:
        assert os.read(fd, 10) == b"text"
    finally:
        os.close(fd)
    (tmp_path / "link").symlink_to(plain)
    with pytest.raises(OSError):
        safety.open_regular(tmp_path / "link")
    os.mkfifo(tmp_path / "pipe")  # no writer: opening it without O_NONBLOCK would hang
    with pytest.raises(SubmissionRefused, match="is not a regular file"):
        safety.open_regular(tmp_path / "pipe")
    with pytest.raises(SubmissionRefused, match="is not a regular file"):
        safety.open_regular(tmp_path)
