"""Time limits by the sandbox's own CPU time, deadlines by the clock: a busy machine slows a
step down without stopping it, code that spins is stopped by its CPU time (even when it ignores
its alarm), and code that sleeps by the wall-clock backstop. Both ways of counting CPU time are
tried: the sandbox's cgroup (where this machine gives one) and /proc (unsandboxed: no cgroup).
Deadlines are measured by the clock: a sandbox's start, and one notebook cell, never go past the
time of the submission or of the notebook.
"""

from __future__ import annotations

import json
import os
import re
import time

import nbformat
import pytest

from attention_course.sandbox import confined
from attention_course.sandbox.execute import execute_notebook
from attention_course.sandbox.program import Call, Limits, run_program
from tests.hogs import cpu_hogs
from tests.sandbox import bubblewraps

CODE = """
import os, signal, time

def work(x, seconds=0.4):
    start = time.process_time()
    while time.process_time() - start < seconds:  # of CPU time, however long that takes
        pass
    return x

def sleeper(x):
    time.sleep(60)

def stubborn_sleeper(x):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    time.sleep(60)

def stubborn(x):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # its alarm is ignored: killed from outside
    while True:
        pass

def starved(x, cpu, seconds=0.02):
    # A busy machine, as a sandbox meets one: on one core beside the test's hogs, its session
    # (a scheduler autogroup) at the lowest priority, left well under a twentieth of a core.
    os.sched_setaffinity(0, {cpu})
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        os.nice(19)
    return work(x, seconds)
"""

COUNTED = ["cgroup", "proc"]


def _run(how: str, calls: list[Call], limits: Limits):
    if how == "cgroup" and not confined.probe().cgroup:
        pytest.skip("no cgroup can be made for a sandbox on this machine")
    return run_program([("code", CODE)], calls, limits, unsandboxed=how == "proc")


@pytest.mark.alone
@pytest.mark.parametrize("how", COUNTED)
def test_a_busy_machine_slows_a_call_down_without_stopping_it(how):
    """Three calls of 0.4 s of CPU time each, a limit of 0.5 s, beside more CPU hogs than
    cores: each takes longer than its limit by the clock, and each is counted as it should."""
    limits = Limits(call_timeout=0.5, grace=0.5, wall_factor=40.0)
    calls = [Call(f"w{i}", "work", (i,)) for i in range(3)]
    with cpu_hogs():
        run = _run(how, calls, limits)
    assert {k: (o.status, o.value) for k, o in run.outcomes.items()} == {
        f"w{i}": ("ok", i) for i in range(3)
    }
    assert run.workers == 1
    assert max(o.seconds for o in run.outcomes.values()) > limits.call_timeout  # slowed down


@pytest.mark.parametrize("how", COUNTED)
def test_honest_code_kept_waiting_for_a_core_is_not_taken_for_asleep(how):
    """A call that computes, well within its CPU limit, but gets far less than the idle share
    of a core past its limit by the clock (its core taken by busier processes): it waited for a
    core, it did not sleep, and it returns its value."""
    limits = Limits(call_timeout=0.5, grace=0.5, wall_factor=40.0)  # backstop: 20 s
    core = sorted(os.sched_getaffinity(0))[-1]
    with cpu_hogs(3) as hogs:
        for hog in hogs:
            os.sched_setaffinity(hog.pid, {core})
        run = _run(how, [Call("w", "starved", (2, core))], limits)
    out = run.outcomes["w"]
    assert (out.status, out.value) == ("ok", 2), out
    assert run.workers == 1


@pytest.mark.parametrize("how", COUNTED)
def test_code_that_ignores_its_alarm_and_spins_is_stopped_by_its_cpu_time(how):
    limits = Limits(call_timeout=0.5, grace=0.5, wall_factor=40.0)  # backstop: 20 s
    start = time.monotonic()
    run = _run(how, [Call("s", "stubborn", (1,)), Call("w", "work", (2,))], limits)
    assert time.monotonic() - start < limits.backstop(limits.call_timeout)
    out = run.outcomes["s"]
    assert out.status == "timeout" and "of CPU time" in out.detail, out
    assert run.outcomes["w"].value == 2 and run.workers == 2


