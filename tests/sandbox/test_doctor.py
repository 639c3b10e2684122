"""`attention-course doctor` reports each guarantee on a line of its own, and each line can fail:
the doctor is run against sandboxes weakened one layer at a time (the jail's arguments, its
cgroup, its per-process limits, the zygote's child changed by the test, never by anything a
student reaches), and
each weakening turns its own line, and only the lines that rest on that layer, to NO, with a
non-zero exit code."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable

import pytest

from attention_course.cli.main import main
from attention_course.sandbox import cgroups, confined, jail
from tests.course import COURSE_ROOT
from tests.sandbox import bubblewraps, weakened

# Every line the doctor must print, by its whole name (what the documentation promises).
LINES = (
    "sandbox",
    "unprivileged",
    "course hidden",
    "no network",
    "no new namespaces",
    "read-only system",
    "private /tmp",
    "process limit",
    "memory limit",
    "file size limit",
    "system call filter",
)
ORIGINAL_PATH = os.environ["PATH"]
LINE = re.compile(r"^  (ok|NO)  (\S+(?: \S+)*)\s{2,}(.*)$")


def _report(stdout: str) -> dict[str, tuple[bool, str]]:
    """name -> (holds, detail), each name once."""
    found: dict[str, tuple[bool, str]] = {}
    for line in stdout.splitlines():
        match = LINE.match(line)
        if match:
            status, name, detail = match.groups()
            assert name not in found, f"{name} printed twice"
            found[name] = (status == "ok", detail)
    return found


def test_doctor_finds_every_guarantee_holds():
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", "doctor"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = _report(proc.stdout)
    assert tuple(report) == LINES
    assert [name for name, (ok, _) in report.items() if not ok] == []
    assert "Every guarantee holds" in proc.stdout


# --------------------------------------------------------------------------- weakenings

Args = list[str]


def _replace(old: str, new: list[str]) -> Callable[[Args], Args]:
    def change(args: Args) -> Args:
        if old not in args:
            return args
        i = args.index(old)
        return args[:i] + new + args[i + 1 :]

    return change


def _drop(name: str, values: int = 0) -> Callable[[Args], Args]:
    def change(args: Args) -> Args:
        if name not in args:
            return args
        i = args.index(name)
        return args[:i] + args[i + 1 + values :]

    return change


def _no_remount_root(args: Args) -> Args:
    pairs = [i for i in range(len(args) - 1) if args[i : i + 2] == ["--remount-ro", "/"]]
    return [a for i, a in enumerate(args) if not any(i in (p, p + 1) for p in pairs)]


def _no_setpriv(args: Args) -> Args:
    """The inner stage started by the root stage itself: the sandbox's user is the host's root."""
    start = next((i for i, a in enumerate(args) if a.endswith("setpriv")), None)
    if start is None:
        return args
    end = args.index("--", start)
    return args[:start] + args[end + 1 :]


def _tmp_size_times_100(args: Args) -> Args:
    """`--size N ... --tmpfs /tmp` with 100 N."""
    tmp = next(i for i in range(len(args) - 1) if args[i : i + 2] == ["--tmpfs", "/tmp"])
    size = max(i for i in range(tmp) if args[i] == "--size")
    return args[: size + 1] + [str(int(args[size + 1]) * 100)] + args[size + 2 :]


COMMANDS: dict[str, tuple[Callable[[Args], Args], set[str]]] = {
    "network shared": (_replace("--unshare-all", ["--unshare-all", "--share-net"]), {"no network"}),
    "user namespaces allowed": (_drop("--disable-userns"), {"no new namespaces"}),
    "root's uid": (_no_setpriv, {"unprivileged"}),
    # (root here may have no supplementary groups to keep: its own group is given instead)
    "root's group": (_replace("--clear-groups", ["--groups", "0"]), {"unprivileged"}),
    "root remounted writable": (_no_remount_root, {"read-only system"}),
    "tmp 100 times larger": (_tmp_size_times_100, {"private /tmp"}),
}
ROOT_ONLY = {"root's uid", "root's group"}  # the stage that exists only when grading as root


def _times_100(field: str) -> Callable[..., Callable[[], None]]:
    """jail.rlimits, with one per-process limit 100 times what it should be."""
    real = jail.rlimits

    def rlimits(limits):
        return real(dataclasses.replace(limits, **{field: getattr(limits, field) * 100}))

    return rlimits


def _cgroup(memory: int = 1, processes: int = 1, none: bool = False):
    real = cgroups.Cgroup.create

    def create(name, memory_bytes, process_count):
        if none:
            return None
        return real(name, memory_bytes * memory, process_count * processes)

    return create


def _no_nproc():
    real = jail.python_argv

    def python_argv(script, settings, *rest):
        return real(script, dict(settings, nproc=0), *rest)

    return python_argv


# weakening -> (what it patches, the lines that must fail)
LIMITS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], set[str], bool]] = {
    "address space 100 times": (
        lambda mp: mp.setattr(jail, "rlimits", _times_100("memory_bytes")),
        {"memory limit"},
        False,
    ),
    "file size 100 times": (
        lambda mp: mp.setattr(jail, "rlimits", _times_100("file_bytes")),
        {"file size limit"},
        False,
    ),
    "no RLIMIT_NPROC": (
        lambda mp: mp.setattr(jail, "python_argv", _no_nproc()),
        {"process limit"},
        False,
    ),
    "no cgroup": (
        lambda mp: mp.setattr(cgroups.Cgroup, "create", staticmethod(_cgroup(none=True))),
        {"process limit", "memory limit"},
        True,
    ),
    "cgroup processes 100 times": (
        lambda mp: mp.setattr(cgroups.Cgroup, "create", staticmethod(_cgroup(processes=100))),
        {"process limit"},
        True,
    ),
    "cgroup memory 100 times": (
        lambda mp: mp.setattr(cgroups.Cgroup, "create", staticmethod(_cgroup(memory=100))),
        {"memory limit"},
        True,
    ),
}


def _doctor(capsys) -> tuple[int, dict[str, tuple[bool, str]], str]:
    code = main(["doctor", "--course", str(COURSE_ROOT)])
    out = capsys.readouterr().out
    return code, _report(out), out


def _assert_fails(code: int, report: dict, out: str, expected: set[str]) -> None:
    assert tuple(report) == LINES, out
    failed = {name for name, (ok, _) in report.items() if not ok}
    assert failed == expected, out
    assert code == 1, out
    assert f"NOT contained: {', '.join(n for n in LINES if n in expected)}." in out


@pytest.fixture
def sandbox_status():
    """The machine's sandbox, probed before anything is weakened (the probe is kept)."""
    return confined.require()


