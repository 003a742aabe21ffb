"""The time limit every test runs under (tests/conftest.py): a hung test fails with what it waited on, in a
sync test and in an asyncio one, and the run goes on to the next test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent

HUNG = """
import asyncio
import threading
import time

import pytest


@pytest.mark.limit(0.5)
def test_sleeps_on_in_a_thread():
    time.sleep(30)


@pytest.mark.limit(0.5)
async def test_waits_on_an_event_nobody_sets():
    async def stuck_helper():
        await asyncio.Event().wait()

    await asyncio.create_task(stuck_helper(), name="the-stuck-helper")


@pytest.fixture
def slow_to_tear_down():
    yield
    time.sleep(30)


@pytest.mark.limit(0.5)
def test_whose_teardown_hangs(slow_to_tear_down):
    pass


def test_after_them():
    assert True
"""

STUBBORN = """
import time

import pytest


@pytest.mark.limit(0.3)
def test_swallows_its_failure():
    for _ in range(100):
        try:
            time.sleep(30)
        except BaseException:
            pass
"""

INNER_CONFTEST = """
from tests.conftest import pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown  # noqa: F401
"""


def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, source: str) -> pytest.RunResult:
    """``source`` as a test file, run by pytest in a process of its own under the project's time limit."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(test_hung=source)
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    limit(seconds): a test's own limit\n"
    )
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-ra", timeout=60)


def test_a_hung_test_fails_with_where_it_waited_and_the_run_goes_on(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(pytester, monkeypatch, HUNG)
    out = result.stdout.str()
    result.assert_outcomes(passed=2, failed=2, errors=1)
    assert "test_hung.py::test_sleeps_on_in_a_thread (call): still running after 0.5 s" in out
    assert "in test_sleeps_on_in_a_thread" in out  # the thread's stack, down to the test's line
    assert "test_waits_on_an_event_nobody_sets (call): still running after 0.5 s" in out
    assert "--- task the-stuck-helper" in out  # the asyncio task, and where it waits
    assert "in stuck_helper" in out
    assert "test_whose_teardown_hangs (teardown): still running after 0.5 s" in out
    assert "FAILED test_hung.py::test_sleeps_on_in_a_thread" in out
    assert "FAILED test_hung.py::test_waits_on_an_event_nobody_sets" in out
    assert "ERROR test_hung.py::test_whose_teardown_hangs" in out


def test_a_test_that_swallows_its_failure_ends_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(pytester, monkeypatch, STUBBORN)
    assert result.ret == 3
    err = result.stderr.str()
    assert "test_swallows_its_failure (call): still running after 0.9 s" in err
    assert "still not done: ending the test run" in err
