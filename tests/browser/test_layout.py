"""Every screen fits a phone without scrolling, from 360x640 to 430x932, with 2 to 8 players, light and dark, in
readable contrast; and on a desktop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from crisp_server.remote.client import CrispClient
from tests.browser.harness import (
    LANGUAGES,
    NUMBERS_FIRST,
    SIZES,
    Bots,
    contrast_problems,
    fits,
    join,
    open_page,
    page_check,
    play_turns,
)
from tests.e2e.procs import server_process

#: The seats' boxes and what of the table overlaps or spills (js/seats.js).
SEATS = page_check("seats")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module, each test a room of its own on it: number cards first (every draw of a short
    round is one). Its rooms are all looked up from one address: more look-ups than a player's share."""
    env = {
        "CRISP_TEST_DECKS": json.dumps([NUMBERS_FIRST] * 200),
        "CRISP_LOOKUP_BURST": "1000",
        "CRISP_LOOKUP_PER_MINUTE": "10000",
    }
    data = tmp_path_factory.mktemp("server")
    # Its output to a file: a pipe nobody reads fills up over a module's worth of requests and stops the server.
    with server_process(data, env, rigged=True, log=data / "server.log") as (url, _proc):
        yield url


#: Sets the Queen's step in the page's own state and draws the table again (``None``: back out of it).
QUEEN_STEP = """async (queen) => {
  const [{ app }, { renderAt }] = await Promise.all([import("/js/state.js"), import("/js/ui.js")]);
  app.queen = queen;
  renderAt(performance.now());
}"""


def seat_problems(page: Page) -> list[str]:
    """Seats that overlap or spill out of their boxes, rows of the table that overlap or are squeezed."""
    return list(page.evaluate(SEATS)["problems"])


OVERFLOW = page_check("overflow")


def text_problems(page: Page) -> list[str]:
    """Texts outside their boxes or off the screen's side (js/overflow.js): language-independent, it measures
    what is drawn."""
    return list(page.evaluate(OVERFLOW))


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
        page.fill("#name", "Me")
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


def play_my_turns_until_round_end(page: Page, holding: Callable[[], None] | None = None) -> None:
    """Draw and discard whenever it is the page's move, until the round is over; ``holding`` is called while
    the page holds its drawn card (the longest prompt: "Tap one of your cards to swap it, or Discard")."""
    results = page.locator(".overlay.results")
    for _ in range(200):
        if results.is_visible():
            return
        for key in ("act-draw", "act-discard"):
            button = page.locator(f'[data-key="{key}"]')
            if button.count() and button.is_enabled():
                if key == "act-discard" and holding is not None:
                    holding()
                button.click()
        page.wait_for_timeout(150)
    expect(results).to_be_visible()


@pytest.mark.parametrize("players", [2, 4, 8])
@pytest.mark.parametrize(("width", "height"), SIZES)
@pytest.mark.parametrize(("theme", "locale"), [("light", "en-GB"), ("dark", "de-DE")])
def test_every_screen_fits(
    browser: Browser, base: str, shots: Path, *, players: int, width: int, height: int, theme: str, locale: str
) -> None:
    """Lobby, peek, table and round end for 2, 4 and 8 players, on small and large phones and a desktop, light
    (in English) and dark (in German): nothing off screen, every text within its box (js/overflow.js), names
    readable, every text in readable contrast, no seat over another or spilling out of its box, no row of the
    table over the next. Each screen is saved to artifacts/screenshots/ to be looked at."""
    names = ["Alexandra", "Benedikt", "Christina", "Dominik", "Elisabeth", "Friedrich", "Gabriele"][: players - 1]
    bots = Bots(base, names)
    context, page = open_page(browser, width, height, locale=locale, dark=theme == "dark")
    name = f"{players}p-{width}x{height}-{theme}"
    try:
        bots.run(bots.host.set_options(turn_seconds=60))  # the clock's ring beside the prompt too
        join(page, base, bots.code, "Maximilian")
        expect(page.locator(".seats li")).to_have_count(players)
        page.screenshot(path=str(shots / f"layout-{name}-lobby.png"), full_page=True)
        assert fits(page, controls=False) == [], "lobby"
        assert text_problems(page) == [], "lobby"
        assert contrast_problems(page) == [], "lobby"
        bots.run(bots.host.start())
        expect(page.locator(".phase-peek")).to_be_visible()
        page.screenshot(path=str(shots / f"layout-{name}-peek.png"))
        assert fits(page) == [], "peek"
        assert text_problems(page) == [], "peek"
        assert contrast_problems(page) == [], "peek"
        for c in bots.clients:
            bots.run(c.ready())
        page.locator('[data-key="ready"]').click()
        expect(page.locator(".phase-play")).to_be_visible()
        page.wait_for_timeout(450)  # the deal's cards in flight
        page.screenshot(path=str(shots / f"layout-{name}-table.png"))
        assert fits(page) == [], "table"
        assert text_problems(page) == [], "table"
        assert seat_problems(page) == [], "table"
        assert contrast_problems(page) == [], "table"
        # The first bot to move calls Crisp (seat 1, or the dealer when the page has seat 1).
        caller = bots.clients[1] if players > 2 else bots.clients[0]
        for c in bots.clients:
            bots.spawn(play_turns(c, call_crisp=c is caller))
        held: list[list[str]] = []

        def holding() -> None:
            """While the page holds a card (after the Crisp call: its final turns' line too), nothing is
            squeezed or covered: the prompt, the clock and the final turns stay in sight over the hand."""
            if not held:
                page.screenshot(path=str(shots / f"layout-{name}-holding.png"))
            held.append(seat_problems(page) + fits(page) + text_problems(page))
            if len(held) == 1:
                # The Queen's second step (the targets on every seat, its long prompt), shown by the page's own
                # code as a Queen would: the deck here has no Queen early on.
                page.evaluate(QUEEN_STEP, {"slot": "left"})
                expect(page.locator('[data-key^="target-"]')).to_have_count(3 * (players - 1))
                page.screenshot(path=str(shots / f"layout-{name}-queen.png"))
                held.append(seat_problems(page) + fits(page))
                page.evaluate(QUEEN_STEP, None)
                expect(page.locator('[data-key^="target-"]')).to_have_count(0)

        play_my_turns_until_round_end(page, holding)
        assert held, "the page never held a card"
        assert all(p == [] for p in held), held
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots / f"layout-{name}-round-over.png"))
        assert fits(page) == [], "round over"
        assert text_problems(page) == [], "round over"
        assert contrast_problems(page) == [], "round over"
    finally:
        context.close()
        bots.close()