@pytest.mark.parametrize("weakening", sorted(COMMANDS))
def test_a_weakened_jail_fails_its_own_line(weakening, sandbox_status, monkeypatch, capsys):
    change, expected = COMMANDS[weakening]
    if weakening in ROOT_ONLY and sandbox_status.mode != "root":
        pytest.skip("that stage exists only when grading as root")
    real = jail.command
    commands: list[tuple[Args, Args]] = []  # (as made, as run)

    def command(*args, **kwargs):
        made = real(*args, **kwargs)
        commands.append((made, change(list(made))))
        return commands[-1][1]

    monkeypatch.setattr(jail, "command", command)
    _assert_fails(*_doctor(capsys), expected)
    assert any(made != run for made, run in commands), f"{weakening} changed no command"


@pytest.mark.parametrize("weakening", sorted(LIMITS))
def test_a_weakened_limit_fails_its_own_line(weakening, sandbox_status, monkeypatch, capsys):
    patch, expected, needs_cgroup = LIMITS[weakening]
    if needs_cgroup and not sandbox_status.cgroup:
        pytest.skip("no cgroup can be made for a sandbox on this machine")
    patch(monkeypatch)
    _assert_fails(*_doctor(capsys), expected)


# The layers the zygote's child makes (inside/zygote.py): weakening -> (lines replaced, the
# doctor's lines that must fail, whether the layer exists only when grading as root).
CHILD: dict[str, tuple[dict[str, str], set[str], bool]] = {
    "capabilities kept": (weakened.NO_CAPABILITY_DROP, {"unprivileged"}, False),
    "no seccomp filter": (weakened.NO_FILTER, {"system call filter"}, False),
    "root's groups kept": (weakened.KEEPS_GROUPS, {"unprivileged"}, True),
}


