"""A room link's page says why there is no room: a code no room ever had ("No room has this code", a typo),
or a room that closed ("This room does not exist any more", an old link), in both languages."""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path

from playwright.sync_api import Browser, expect

from crisp_server.remote.client import CrispClient
from tests.e2e.procs import server_process

TIMEOUT = 15_000  # ms: generous for a shared 2-core machine


async def _closed_room(ws: str) -> str:
    """A lobby whose only player left: its room closed."""
    async with CrispClient.connect(ws) as ana:
        code = await ana.create("Ana")
        await ana.request({"type": "leave"})
        return code


def test_a_code_no_room_had_is_told_apart_from_a_closed_room(browser: Browser, tmp_path: Path) -> None:
    with server_process(tmp_path) as (base, _proc):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:  # sync Playwright holds this thread's loop
            closed = pool.submit(asyncio.run, _closed_room(base.replace("http", "ws") + "/ws")).result()
        errors: list[str] = []
        for lang, never, gone in (
            ("en-GB", "No room has this code.", "This room does not exist any more."),
            ("de-DE", "Es gibt keinen Raum mit diesem Code.", "Diesen Raum gibt es nicht mehr."),
        ):
            context = browser.new_context(locale=lang, viewport={"width": 412, "height": 915}, is_mobile=True)
            context.set_default_timeout(TIMEOUT)
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/r/ACDEFG")
            expect(page.get_by_role("alert")).to_have_text(never)
            page.goto(f"{base}/r/{closed}")
            expect(page.get_by_role("alert")).to_have_text(gone)
            assert not errors, errors
            context.close()