def test_where_nothing_counts_a_programs_cpu_time_the_clock_stops_it(monkeypatch):
    """No cgroup and a /proc that shows no process's CPU time (mounted hidepid=2, say): a call
    that spins, its alarm ignored, is stopped by the clock at its limit and its grace, said
    as stopped after its limit (not "of CPU time": nothing counted it)."""
    from attention_course.sandbox import cputime

    monkeypatch.setattr(cputime, "tree_cpu_seconds", lambda pid: None)
    limits = Limits(call_timeout=3.0, grace=0.5, wall_factor=40.0)  # backstop: 120 s
    start = time.monotonic()
    calls = [Call("s", "stubborn", (1,)), Call("w", "work", (2, 0.7))]  # w: past the first look
    run = _run("proc", calls, limits)
    assert time.monotonic() - start < 20
    out = run.outcomes["s"]
    assert out.status == "timeout", out
    assert out.detail == "was stopped after 3 s (an endless loop, or far too slow)"
    assert run.outcomes["w"].value == 2, run.outcomes["w"]  # honest, within its limit by the clock


def test_code_that_sleeps_is_stopped_once_past_its_limit_not_at_the_backstop():
    """Its own alarm stops it (the worker lives on) when its time is up by the clock and it
    used less than the idle share of a core: it waits, it does not compute."""
    limits = Limits(call_timeout=0.5, grace=0.5, wall_factor=40.0)  # backstop: 20 s
    start = time.monotonic()
    run = _run("proc", [Call("s", "sleeper", (1,)), Call("w", "work", (2,))], limits)
    assert time.monotonic() - start < 15
    out = run.outcomes["s"]
    assert out.status == "timeout"
    assert limits.call_timeout - 0.05 <= out.seconds < limits.backstop(limits.call_timeout) / 4
    assert run.outcomes["w"].value == 2 and run.workers == 1


def _a_stubborn_sleeper_is_stopped_as_a_wait(how: str, limits: Limits, waited: str) -> None:
    """A call that sleeps, its alarm ignored, then an honest one: the first is a timeout said
    as a wait of `waited` seconds, the second runs in a fresh worker."""
    honest = Call("w", "work", (2, 0.02))  # little CPU time: within a tight backstop, however busy
    run = _run(how, [Call("s", "stubborn_sleeper", (1,)), honest], limits)
    out = run.outcomes["s"]
    assert out.status == "timeout", out
    assert out.detail == (
        f"was stopped after {waited} s of waiting (it slept, or waited for what never came)"
    )
    assert run.outcomes["w"].value == 2 and run.workers == 2


@pytest.mark.parametrize("how", COUNTED)
def test_code_that_sleeps_its_alarm_ignored_is_stopped_from_outside_once_past_its_limit(how):
    """The idle rule kept by the grading process, not the worker's alarm (ignored): a step
    past its limit by the clock that used almost no CPU time is stopped then, said as a wait of
    its limit, long before its backstop."""
    limits = Limits(call_timeout=0.5, grace=0.5, wall_factor=40.0)  # backstop: 20 s
    start = time.monotonic()
    _a_stubborn_sleeper_is_stopped_as_a_wait(how, limits, "0.5")
    assert time.monotonic() - start < 10


def test_code_that_sleeps_with_no_idle_rule_is_stopped_by_the_wall_clock_backstop():
    limits = Limits(call_timeout=0.5, grace=0.5, idle_share=0.0)  # backstop: 2 s
    run = _run("proc", [Call("s", "sleeper", (1,)), Call("w", "work", (2,))], limits)
    out = run.outcomes["s"]
    assert out.status == "timeout"
    assert out.seconds >= limits.backstop(limits.call_timeout) - 0.05, out  # not its CPU limit


