"""The sandbox's system call filter: each call student code never needs fails inside, numpy runs.

One script, run once in a sandbox as grading makes it and once in the same sandbox without its
filter (the control: with these arguments the calls do not fail with EPERM by themselves, so the
EPERMs are the filter's), calls each system call by its x86-64 number through libc's
`syscall()`, with arguments that do nothing even unfiltered (the sandbox has no capabilities).
The calls and their numbers are this test's own (the kernel's x86-64 table), not the filter's.
"""

from __future__ import annotations

import errno
import json
import os
import platform
import signal
import subprocess
import sys
import time

import pytest

from attention_course.sandbox import confined, syscall_filter
from attention_course.sandbox.confined import Confined
from attention_course.settings import DEFAULT
from tests.course import COURSE_ROOT

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the system call numbers below are x86-64's"
)

# Every call the sandbox must deny with EPERM, and its number (arch/x86/entry/syscalls).
DENIED = {
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "unshare": 272,
    "setns": 308,
    "personality": 135,
    "acct": 163,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "iopl": 172,
    "ioperm": 173,
    "open_by_handle_at": 304,
    "name_to_handle_at": 303,
    "quotactl": 179,
    "syslog": 103,
    "lookup_dcookie": 212,
    "settimeofday": 164,
    "clock_settime": 227,
    "clock_adjtime": 305,
    "adjtimex": 159,
    "kcmp": 312,
    "pidfd_getfd": 438,
    "io_uring_setup": 425,
}
CLONE, CLONE3 = 56, 435
CLONE_THREAD = 0x10000  # without CLONE_SIGHAND: refused by the kernel (EINVAL) if let through
NAMESPACES = {
    "mount": 0x20000,
    "cgroup": 0x2000000,
    "uts": 0x4000000,
    "ipc": 0x8000000,
    "user": 0x10000000,
    "pid": 0x20000000,
    "net": 0x40000000,
}

SCRIPT = r"""
import ctypes, json, mmap, os, subprocess, sys, threading
import numpy as np

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
plan = json.loads(sys.argv[1])


def call(number, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    return ctypes.get_errno() if result == -1 else "returned %d" % result


def in_child(work):
    pid = os.fork()
    if pid == 0:
        os._exit(0 if work() == os.getpid() else 1)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def i386_getpid():  # mov eax, 20; int 0x80; ret
    code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    code.write(b"\xb8\x14\x00\x00\x00\xcd\x80\xc3")
    return ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(code)))()


found = {"status": dict(l.split(":\t", 1) for l in open("/proc/self/status") if ":\t" in l)}
found["denied"] = {name: call(number, *[-1] * 6) for name, number in plan["denied"].items()}
found["clone"] = {
    name: call(plan["clone"], flag | plan["thread"], 0, 0, 0, 0)
    for name, flag in plan["namespaces"].items()
}
found["clone3"] = call(plan["clone3"], 0, 0)
found["x32"] = in_child(lambda: libc.syscall(ctypes.c_long(0x40000000 | 39)))  # x32's getpid
found["i386"] = in_child(i386_getpid)

# what student code does: numpy, threads, a forked child, a subprocess
rng = np.random.default_rng(0)
a = rng.standard_normal((200, 200))
found["numpy"] = float(np.abs(np.linalg.inv(a) @ a - np.eye(200)).max())
found["fft"] = float(np.fft.irfft(np.fft.rfft(np.arange(8.0)))[3])
box = []
thread = threading.Thread(target=lambda: box.append(np.ones(3).sum()))
thread.start()
thread.join()
found["thread"] = box
found["fork"] = in_child(os.getpid) == 0
found["subprocess"] = subprocess.run(
    [sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True
).stdout
print(json.dumps(found))
"""


def _run(filtered: bool) -> dict:
    """The script's findings, from a grading worker made as grading makes it (its filter
    loaded by the zygote's child), or the same without the filter."""
    status = confined.probe()
    if not status.ok:
        pytest.fail(f"no sandbox on this machine: {status.detail}")
    plan = {
        "denied": DENIED,
        "clone": CLONE,
        "clone3": CLONE3,
        "thread": CLONE_THREAD,
        "namespaces": NAMESPACES,
    }
    source = f"import sys\nsys.argv = ['-c', {json.dumps(plan)!r}]\n"
    source += SCRIPT.replace(
        "print(json.dumps(found))",
        "def result():\n    return np.frombuffer(json.dumps(found).encode(), np.uint8)",
    )
    step = {"timeout": 60, "wall": 120, "idle": 0.0}
    call = {"op": "call", "function": "result", "args": [], "kwargs": {}, **step}
    with Confined("worker.py", {}, DEFAULT, filtered=filtered) as worker:
        worker.start(time.monotonic() + 60)
        cell, _ = worker.request({"op": "cell", "id": "s", "source": source, **step}, timeout=60)
        assert cell["error"] is None, cell
        reply, arrays = worker.request(call, timeout=60)
    assert reply["status"] == "ok", reply
    (found,) = arrays
    return json.loads(found.tobytes())


