"""The table on a big screen (/tv/CODE), as friends in one living room see it on a TV or a laptop.

A whole game of four (two players over the protocol, two computer players) is watched on the big screen at
1920x1080 and at 1280x720: the lobby with its QR code and the players who joined, every move's line, the
crisp window and the call, the round's reveal, the results, the scores and the evening's standings, the
rematch back to the lobby. Every frame the big screen receives is audited card by card (it is a spectator: no
card it may not know), every screen is checked for what does not fit, axe-clean, and read for size: at
1920x1080 no text under 28 px and no card on the table under 120 px tall. The lobby's "Show on a big screen"
gives the address and its QR code; a closed room and a mistyped code are said in large.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from crisp_server.remote.client import CrispClient, ProtocolError
from tests.browser.harness import LANGUAGES, Bots, open_page, page_check, play_turns, watch
from tests.browser.test_computer_players import accessibility_problems, create_room
from tests.e2e.procs import server_process
from tests.web.audit import audit

SCORE_LIMIT = 50
#: How long the players wait at a round's end before Ready: the big screen's reveal, then its results.
READ_RESULTS_S = 6.5
#: The events the table tells in a line (lines.js), whose lines the big screen must draw.
TOLD = {
    *("drew", "swapped", "discarded", "timed_out"),
    *("jack_used", "queen_used", "king_used", "crisp_called", "round_ended"),
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The real server; its computer players wait 0.3 s before a move, so that the moves can be followed."""
    env = {"CRISP_BOT_PAUSE": "0.3", "CRISP_PEEK_SECONDS": "3", "CRISP_NEXT_ROUND_SECONDS": "20"}
    with server_process(tmp_path, env) as (url, _proc):
        yield url


def shown(bots: Bots, locator: Locator, timeout_s: float) -> None:
    """Wait until ``locator`` is visible while the players over the protocol play on; a player's error
    (a refused move, a lost connection) fails the test at once, with its own message."""
    deadline = time.monotonic() + timeout_s
    while not locator.is_visible():
        for task in bots.tasks:
            if task.done() and task.exception() is not None:
                raise AssertionError(f"a player stopped: {task.exception()!r}")
        assert time.monotonic() < deadline, f"not shown in {timeout_s} s: {locator}"
        time.sleep(0.2)


def sizes(page: Page) -> dict[str, Any]:
    return dict(page.evaluate(page_check("tv_sizes")))


def check_screen(page: Page, shots: Path, name: str, size: tuple[int, int], cards: bool = True) -> None:
    """What the big screen shows now: fits, axe-clean, readable from the sofa at 1920x1080; saved as a shot."""
    page.wait_for_timeout(300)  # the flights land
    page.screenshot(path=shots / f"tv-{size[0]}x{size[1]}-{name}.png")
    got = sizes(page)
    assert not got["outside"], (name, got["outside"])
    assert not page.evaluate(page_check("overflow")), (name, page.evaluate(page_check("overflow")))
    assert not accessibility_problems(page), (name, accessibility_problems(page))
    if size == (1920, 1080):
        assert got["smallestText"] >= 28, (name, got)
        if cards:
            assert got["smallestCard"] is not None, (name, got)
            assert got["smallestCard"] >= 120, (name, got)


def received(page: Page) -> list[dict[str, Any]]:
    """Every message the page receives over its WebSockets, parsed (the list fills as they come)."""
    frames: list[dict[str, Any]] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(json.loads(payload))))
    return frames


#: Every line the page's table drew, as it drew it (a MutationObserver on the event line).
COLLECT_LINES = """() => {
  window.__told = [];
  new MutationObserver(() => {
    for (const span of document.querySelectorAll("#app .event-line span")) {
      const text = span.textContent.trim();
      if (text && !window.__told.slice(-3).includes(text)) window.__told.push(text);
    }
  }).observe(document.getElementById("app"), { childList: true, subtree: true });
}"""

#: The line each event of `events` makes (lines.js, as the big screen tells it: nobody's own point of view).
LINES_OF = """async ([events, seats]) => {
  const { eventLine } = await import("/js/lines.js");
  const who = (seat) => seats[seat] ?? "?";
  return events.map((e) => eventLine(e, null, who, who) ?? null);
}"""


