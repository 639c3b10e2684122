"""Under CI no test may be skipped (tests/skips.py): there a skip fails the run, saying why;
elsewhere it stays a skip."""

from __future__ import annotations

pytest_plugins = ["pytester"]
PLUGIN = ("-p", "tests.skips", "-W", "ignore::pytest.PytestAssertRewriteWarning")

SKIPPING = """
import pytest

def test_skipped():
    pytest.skip("no such thing on this machine")

@pytest.mark.skipif(True, reason="not here either")
def test_skipped_by_its_mark():
    pass

def test_passes():
    pass
"""


def test_under_ci_a_skip_fails_the_run_and_says_why(pytester, monkeypatch):
    pytester.makepyfile(SKIPPING)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_inprocess(*PLUGIN)
    said = result.parseoutcomes()  # a skip at the test's call fails it; by its mark, its set-up
    assert (said.get("failed", 0), said.get("errors", 0), said["passed"]) == (1, 1, 1), said
    assert "skipped" not in said
    result.stdout.fnmatch_lines(
        [
            "FAILED *::test_skipped - skipped under CI, where every test must run: no such *",
            "ERROR *::test_skipped_by_its_mark - skipped under CI, where every test must run: *",
        ]
    )
    monkeypatch.setenv("CI", "false")
    result = pytester.runpytest_inprocess(*PLUGIN)
    result.assert_outcomes(skipped=2, passed=1)
