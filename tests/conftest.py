"""Shared test settings, CI's rule that nothing is skipped, a time limit on every test, and every frame a
test's client receives checked against the protocol's JSON Schema."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import sys
import traceback
from collections.abc import Generator, Iterator
from types import FrameType

import pytest
from hypothesis import HealthCheck, settings
from pydantic import ValidationError

from crisp_server import native
from crisp_server.remote.client import CrispClient
from crisp_server.wire.schema import validate_outbound

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


#: Seconds each phase of a test (setup, call, teardown) may take (``CRISP_TEST_LIMIT_S``; 0: no limit). A
#: test that hangs fails with what every thread and asyncio task was waiting on, and the run goes on: a CI
#: run once sat on one hung test until CI's own limit ended it, with no word of which.
TEST_LIMIT_S = float(os.environ.get("CRISP_TEST_LIMIT_S", "600"))
#: A phase still running after this many limits (it swallowed the failure and hangs on) ends the whole run.
_GIVE_UP_AFTER = 3


#: Frames of the test runner itself, and of this file, are left out of what a hung test waited on.
_RUNNER = ("/_pytest/", "/pluggy/", "/pytest/__main__.py", "<frozen runpy>")


def _not_runner(entry: traceback.FrameSummary) -> bool:
    return entry.filename != __file__ and not any(part in entry.filename for part in _RUNNER)


def waiting_on() -> str:
    """Where every thread is, and every task of the running event loop (if any), as text."""
    out = io.StringIO()
    for ident, frame in sys._current_frames().items():
        stack = [entry for entry in traceback.extract_stack(frame) if _not_runner(entry)]
        out.write(f"--- thread {ident}\n{''.join(traceback.format_list(stack))}")
    try:
        tasks = asyncio.all_tasks()
    except RuntimeError:  # no event loop running in this thread
        tasks = set()
    for task in tasks:
        out.write(f"--- task {task.get_name()}\n")
        task.print_stack(file=out)
    return out.getvalue()


@contextlib.contextmanager
def time_limit(item: pytest.Item, phase: str) -> Iterator[None]:
    """Fail ``phase`` (setup, call or teardown) of ``item`` if it runs past its limit: :data:`TEST_LIMIT_S`,
    or a ``limit(seconds)`` mark's."""
    mark = item.get_closest_marker("limit")
    limit = float(mark.args[0]) if mark is not None else TEST_LIMIT_S
    if limit <= 0:
        yield
        return
    overdue = 0

    def fail(signum: int, frame: FrameType | None) -> None:
        nonlocal overdue
        overdue += 1
        message = f"{item.nodeid} ({phase}): still running after {overdue * limit:g} s; it was waiting on:\n"
        message += waiting_on()
        if overdue >= _GIVE_UP_AFTER:
            capture = item.config.pluginmanager.get_plugin("capturemanager")
            if capture is not None:  # the message goes to the real stderr, not to a capture that dies with us
                capture.suspend_global_capture(in_=False)
            os.write(2, f"\n{message}\nstill not done: ending the test run\n".encode())
            os._exit(3)
        pytest.fail(message, pytrace=False)

    before = signal.signal(signal.SIGALRM, fail)
    signal.setitimer(signal.ITIMER_REAL, limit, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, None]:
    with time_limit(item, "setup"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, None]:
    with time_limit(item, "call"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, None]:
    with time_limit(item, "teardown"):
        yield


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The run's own PostgreSQL cluster, if a test started one, is stopped and deleted (tests/databases.py).
    Under CI a skipped test fails the run (PostgreSQL and Chromium are installed there by .ci/run)."""
    databases = sys.modules.get("tests.databases")
    if databases is not None:
        databases.stop_own_cluster()
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
    """Every frame a ``CrispClient`` receives in a test is validated against ``crisp_server.wire.schema``; a test
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