async def ana_plays(ana: CrispClient, call_crisp: bool) -> None:
    """Ana's turns of a round; she calls Crisp after her first turn unless someone called before her."""
    try:
        await play_turns(ana, call_crisp=call_crisp)
    except (TimeoutError, ProtocolError):
        # A computer player called first (no window for her), or her window closed before her call came on
        # a loaded machine: she plays the round out.
        await play_turns(ana)


async def humans_play(ana: CrispClient, ben: CrispClient) -> None:
    """Ana and Ben play every round to the game's end: Ana calls Crisp in the first round, each waits at a
    round's end until the big screen has shown the reveal and the results, then says Ready."""
    rounds = 0
    while True:
        for c in (ana, ben):
            await c.wait_for(lambda c: c.phase in ("peek", "play", "game_over"), timeout=60, what="a deal")
        if ana.phase == "game_over":
            return
        for c in (ana, ben):
            if c.phase == "peek":
                await c.ready()
        await asyncio.gather(ana_plays(ana, call_crisp=rounds == 0), play_turns(ben))
        rounds += 1
        await asyncio.sleep(READ_RESULTS_S)
        if ana.phase == "game_over":
            return
        for c in (ana, ben):
            if c.phase == "round_over":
                await c.ready()
        for c in (ana, ben):
            await c.wait_for(lambda c: c.phase != "round_over", timeout=30, what="the next deal")


#: The big screen's sizes: a TV (1080p) and a laptop or an older TV (720p).
SIZES = [(1920, 1080), (1280, 720)]


def check_both(page: Page, shots: Path, name: str, cards: bool = True) -> None:
    """``check_screen`` at each of SIZES, the page resized; it is left at 1080p."""
    for size in reversed(SIZES):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        check_screen(page, shots, name, size, cards)


