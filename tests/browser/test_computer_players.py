"""Computer players in the web client (issue 17), against the real server with the bots' pauses at 0: one
phone plays a whole game against three hard computer players by tapping the buttons a person taps; the
host adds, removes and sets the level of computer players in the lobby; "Play against the computer" goes
from the home page straight to the table, where the Hint button answers in one line; a player who leaves
is played for by a computer; and the screens with seven computer players, in both languages and themes,
fit a small phone in readable contrast. Every frame the page sends and receives is checked against the
protocol's JSON Schema. Screenshots go to artifacts/screenshots/ (bots-*.png) to be looked at."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.harness import NUMBERS_FIRST, contrast_problems, deck, fits, open_page, watch
from tests.e2e.procs import server_process

#: Any moment at which the page has something to tap to get on with the game.
SOMETHING_TO_TAP = ", ".join(
    [
        '[data-key="rematch"]',
        '[data-key="ready"]:enabled',
        '[data-key="act-king"]:enabled',
        '[data-key="act-discard"]:enabled',
        "button.slot.active:enabled",
        '[data-key="act-draw"]:enabled',
    ]
)


#: Eight players, the page deals (seat 0) and moves last: 24 number cards dealt, 7 more drawn by the
#: computer players (no King among them, so no extra draws), then the page's Jack.
PAGE_DRAWS_A_JACK = deck([*NUMBERS_FIRST[:31], "JS"])


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    """The real server, its computer players acting at once (CRISP_BOT_PAUSE=0)."""
    with server_process(tmp_path, {"CRISP_BOT_PAUSE": "0"}) as (url, _proc):
        yield url


@pytest.fixture
def rigged(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The same with the first decks known (PAGE_DRAWS_A_JACK unless the test names others) and seat 0
    (the page) dealing."""
    decks = getattr(request, "param", [PAGE_DRAWS_A_JACK])
    env = {"CRISP_BOT_PAUSE": "0", "CRISP_TEST_DECKS": json.dumps(decks)}
    with server_process(tmp_path, env, rigged=True) as (url, _proc):
        yield url


class Checked:
    """A page whose script errors and frames outside the protocol fail the test (``close`` says)."""

    def __init__(self, browser: Browser, locale: str = "en-GB", dark: bool = False) -> None:
        self.context: BrowserContext
        self.context, self.page = open_page(browser, 360, 640, locale=locale, dark=dark)
        self.errors: list[str] = []
        watch(self.page, self.errors)

    def tap(self, key: str) -> None:
        button = self.page.locator(f'[data-key="{key}"]')
        expect(button).to_be_enabled()
        button.click()

    def close(self) -> None:
        self.context.close()
        assert not self.errors, self.errors


def accessibility_problems(page: Page) -> list[str]:
    """The serious and critical axe-core findings on the page as it is."""
    violations = Axe().run(page).response["violations"]
    bad = [v for v in violations if v.get("impact") in ("serious", "critical")]
    return [f"{v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:5]}" for v in bad]


def create_room(page: Page, base: str, name: str) -> str:
    page.goto(base)
    page.fill("#name", name)
    page.locator('[data-key="create"]').click()
    expect(page.locator(".lobby")).to_be_visible()
    return page.locator(".lobby .code-badge").inner_text().strip()


def host_and_guest(base: str, host: Checked, guest: Checked) -> None:
    """Ana makes a room on ``host``; Ben joins it on ``guest`` by its link."""
    code = create_room(host.page, base, "Ana")
    guest.page.goto(f"{base}/r/{code}")
    guest.page.fill("#name", "Ben")
    guest.tap("join")
    expect(host.page.locator(".seats li")).to_have_count(2)


def add_bot(page: Page, level: str) -> None:
    """The host adds a computer player of ``level`` from the lobby."""
    seats = page.locator(".seats li").count()
    page.select_option('[data-key="new-bot-level"]', level)
    page.locator('[data-key="add-bot"]').click()
    expect(page.locator(".seats li")).to_have_count(seats + 1)


