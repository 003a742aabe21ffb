"""Shared test settings, CI's rule that nothing is skipped, and every frame a test's client receives checked
against the protocol's JSON Schema."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from pydantic import ValidationError

from crisp_server import native
from crisp_server.client import CrispClient
from crisp_server.schema import validate_outbound

#: CI=true (as .ci/run is called): every service and browser the tests need is there, so a skip hides a break.
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# CI gets more examples; a developer's run stays quick. Deadlines are off: this machine is shared and noisy.
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if IN_CI else "dev")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``interpreted`` replaces a function or method of the engine or the rooms, which compiled
    code does not see: in a compiled process it is deselected (not skipped: CI forbids skips); it runs
    where the engine and rooms are interpreted (``CRISP_NATIVE=off``, or no build)."""
    if native.mode() != "compiled":
        return
    kept = [item for item in items if item.get_closest_marker("interpreted") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


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


@pytest.fixture(autouse=True)
def schema_violations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every frame a ``CrispClient`` receives in a test is validated against ``crisp_server.schema``; a test
    in which the server sent one the schema does not allow fails (at teardown, with the frame and why).
    A test that breaks the protocol on purpose takes the list and empties it."""
    violations: list[str] = []

    def inspect(frame: str | bytes) -> None:
        try:
            validate_outbound(frame)
        except ValidationError as exc:
            text = frame if isinstance(frame, str) else frame.decode(errors="replace")
            violations.append(f"{exc}\nin the frame: {text[:3000]}")

    monkeypatch.setattr(CrispClient, "inspect", inspect)
    yield violations
    assert not violations, f"{len(violations)} frame(s) outside the protocol's JSON Schema:\n" + "\n\n".join(
        violations[:3]
    )