def test_a_whole_game_of_four_on_the_big_screen(browser: Browser, server: str, shots: Path) -> None:
    """The lobby and the game's end at both sizes; the rounds in turn at 1080p and at 720p."""
    bots = Bots(server, ["Ana", "Ben"])
    context, tv = open_page(browser, *SIZES[0])
    errors: list[str] = []
    watch(tv, errors)
    frames = received(tv)
    try:
        host = bots.host
        options = {"score_limit": SCORE_LIMIT, "turn_seconds": None, "discard_draw": False}
        bots.run(host.request({"type": "options", **options}))
        for level in ("normal", "hard"):
            bots.run(host.request({"type": "add_bot", "level": level}))

        tv.goto(f"{server}/tv/{bots.code}")
        tv.evaluate(COLLECT_LINES)
        lobby = tv.locator(".tv-lobby")
        expect(lobby).to_be_visible()
        expect(lobby.locator(".tv-players li")).to_have_count(4)
        expect(lobby.locator(".tv-link")).to_have_text(f"127.0.0.1:{server.rsplit(':', 1)[1]}/r/{bots.code}")
        qr = lobby.locator("img.qr")
        expect(qr).to_have_attribute("src", f"/api/rooms/{bots.code}/qr.svg")
        assert tv.evaluate("(img) => img.complete && img.naturalWidth > 0", qr.element_handle())
        assert tv.locator(".bar .code-badge").inner_text() == bots.code
        # Sound is on by default on a big screen, with its switch.
        expect(tv.locator('[data-key="sound"]')).to_have_attribute("aria-pressed", "true")
        check_both(tv, shots, "lobby", cards=False)
        assert tv.evaluate("() => location.pathname") == f"/tv/{bots.code}"

        bots.run(host.start())
        bots.spawn(humans_play(bots.clients[0], bots.clients[1]))
        expect(tv.locator(".table.tv.phase-peek")).to_be_visible()
        check_screen(tv, shots, "peek", SIZES[0])

        over = tv.locator(".table.tv.phase-game_over .tv-results")
        for number in itertools.count():
            size = SIZES[number % 2]
            tv.set_viewport_size({"width": size[0], "height": size[1]})
            shown(bots, tv.locator(".table.tv.phase-play, .table.tv.phase-game_over"), 60)
            if over.is_visible():
                break
            if number < len(SIZES):
                expect(tv.locator(".seat.turn")).to_have_count(1)
                check_screen(tv, shots, f"play-{number + 1}", size)
            if number == 0:
                # The crisp window after Ana's first turn, and her call (or a computer player's before it).
                flash = tv.locator(".crisp-flash")
                shown(bots, flash, 60)
                expect(flash).to_have_text(re.compile(r"^(Ana|Ben|Ada|Alan) calls Crisp!$"))
                tv.screenshot(path=shots / f"tv-{size[0]}x{size[1]}-crisp-called.png")
            # The round's end: every hand face up with its sum (and a caller's -5 or +5), then the results.
            reveal = tv.locator(".table.tv.revealing")
            shown(bots, reveal, 120)
            if number < len(SIZES):
                expect(reveal.locator(".seat .total.sum")).to_have_count(4)
                expect(reveal.locator(".seat .card.face")).to_have_count(12)
                if number == 0:
                    expect(reveal.locator(".seat .bonus")).to_have_count(1)
                tv.wait_for_timeout(900)  # the cards turned face up
                check_screen(tv, shots, f"reveal-{number + 1}", size)
            results = tv.locator(".tv-results")
            expect(results).to_be_visible(timeout=10_000)
            if over.is_visible():
                break
            if number < len(SIZES):
                expect(results.locator(".round-table tbody tr")).to_have_count(4)
                expect(results.locator("table.scores")).to_be_visible()
                check_screen(tv, shots, f"results-{number + 1}", size, cards=False)
            shown(bots, tv.locator(".table.tv:not(.phase-round_over)"), 60)

        # The game's end: the winner, the scores and the evening's standings; then the rematch.
        expect(over.locator(".standings-table tbody tr")).to_have_count(4)
        check_both(tv, shots, "game-over", cards=False)

        bots.run(host.request({"type": "rematch"}))
        expect(tv.locator(".tv-lobby .tv-players li")).to_have_count(4)

        # Every frame the big screen got: a spectator's, card by card (tests/web/audit.py).
        messages = [m for m in frames if m.get("type") in ("welcome", "update", "snapshot", "error")]
        assert not [m for m in messages if m["type"] == "error"]
        report = audit([m for m in messages if m["type"] != "welcome"], None, SCORE_LIMIT)
        assert report.rounds >= 2
        assert len(report.games) == 1
        for m in messages:
            if m["type"] == "update":
                assert m["you"]["seat"] is None
                assert m["you"]["drawn_card"] is None
                assert not [e for e in m.get("events", []) if e["type"] == "card_shown"]

        # Every move's line was drawn on the big screen.
        seats = [s["name"] for s in next(m for m in reversed(messages) if m["type"] == "update")["room"]["seats"]]
        events = [e for m in messages if m["type"] == "update" for e in m.get("events", []) if e["type"] in TOLD]
        expected = [line for line in tv.evaluate(LINES_OF, [events, seats]) if line]
        told = tv.evaluate("() => window.__told")
        missing = [line for line in dict.fromkeys(expected) if line not in told]
        assert not missing, missing[:10]
        assert {e["type"] for e in events} >= {"drew", "discarded", "crisp_called", "round_ended"}
        assert not errors, errors
    finally:
        context.close()
        bots.close()


def test_the_lobby_offers_the_big_screen_and_a_closed_room_is_said(browser: Browser, server: str, shots: Path) -> None:
    bots = Bots(server, ["Ana"])
    phone_context, phone = open_page(browser, 360, 640)
    tv_context, tv = open_page(browser, 1280, 720)
    errors: list[str] = []
    watch(phone, errors)
    watch(tv, errors)
    try:
        phone.goto(f"{server}/r/{bots.code}")
        phone.fill("#name", "Ben")
        phone.locator('[data-key="join"]').click()
        phone.locator('[data-key="big-screen"]').click()
        dialog = phone.locator("dialog.big-screen-dialog")
        expect(dialog).to_be_visible()
        port = server.rsplit(":", 1)[1]
        expect(dialog.locator('[data-key="big-screen-link"]')).to_have_text(f"127.0.0.1:{port}/tv/{bots.code}")
        expect(dialog.locator('[data-key="big-screen-open"]')).to_have_attribute("href", f"{server}/tv/{bots.code}")
        qr = dialog.locator("img.qr")
        expect(qr).to_have_attribute("src", f"/api/rooms/{bots.code}/qr.svg?for=tv")
        assert phone.evaluate("(img) => img.complete && img.naturalWidth > 0", qr.element_handle())
        expect(dialog.locator('[data-key="big-screen-compact"]')).to_have_count(0)  # the host's, not Ben's
        phone.screenshot(path=shots / "tv-lobby-dialog-360x640.png")
        assert not accessibility_problems(phone)
        dialog.locator('[data-key="big-screen-close"]').click()
        expect(dialog).to_have_count(0)

        tv.goto(f"{server}/tv/{bots.code.lower()}")
        expect(tv.locator(".tv-lobby .tv-players li")).to_have_count(2)
        # Ben leaves, then Ana: the room closes, and the big screen says so.
        phone.locator('[data-key="leave"]').click()
        phone.locator('[data-key="confirm-ok"]').click()
        expect(tv.locator(".tv-lobby .tv-players li")).to_have_count(1)
        bots.run(bots.host.request({"type": "leave"}))
        gone = tv.locator(".tv-gone h1")
        expect(gone).to_have_text("This room does not exist any more.")
        tv.screenshot(path=shots / "tv-1280x720-gone.png")
        assert not accessibility_problems(tv)

        tv.goto(f"{server}/tv/QQQQQQ")
        expect(tv.locator(".tv-gone h1")).to_be_visible()
        assert not errors, errors
    finally:
        phone_context.close()
        tv_context.close()
        bots.close()