def play_until(page: Page, done: Callable[[], bool], limit_s: float = 900) -> int:
    """Tap on with simple legal moves (draw; play a King; discard; swap the left card when the card must be
    kept; ready in the peek and after a round) until ``done()``; the number of turns the page drew in."""
    turns = 0
    deadline = time.monotonic() + limit_s
    while not done():
        assert time.monotonic() < deadline, f"the game did not get there in {limit_s} s ({turns} turns)"
        page.wait_for_selector(SOMETHING_TO_TAP, timeout=60_000)
        if done():
            break
        for key, selector in (
            ("ready", '[data-key="ready"]:enabled'),
            ("act-king", '[data-key="act-king"]:enabled'),
            ("act-discard", '[data-key="act-discard"]:enabled'),
            ("slot-left", 'button.slot.active:enabled[data-key="slot-left"]'),
            ("act-draw", '[data-key="act-draw"]:enabled'),
        ):
            if page.locator(selector).count():
                page.locator(selector).click()
                turns += key == "act-draw"
                # Until the server's answer is drawn, the same button would take a second tap.
                page.wait_for_function(f"() => !document.querySelector('{selector}')", timeout=15_000)
                break
    return turns


def game_over(page: Page) -> Callable[[], bool]:
    return lambda: page.locator('[data-key="rematch"]').count() > 0


def test_one_phone_plays_a_whole_game_against_three_hard_computer_players(
    browser: Browser, base: str, shots: Path
) -> None:
    me = Checked(browser)
    page = me.page
    try:
        create_room(page, base, "Ana")
        page.select_option('[data-key="opt-score_limit"]', "50")
        for _ in range(3):
            add_bot(page, "hard")
        levels = page.locator(".seats .bot-level")
        expect(levels).to_have_count(3)
        assert levels.evaluate_all("els => els.map((e) => e.value)") == ["hard"] * 3
        page.screenshot(path=str(shots / "bots-game-lobby.png"), full_page=True)
        me.tap("start")
        expect(page.locator(".phase-peek")).to_be_visible()
        expect(page.locator(".seat .robot")).to_have_count(3)  # the robot in place of the connection dot
        turns = play_until(page, game_over(page))
        assert turns >= 3
        expect(page.locator("#results-title")).to_have_text(re.compile(r"^(You won!|Winner: .+|A shared win!)$"))
        totals = [int(t) for t in page.locator(".round-table td.total").all_inner_texts()]
        assert max(totals) >= 50  # the game ended because someone reached the limit
        expect(page.locator(".round-table .robot")).to_have_count(3)
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots / "bots-game-over.png"))
        assert fits(page) == []
        # The rematch keeps the computer players and starts at once.
        me.tap("rematch")
        expect(page.locator(".phase-peek")).to_be_visible()
        expect(page.locator(".seat .robot")).to_have_count(3)
    finally:
        me.close()


def test_the_host_adds_removes_and_sets_the_level_of_computer_players(browser: Browser, base: str, shots: Path) -> None:
    host = Checked(browser)
    guest = Checked(browser, locale="de-DE", dark=True)
    try:
        host_and_guest(base, host, guest)
        add_bot(host.page, "easy")
        add_bot(host.page, "hard")
        # The guest sees each computer player's robot and level, and none of the host's controls.
        badges = guest.page.locator(".seats .badge.bot")
        expect(badges).to_have_text(["🤖 Leicht", "🤖 Schwer"])
        expect(badges.first).to_have_attribute("aria-label", "Computerspieler, Stufe leicht")
        expect(guest.page.locator(".seats select, .seats button, [data-key='add-bot']")).to_have_count(0)
        # Seats 2 and 3: the level changes for everyone, and a removed computer player's seat goes.
        host.page.select_option('[data-key="bot-level-2"]', "normal")
        expect(badges).to_have_text(["🤖 Normal", "🤖 Schwer"])
        host.page.screenshot(path=str(shots / "bots-lobby-host.png"), full_page=True)
        guest.page.screenshot(path=str(shots / "bots-lobby-guest-de-dark.png"), full_page=True)
        host.tap("remove-bot-2")
        expect(host.page.get_by_role("dialog")).to_contain_text("Remove the computer player")
        host.tap("confirm-ok")
        expect(badges).to_have_text(["🤖 Schwer"])
        expect(host.page.locator('[data-key="bot-level-2"]')).to_have_value("hard")  # seats after it moved up
        # The stand-in option, with its one-line explanation, reaches every lobby.
        expect(host.page.locator("#stand-in-help")).to_have_text(
            "A computer player takes over for anyone who leaves or is away longer than this."
        )
        for value in ("30", "60", "none"):
            host.page.select_option('[data-key="opt-stand_in"]', value)
            expect(guest.page.locator('[data-key="opt-stand_in"]')).to_have_value(value)
        # Up to eight seats: then there is nothing more to add.
        for _ in range(5):
            add_bot(host.page, "normal")
        expect(host.page.locator('[data-key="add-bot"]')).to_have_count(0)
        expect(guest.page.locator(".seats li")).to_have_count(8)
        host.page.screenshot(path=str(shots / "bots-lobby-full.png"), full_page=True)
        for page in (host.page, guest.page):
            assert fits(page, controls=False) == []
            assert contrast_problems(page) == []
            assert accessibility_problems(page) == []
    finally:
        host.close()
        guest.close()


