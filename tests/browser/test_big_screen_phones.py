"""A big screen shows the table (the room's ``big_screen`` option): the players' phones show a compact table
that fits with eight players on a small phone, the hand and the moves in sight; the host turns it on in the
lobby and off and on again at the table, and the other phones follow. One server for the module."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.harness import Bots, deck, fits, join, join_and_play, open_page, page_check
from tests.browser.test_sound_and_vibration import ONE_LINE, ROUND_TEN_ON_ONE_LINE
from tests.e2e.procs import server_process

SEATS = page_check("seats")
OVERFLOW = page_check("overflow")
NAMES = ["Alexandra", "Benedikt", "Christina", "Dominik", "Elisabeth", "Friedrich", "Gabriele"]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        "CRISP_TEST_DECKS": json.dumps([deck(["2S", "3S", "4S", "5S", "6S", "7S", "8S"])] * 100),
        "CRISP_LOOKUP_BURST": "1000",
        "CRISP_LOOKUP_PER_MINUTE": "10000",
    }
    data = tmp_path_factory.mktemp("server")
    with server_process(data, env, rigged=True, log=data / "server.log") as (url, _proc):
        yield url


def my_move_with_a_crowded_table(page: Page) -> None:
    """The page's move (draw or take), with a seat as crowded as one gets: a computer player standing in for
    its away host, who called Crisp, with a three-digit total (the server sends these fields as they are)."""
    page.evaluate(
        """async () => {
             const { app, actions } = await import('/js/state.js');
             const { room, table, you } = app.state;
             Object.assign(room.seats[0], { stand_in: true, connected: false });
             table.round.caller = 0;
             table.round.final_turns_left = 6;
             table.round.turn = you.seat;
             table.round.drawn = null;
             table.round.discard = ['9H'];
             table.totals[0] = 142;
             you.can = ['draw_deck', 'draw_discard'];
             actions.render();
           }"""
    )


def assert_seats_keep_to_their_boxes(page: Page) -> None:
    problems = page.evaluate(SEATS)["problems"]
    assert not problems, "\n".join(problems)


def off_screen(page: Page) -> list[str]:
    """What does not fit (``fits``), but the reactions: on a short phone their row scrolls sideways, by design."""
    return [problem for problem in fits(page) if not problem.startswith("off screen: react-")]


def hand_width(page: Page) -> float:
    box = page.locator(".my-hand .card").first.bounding_box()
    assert box is not None
    return box["width"]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize(("width", "height"), [(360, 640), (320, 568)])
def test_eight_players_compact_table_fits_a_small_phone(
    browser: Browser, base: str, shots: Path, width: int, height: int, *, dark: bool
) -> None:
    bots = Bots(base, NAMES)
    context, page = open_page(browser, width, height, dark=dark)
    theme = "dark" if dark else "light"
    try:
        join_and_play(page, base, bots, "Maximilian")
        my_move_with_a_crowded_table(page)
        expect(page.locator('[data-key="act-draw"]')).to_be_visible()
        full_hand = hand_width(page)
        expect(page.locator(".event-line")).to_have_count(1)

        bots.run(bots.host.request({"type": "options", "big_screen": True}))
        expect(page.locator(".screen.table.big-screen")).to_be_visible()
        my_move_with_a_crowded_table(page)
        page.wait_for_timeout(450)  # the deal's card animations
        page.screenshot(path=str(shots / f"big-screen-8p-{width}x{height}-{theme}.png"))
        assert off_screen(page) == []
        assert_seats_keep_to_their_boxes(page)
        expect(page.locator(".opponents .seat")).to_have_count(7)
        for seat in page.locator(".opponents .seat").all():
            expect(seat).to_be_in_viewport(ratio=1)
        expect(page.locator(".opponents .seat.turn")).to_have_count(0)  # the page's own move
        for key in ("act-draw", "act-take", "slot-left", "slot-middle", "slot-right", "draw-pile", "discard-pile"):
            expect(page.locator(f'[data-key="{key}"]')).to_be_in_viewport(ratio=1)
        expect(page.locator(".turn-state")).to_be_in_viewport(ratio=1)
        expect(page.locator(".final-turns")).to_be_visible()
        expect(page.locator(".event-line")).to_have_count(0)  # the big screen tells the moves
        assert hand_width(page) > full_hand  # the hand takes the room the strip gives back

        # Another player's move: their seat is marked, and their held card stays in its box.
        page.evaluate(
            """async () => {
                 const { app, actions } = await import('/js/state.js');
                 Object.assign(app.state.table.round, { turn: 1, drawn: { card: null, from: 'deck' } });
                 app.state.you.can = [];
                 actions.render();
               }"""
        )
        expect(page.locator(".opponents .seat.turn")).to_have_count(1)
        expect(page.locator(".seat .holding")).to_have_count(1)
        assert_seats_keep_to_their_boxes(page)

        # A Queen's targets in the strip: every one on screen, and tall enough to tap.
        page.evaluate(
            """async () => {
                 const { app, actions } = await import('/js/state.js');
                 app.queen = { slot: 'left' };
                 actions.render();
               }"""
        )
        targets = page.locator("button.mini-card.target")
        expect(targets).to_have_count(21)
        page.screenshot(path=str(shots / f"big-screen-8p-queen-{width}x{height}-{theme}.png"))
        assert off_screen(page) == []
        for target in targets.all():
            box = target.bounding_box()
            assert box is not None
            assert box["height"] >= 44
    finally:
        context.close()
        bots.close()


def host_page(browser: Browser, base: str, name: str = "Maximilian") -> tuple[Page, str]:
    _context, page = open_page(browser, 360, 640)
    page.goto(base)
    page.fill("#name", name)
    page.locator('[data-key="create"]').click()
    expect(page.locator(".lobby")).to_be_visible()
    return page, page.locator(".lobby .code-badge").inner_text().strip()


def test_the_host_turns_the_big_screen_on_and_off_and_the_other_phones_follow(
    browser: Browser, base: str, shots: Path
) -> None:
    host, code = host_page(browser, base)
    guest_context, guest = open_page(browser, 360, 640, dark=True)
    bots = Bots(base, ["Ada"], code=code)
    try:
        join(guest, base, code, "Benedikt")
        switch = host.locator('[data-key="opt-big_screen"]')
        expect(switch).to_be_enabled()
        expect(guest.locator('[data-key="opt-big_screen"]')).to_be_disabled()  # read-only for the others
        expect(guest.locator(".tv-link")).to_have_count(0)
        switch.select_option("true")
        tv = f"{base}/tv/{code}"
        expect(guest.locator('[data-key="opt-big_screen"]')).to_have_value("true")
        expect(guest.locator(".tv-link")).to_have_text(f"Open on the big screen: {tv}")
        expect(host.locator(".tv-link")).to_have_text(f"Open on the big screen: {tv}")
        # The rule options sent after it keep it on.
        host.locator('[data-key="opt-score_limit"]').select_option("50")
        expect(guest.locator('[data-key="opt-score_limit"]')).to_have_value("50")
        expect(guest.locator('[data-key="opt-big_screen"]')).to_have_value("true")
        host.locator("#big-screen-help").scroll_into_view_if_needed()
        host.screenshot(path=str(shots / "big-screen-lobby-host-360x640-light.png"))
        guest.locator("#big-screen-help").scroll_into_view_if_needed()
        guest.screenshot(path=str(shots / "big-screen-lobby-guest-360x640-dark.png"))
        assert fits(host, controls=False) == []
        assert fits(guest, controls=False) == []

        host.locator('[data-key="start"]').click()
        bots.run(bots.clients[0].wait_for(lambda c: c.phase == "peek", what="peek"))
        bots.run(bots.clients[0].ready())
        for page in (host, guest):
            page.locator('[data-key="ready"]').click()
        for page in (host, guest):
            expect(page.locator(".phase-play.big-screen")).to_be_visible()
        # The host's room menu in the table's bar (the room's code opens it); nobody else has one.
        expect(guest.locator('[data-key="room-menu"]')).to_have_count(0)
        expect(guest.locator(".bar .code-badge")).to_have_text(code)
        menu = host.locator('[data-key="room-menu"]')
        expect(menu).to_have_attribute("aria-label", f"Room {code}: big screen")
        menu.click()
        switch = host.get_by_role("switch", name="Big screen")
        expect(switch).to_be_checked()
        expect(host.locator(".room-menu .tv-link")).to_have_text(f"Open on the big screen: {tv}")
        host.screenshot(path=str(shots / "big-screen-host-menu-360x640-light.png"))
        assert fits(host) == []

        switch.click()
        for page in (host, guest):
            expect(page.locator(".phase-play")).to_be_visible()
            expect(page.locator(".screen.table.big-screen")).to_have_count(0)
        expect(switch).not_to_be_checked()  # the menu stays open, drawn anew
        expect(host.locator(".room-menu .tv-link")).to_have_count(0)
        guest.screenshot(path=str(shots / "big-screen-off-guest-360x640-dark.png"))

        switch.click()
        expect(guest.locator(".screen.table.big-screen")).to_be_visible()
        expect(host.locator(".screen.table.big-screen")).to_be_visible()
        expect(switch).to_be_checked()
        guest.screenshot(path=str(shots / "big-screen-on-guest-360x640-dark.png"))
        menu.click()
        expect(switch).to_be_hidden()
    finally:
        host.context.close()
        guest_context.close()
        bots.close()


@pytest.mark.parametrize(("width", "height"), [(360, 640), (320, 568)])
@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_the_hosts_bar_keeps_to_one_line_with_the_room_menu(
    browser: Browser, base: str, shots: Path, width: int, height: int, *, locale: str
) -> None:
    """The host's code in the bar opens the room menu: in German too, on the smallest phone, the bar fits."""
    _context, page = open_page(browser, width, height, locale=locale)
    page.goto(base)
    page.fill("#name", "Maximilian")
    page.locator('[data-key="create"]').click()
    expect(page.locator(".lobby")).to_be_visible()
    code = page.locator(".lobby .code-badge").inner_text().strip()
    bots = Bots(base, NAMES, code=code)
    try:
        page.locator('[data-key="start"]').click()
        for c in bots.clients:
            bots.run(c.wait_for(lambda c: c.phase == "peek", what="peek"))
            bots.run(c.ready())
        page.locator('[data-key="ready"]').click()
        expect(page.locator(".phase-play")).to_be_visible()
        bar = page.locator(".table .bar")
        expect(page.locator('[data-key="room-menu"]')).to_be_visible()
        page.screenshot(path=str(shots / f"big-screen-bar-{locale}-{width}x{height}.png"))
        # One line, nothing cut or pushed out, also with a long game's round (two digits).
        assert bar.evaluate(ONE_LINE) == []
        assert bar.evaluate(ROUND_TEN_ON_ONE_LINE) == []
        assert off_screen(page) == []
        page.locator('[data-key="room-menu"]').click()
        expect(page.locator('[data-key="big-screen"]')).to_be_visible()
        page.screenshot(path=str(shots / f"big-screen-menu-{locale}-{width}x{height}.png"))
        assert off_screen(page) == []
        assert page.evaluate(OVERFLOW) == []  # every text of the menu within its box
    finally:
        page.context.close()
        bots.close()
