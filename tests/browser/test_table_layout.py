"""The table's and the lobby's layout as players reported it: the peek's countdown leaves the card's rank in
sight, a crowded seat stays in its box, the seats keep still while a player holds a drawn card, and the host
reaches Start on a small phone. One server for the module: each test plays a fresh room on it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, FloatRect, Page, expect

from tests.browser.harness import SIZES, Bots, deck, fits, join, open_page, page_check
from tests.e2e.procs import server_process

# Two players: Ana (a bot, the host) deals, the page starts and draws the Jack of diamonds.
JACK_DECK = deck(["2S", "3S", "4S", "5S", "6S", "7S", "JD"])

#: Boxes of every seat, and what of a seat lies outside its box (js/seats.js).
SEATS = page_check("seats")
CARD_COVERED = page_check("covered")

NAMES = ["Alexandra", "Benedikt", "Christina", "Dominik", "Elisabeth", "Friedrich", "Gabriele"]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Every game on this server deals the Jack deck: the tests that need it know what is drawn. All the
    # module's rooms are looked up from one address: more than a player's share of look-ups a minute.
    env = {
        "CRISP_TEST_DECKS": json.dumps([JACK_DECK] * 200),
        "CRISP_LOOKUP_BURST": "1000",
        "CRISP_LOOKUP_PER_MINUTE": "10000",
    }
    data = tmp_path_factory.mktemp("server")
    # Its output to a file: a pipe nobody reads fills up over a module's worth of requests and stops the server.
    with server_process(data, env, rigged=True, log=data / "server.log") as (url, _proc):
        yield url


def at_the_table(page: Page, base: str, bots: Bots) -> None:
    join(page, base, bots.code, "Maximilian")
    bots.run(bots.start_and_ready())
    page.locator('[data-key="ready"]').click()
    expect(page.locator(".phase-play")).to_be_visible()


def seat_problems(page: Page) -> list[str]:
    return list(page.evaluate(SEATS)["problems"])


def seat_boxes(page: Page) -> list[list[float]]:
    return list(page.evaluate(SEATS)["boxes"])


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_peek_countdown_leaves_the_rank_in_sight(
    browser: Browser, base: str, shots: Path, width: int, height: int
) -> None:
    """A Jack shows your middle card for a few seconds: its countdown must not sit on the card's rank."""
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, width, height)
    try:
        at_the_table(page, base, bots)
        page.locator('[data-key="act-draw"]').click()
        page.get_by_role("button", name="Jack: peek at your middle card").click()
        middle = page.locator('[data-key="slot-middle"]')
        expect(middle).to_have_attribute("aria-label", "Your middle card: 4 of spades")
        badge = middle.locator(".peek-count")
        expect(badge).to_be_visible()
        page.screenshot(path=str(shots / f"peek-count-{width}x{height}.png"))
        overlap = page.evaluate(
            """(slot) => {
                 const badge = slot.querySelector('.peek-count').getBoundingClientRect();
                 const meets = (r) => badge.left < r.right && r.left < badge.right
                   && badge.top < r.bottom && r.top < badge.bottom;
                 return [...slot.querySelectorAll('.card .corner, .card .pip')]
                   .filter((e) => meets(e.getBoundingClientRect())).map((e) => e.className);
               }""",
            middle.element_handle(),
        )
        assert overlap == [], f"the countdown covers the card's {overlap} at {width}x{height}"
        covered = page.evaluate(CARD_COVERED, "slot-middle")  # its corners and centre, as a player sees them
        assert covered == [], f"the middle card is covered at {width}x{height} by {covered}"
        expect(badge).to_be_in_viewport(ratio=1)
    finally:
        context.close()
        bots.close()


def crowd_seat(page: Page) -> None:
    """Seat 0 (the host, who deals round 1) as crowded as a seat gets: away, a computer player standing in
    for them, and they called Crisp, with a three-digit total; seat 1, a computer player, holds a drawn card.

    The page's own state is set: a host stood in for only after half a minute away, and a caller in round 1
    who also deals only after seven turns, take too long for a test (the server sends these fields as is)."""
    page.evaluate(
        """async () => {
             const { app, actions } = await import('/js/state.js');
             const { room, table } = app.state;
             Object.assign(room.seats[0], { stand_in: true, connected: false });
             Object.assign(room.seats[1], { bot: 'hard' });
             table.round.caller = 0;
             table.round.turn = 1;
             table.round.drawn = { card: null, from: 'deck' };
             table.totals[0] = 142;
             table.totals[1] = 99;
             actions.render();
           }"""
    )


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_crowded_seat_stays_in_its_box(browser: Browser, base: str, shots: Path, width: int, height: int) -> None:
    bots = Bots(base, NAMES)
    context, page = open_page(browser, width, height)
    try:
        at_the_table(page, base, bots)
        crowd_seat(page)
        host = page.get_by_role("listitem").filter(has_text="Alexandra")
        expect(host.locator(".crisp-badge")).to_have_text("Crisp")
        expect(host.locator(".dealer")).to_be_visible()
        expect(host.get_by_label("Game score: 142")).to_be_visible()
        expect(page.locator(".seat .holding")).to_have_count(1)
        page.screenshot(path=str(shots / f"crowded-seat-{width}x{height}.png"))
        problems = seat_problems(page)
        assert not problems, "\n".join(problems)
        assert fits(page) == []
    finally:
        context.close()
        bots.close()


