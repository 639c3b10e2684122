"""The instructor's LMS files, in the course folder's `lms/` (settings.LMS): the folder 0700 and
every file 0600, owned by the course folder's owner (the instructor) even when the hub (root)
writes them.

- the tool's private key (`lms keys` makes it; `lms push` signs its token requests with it);
- the launches the hub recorded: for each LMS user the student id and the LMS's ids, for each
  LMS course (context) its Assignment and Grade Services endpoint, for each link its assignment;
- the pushes: one JSON line per score the platform accepted (what `lms push` compares with);
- the hub's used launch nonces (a replayed launch is refused).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import threading
import time
from pathlib import Path
from typing import Any

from attention_course.errors import UserError
from attention_course.integrations.lms.identity import Decision
from attention_course.settings import LMS, Lms

FOLDER_MODE = 0o700
FILE_MODE = 0o600
# The hub records launches and nonces from threads: one read-modify-write at a time.
_WRITING = threading.Lock()


def folder(root: Path, settings: Lms = LMS) -> Path:
    """The course's LMS folder, made (0700, the course's owner's) if missing. A link in its
    place is refused: the hub writes here as root, and the folder is the instructor's."""
    path = root / settings.folder
    if not path.exists() and not path.is_symlink():
        path.mkdir(mode=FOLDER_MODE)
        _own(path, root)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != root.stat().st_uid:
        raise UserError(f"{path}: not a folder of the course's owner (a link is refused)")
    os.chmod(path, FOLDER_MODE, follow_symlinks=False)
    return path


def _own(path: Path, root: Path, fd: int | None = None) -> None:
    """`path` (or the open file `fd`) owned by whoever owns the course folder (the hub runs as
    root)."""
    if os.geteuid() == 0:
        st = root.stat()
        if fd is not None:
            os.fchown(fd, st.st_uid, st.st_gid)
        else:
            os.chown(path, st.st_uid, st.st_gid, follow_symlinks=False)


def write_private(path: Path, text: str, root: Path) -> None:
    """Write `path` whole or not at all, 0600 from its first byte, the course's owner's; in its
    folder as opened (no link followed: the folder is the instructor's, the writer may be
    root)."""
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    part = f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE,
                     dir_fd=directory)  # fmt: skip
        try:
            _own(path, root, fd)
            os.write(fd, text.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(part, path.name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part, dir_fd=directory)
        raise
    finally:
        os.close(directory)


def read_json(path: Path, default: Any) -> Any:
    """A JSON file of the folder (no link followed), or `default` when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return default
    except OSError as exc:
        raise UserError(f"{path}: not readable ({exc.strerror})") from None
    try:
        with os.fdopen(fd) as found:
            return json.loads(found.read())
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not readable ({exc})") from None


# ---- the launches


def record_launch(root: Path, decision: Decision, settings: Lms = LMS) -> None:
    """Add a launch to the course's record (the hub calls it for every accepted launch)."""
    with _WRITING:
        _record_launch(root, decision, settings)


def _record_launch(root: Path, decision: Decision, settings: Lms) -> None:
    path = folder(root, settings) / settings.launches_file
    book = read_json(path, {})
    now = time.time()
    users = book.setdefault("users", {})
    users[decision.sub] = {
        "student_id": decision.student_id,
        "instructor": decision.instructor,
        "context_id": decision.context_id,
        "lms_ids": {**users.get(decision.sub, {}).get("lms_ids", {}), **decision.lms_ids},
        "last_launch": now,
    }
    context = book.setdefault("contexts", {}).setdefault(decision.context_id, {})
    context.update(deployment_id=decision.deployment_id, last_launch=now)
    if decision.ags:
        context["ags"] = decision.ags
    if decision.resource_link_id:
        link = {"context_id": decision.context_id, "assignment": decision.assignment}
        if decision.ags and decision.ags.get("lineitem"):
            link["lineitem"] = decision.ags["lineitem"]
        book.setdefault("links", {})[decision.resource_link_id] = link
    write_private(path, json.dumps(book, indent=1, sort_keys=True) + "\n", root)


def launches(root: Path, settings: Lms = LMS) -> dict:
    """The launches the hub recorded ({} before the first)."""
    return read_json(root / settings.folder / settings.launches_file, {})


# ---- the nonces of launches already used


def use_nonce(root: Path, nonce: str, expires: float, settings: Lms = LMS) -> bool:
    """Record a launch's nonce; False if it was used before (a replay). Nonces are kept until
    their launch's id_token expires (no replay is possible after: the token is refused)."""
    with _WRITING:
        return _use_nonce(root, nonce, expires, settings)


def _use_nonce(root: Path, nonce: str, expires: float, settings: Lms) -> bool:
    path = folder(root, settings) / settings.nonces_file
    now = time.time()
    used = {n: t for n, t in read_json(path, {}).items() if t > now}
    if nonce in used:
        return False
    used[nonce] = max(expires, now + settings.id_token_max_age)
    write_private(path, json.dumps(used) + "\n", root)
    return True


# ---- what was pushed


def pushed(root: Path, settings: Lms = LMS) -> dict[tuple[str, str], dict]:
    """(line item, LMS user) -> the last score the platform accepted for it."""
    path = root / settings.folder / settings.pushed_file
    found: dict[tuple[str, str], dict] = {}
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return found
    except OSError as exc:
        raise UserError(f"{path}: not readable ({exc.strerror})") from None
    for line in lines:
        try:
            entry = json.loads(line)
            found[(entry["lineitem"], entry["user"])] = entry
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by a kill: that score is pushed again
    return found


def add_pushed(root: Path, entry: dict, settings: Lms = LMS) -> None:
    """Append one accepted score to the record (0600; a line at a time, flushed)."""
    path = folder(root, settings) / settings.pushed_file
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
    try:
        _own(path, root, fd)
        os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
