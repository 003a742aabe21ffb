"""The table as players play it (issue 14): what the peek shows stays visible, no Crisp by accident, every
option round-trips, 8 players fit a small phone, every player can read whose move it is and for how long
(in readable colours), a lost connection is noticed and shown without hiding anything, and a friend who
comes late is offered to watch."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from crisp_server.remote.client import CrispClient
from tests.browser.conftest import rigged_server
from tests.browser.harness import (
    NUMBERS_FIRST,
    SIZES,
    Bots,
    contrast_problems,
    deck,
    fits,
    join,
    join_and_play,
    open_page,
    page_check,
    play_turns,
    sent_messages,
)

# Twelve number cards dealt to up to four players, then a 5 (the starter's draw) and a King (the next
# player's draw): every draw of a test below is known.
TURN_DECK = deck(["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "2H", "3H", "4H", "5H", "5C", "KS", "4C", "6C"])
# How the lobby's select values go over the wire.
OPTION_VALUES: dict[str, object] = {"none": None, "true": True, "false": False}

CARD_COVERED = page_check("covered")


@pytest.fixture
def base(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    decks = getattr(request, "param", [TURN_DECK] * 3)
    yield from rigged_server(tmp_path, decks)


def bot_names(n: int) -> list[str]:
    return ["Ana", "Ben", "Cem", "Dan", "Eva", "Finn", "Gina"][:n]


@pytest.mark.parametrize("players", [2, 8])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_peek_leaves_the_shown_cards_visible(
    browser: Browser, base: str, shots: Path, *, width: int, height: int, players: int
) -> None:
    bots = Bots(base, bot_names(players - 1))
    context, page = open_page(browser, width, height)
    try:
        join(page, base, bots.code, "Me")
        bots.run(bots.host.start())
        expect(page.locator(".phase-peek")).to_be_visible()
        for slot in ("left", "right"):
            expect(page.locator(f'[data-key="slot-{slot}"]')).to_have_attribute("aria-label", re.compile(r": \w"))
        page.screenshot(path=str(shots / f"peek-{players}-players-{width}x{height}.png"))
        for slot in ("left", "right"):
            covered = page.evaluate(CARD_COVERED, f"slot-{slot}")
            assert not covered, f"the {slot} card is covered at {width}x{height} by {covered}"
        ready = page.locator('[data-key="ready"]')
        expect(ready).to_be_in_viewport(ratio=1)
    finally:
        context.close()
        bots.close()


def test_two_quick_taps_on_discard_never_call_crisp(browser: Browser, base: str) -> None:
    """The Crisp button appears when the turn ends: a second tap meant for Discard must not call it."""
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    frames = sent_messages(page)
    try:
        join_and_play(page, base, bots, "Me")
        page.locator('[data-key="act-draw"]').click()  # Me (seat 1) starts
        discard = page.locator('[data-key="act-discard"]')
        expect(discard).to_be_enabled()
        box = discard.bounding_box()
        assert box is not None
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.touchscreen.tap(x, y)
        page.wait_for_timeout(250)
        page.touchscreen.tap(x, y)
        crisp = page.locator('[data-key="crisp"]')
        expect(crisp).to_be_visible()
        page.wait_for_timeout(600)
        assert not [f for f in frames if '"crisp"' in f], frames
        assert sum('"discard"' in f for f in frames) == 1, frames
        # A press that began before the button was there (the last pointerdown was the second tap) and
        # ends on it once it is armed is not taken either.
        expect(crisp).to_be_enabled()
        crisp.dispatch_event("click", {"detail": 1})
        page.wait_for_timeout(300)
        assert not [f for f in frames if '"crisp"' in f], frames
        # Called on purpose, it works.
        crisp.click()
        expect(page.locator(".crisp-badge").first).to_be_visible()
        assert [f for f in frames if '"crisp"' in f]
    finally:
        context.close()
        bots.close()


def test_every_option_round_trips_to_every_lobby(browser: Browser, base: str) -> None:
    host_context, host = open_page(browser, 412, 915)
    guest_context, guest = open_page(browser, 360, 640, locale="de-DE")
    try:
        host.goto(base)
        host.fill("#name", "Ana")
        host.locator('[data-key="create"]').click()
        expect(host.locator(".lobby")).to_be_visible()
        code = host.locator(".code-badge").inner_text().strip()
        bots = Bots(base, ["Cid"], code=code)  # one more lobby that must agree: the server's own view
        try:
            join(guest, base, code, "Ben")
            for key in ("score_limit", "turn_seconds", "discard_draw", "stand_in", "big_screen"):
                values = host.locator(f'[data-key="opt-{key}"] option').evaluate_all("els => els.map(e => e.value)")
                assert len(values) >= 2, key
                for value in [*values[1:], values[0]]:
                    host.select_option(f'[data-key="opt-{key}"]', value)
                    expect(host.locator(f'[data-key="opt-{key}"]')).to_have_value(value)
                    expect(guest.locator(f'[data-key="opt-{key}"]')).to_have_value(value)
                    sent = OPTION_VALUES.get(value, int(value) if value.isdigit() else value)
                    bots.run(bots.clients[0].wait_for(option_is(key, sent), what=f"{key} = {value}"))
        finally:
            bots.close()
    finally:
        host_context.close()
        guest_context.close()


def option_is(key: str, value: object) -> Callable[[CrispClient], bool]:
    return lambda c: c.state is not None and c.state["room"]["options"][key] == value


LONG_NAMES = ["Alexandra", "Benedikt", "Christina", "Dominik", "Elisabeth", "Friedrich", "Gabriele"]


@pytest.mark.parametrize("base", [[NUMBERS_FIRST] * 3], indirect=True)
def test_eight_players_fit_a_small_phone(browser: Browser, base: str, shots: Path) -> None:
    bots = Bots(base, LONG_NAMES)
    context, page = open_page(browser, 360, 640)
    try:
        join(page, base, bots.code, "Maximilian")
        expect(page.locator(".seats li")).to_have_count(8)
        page.screenshot(path=str(shots / "fit-8-lobby-360x640.png"), full_page=True)
        assert fits(page, controls=False) == []  # the lobby scrolls: its controls need not all be on screen
        bots.run(bots.host.start())
        expect(page.locator(".phase-peek")).to_be_visible()
        page.screenshot(path=str(shots / "fit-8-peek-360x640.png"))
        assert fits(page) == [], "peek"
        for c in bots.clients:
            bots.run(c.ready())
        page.locator('[data-key="ready"]').click()
        expect(page.locator(".phase-play")).to_be_visible()
        page.screenshot(path=str(shots / "fit-8-table-360x640.png"))
        assert fits(page) == [], "table"
        # Ben (seat 1) starts and calls Crisp; everyone else has a final turn, Maximilian (the page) last.
        bots.spawn(play_turns(bots.clients[1], call_crisp=True))
        for c in bots.clients[2:] + bots.clients[:1]:
            bots.spawn(play_turns(c))
        expect(page.locator(".crisp-badge").first).to_be_visible(timeout=20_000)
        page.locator('[data-key="act-draw"]').click(timeout=30_000)
        page.screenshot(path=str(shots / "fit-8-my-turn-360x640.png"))
        assert fits(page) == [], "my turn"
        page.locator('[data-key="act-discard"]').click()
        expect(page.locator(".overlay.results")).to_be_visible()
        page.screenshot(path=str(shots / "fit-8-round-over-360x640.png"))
        assert fits(page) == [], "round over"
    finally:
        context.close()
        bots.close()


def test_a_late_friend_is_offered_to_watch(browser: Browser, base: str) -> None:
    bots = Bots(base, ["Ana", "Ben"])
    context, page = open_page(browser, 360, 640)
    try:
        bots.run(bots.start_and_ready())
        page.goto(f"{base}/r/{bots.code}")
        watch = page.locator('[data-key="watch"]')
        expect(watch).to_be_visible()
        expect(page.locator('[data-key="join"]')).to_have_count(0)
        expect(page.locator(".late")).to_contain_text("lobby")  # when a seat can be had
        watch.click()
        expect(page.locator(".spectating")).to_be_visible()
    finally:
        context.close()
        bots.close()


def countdown_values(page: Page, selector: str, ms: int) -> list[int]:
    """The numbers a countdown shows, read every 100 ms for ``ms``."""
    values: list[int] = []
    for _ in range(ms // 100):
        text = page.locator(selector).first.inner_text() if page.locator(selector).count() else ""
        values += [int(x) for x in re.findall(r"\d+", text)]
        page.wait_for_timeout(100)
    return values


@pytest.mark.parametrize("dark", [False, True])
def test_every_player_reads_whose_move_it_is(browser: Browser, base: str, shots: Path, dark: bool) -> None:
    """Ana, Ben and Cem are bots, the page is Dan: Ben starts, then Cem, who draws a King."""
    bots = Bots(base, ["Ana", "Ben", "Cem"])
    context, page = open_page(browser, 360, 640, dark=dark)
    theme = "dark" if dark else "light"
    try:
        bots.run(bots.host.set_options(turn_seconds=30))
        join(page, base, bots.code, "Dan")
        assert contrast_problems(page) == [], "lobby"
        bots.run(bots.start_and_ready())
        assert contrast_problems(page) == [], "peek"
        page.locator('[data-key="ready"]').click()
        ben, cem = bots.clients[1], bots.clients[2]
        expect(page.locator(".turn-state")).to_contain_text("Ben: draw")
        assert max(countdown_values(page, ".turn-state", 600)) <= 30
        bots.run(ben.draw())
        bots.run(ben.discard())
        # Ben's crisp window: everyone reads it, with the seconds left; Cem may not draw yet.
        expect(page.locator(".turn-state")).to_contain_text("Ben may call Crisp")
        page.screenshot(path=str(shots / f"turn-window-{theme}-360x640.png"))
        assert contrast_problems(page) == [], "the crisp window"
        window = countdown_values(page, ".turn-state", 900)
        assert window, "no countdown in the crisp window"
        assert max(window) <= 3, window
        assert min(window) >= 1, window
        expect(page.locator(".turn-state")).to_contain_text("Cem: draw", timeout=4000)
        clock = countdown_values(page, ".turn-state", 1500)
        assert clock, "no turn clock"
        assert max(clock) <= 30, clock
        # Cem draws the King and plays it: two extra moves to come.
        bots.run(cem.draw())
        bots.run(cem.king())
        expect(page.locator(".extra-moves")).to_have_text("2 extra moves to play")
        bots.run(cem.draw())
        bots.run(cem.discard())
        expect(page.locator(".extra-moves")).to_have_text("Last extra move")
        bots.run(cem.draw())
        bots.run(cem.discard())
        expect(page.locator(".extra-moves")).to_have_count(0)
        # Dan's own turn, after Cem's window.
        expect(page.locator(".turn-state")).to_contain_text("Cem may call Crisp")
        expect(page.locator(".turn-state")).to_contain_text("Your turn: draw", timeout=4000)
        page.screenshot(path=str(shots / f"turn-mine-{theme}-360x640.png"))
        assert contrast_problems(page) == [], "my turn"
    finally:
        context.close()
        bots.close()


def test_a_lost_connection_is_noticed_and_blocks_moves(browser: Browser, base: str, shots: Path) -> None:
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    try:
        join_and_play(page, base, bots, "Me")
        expect(page.locator('[data-key="act-draw"]')).to_be_enabled()
        context.set_offline(True)
        expect(page.locator("#status.show")).to_be_visible(timeout=5000)
        page.screenshot(path=str(shots / "offline-360x640.png"))
        for key in ("act-draw", "draw-pile", "react-👍"):
            expect(page.locator(f'[data-key="{key}"]')).to_be_disabled()
        # The bar hides nothing: every button of the table's header is still where a finger finds it.
        hidden = page.evaluate(
            """() => [...document.querySelectorAll('.table .bar > button, .table .bar > span')].filter((b) => {
                 const r = b.getBoundingClientRect();
                 const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                 return !b.contains(top);
               }).map((b) => b.dataset.key || b.textContent)"""
        )
        assert hidden == []
        context.set_offline(False)
        expect(page.locator("#status.show")).to_have_count(0, timeout=15_000)
        expect(page.locator('[data-key="act-draw"]')).to_be_enabled()
    finally:
        context.close()
        bots.close()