def into_play(page: Page, base: str, bots: Bots) -> None:
    """The page joins the bots' room as its last seat, the host starts, everyone is ready: play begins."""
    join(page, base, bots.code, "Maximilian")
    expect(page.locator(".seats li")).to_have_count(len(bots.clients) + 1)
    bots.run(bots.host.start())
    expect(page.locator(".phase-peek")).to_be_visible()
    for c in bots.clients:
        bots.run(c.ready())
    page.locator('[data-key="ready"]').click()
    expect(page.locator(".phase-play")).to_be_visible()


@pytest.mark.parametrize(("width", "height"), [(640, 360), (568, 320)])
def test_a_phone_on_its_side_reaches_every_move(
    browser: Browser, base: str, shots: Path, width: int, height: int
) -> None:
    """Landscape on a small phone: the table is taller than the screen, so the page scrolls, and the page plays
    a whole round (every click scrolls its button into view: on a table cut at the screen's edge it could not)."""
    bots = Bots(base, ["Alexandra", "Benedikt", "Christina"])
    context, page = open_page(browser, width, height)
    try:
        into_play(page, base, bots)
        page.screenshot(path=str(shots / f"landscape-{width}x{height}-table.png"), full_page=True)
        # Nothing of the table is cut off inside its box (where a finger could not scroll to it): the page
        # itself is as long as the table, and scrolls.
        clipped = page.evaluate(
            "() => { const t = document.querySelector('.screen.table');"
            " return [t.scrollHeight - t.clientHeight, document.scrollingElement.scrollHeight - innerHeight]; }"
        )
        assert clipped[0] <= 1, f"{clipped[0]} px of the table cut off at {width}x{height}"
        assert clipped[1] > 0, "the page scrolls"
        for c in bots.clients:
            bots.spawn(play_turns(c, call_crisp=c is bots.clients[0]))
        play_my_turns_until_round_end(page)
        page.screenshot(path=str(shots / f"landscape-{width}x{height}-round-over.png"))
    finally:
        context.close()
        bots.close()


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_the_round_table_keeps_every_column_on_a_320_px_phone(
    browser: Browser, base: str, shots: Path, locale: str
) -> None:
    """Eight players, a 320x568 phone: the round's results show every column, the game's total included,
    within the screen."""
    names = ["Alexandra", "Benedikt", "Christina", "Dominik", "Elisabeth", "Friedrich", "Gabriele"]
    bots = Bots(base, names)
    context, page = open_page(browser, 320, 568, locale=locale)
    try:
        into_play(page, base, bots)
        for c in bots.clients:
            bots.spawn(play_turns(c, call_crisp=c is bots.clients[1]))
        play_my_turns_until_round_end(page)
        page.screenshot(path=str(shots / f"round-over-8-{locale[:2]}-320x568.png"))
        assert page.locator(".table .bar").evaluate(page_check("one_line")) == [], "the bar on one line"
        table = page.locator(".round-table")
        assert table.evaluate("(t) => t.scrollWidth - t.parentElement.clientWidth") <= 0, "the table overflows"
        box = page.locator(".round-table .col-totalShort").bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= 320, "the game's total is off the screen"
    finally:
        context.close()
        bots.close()