@pytest.mark.parametrize("rigged", [[NUMBERS_FIRST]], indirect=True)
def test_play_against_the_computer_starts_at_once_and_gives_hints(browser: Browser, rigged: str, shots: Path) -> None:
    """Number cards only at first: the page's first draw is one, so it may be swapped in or discarded."""
    base = rigged
    me = Checked(browser, locale="de-DE")
    page = me.page
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
    try:
        page.goto(base)
        expect(page.locator(".practice h2")).to_have_text("Gegen den Computer spielen")
        expect(page.locator('[data-key="practice-bots"]')).to_have_value("3")  # three of level normal at first
        expect(page.locator('[data-key="practice-normal"]')).to_be_checked()
        page.fill("#name", "Ana")
        page.select_option('[data-key="practice-bots"]', "2")
        page.get_by_role("radio", name="Schwer").click()
        page.screenshot(path=str(shots / "bots-home-de.png"), full_page=True)
        assert contrast_problems(page) == []
        assert accessibility_problems(page) == []
        me.tap("practice")
        # No lobby: the game is on at once, with two hard computer players.
        expect(page.locator(".phase-peek")).to_be_visible()
        expect(page.locator(".seat .robot")).to_have_count(2)
        expect(page.locator(".seat .robot").first).to_have_attribute("aria-label", "Computerspieler, Stufe schwer")
        assert any('"bots":2' in s.replace(" ", "") and '"level":"hard"' in s.replace(" ", "") for s in sent), sent
        me.tap("ready")
        expect(page.locator('[data-key="act-draw"]:enabled')).to_be_visible(timeout=60_000)
        # Your move: the Hint button ("Tipp") answers in one line, and marks what it suggests.
        hint = page.locator('[data-key="hint"]')
        expect(hint).to_have_text("💡 Tipp")
        hint.click()
        line = page.locator(".hint-line")
        expect(line).to_be_visible()
        assert len(line.inner_text().strip()) > 5
        expect(page.locator(".hinted").first).to_be_visible()
        expect(hint).to_be_disabled()  # asked once for this moment
        page.wait_for_timeout(300)
        page.screenshot(path=str(shots / "bots-hint-de.png"))
        assert fits(page) == []
        assert contrast_problems(page) == []
        assert accessibility_problems(page) == []
        # The game moves on: the hint goes, and the next moment offers a new one.
        me.tap("act-draw")
        expect(line).to_have_count(0)
        expect(page.locator(".hinted")).to_have_count(0)
        expect(hint).to_be_enabled()
        # The player switches to English at the table: the server's hint follows (not only the page's words).
        page.locator('[data-key="lang"]').select_option("en")
        expect(hint).to_have_text("💡 Hint")
        hint.click()
        expect(line).to_be_visible()
        expect(line).to_contain_text(re.compile(r"^💡 (Swap|Discard): "))
        expect(page.locator(".prompt-text")).to_contain_text("Tap one of your cards")  # still your move
        assert any(s.replace(" ", "") == '{"type":"lang","lang":"en"}' for s in sent), sent
    finally:
        me.close()


