"""The evening's standings in the web client: in the lobby once a game of the room has ended, and on the
game-over screen; eight players with long names at 360x640, in English and German, light and dark, axe
clean and in readable contrast; and a live room where the table appears when its first game ends.

The eight-player rooms are written into the database before the server starts (games played by the
engine at random, stored as a room stores them): the server rebuilds them as after a restart, and the page
takes its seat back with its token, as a reload does. Screenshots: artifacts/screenshots/standings-*.png.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from crisp_server.engine import Options
from crisp_server.remote.client import CrispClient
from crisp_server.rooms.tokens import hash_token
from crisp_server.store.migrate import upgrade
from crisp_server.store.store import Store
from tests.browser.conftest import rigged_server
from tests.browser.harness import contrast_problems, fits, open_page, watch
from tests.e2e.procs import server_process
from tests.e2e.test_restart import ROUND_1, ROUND_2, settle, two_player_game, two_rounds_ben_wins
from tests.store.games import save_room, store_game

NAMES = [
    "Alexandra-Marie Hohenzollern",
    "Bartholomew",
    "Cem",
    "Dörte",
    "Emilia Fitzgerald-Smythe",
    "Frederik",
    "Gö",
    "Hanna-Lena Oberhuber",
]
ME = 4  # the page's seat
OPTIONS = Options(50, None, False)
LOBBY, OVER = "ACDEFG", "HJKMNP"


def token(room: str, seat: int) -> str:
    return f"{room}-token-{seat}"


async def _evening(url: str) -> None:
    """Two rooms of eight: one back in its lobby after three games (two players joined after the first),
    one at the end of its second game."""
    await asyncio.to_thread(upgrade, url)
    store = Store(url)
    await store.start()
    try:
        for room, phase in ((LOBBY, "lobby"), (OVER, "play")):
            hashes = [hash_token(token(room, i)) for i in range(len(NAMES))]
            await save_room(store, room, room, NAMES, phase=phase, options=OPTIONS, token_hashes=hashes)
        for room, game_id, names, seed in (
            (LOBBY, "lobby1", NAMES[:6], 1),
            (LOBBY, "lobby2", NAMES, 2),
            (LOBBY, "lobby3", NAMES[::-1], 3),
            (OVER, "over1", NAMES, 4),
            (OVER, "over2", NAMES, 5),  # the room shows its end
        ):
            hashes = [hash_token(token(room, NAMES.index(n))) for n in names]
            await store_game(store, room, game_id, names, seed, options=OPTIONS, token_hashes=hashes)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def evening(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("evening")
    url = f"sqlite+aiosqlite:///{data / 'crisp.sqlite3'}"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # sync Playwright holds this thread's loop
        pool.submit(asyncio.run, _evening(url)).result()
    # Every page here looks the room up several times (info, QR code, games, standings): no look-up limit.
    env = {"CRISP_LOOKUP_BURST": "100000", "CRISP_LOOKUP_PER_MINUTE": "100000"}
    with server_process(data, env) as (base, _proc):
        yield base


def _seat_page(page: Page, base: str, room: str) -> None:
    """Take seat ``ME`` of ``room`` back with its token, as a page reloaded on that phone does."""
    page.goto(base + "/")
    session = [{"room": room, "token": token(room, ME), "name": NAMES[ME], "left": False}]
    page.evaluate("(s) => localStorage.setItem('crisp.sessions', s)", json.dumps(session))
    page.goto(f"{base}/r/{room}")


def _rows(page: Page) -> list[list[str]]:
    table = page.locator(".standings-table tbody tr")
    expect(table.first).to_be_visible()
    out: list[list[str]] = table.evaluate_all(
        "rows => rows.map(r => [...r.children].map(c => (c.querySelector('.seat-name')?.title ?? c.textContent)"
        ".trim()))"
    )
    return out


def _expected(page: Page, base: str, room: str) -> tuple[dict[str, Any], list[list[str]]]:
    standings: dict[str, Any] = page.request.get(f"{base}/api/rooms/{room}/standings").json()
    rows = []
    place = 0
    for i, p in enumerate(standings["players"]):
        before = standings["players"][i - 1] if i else None
        if not before or (before["wins"], before["points"]) != (p["wins"], p["points"]):
            place = i + 1
        best = "\N{EN DASH}" if p["best_round"] is None else str(p["best_round"])
        rows.append([str(place), p["name"], str(p["wins"]), str(p["points"]), str(p["games"]), best])
    return standings, rows


def _looks_right(page: Page, name: str, shots: Path) -> None:
    panel = page.locator(".standings")
    panel.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"standings-{name}.png"))
    panel.screenshot(path=str(shots / f"standings-{name}-table.png"))
    assert fits(page, controls=False) == [], name
    # The long names are cut short with an ellipsis, inside their column; the numbers are whole.
    cut = page.locator(".standings-table .seat-name").evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.title)"
    )
    assert NAMES[0] in cut, cut
    numbers_cut = page.locator(".standings-table td, .standings-table thead th").evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"
    )
    assert numbers_cut == [], numbers_cut
    violations = Axe().run(page).response["violations"]
    bad = [
        f"{v['id']}: {[n['target'] for n in v['nodes']][:5]}"
        for v in violations
        if v.get("impact") in ("serious", "critical")
    ]
    assert not bad, f"{name}: {bad}"
    # The contrast of the standings alone: at the game's end the table under the results has texts below AA
    # of its own (the cards of the hands, covered by the results); the rest of the page is hidden meanwhile.
    page.evaluate(
        "() => { document.body.style.visibility = 'hidden';"
        " document.querySelector('.standings').style.visibility = 'visible'; }"
    )
    low = contrast_problems(page)
    assert low == [], f"{name}: {low}"


LOOKS = [
    pytest.param("en-GB", False, id="en-light"),
    pytest.param("de-DE", True, id="de-dark"),
    pytest.param("en-GB", True, id="en-dark"),
    pytest.param("de-DE", False, id="de-light"),
]


@pytest.mark.parametrize(("locale", "dark"), LOOKS)
def test_the_lobby_shows_the_evenings_standings(
    browser: Browser, evening: str, shots: Path, locale: str, *, dark: bool
) -> None:
    context, page = open_page(browser, 360, 640, locale=locale, dark=dark)
    errors: list[str] = []
    watch(page, errors)
    try:
        _seat_page(page, evening, LOBBY)
        expect(page.locator(".lobby")).to_be_visible()
        standings, rows = _expected(page, evening, LOBBY)
        assert standings["games"] == 3
        assert len(standings["players"]) == 8
        joined_later = {p["name"]: p["games"] for p in standings["players"]}
        assert (joined_later[NAMES[6]], joined_later[NAMES[0]]) == (2, 3)
        assert _rows(page) == rows
        title = "Tonight's standings" if locale.startswith("en") else "Stand des Abends"
        expect(page.locator(".standings h2")).to_have_text(title)
        expect(page.locator(".standings-count")).to_have_text("3 games" if locale.startswith("en") else "3 Spiele")
        expect(page.locator(".standings-table tr.me .seat-name")).to_have_attribute("title", NAMES[ME])
        _looks_right(page, f"lobby-{locale[:2]}-{'dark' if dark else 'light'}", shots)
    finally:
        context.close()
    assert not errors, errors


@pytest.mark.parametrize(("locale", "dark"), LOOKS)
def test_the_game_over_screen_shows_the_evenings_standings(
    browser: Browser, evening: str, shots: Path, locale: str, *, dark: bool
) -> None:
    context, page = open_page(browser, 360, 640, locale=locale, dark=dark)
    errors: list[str] = []
    watch(page, errors)
    try:
        _seat_page(page, evening, OVER)
        expect(page.locator(".results")).to_be_visible()
        standings, rows = _expected(page, evening, OVER)
        assert standings["games"] == 2
        assert _rows(page) == rows
        _looks_right(page, f"over-{locale[:2]}-{'dark' if dark else 'light'}", shots)
    finally:
        context.close()
    assert not errors, errors


# -- a live room: the table appears when the first game ends, and stays in the lobby after -------------


async def _play_rigged_game(
    ws: str, seen: dict[str, Any], watching: concurrent.futures.Future[None], looked: concurrent.futures.Future[None]
) -> None:
    """Ana and Ben play tests/e2e/test_restart.py's two rounds (Ben wins) once the page watches; at the end,
    ``seen["table"]`` is the table they were sent; the host asks for a rematch once the page has looked."""
    async with CrispClient.connect(ws) as ana, CrispClient.connect(ws) as ben:
        seen["code"] = await two_player_game(ana, ben)
        await asyncio.wrap_future(watching)
        await two_rounds_ben_wins(ana, ben)
        assert ana.state is not None
        seen["table"] = ana.state["table"]
        await asyncio.wrap_future(looked)
        await ana.request({"type": "rematch"})
        await settle(ana, ben)


def test_a_watcher_sees_the_standings_once_the_first_game_ends(browser: Browser, tmp_path: Path, shots: Path) -> None:
    for base in rigged_server(tmp_path, [ROUND_1, ROUND_2]):
        context, page = open_page(browser, 360, 640)
        errors: list[str] = []
        watch(page, errors)
        seen: dict[str, Any] = {}
        watching: concurrent.futures.Future[None] = concurrent.futures.Future()
        looked: concurrent.futures.Future[None] = concurrent.futures.Future()
        ws = base.replace("http", "ws") + "/ws"
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            done = pool.submit(asyncio.run, _play_rigged_game(ws, seen, watching, looked))
            try:
                while "code" not in seen:
                    assert not done.done() or done.result() is None
                    page.wait_for_timeout(50)
                page.goto(f"{base}/r/{seen['code']}")
                page.locator('[data-key="watch"]').click()
                expect(page.locator(".screen.table")).to_be_visible()
                assert page.locator(".standings").count() == 0, "nothing has ended yet"
                watching.set_result(None)
                expect(page.locator(".results .standings")).to_be_visible()
                # What the players were told at the game's end, summed: one game each, the winner first.
                table = seen["table"]
                want = sorted(
                    (
                        [
                            name,
                            "1" if seat in table["winners"] else "0",
                            str(table["totals"][seat]),
                            "1",
                            str(min(row[seat] for row in table["scores"])),
                        ]
                        for seat, name in enumerate(table["players"])
                    ),
                    key=lambda row: (-int(row[1]), int(row[2])),
                )
                assert [r[1:] for r in _rows(page)] == want
                assert want[0][0] == "Ben"
                page.screenshot(path=str(shots / "standings-live-over.png"))
                looked.set_result(None)
                expect(page.locator(".lobby .standings")).to_be_visible()
                assert [r[1:] for r in _rows(page)] == want
                page.screenshot(path=str(shots / "standings-live-lobby.png"), full_page=True)
                done.result(timeout=60)
            finally:
                if not looked.done():
                    looked.set_result(None)
                if not watching.done():
                    watching.set_result(None)
                context.close()
        assert not errors, errors