def test_code_that_sleeps_its_alarm_ignored_is_killed_at_the_backstop_said_to_the_ms():
    """No idle rule, its own alarm ignored: killed from outside at its backstop and the grace,
    said as a wait of its backstop (3 x 0.4321 s = 1.2963 s), shown to the millisecond."""
    limits = Limits(call_timeout=0.4321, wall_factor=3.0, grace=0.5, idle_share=0.0)
    _a_stubborn_sleeper_is_stopped_as_a_wait("proc", limits, "1.296")


def test_a_call_the_submissions_deadline_cuts_short_is_said_with_the_time_it_had():
    """The submission's deadline comes before the call's own limits (its alarm ignored, it
    sleeps): it is stopped there, said as stopped after the time it had left (its worker's
    start took the rest of the 6 s), not as its backstop's wait."""
    limits = Limits(submission_timeout=6.0, call_timeout=10.0, grace=0.5)
    start = time.monotonic()
    run = _run("proc", [Call("s", "stubborn_sleeper", (1,))], limits)
    assert time.monotonic() - start < limits.submission_timeout + 2
    out = run.outcomes["s"]
    assert out.status == "timeout", out
    said = re.fullmatch(
        r"was stopped after ([0-9.]+) s \(an endless loop, or far too slow\)", out.detail
    )
    assert said is not None, out.detail
    assert 1.5 < float(said[1]) <= limits.submission_timeout, out.detail


# ------------------------------------------------------------------ deadlines, by the clock


def test_a_sandbox_start_never_waits_past_the_submissions_time(tmp_path, monkeypatch):
    """bubblewrap takes minutes to start (a loaded machine): grading waits for it only as long
    as the submission has left, not the start-up's own limit."""
    bubblewraps.put_on_path(bubblewraps.SLOW, tmp_path, monkeypatch)
    limits = Limits(submission_timeout=2.0, startup_timeout=60.0, grace=0.5)
    start = time.monotonic()
    run = _run("cgroup" if confined.probe().cgroup else "proc", [Call("w", "work", (1,))], limits)
    elapsed = time.monotonic() - start
    assert run.outcomes["w"].detail == "not run: the submission used up its 2 s of grading time"
    assert run.workers == 1  # one start was tried, and given up at the submission's deadline
    assert elapsed < limits.submission_timeout + 5, elapsed


def _notebook(*sources: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def test_a_cell_cannot_spend_more_than_the_notebooks_cpu_time():
    """A cell that computes for ever, under a cell limit far above the notebook's budget and a
    backstop further still: it is stopped once the notebook's budget of CPU time is spent."""
    limits = Limits(notebook_cell_timeout=90.0, notebook_timeout=1.0, wall_factor=100.0)
    nb = _notebook("while True:\n    pass", "print('after')")
    start = time.monotonic()
    run = execute_notebook(nb, limits)
    elapsed = time.monotonic() - start
    assert elapsed < 30, elapsed  # the budget, start-up included, on a busy machine; not 90 s
    assert run.out_of_time
    assert "stopped: the notebook used up its 1 s" in json.dumps(nb.cells[0].outputs)
    assert "not run: the notebook used up its 1 s" in json.dumps(nb.cells[1].outputs)


def test_a_cell_cannot_run_past_the_notebooks_deadline():
    """A cell that sleeps, with no idle rule and a backstop of its own of 20 s: the notebook's
    absolute deadline (4 times its 1 s budget, by the clock, from the start) stops it."""
    limits = Limits(notebook_cell_timeout=5.0, notebook_timeout=1.0, idle_share=0.0, grace=0.5)
    nb = _notebook("import time\ntime.sleep(60)")
    start = time.monotonic()
    execute_notebook(nb, limits)
    elapsed = time.monotonic() - start
    deadline = limits.backstop(limits.notebook_timeout)
    assert elapsed < deadline + limits.grace + 3, elapsed  # not the cell's own 20 s
    assert "the notebook used up its 1 s" in json.dumps(nb.cells[0].outputs)