@pytest.fixture(scope="module")
def filtered() -> dict:
    return _run(filtered=True)


@pytest.fixture(scope="module")
def unfiltered() -> dict:
    return _run(filtered=False)


def test_the_sandbox_runs_under_a_seccomp_filter(filtered, unfiltered):
    assert filtered["status"]["Seccomp"].strip() == "2"  # SECCOMP_MODE_FILTER
    assert unfiltered["status"]["Seccomp"].strip() == "0"
    assert filtered["status"]["NoNewPrivs"].strip() == "1"


def test_each_denied_call_fails_with_eperm(filtered):
    wrong = {name: got for name, got in filtered["denied"].items() if got != errno.EPERM}
    assert not wrong, f"not denied with EPERM: {wrong}"
    assert set(filtered["denied"]) == set(DENIED)


def test_clone_into_any_new_namespace_fails_with_eperm(filtered):
    assert filtered["clone"] == dict.fromkeys(NAMESPACES, errno.EPERM)


def test_clone3_is_not_implemented_so_the_c_library_uses_clone(filtered):
    assert filtered["clone3"] == errno.ENOSYS


def test_without_the_filter_the_same_calls_do_not_fail_with_eperm(unfiltered):
    """The control: the EPERMs above are the filter's, not the sandbox's missing capabilities
    (unprivileged, several of these calls fail with EPERM anyway: those prove nothing here)."""
    got = unfiltered["denied"]
    assert got["ptrace"] in (errno.ESRCH, errno.EIO)  # no process -1 to trace
    assert got["mount"] == got["chroot"] == errno.EFAULT  # their paths at address -1
    assert got["unshare"] == errno.EINVAL  # no such flags
    assert got["setns"] == errno.EBADF  # no file descriptor -1
    assert got["personality"].startswith("returned")  # -1 only asks
    assert unfiltered["clone"] == dict.fromkeys(NAMESPACES, errno.EINVAL)
    assert unfiltered["clone3"] == errno.EINVAL
    assert sum(e != errno.EPERM for e in got.values()) >= 20


def test_calls_through_another_abi_kill_the_process(filtered, unfiltered):
    """x32 numbers and i386's `int 0x80` on an x86-64 kernel: the process is killed (SIGSYS),
    so no denied call can be made under another number. Unfiltered, each getpid would run (or,
    on a kernel without that ABI, fail): the child would exit, not be killed."""
    assert filtered["x32"] == filtered["i386"] == -signal.SIGSYS
    assert unfiltered["x32"] in (0, 1) and unfiltered["i386"] in (0, 1, -signal.SIGSEGV)


def test_what_student_code_does_still_works(filtered):
    assert filtered["numpy"] < 1e-8
    assert filtered["fft"] == pytest.approx(3.0)
    assert filtered["thread"] == [3.0]
    assert filtered["fork"] is True
    assert filtered["subprocess"] == "42\n"


NOTEBOOK = "release/attention_basics/attention_basics.ipynb"


@pytest.mark.parametrize("command", [["check", NOTEBOOK], ["doctor"]])
def test_no_filter_no_grading(tmp_path, command):
    """Where libseccomp cannot be loaded (pyseccomp raises as it does then), grading refuses
    with one line saying why, as it does without bubblewrap."""
    (tmp_path / "pyseccomp.py").write_text('raise RuntimeError("Unable to find libseccomp")\n')
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "attention_course.cli.main", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=COURSE_ROOT,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "no system call filter" in proc.stderr and "libseccomp2" in proc.stderr


def test_doctor_says_which_call_was_not_denied():
    """doctor's line fails, naming why, where the sandbox had no filter or a call got through."""
    from attention_course.sandbox.doctor import _filtered

    trials = syscall_filter.trials()
    denied = {t.name: f"errno {t.errno}" for t in trials}
    killed = {"x32": f"killed by signal {int(signal.SIGSYS)}", "i386": "failed"}
    assert _filtered(2, denied, killed, trials).ok
    check = _filtered(0, denied, killed, trials)
    assert not check.ok and "Seccomp: 0" in check.detail
    check = _filtered(2, dict(denied, ptrace="returned 0"), killed, trials)
    assert not check.ok and check.detail == "not denied: ptrace (returned 0)"
    check = _filtered(2, denied, dict(killed, i386="ran"), trials)
    assert not check.ok and "getpid through i386 ran" in check.detail
