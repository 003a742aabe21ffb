"""A real browser at phone size against the real server (a subprocess with known decks).

Run on its own (``pytest tests/browser``): sync Playwright and the asyncio tests do not share a session.
Chromium is Debian's (/usr/bin/chromium, or CRISP_CHROMIUM); Playwright's own download is not used.
Screenshots of every screen go to ``artifacts/screenshots/`` (not committed).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

from tests.conftest import IN_CI
from tests.e2e.procs import server_process

#: Debian's Chromium (Playwright's own browser download does not work everywhere), or CRISP_CHROMIUM.
CHROMIUM = (
    os.environ.get("CRISP_CHROMIUM")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
    or shutil.which("google-chrome")
    or "/usr/bin/chromium"
)
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        if IN_CI:
            pytest.fail(f"no Chromium at {CHROMIUM}: .ci/run installs it (CI=true: the browser tests must run)")
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium, or set CRISP_CHROMIUM to a Chrome")
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    )
    yield browser
    browser.close()


@pytest.fixture
def shots() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def rigged_server(tmp_path: Path, decks: list[list[str]]) -> Iterator[str]:
    with server_process(tmp_path, {"CRISP_TEST_DECKS": json.dumps(decks)}, rigged=True) as (base, _proc):
        yield base
