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

import json
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from attention_course.errors import UserError
from attention_course.integrations.lms.identity import Decision
from attention_course.settings import LMS, Lms

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def folder(root: Path, settings: Lms = LMS) -> Path:
    """The course's LMS folder, made (0700, the course's owner's) if missing."""
    path = root / settings.folder
    if not path.is_dir():
        path.mkdir(mode=FOLDER_MODE)
        _own(path, root)
    path.chmod(FOLDER_MODE)
    return path


def _own(path: Path, root: Path) -> None:
    """`path` owned by whoever owns the course folder (the hub runs as root)."""
    if os.geteuid() == 0:
        st = root.stat()
        os.chown(path, st.st_uid, st.st_gid)


def write_private(path: Path, text: str, root: Path) -> None:
    """Write `path` whole or not at all, 0600 from its first byte, the course's owner's."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(name, FILE_MODE)
        _own(Path(name), root)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not readable ({exc})") from None


# ---- the launches


def record_launch(root: Path, decision: Decision, settings: Lms = LMS) -> None:
    """Add a launch to the course's record (the hub calls it for every accepted launch)."""
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


def decision_record(decision: Decision) -> dict:
    return asdict(decision)


# ---- the nonces of launches already used


def use_nonce(root: Path, nonce: str, expires: float, settings: Lms = LMS) -> bool:
    """Record a launch's nonce; False if it was used before (a replay). Nonces are kept until
    their launch's id_token expires (no replay is possible after: the token is refused)."""
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
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    _own(path, root)
