"""Under CI (CI=true) no test may be skipped: a skip is reported as a failure, with its reason.

A breakage that makes tests skip (a sandbox or a cgroup that can no longer be made, a server that
does not start) then fails the run instead of passing it with fewer tests. tests/conftest.py
loads this hook; elsewhere a skip stays a skip, saying why."""

from __future__ import annotations

import os

import pytest


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and under_ci():
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, where every test must run: {reason}"
