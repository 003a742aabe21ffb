"""Shared test settings, and CI's rule that nothing is skipped."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

#: CI=true (as .ci/run is called): every service and browser the tests need is there, so a skip hides a break.
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# CI gets more examples; a developer's run stays quick. Deadlines are off: this machine is shared and noisy.
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if IN_CI else "dev")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI a skipped test fails the run (PostgreSQL and Chromium are installed there by .ci/run)."""
    if not IN_CI:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if skipped and session.exitstatus == 0:
        if reporter is not None:
            reporter.write_line(f"CI=true: {skipped} test(s) skipped; under CI every test must run", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
