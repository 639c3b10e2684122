"""Per-submission seeds of the graders' inputs, drawn from a secret the grading side holds.

Graders draw their random inputs from the seeded source their `@cases` function is given
(`draw`, draws.py): with a submission's seed, every draw is seeded by the seed and the draw's
names together, so every submission gets inputs of its own that nobody outside grading can know
in advance (a function that special-cases the inputs of one seed gains nothing). Without one
(`pytest grader_tests` by hand), the graders' own fixed seeds. The seed is an HMAC of the
submission's identity (its assignment and the digest of its file) under the course's grading
key: the environment's `ATTENTION_COURSE_GRADING_KEY`, or the key file `.grading/grading.key` of
the course folder, made once with mode 0600. The key is never released, never in the sandbox and
never in the feedback; the seed of each grade is recorded for the instructor (`autograde`:
`.grading/seeds/`; `check --seed` grades with a given one).

Where this stands on a submission's way (docs/life-of-a-submission.md): `graders.grade_file`
derives each submission's seed here (`submission_seed`), the one place it is derived, and hands
it to the graders in the open: to runner.py as an argument, to a pytest process in a file of a
private folder (`--seed-file`), never on a command line nor in an environment.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from pathlib import Path

from attention_course.course import Course
from attention_course.settings import GRADING_KEY_BYTES, GRADING_KEY_ENV, GRADING_KEY_FILE

SEED = re.compile(r"[0-9a-f]{32}")  # what a seed looks like (128 bits, hex)


class GradingKeyError(ValueError):
    """The grading key cannot be read or made (a one-line reason)."""


def grading_key(course: Course) -> bytes:
    """The course's grading key: from the environment, else its key file (made if missing)."""
    text = os.environ.get(GRADING_KEY_ENV)
    if text is not None:
        try:
            key = bytes.fromhex(text.strip())
        except ValueError:
            raise GradingKeyError(f"{GRADING_KEY_ENV} must be hex digits") from None
        if len(key) < 16:
            raise GradingKeyError(f"{GRADING_KEY_ENV} must hold at least 16 bytes (32 hex digits)")
        return key
    path = course.root / GRADING_KEY_FILE
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        return _make_key(path)
    except (OSError, ValueError) as exc:
        raise GradingKeyError(f"{path}: not a grading key ({type(exc).__name__})") from None


def _make_key(path: Path) -> bytes:
    key = secrets.token_bytes(GRADING_KEY_BYTES)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another grading process made it first
        return bytes.fromhex(path.read_text().strip())
    except OSError as exc:
        raise GradingKeyError(f"{path}: the grading key cannot be made ({exc.strerror})") from None
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    return key


def submission_seed(course: Course, assignment: str, submission: Path) -> str:
    """The seed of one submission: its assignment and file digest, under the grading key."""
    try:
        digest = hashlib.sha256(Path(submission).read_bytes()).hexdigest()
    except OSError:  # reading the program says why, as the student's
        digest = "unreadable " + Path(submission).name
    identity = f"{course.id}\n{assignment}\n{digest}".encode()
    return hmac.new(grading_key(course), identity, hashlib.sha256).hexdigest()[:32]


def check_seed(text: str) -> str:
    """A seed given by hand (`check --seed`), or ValueError."""
    seed = text.strip().lower()
    if not SEED.fullmatch(seed):
        raise ValueError(f"a seed is 32 hex digits, not {text[:40]!r}")
    return seed


def record(course: Course, assignment: str, student: str, notebook: str, seed: str) -> Path:
    """Note the seed a student's notebook was last graded with, for the instructor
    (`.grading/seeds/<assignment>/<student>.json`: notebook -> seed; `check --seed` grades it
    again with the same inputs). Never written where the student's files or feedback are."""
    for name in (assignment, student):
        if not name or name.startswith(".") or "/" in name or "\\" in name:
            raise ValueError(f"not a folder name: {name!r}")
    folder = course.root / GRADING_KEY_FILE.parent / "seeds" / assignment
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{student}.json"
    try:
        found = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        found = {}
    found = found if isinstance(found, dict) else {}
    found[notebook] = seed
    part = path.with_suffix(f".{os.getpid()}.part")
    part.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    os.replace(part, path)
    return path
