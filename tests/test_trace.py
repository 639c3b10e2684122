"""The benchmarks' CPU stages (trace.py): time goes to the innermost stage, sandboxes' to the
stage that closed them, and nothing is written unless asked."""

import json
import time

from attention_course import trace


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_stages_are_exclusive_and_count_sandboxes(tmp_path, monkeypatch):
    monkeypatch.setenv(trace.STAGES_ENV, str(tmp_path / "before.jsonl"))
    trace.flush()  # what this process did before (its sandboxes) is not this test's
    out = tmp_path / "stages.jsonl"
    monkeypatch.setenv(trace.STAGES_ENV, str(out))
    with trace.stage("outer"):
        with trace.stage("inner"):
            _busy(0.2)
            with trace.stage("inner"):  # the same stage again: part of it
                trace.sandbox_done(1.5, 64 * 1024**2)
        _busy(0.05)
    trace.flush(student="s1")
    with trace.stage("outer"):
        _busy(0.01)
    trace.flush(student="s2")
    first, second = (json.loads(line) for line in out.read_text().splitlines())
    assert first["student"] == "s1" and set(first["stages"]) == {"outer", "inner"}
    inner_cpu, outer_cpu = first["stages"]["inner"][0], first["stages"]["outer"][0]
    assert 1.7 <= inner_cpu < 2.0  # its own 0.2 s and the sandbox's 1.5 s
    assert 0.05 <= outer_cpu < 0.2  # without the inner stage's
    assert first["sandboxes"] == 1 and first["sandbox_peak"] == 64 * 1024**2
    assert set(second["stages"]) == {"outer"} and second["sandboxes"] == 0  # afresh


def test_nothing_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(trace.STAGES_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with trace.stage("outer"):
        _busy(0.01)
    trace.flush(student="s1")
    assert list(tmp_path.iterdir()) == []