def test_the_big_screen_follows_a_server_restart(tmp_path: Path, browser: Browser, shots: Path) -> None:
    """The big screen needs no hand: the server restarts, and it shows the same room again by itself."""
    port_env: dict[str, str] = {"CRISP_BOT_PAUSE": "0"}
    with server_process(tmp_path, port_env) as (base, proc):
        bots = Bots(base, ["Ana", "Ben"])
        code = bots.code
        bots.close()
        port = int(base.rsplit(":", 1)[1])
        context, tv = open_page(browser, 1280, 720)
        try:
            tv.goto(f"{base}/tv/{code}")
            expect(tv.locator(".tv-lobby .tv-players li")).to_have_count(2)
            proc.terminate()
            proc.wait(30)
            expect(tv.locator("#status.show")).to_be_visible()
            with server_process(tmp_path, port_env, port=port) as (again, _proc):
                assert again == base
                expect(tv.locator("#status.show")).to_have_count(0, timeout=30_000)
                expect(tv.locator(".tv-lobby .tv-players li")).to_have_count(2)
                assert httpx.get(f"{base}/api/rooms/{code}").status_code == 200
        finally:
            context.close()


#: An init script: navigator.wakeLock.request recorded (window.__locks) and granted, as a TV's browser would.
WAKE_LOCK = """(() => {
  window.__locks = [];
  const lock = () => {
    const sentinel = new EventTarget();
    sentinel.released = false;
    sentinel.release = async () => { sentinel.released = true; };
    return sentinel;
  };
  Object.defineProperty(Navigator.prototype, "wakeLock", {
    configurable: true,
    get() {
      return { request: async (type) => { window.__locks.push(type); return lock(); } };
    },
  });
})()"""