@pytest.mark.parametrize("players", [4, 8])
@pytest.mark.parametrize(("width", "height"), [(360, 640), (1280, 800)])
def test_the_seats_keep_still_while_a_player_holds_a_card(
    browser: Browser, base: str, shots: Path, *, players: int, width: int, height: int
) -> None:
    bots = Bots(base, NAMES[: players - 1])
    context, page = open_page(browser, width, height)
    try:
        at_the_table(page, base, bots)
        expect(page.locator(".prompt-text")).to_have_text("Benedikt: draw")
        page.wait_for_timeout(450)  # the deal's card animations
        before = seat_boxes(page)
        hand_before = page.locator(".my-hand").bounding_box()
        bots.run(bots.clients[1].draw())  # Benedikt (seat 1) starts
        expect(page.locator(".seat .holding")).to_have_count(1)
        page.wait_for_timeout(450)
        page.screenshot(path=str(shots / f"holding-{players}p-{width}x{height}.png"))
        assert seat_boxes(page) == before
        assert page.locator(".my-hand").bounding_box() == hand_before
    finally:
        context.close()
        bots.close()


def host_lobby(browser: Browser, base: str, width: int, height: int, locale: str) -> tuple[Page, Bots]:
    """The page creates a room (its host) and three bots join it."""
    _context, page = open_page(browser, width, height, locale=locale)
    page.goto(base)
    page.fill("#name", "Maximilian")
    page.locator('[data-key="create"]').click()
    expect(page.locator(".lobby")).to_be_visible()
    code = page.locator(".lobby .code-badge").inner_text().strip()
    bots = Bots(base, NAMES[:3], code=code)
    expect(page.locator(".seats li")).to_have_count(4)
    return page, bots


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_the_host_reaches_start_without_scrolling(browser: Browser, base: str, shots: Path, locale: str) -> None:
    page, bots = host_lobby(browser, base, 360, 640, locale)
    try:
        start = page.get_by_role("button", name="Start the game" if locale == "en-GB" else "Spiel starten")
        expect(start).to_be_enabled()
        page.screenshot(path=str(shots / f"lobby-host-start-{locale}-360x640.png"))
        expect(start).to_be_in_viewport(ratio=1)
        # Scrolled to the end, the button covers nothing: the last control is still there to tap.
        page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
        page.wait_for_timeout(100)
        page.screenshot(path=str(shots / f"lobby-host-start-{locale}-360x640-end.png"))
        covered = page.evaluate(
            """() => [...document.querySelectorAll('#app button, #app select')].filter((b) => {
                 const r = b.getBoundingClientRect();
                 const y = r.top + r.height / 2;
                 if (b.dataset.key === 'start' || y < 0 || y > innerHeight) return false;
                 const top = document.elementFromPoint(r.left + r.width / 2, y);
                 return !b.contains(top);
               }).map((b) => b.dataset.key || b.textContent)"""
        )
        assert covered == []
    finally:
        page.context.close()
        bots.close()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_start_not_yet_is_greyed_without_showing_through(
    browser: Browser, base: str, shots: Path, *, dark: bool
) -> None:
    """The host alone: Start is disabled, in a muted colour and opaque, so the lobby that scrolls under it (the
    spectators' line, say) does not show through its words."""
    context, page = open_page(browser, 360, 640, dark=dark)
    try:
        page.goto(base)
        page.fill("#name", "Maximilian")
        page.locator('[data-key="create"]').click()
        start = page.locator('[data-key="start"]')
        expect(start).to_be_disabled()
        expect(start).to_have_css("opacity", "1")
        page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
        page.screenshot(path=str(shots / f"lobby-start-not-yet-{'dark' if dark else 'light'}-360x640.png"))
    finally:
        context.close()


#: The top of a 360 px screen, where the links are.
TOP: FloatRect = {"x": 0, "y": 0, "width": 360, "height": 120}


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_the_top_links_fit_one_line(browser: Browser, base: str, shots: Path, locale: str) -> None:
    """How to play, language, sound and vibration in one row at 360 px, on the home screen and in the lobby."""
    page, bots = host_lobby(browser, base, 360, 640, locale)
    try:
        row = page.locator(".top-buttons")

        def one_line() -> bool:
            """Its links side by side, each centred on the row (the language picker is no button: not as tall)."""
            return row.locator("> *").count() >= 3 and row.evaluate(page_check("one_line")) == []

        assert one_line(), "lobby"
        assert page.locator('.top-buttons [data-key="vibrate"]').count() == 1  # a phone shows all four
        page.screenshot(path=str(shots / f"top-links-lobby-{locale}-360x640.png"), clip=TOP)
        page.goto(base + "/")
        page.locator(".top-buttons").wait_for()
        assert one_line(), "home"
        page.screenshot(path=str(shots / f"top-links-home-{locale}-360x640.png"), clip=TOP)
        # Further down, the code's field and its Join button ("Beitreten") share one row, the word whole.
        join = page.locator('[data-key="join-by-code"]')
        assert join.evaluate("(b) => b.scrollWidth - b.clientWidth") <= 0, "the Join button's word overflows"
        assert page.locator(".join-row").evaluate(page_check("one_line")) == []
    finally:
        page.context.close()
        bots.close()
