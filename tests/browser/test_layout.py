"""The table fits a phone without scrolling, from 360x640 to 430x932, with 8 players; and on a desktop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from crisp_server.client import CrispClient
from tests.browser.conftest import rigged_server
from tests.browser.test_ui_game import ROUND_1


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    yield from rigged_server(tmp_path, [ROUND_1])


class Table:
    """Seven players over the protocol in a thread of their own, so the browser can be the eighth."""

    def __init__(self, base: str) -> None:
        self.url = base.replace("http", "ws") + "/ws"
        self.code: str | None = None
        self.ready = threading.Event()
        self.go = threading.Event()
        self.done = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.thread.start()

    async def _run(self) -> None:
        async with contextlib.AsyncExitStack() as stack:
            host = await stack.enter_async_context(CrispClient.connect(self.url))
            self.code = await host.create("Host")
            others = []
            for i in range(6):
                c = await stack.enter_async_context(CrispClient.connect(self.url))
                await c.join(self.code, f"Player {i + 2} with a long name"[:20])
                others.append(c)
            self.ready.set()
            await asyncio.to_thread(self.go.wait, 30)
            await host.start()
            for c in (host, *others):
                await c.wait_for(lambda c: c.phase == "peek", what="peek")
                await c.ready()
            await asyncio.to_thread(self.done.wait, 60)


@pytest.mark.parametrize(("width", "height"), [(360, 640), (412, 915), (430, 932), (1280, 800)])
def test_the_table_fits_without_scrolling(browser: Browser, base: str, shots: Path, width: int, height: int) -> None:
    table = Table(base)
    assert table.ready.wait(30)
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 800, has_touch=True)
    page = context.new_page()
    try:
        page.goto(f"{base}/r/{table.code}")
        page.fill("#join-name", "Me")
        page.locator('[data-key="join"]').click()
        expect(page.locator(".lobby")).to_be_visible()
        table.go.set()
        page.locator('[data-key="ready"]').click(timeout=15_000)
        expect(page.locator(".phase-play")).to_be_visible(timeout=15_000)
        expect(page.locator(".seat")).to_have_count(7)
        page.screenshot(path=str(shots / f"table-8-players-{width}x{height}.png"))
        overflow = page.evaluate(
            "() => { const e = document.scrollingElement;"
            " return [e.scrollHeight - innerHeight, e.scrollWidth - innerWidth]; }"
        )
        assert overflow[0] <= 0, f"the table scrolls by {overflow[0]} px at {width}x{height}"
        assert overflow[1] <= 0, f"the table scrolls sideways by {overflow[1]} px at {width}x{height}"
        # Every card of mine and both piles are inside the screen.
        for key in ("slot-left", "slot-middle", "slot-right", "draw-pile", "discard-pile"):
            box = page.locator(f'[data-key="{key}"]').bounding_box()
            assert box is not None
            assert box["y"] + box["height"] <= height, key
    finally:
        table.done.set()
        context.close()
        table.thread.join(10)
