"""A player who comes back to a game abandoned meanwhile (nobody was connected for CRISP_IDLE_GAME_HOURS)
finds the room closed, and the page offers the game's record, which downloads. Before that, the last player
to leave a game is told that it waits for them that long (and the Leave question says exactly what happens in
each case), and takes the seat back from the home screen."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from crisp_server.remote.client import CrispClient
from tests.browser.harness import Bots, fits, join_and_play, open_page, watch
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


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    """A server whose games wait two hours for a player (the dialog says so), computer players acting at once."""
    with server_process(tmp_path, {"CRISP_IDLE_GAME_HOURS": "2", "CRISP_BOT_PAUSE": "0"}) as (url, _proc):
        yield url


def _leave_question(page: Page) -> str:
    """Tap Leave; the question's text (left open)."""
    page.locator('[data-key="leave"]').click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    return dialog.inner_text()


def _answer(page: Page, key: str) -> None:
    page.get_by_role("dialog").locator(f'[data-key="{key}"]').click()
    expect(page.get_by_role("dialog")).to_have_count(0)


def _others_leave(bots: Bots) -> None:
    for c in bots.clients:
        bots.run(c.request({"type": "leave"}))


def test_the_last_to_leave_is_told_the_game_waits_and_takes_the_seat_back_from_home(
    browser: Browser, base: str, shots: Path
) -> None:
    """With stand-ins on: while others play, a computer plays for the one who leaves; the last one is told
    that the game waits two hours, with no computer playing, for anyone to take a seat back."""
    bots = Bots(base, ["Ana", "Ben"])
    bots.run(bots.host.set_options(stand_in=30))
    context, page = open_page(browser, 360, 640)
    errors: list[str] = []
    watch(page, errors)
    try:
        join_and_play(page, base, bots, "Me")
        assert "A computer plays for you until you come back" in _leave_question(page)
        _answer(page, "confirm-cancel")
        _others_leave(bots)
        expect(page.locator(".seat.stand-in")).to_have_count(2)  # computers play for Ana and Ben
        question = _leave_question(page)
        page.screenshot(path=str(shots / "leave-last-player.png"))
        assert "You are the last player at the table: the game pauses" in question
        assert "no computer either" in question
        assert "take their seat back within 2 hours" in question
        assert "after that the game ends unfinished" in question
        assert fits(page) == []
        _answer(page, "confirm-ok")
        # The home screen's "Your rooms" takes the seat back: the game is there, and goes on.
        expect(page.get_by_role("button", name="Take your seat back")).to_be_visible()
        page.goto(base)
        rooms = page.locator(".your-rooms")
        expect(rooms).to_contain_text(bots.code)
        rooms.get_by_role("button", name="Take your seat back").click()
        expect(page.locator(".screen.table")).to_be_visible()
        expect(page.locator(".my-name")).to_have_text("Me")
        expect(page.locator(".phase-play")).to_be_visible()
        expect(page.get_by_role("alert")).to_have_count(0)  # not "This room does not exist any more"
        assert not errors, errors
    finally:
        context.close()
        bots.close()


def test_the_last_to_leave_is_told_so_in_german_and_takes_the_seat_back_from_the_link(
    browser: Browser, base: str, shots: Path
) -> None:
    bots = Bots(base, ["Ana", "Ben"])
    context, page = open_page(browser, 360, 640, locale="de-DE", dark=True)
    errors: list[str] = []
    watch(page, errors)
    try:
        join_and_play(page, base, bots, "Me")
        assert "Deine Züge laufen sofort ab, bis du zurückkommst" in _leave_question(page)
        _answer(page, "confirm-cancel")
        _others_leave(bots)
        expect(page.locator(".seat.gone")).to_have_count(2)
        question = _leave_question(page)
        page.screenshot(path=str(shots / "leave-last-player-de.png"))
        assert "Du bist der letzte Spieler am Tisch: Das Spiel wird angehalten" in question
        assert "innerhalb von 2 Stunden seinen Platz wieder einnehmen" in question
        assert fits(page) == []
        _answer(page, "confirm-ok")
        page.get_by_role("button", name="Platz wieder einnehmen").click()
        expect(page.locator(".phase-play")).to_be_visible()
        expect(page.locator(".my-name")).to_have_text("Me")
        assert not errors, errors
    finally:
        context.close()
        bots.close()