@pytest.mark.parametrize("weakening", sorted(CHILD))
def test_a_weakened_zygote_child_fails_its_own_line(
    weakening, sandbox_status, monkeypatch, capsys, tmp_path
):
    replace, expected, root_only = CHILD[weakening]
    if root_only and sandbox_status.mode != "root":
        pytest.skip("that layer exists only when grading as root")
    with weakened.weakened_zygote(monkeypatch, tmp_path, replace):
        _assert_fails(*_doctor(capsys), expected)


def test_a_mounted_course_fails_its_own_line(sandbox_status, monkeypatch, capsys):
    """The course folder itself mounted into the sandbox (read-only): its files are seen."""
    real = jail._tree
    bind = ["--ro-bind", str(COURSE_ROOT), str(COURSE_ROOT)]
    monkeypatch.setattr(jail, "_tree", lambda *a, **k: real(*a, **k) + bind)
    code, report, out = _doctor(capsys)
    _assert_fails(code, report, out, {"course hidden"})
    assert "course.toml" in report["course hidden"][1]


@pytest.fixture
def fresh_probe():
    """The probe made anew, as the machine is now (the test changed it); after the test, the
    machine's sandbox is probed again as it is."""

    def anew() -> jail.Status:
        confined._probe.cache_clear()
        return confined.probe()

    yield anew
    confined._probe.cache_clear()


def test_a_bubblewrap_that_cannot_make_namespaces_is_reported_with_its_reason_and_the_fix(
    fresh_probe, tmp_path, monkeypatch, capsys
):
    bubblewraps.put_on_path(bubblewraps.REFUSING, tmp_path, monkeypatch)
    status = fresh_probe()
    assert not status.ok and status.mode == "" and status.cgroup is None, status
    assert status.detail.startswith(
        "bubblewrap cannot create a sandbox here (bwrap: No permissions to create new namespace,"
    ), status.detail
    assert "sysctl -w kernel.unprivileged_userns_clone=1" in status.detail
    assert main(["doctor", "--course", str(COURSE_ROOT)]) != 0
    err = capsys.readouterr().err
    assert "cannot sandbox student code: bubblewrap cannot create a sandbox here" in err, err


def test_a_machine_without_bubblewrap_or_setpriv_is_told_what_to_install(
    fresh_probe, tmp_path, monkeypatch
):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    status = fresh_probe()
    assert (status.ok, status.detail) == (
        False,
        "bubblewrap is not installed (apt-get install bubblewrap)",
    )
    if os.geteuid():  # setpriv is what a sandbox made as root needs
        return
    (empty / "bwrap").symlink_to(shutil.which("bwrap", path=ORIGINAL_PATH))
    status = fresh_probe()
    assert (status.ok, status.detail) == (
        False,
        "setpriv is not installed (apt-get install util-linux)",
    )


def test_a_machine_where_no_system_call_filter_can_be_built_has_no_sandbox(
    fresh_probe, monkeypatch
):
    from attention_course.sandbox import syscall_filter

    monkeypatch.setattr(syscall_filter, "available", lambda: "libseccomp was not found")
    status = fresh_probe()
    assert (status.ok, status.detail) == (
        False,
        "no system call filter can be built here: libseccomp was not found",
    )


def test_a_zygote_that_cannot_start_is_a_sandbox_that_did_not_start(
    fresh_probe, tmp_path, monkeypatch
):
    dies = {"    sock = socket.socket(fileno=os.dup(0))\n": "    os._exit(1)\n"}
    with weakened.weakened_zygote(monkeypatch, tmp_path, dies):
        status = fresh_probe()
    assert not status.ok and status.detail.startswith("the sandbox did not start ("), status