NAMES = ["Alexandra", "Benedikt", "Christina", "Dominik", "Elisabeth", "Friedrich", "Gabriele"]


#: The pass below runs in every language but English, whose texts the layout was drawn for: the matrix above
#: checks them (with the same text check) in more sizes. German has both: its words are the longest.
@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_screen_fits_in_each_language(browser: Browser, base: str, shots: Path, lang: str) -> None:
    """One pass over every screen in ``lang``: home, the rules, the host's lobby with its options, a dialog,
    the peek, the table with 8 players (a computer player among them), a held card, the Crisp window, the
    Leave dialog at the table, the round's results. At 360x640 each text lies within its box (a button's
    word, a badge, a cell), nothing scrolls sideways, the controls are on screen (but where the screen
    scrolls), the top rows and the table's bar hold one line; at 320x568 the texts still fit their boxes."""
    dark = LANGUAGES.index(lang) % 2 == 1
    context, page = open_page(browser, 360, 640, locale=lang, dark=dark)
    bots: Bots | None = None
    found: dict[str, list[str]] = {}

    def check(screen: str, controls: bool = True, small: bool = True) -> None:
        sizes = [(360, 640), (320, 568)] if small else [(360, 640)]
        for width, height in sizes:
            page.set_viewport_size({"width": width, "height": height})
            if small:
                page.wait_for_timeout(150)
            page.screenshot(path=str(shots / f"lang-{lang}-{screen}-{width}x{height}.png"), full_page=not controls)
            problems = text_problems(page) + fits(page, controls=controls and width >= 360)
            if problems:
                found[f"{screen} {width}x{height}"] = problems
        page.set_viewport_size({"width": 360, "height": 640})

    def one_line(selector: str) -> None:
        row = page.locator(selector).first.evaluate(page_check("one_line"))
        if row:
            found[f"{selector} on one line"] = row

    try:
        page.goto(base)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        check("home", controls=False)
        one_line(".top-buttons")
        page.locator('[data-key="rules"]').click()
        expect(page.locator(".rules-text")).to_be_visible()
        check("rules", controls=False)
        page.locator('[data-key="back"]').click()

        # The host's lobby: six players join, the options are there, and a seat is free for a computer player.
        page.fill("#name", "Maximilian")
        page.locator('[data-key="create"]').click()
        expect(page.locator(".lobby")).to_be_visible()
        code = page.locator(".lobby .code-badge").inner_text().strip()
        bots = Bots(base, NAMES[:6], code=code)
        expect(page.locator(".seats li")).to_have_count(7)
        page.locator('[data-key="opt-turn_seconds"]').select_option("60")
        expect(page.locator('[data-key="opt-turn_seconds"]')).to_have_value("60")
        check("lobby", controls=False)
        one_line(".top-buttons")
        page.locator('[data-key="leave"]').click()
        expect(page.locator("dialog.confirm")).to_be_visible()
        check("lobby-dialog", controls=False, small=False)
        page.locator('[data-key="confirm-cancel"]').click()
        page.locator('[data-key="add-bot"]').click()
        expect(page.locator(".seats li")).to_have_count(8)
        start = page.locator('[data-key="start"]')
        expect(start).to_be_enabled()
        start.scroll_into_view_if_needed()
        expect(start).to_be_in_viewport(ratio=1)

        start.click()
        expect(page.locator(".phase-peek")).to_be_visible()
        check("peek")
        for c in bots.clients:
            bots.run(c.ready())
        page.locator('[data-key="ready"]').click()
        expect(page.locator(".phase-play")).to_be_visible()
        expect(page.locator(".seat")).to_have_count(7)
        page.wait_for_timeout(450)  # the deal's cards in flight
        check("table")
        one_line(".table .bar")
        if seats := seat_problems(page):
            found["table's seats"] = seats

        # The page calls Crisp after its first turn; the others play on until the round is over.
        for c in bots.clients:
            bots.spawn(play_turns(c))
        draw = page.locator('[data-key="act-draw"]')
        expect(draw).to_be_enabled(timeout=60_000)
        draw.click()
        expect(page.locator('[data-key="act-discard"]')).to_be_enabled()
        check("holding", small=False)
        page.locator('[data-key="act-discard"]').click()
        crisp = page.locator('[data-key="crisp"]')
        expect(crisp).to_be_visible()
        check("crisp-window", small=False)
        expect(crisp).to_be_enabled()
        crisp.click()
        page.locator('[data-key="leave"]').click()
        expect(page.locator("dialog.confirm")).to_be_visible()
        check("table-dialog", controls=False, small=False)
        page.locator('[data-key="confirm-cancel"]').click()
        expect(page.locator(".overlay.results")).to_be_visible(timeout=90_000)
        page.wait_for_timeout(400)
        check("results")
        assert found == {}, "\n".join(f"{screen}: {problems}" for screen, problems in found.items())
    finally:
        context.close()
        if bots is not None:
            bots.close()
