"""A player who comes back to a game abandoned meanwhile (nobody was connected for CRISP_IDLE_GAME_HOURS)
finds the room closed, and the link's page offers the game's record, which downloads."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from pathlib import Path

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, expect

from crisp_server.client import CrispClient
from tests.e2e.procs import free_port, server_process

TIMEOUT = 15_000  # ms: generous for a shared 2-core machine


async def _start_and_go(ws: str) -> tuple[str, str]:
    """Two players start a game and both go away; the room code and Ana's seat token."""
    async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
        code = await ana.create("Ana")
        await ben.join(code, "Ben")
        await ana.start()
        await ana.wait_for(lambda c: c.phase == "peek", what="the deal")
        assert ana.token is not None
        return code, ana.token


def test_the_record_of_a_game_abandoned_meanwhile_is_offered(browser: Browser, tmp_path: Path, shots: Path) -> None:
    # A second of nobody connected is "abandoned" here; the restart ends the game (the sweep is 10 minutes away).
    env = {"CRISP_IDLE_GAME_HOURS": str(1 / 3600)}
    port = free_port()
    with server_process(tmp_path, env, port) as (base, _proc):
        ws = base.replace("http", "ws") + "/ws"
        with concurrent.futures.ThreadPoolExecutor(1) as pool:  # sync Playwright holds this thread's loop
            code, token = pool.submit(asyncio.run, _start_and_go(ws)).result()
    time.sleep(1.5)
    with server_process(tmp_path, env, port) as (base, _proc):
        context = browser.new_context(viewport={"width": 412, "height": 915}, is_mobile=True, has_touch=True)
        context.set_default_timeout(TIMEOUT)
        errors: list[str] = []
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/")
        page.evaluate(
            "([room, token]) => localStorage.setItem('crisp.session', JSON.stringify({room, token}))", [code, token]
        )
        page.goto(f"{base}/r/{code}")
        expect(page.get_by_role("alert")).to_contain_text("does not exist any more")
        # The link's own card, in the Join button's place: the room's games, a new room, Home.
        panel = page.locator(".link-gone")
        expect(panel).to_contain_text(f"Room {code}")
        assert page.locator('[data-key="join"]').count() == 0
        expect(panel).to_contain_text("unfinished")
        expect(panel).to_contain_text("Ana 0")
        page.screenshot(path=str(shots / "abandoned-game-home.png"))
        violations = Axe().run(page).response["violations"]
        assert not [v["id"] for v in violations if v.get("impact") in ("serious", "critical")]
        with page.expect_download() as download:
            panel.locator('[data-key^="record-"]').click()
        record = json.loads(Path(download.value.path()).read_text())
        assert record["format"] == "crisp-record/1"
        assert record["players"] == ["Ana", "Ben"]
        assert not errors, errors
        context.close()