def test_eight_seats_sound_on_and_the_screen_kept_awake(browser: Browser, server: str, shots: Path) -> None:
    """Eight seats fit the big screen at 1920x1080 with cards of 120 px and more; its sound is on without a
    tap (a phone's is off by default), and it asks to keep the screen awake from the lobby on. Its own sound
    switch turns it off, and the page remembers it."""
    bots = Bots(server, ["Ana", "Ben"])
    context, tv = open_page(browser, 1920, 1080)
    context.add_init_script(path=str(Path(__file__).resolve().parent / "js" / "fake_audio.js"))
    context.add_init_script(WAKE_LOCK)
    errors: list[str] = []
    watch(tv, errors)
    try:
        host = bots.host
        for _ in range(6):
            bots.run(host.request({"type": "add_bot", "level": "easy"}))
        tv.goto(f"{server}/tv/{bots.code}")
        expect(tv.locator(".tv-lobby .tv-players li")).to_have_count(8)
        expect(tv.locator(".tv-join h1")).to_have_text("The table is full")
        check_screen(tv, shots, "lobby-8", (1920, 1080), cards=False)
        tv.wait_for_function("() => window.__locks.includes('screen')")

        bots.run(bots.start_and_ready())
        bots.spawn(play_turns(bots.clients[0]))
        bots.spawn(play_turns(bots.clients[1]))
        expect(tv.locator(".table.tv.seats-8.phase-play")).to_be_visible()
        expect(tv.locator(".opponents:not(.below) .seat")).to_have_count(4)
        expect(tv.locator(".opponents.below .seat")).to_have_count(4)
        tv.wait_for_function("() => window.__notes.length >= 3", timeout=30_000)  # moves heard, no tap
        bots.run(bots.clients[1].react("🔥"))  # a reaction floats up large over Ben's seat
        reaction = tv.locator(".seat .float-reaction")
        expect(reaction).to_have_text("🔥")
        assert reaction.evaluate("(el) => parseFloat(getComputedStyle(el).fontSize)") >= 80
        check_screen(tv, shots, "play-8", (1920, 1080))
        played = tv.evaluate(page_check("sounds_played"))
        assert {"draw", "discard"} & set(played), played

        tv.locator('[data-key="sound"]').click()
        expect(tv.locator('[data-key="sound"]')).to_have_attribute("aria-pressed", "false")
        tv.reload()
        expect(tv.locator('[data-key="sound"]')).to_have_attribute("aria-pressed", "false")
        notes = tv.evaluate("() => window.__notes.length")
        tv.wait_for_timeout(3000)  # moves go on; none is heard now
        assert tv.evaluate("() => window.__notes.length") == notes
        assert not errors, errors
    finally:
        context.close()
        bots.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_big_screen_in_each_language(browser: Browser, server: str, shots: Path, lang: str) -> None:
    """The lobby, the table and a round's end on the big screen fit, in each language (light and dark in
    turn), at 1280x720, and read from the sofa at 1920x1080."""
    dark = LANGUAGES.index(lang) % 2 == 1
    bots = Bots(server, ["Annabelle", "Bartholomew"])
    context, tv = open_page(browser, 1280, 720, locale=lang, dark=dark)
    errors: list[str] = []
    watch(tv, errors)
    try:
        # The turn timer on and drawing from the discard pile allowed: the clock's ring, the options' words.
        options = {"score_limit": 100, "turn_seconds": 30, "discard_draw": True}
        bots.run(bots.host.request({"type": "options", **options}))
        for level in ("normal", "hard"):
            bots.run(bots.host.request({"type": "add_bot", "level": level}))
        tv.goto(f"{server}/tv/{bots.code}")
        expect(tv.locator(".tv-lobby .tv-players li")).to_have_count(4)
        assert tv.evaluate("() => document.documentElement.lang") == lang
        for size in ((1280, 720), (1920, 1080)):
            tv.set_viewport_size({"width": size[0], "height": size[1]})
            check_screen(tv, shots, f"lobby-{lang}", size, cards=False)
        bots.run(bots.start_and_ready())
        bots.spawn(ana_plays(bots.clients[0], call_crisp=True))
        bots.spawn(play_turns(bots.clients[1]))
        expect(tv.locator(".table.tv.phase-play")).to_be_visible()
        for size in ((1920, 1080), (1280, 720)):
            tv.set_viewport_size({"width": size[0], "height": size[1]})
            check_screen(tv, shots, f"play-{lang}", size)
        shown(bots, tv.locator(".tv-results"), 60)
        for size in ((1280, 720), (1920, 1080)):
            tv.set_viewport_size({"width": size[0], "height": size[1]})
            check_screen(tv, shots, f"results-{lang}", size, cards=False)
        assert not errors, errors
    finally:
        context.close()
        bots.close()


def test_the_host_turns_the_phones_compact_from_the_big_screen_dialog(
    browser: Browser, server: str, shots: Path
) -> None:
    context, phone = open_page(browser, 360, 640, dark=True)
    errors: list[str] = []
    watch(phone, errors)
    try:
        code = create_room(phone, server, "Ana")
        bots = Bots(server, ["Ben"], code=code)
        phone.locator('[data-key="big-screen"]').click()
        box = phone.locator('dialog.big-screen-dialog [data-key="big-screen-compact"]')
        expect(box).not_to_be_checked()
        phone.screenshot(path=shots / "tv-lobby-dialog-host-360x640-dark.png")
        box.check()
        bots.run(bots.clients[0].wait_for(lambda c: (c.state or {})["room"]["options"]["big_screen"] is True))
        phone.locator('[data-key="big-screen-close"]').click()
        expect(phone.locator('[data-key="opt-big_screen"]')).to_have_value("true")
        bots.close()
        assert not errors, errors
    finally:
        context.close()