def test_leaving_a_practice_game_says_it_waits_and_the_seat_is_taken_back(
    browser: Browser, base: str, shots: Path
) -> None:
    context, page = open_page(browser, 360, 640)
    errors: list[str] = []
    watch(page, errors)
    try:
        page.goto(base)
        page.fill("#name", "Ana")
        page.locator('[data-key="practice"]').click()
        expect(page.locator(".phase-peek")).to_be_visible()
        question = _leave_question(page)
        page.screenshot(path=str(shots / "leave-practice.png"))
        assert "The game pauses: the computer players wait for you" in question
        assert "Take your seat back within 2 hours" in question
        _answer(page, "confirm-ok")
        page.goto(base)
        page.locator(".your-rooms").get_by_role("button", name="Take your seat back").click()
        expect(page.locator(".phase-peek")).to_be_visible()  # the peek starts again in full
        expect(page.locator('[data-key="ready"]')).to_be_enabled()
        assert not errors, errors
    finally:
        context.close()


#: A seat of the state's ``room.seats``: a person (``bot`` None) or a computer player, left or not.
def _seat(name: str, *, left: bool = False, bot: str | None = None) -> dict[str, object]:
    return {"name": name, "connected": not left, "left": left, "ready": False, "bot": bot, "stand_in": False}


def test_the_leave_question_in_every_case(browser: Browser, base: str) -> None:
    """Each case's outcome (as the server acts on Leave) and its words: watching, the lobby, others still
    playing with or without stand-ins, the last player, a practice game, and after the game's end."""
    me = _seat("Me")
    cases = [
        ("watch", None, "lobby", [_seat("Ana")], None),
        ("lobby", 0, "lobby", [me, _seat("Ana")], None),
        ("standIn", 0, "play", [me, _seat("Ana"), _seat("Ben", left=True)], 30),
        ("timeout", 0, "peek", [me, _seat("Ana"), _seat("Ada", bot="easy")], None),
        ("last", 0, "round_over", [me, _seat("Ana", left=True), _seat("Ada", bot="easy")], 30),
        ("practice", 0, "play", [me, _seat("Ada", bot="easy"), _seat("Alan", bot="hard")], None),
        ("over", 0, "game_over", [me, _seat("Ana")], None),
        ("overLast", 0, "game_over", [me, _seat("Ana", left=True), _seat("Ada", bot="easy")], None),
    ]
    context, page = open_page(browser, 360, 640)
    try:
        page.goto(base)
        expect(page.locator(".home")).to_be_visible()
        for expected, seat, phase, seats, stand_in in cases:
            state = {"you": {"seat": seat}, "room": {"phase": phase, "seats": seats, "options": {"stand_in": stand_in}}}
            outcome = page.evaluate(
                "async (s) => (await import('/js/ui.js')).leaveOutcome(s)",
                state,
            )
            assert outcome == expected, (expected, state)
        texts = page.evaluate(
            """async () => {
              const { t, setLang } = await import('/js/i18n.js');
              const out = {};
              for (const lang of ['en', 'de']) {
                await setLang(lang);
                out[lang] = [t('leaveOverDetail'), t('leaveOverLastDetail'), t('waitTime', 1), t('waitTime', 0.5)];
              }
              await setLang('en');
              return out;
            }"""
        )
        assert texts["en"] == [
            "The game is over and its result is kept. Your seat stays yours until the host starts the next game: "
            "take it back with the room's link to play in it.",
            "The game is over and its result is kept. You are the last player here: the room closes.",
            "1 hour",
            "30 minutes",
        ]
        assert texts["de"][1].endswith("Du bist als Letzter hier: Der Raum wird geschlossen.")
        assert texts["de"][2:] == ["1 Stunde", "30 Minuten"]
    finally:
        context.close()