def test_a_player_who_leaves_is_played_for_by_a_computer(browser: Browser, base: str, shots: Path) -> None:
    """With a stand-in time set, a player who leaves is played for by a computer player (level normal),
    shown as "playing for Ben"; with another person at the table, no hints are offered."""
    host = Checked(browser)
    guest = Checked(browser, locale="de-DE")
    try:
        host_and_guest(base, host, guest)
        add_bot(host.page, "easy")
        host.page.select_option('[data-key="opt-stand_in"]', "30")
        host.tap("start")
        for phone in (host, guest):
            phone.tap("ready")
        for phone in (host, guest):
            expect(phone.page.locator(".phase-play")).to_be_visible()
        # Two people play: no hints, whoever's move it is.
        deadline = time.monotonic() + 30
        while not any(p.page.locator('[data-key="act-draw"]:enabled').count() for p in (host, guest)):
            assert time.monotonic() < deadline, "nobody's move came"
            host.page.wait_for_timeout(100)
        for phone in (host, guest):
            expect(phone.page.locator('[data-key="hint"]')).to_have_count(0)
        guest.tap("leave")
        expect(guest.page.get_by_role("dialog")).to_contain_text("Ein Computer spielt für dich")
        guest.tap("confirm-ok")
        ben = host.page.locator(".seat .seat-name.stand-in")
        expect(ben).to_have_attribute("title", "A computer player is playing for Ben")
        expect(ben).to_contain_text("Ben")
        expect(ben.locator(".playing-for:visible")).to_have_text(re.compile(r"^(playing for|for)$"))
        host.page.wait_for_timeout(300)
        host.page.screenshot(path=str(shots / "bots-stand-in.png"))
        assert fits(host.page) == []
        # The game goes on: the computer player makes Ben's moves, and Ana's turns come round.
        play_until(host.page, lambda: host.page.locator(".overlay.results").count() > 0, limit_s=300)
    finally:
        host.close()
        guest.close()


@pytest.mark.parametrize(("locale", "theme"), [("en-GB", "light"), ("de-DE", "dark")])
def test_seven_computer_players_fit_a_small_phone(
    browser: Browser, rigged: str, shots: Path, *, locale: str, theme: str
) -> None:
    base = rigged
    me = Checked(browser, locale=locale, dark=theme == "dark")
    page = me.page
    name = f"{locale[:2]}-{theme}"
    try:
        create_room(page, base, "Maximilian")
        for level in ("easy", "normal", "hard", "easy", "normal", "hard", "hard"):
            add_bot(page, level)
        page.screenshot(path=str(shots / f"bots-8-{name}-lobby.png"), full_page=True)
        assert fits(page, controls=False) == [], "lobby"
        assert contrast_problems(page) == [], "lobby"
        me.tap("start")
        expect(page.locator(".phase-peek")).to_be_visible()
        expect(page.locator(".seat")).to_have_count(7)
        page.screenshot(path=str(shots / f"bots-8-{name}-peek.png"))
        assert fits(page) == [], "peek"
        me.tap("ready")
        expect(page.locator('[data-key="act-draw"]:enabled')).to_be_visible(timeout=90_000)
        page.locator('[data-key="hint"]').click()  # alone with computer players: a practice game
        expect(page.locator(".hint-line")).to_be_visible()
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots / f"bots-8-{name}-table.png"))
        assert fits(page) == [], "table"
        assert contrast_problems(page) == [], "table"
        # The Jack drawn: its two moves and the hint's bulb on one row, and a longer hint, still fit.
        me.tap("act-draw")
        for key in ("act-jack", "act-discard", "hint"):
            expect(page.locator(f'[data-key="{key}"]')).to_be_visible()
        me.tap("hint")
        expect(page.locator(".hint-line")).to_be_visible()
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots / f"bots-8-{name}-drawn.png"))
        assert fits(page) == [], "drawn"
        play_until(page, lambda: page.locator(".overlay.results").count() > 0, limit_s=400)
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots / f"bots-8-{name}-round-over.png"))
        assert fits(page) == [], "round over"
        assert contrast_problems(page) == [], "round over"
    finally:
        me.close()
