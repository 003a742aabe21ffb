"""Three phones play a whole game through the UI only: create, join by link, options, peek, a King chain,
a Queen swap, a Jack, a Crisp call, a page closed and reopened mid-game, round end with the deck check,
game end, rematch; in English and German, with an accessibility check and a screenshot of every screen."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, expect

from crisp_server.engine import FULL_DECK
from tests.browser.conftest import rigged_server
from tests.browser.harness import fits, watch

TIMEOUT = 15_000  # ms: generous for a shared 2-core machine


def deck(first: list[str]) -> list[str]:
    return first + [c for c in FULL_DECK if c not in first]


# Three players, Ana deals round 1 (seat 0), so Ben (seat 1) starts; the deal goes Ben, Cem, Ana.
ROUND_1 = deck(["2S", "TS", "TH", "3S", "9S", "TD", "4S", "8S", "TC", "KS", "QH", "JD", "5H", "9C"])
# Round 2: Ben deals, Cem starts; the deal goes Cem, Ana, Ben.
ROUND_2 = deck(["2H", "KH", "5S", "3H", "QD", "6S", "4H", "JS", "7S", "AC", "AD", "AH"])


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    yield from rigged_server(tmp_path, [ROUND_1, ROUND_2])


class Phone:
    """One player's browser context at phone size; its page errors and frames outside the protocol fail the test."""

    def __init__(self, browser: Browser, name: str, locale: str, shots: Path) -> None:
        self.name = name
        self.shots = shots
        self.context: BrowserContext = browser.new_context(
            viewport={"width": 412, "height": 915},
            device_scale_factor=2.625,
            is_mobile=True,
            has_touch=True,
            locale=locale,
            user_agent="Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/120.0 Mobile Safari/537.36",
        )
        self.context.set_default_timeout(TIMEOUT)
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        watch(self.page, self.errors)

    def reopen(self, url: str) -> None:
        """Close the page (the socket goes) and open the link again in the same browser (same storage)."""
        self.page.close()
        self.page = self.context.new_page()
        watch(self.page, self.errors)
        self.page.goto(url)

    def click(self, key: str) -> None:
        button = self.page.locator(f'[data-key="{key}"]')
        expect(button).to_be_enabled()
        button.click()

    def shot(self, screen: str, axe: Axe) -> None:
        self.page.screenshot(path=str(self.shots / f"{screen}-{self.name}.png"))
        # Nothing off screen at the table (the other screens scroll), nothing sideways, names readable.
        at_table = self.page.locator(".screen.table").count() > 0
        assert fits(self.page, controls=at_table) == [], screen
        results = axe.run(self.page)
        bad = [v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]
        found = [f"{v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:5]}" for v in bad]
        assert not bad, f"{screen}: " + "; ".join(found)

    def close(self) -> None:
        assert not self.errors, self.errors
        self.context.close()


def test_three_phones_play_a_whole_game(browser: Browser, base: str, shots: Path) -> None:
    axe = Axe()
    ana = Phone(browser, "ana", "en-GB", shots)
    ben = Phone(browser, "ben", "de-DE", shots)
    cem = Phone(browser, "cem", "en-US", shots)
    try:
        # -- home and lobby ------------------------------------------------------------------------------
        ana.page.goto(base)
        expect(ana.page.locator("h1.logo")).to_have_text("Crisp")
        ana.shot("home", axe)
        ana.page.fill("#name", "Ana")
        ana.click("create")
        expect(ana.page.locator(".lobby")).to_be_visible()
        link = ana.page.locator(".link-text").inner_text()
        assert link.startswith(base + "/r/")
        for phone, name in ((ben, "Ben"), (cem, "Cem")):
            phone.page.goto(link)  # the shared link opens the room's own join card
            code = link.rsplit("/", 1)[1]
            expect(phone.page.get_by_role("heading", name=re.compile(f"(Room|Raum) {code}"))).to_be_visible()
            phone.shot("join", axe)
            phone.page.fill("#name", name)
            phone.click("join")
            expect(phone.page.locator(".lobby")).to_be_visible()
        expect(ana.page.locator(".seats li")).to_have_count(3)
        expect(ben.page.get_by_text("Warte, bis Ana das Spiel startet")).to_be_visible()  # German
        ana.page.select_option('[data-key="opt-score_limit"]', "50")
        expect(cem.page.locator('[data-key="opt-score_limit"]')).to_have_value("50")
        ana.page.wait_for_function("document.querySelector('img.qr').naturalWidth > 0")  # the QR code loads
        ana.shot("lobby", axe)
        ben.shot("lobby", axe)
        ana.click("start")

        # -- round 1: peek ---------------------------------------------------------------------------------
        for phone in (ana, ben, cem):
            expect(phone.page.locator(".peek-panel")).to_be_visible()
        # Each sees their own left and right card, never the middle.
        left = ana.page.locator('[data-key="slot-left"]')
        expect(left).to_have_attribute("aria-label", "Your left card: 10 of hearts")
        expect(ana.page.locator('[data-key="slot-middle"]')).to_have_attribute("aria-label", "Your middle card")
        ana.shot("peek", axe)
        for phone in (ana, ben, cem):
            phone.click("ready")
        for phone in (ana, ben, cem):
            expect(phone.page.locator(".phase-play")).to_be_visible()
        # The peeked cards are face down again once play starts: it is a memory game.
        expect(ana.page.locator('[data-key="slot-left"]')).to_have_attribute("aria-label", "Your left card")

        # -- Ben: a King, then a Queen and a Jack in the extra moves, then Crisp ---------------------------
        expect(ben.page.locator(".prompt-text")).to_have_text("Du bist dran: Zieh eine Karte")
        ben.shot("my-turn", axe)
        ben.click("act-draw")
        expect(ben.page.locator(".drawn-card")).to_contain_text("Pik-König")
        ben.click("act-king")
        expect(ben.page.locator(".extra-moves")).to_have_text("noch 2 Extrazüge")  # the King gave two
        ben.click("act-draw")
        ben.click("act-queen")
        ben.click("slot-middle")
        # The Queen's second step keeps the card Ben picked in sight, in words and on the card.
        expect(ben.page.locator('[data-key="slot-middle"]')).to_have_class(re.compile(r"\bpicked\b"))
        expect(ben.page.locator(".prompt-text")).to_contain_text("Deine mittlere Karte ist gewählt")
        ben.shot("queen", axe)
        ben.click("target-2-right")  # Cem's right card for Ben's middle: blind
        # Cem's new right card (Ben's 3 of spades) is shown to Cem for a moment; Ben sees nothing new.
        expect(cem.page.locator('[data-key="slot-right"]')).to_have_attribute(
            "aria-label", "Your right card: 3 of spades"
        )
        ben.click("act-draw")
        ben.click("act-jack")
        expect(ben.page.locator('[data-key="slot-middle"]')).to_have_attribute(
            "aria-label", "Deine mittlere Karte: Pik 8"
        )
        expect(ben.page.locator('[data-key="slot-middle"] .peek-count')).to_be_visible()  # how long it shows
        # Always in sight: your own total and who deals (Ana in round 1).
        expect(ana.page.locator(".my-line")).to_contain_text("Game score 0 of 50")
        expect(ana.page.locator(".my-line .dealer")).to_be_visible()
        expect(ben.page.locator(".seat .dealer")).to_have_count(1)
        expect(ben.page.locator('[data-key="crisp"]')).to_be_visible()
        ben.shot("crisp", axe)
        ben.click("crisp")
        expect(ana.page.locator(".final-turns")).to_have_text("Ben called Crisp: 2 final turns left")

        # -- Cem: the page is closed and opened again in the middle of the game ----------------------------
        cem.reopen(link)
        expect(cem.page.locator(".phase-play")).to_be_visible()
        expect(cem.page.locator(".prompt-text")).to_have_text("Your turn: draw")
        cem.click("act-draw")
        expect(cem.page.locator(".drawn-card")).to_contain_text("5 of hearts")
        cem.page.wait_for_timeout(400)  # the drawn card's short animation
        cem.page.screenshot(path=str(shots / "readme-table.png"), scale="css")  # docs/screenshot-table.png
        cem.click("slot-left")  # swap the 5 in; the 10 goes to the discard pile
        expect(ana.page.locator('[data-key="discard-pile"]')).to_have_attribute(
            "aria-label", "Discard pile, top card 10 of spades"
        )

        # -- Ana: the last final turn --------------------------------------------------------------------
        ana.click("act-draw")
        ana.click("act-discard")
        for phone in (ana, ben, cem):
            expect(phone.page.locator(".overlay.results")).to_be_visible()
        expect(ana.page.locator(".fair")).to_contain_text("✓ Fair deck: your browser checked")
        expect(ana.page.locator(".round-table .total")).to_have_text(["30", "9", "17"])
        ana.shot("round-over", axe)
        ben.shot("round-over", axe)
        expect(ana.page.locator('[data-key="rules"]')).to_be_visible()  # the rules stay one tap away
        # "How?" opens the rules where the fair shuffle is explained, and Back returns to the results.
        ana.click("fair-how")
        expect(ana.page.locator("#rules-online")).to_be_in_viewport()
        ana.click("back")
        expect(ana.page.locator(".overlay.results")).to_be_visible()

        # -- round 2: Cem starts, calls Crisp at once ----------------------------------------------------
        for phone in (ana, ben, cem):
            phone.click("ready")
        for phone in (ana, ben, cem):
            expect(phone.page.locator(".peek-panel")).to_be_visible()
            # The new round's story starts over: the last round's end is not told under its deal.
            expect(phone.page.locator(".event-line")).not_to_contain_text(re.compile("round is over|Runde ist vorbei"))
            phone.click("ready")
        expect(cem.page.locator(".prompt-text")).to_have_text("Your turn: draw")
        cem.click("act-draw")
        cem.click("act-discard")
        cem.click("crisp")
        ana.click("act-draw")
        ana.click("act-discard")
        # The table's story follows a switch of the language at once, the lines already told included.
        expect(ana.page.locator(".event-line")).to_contain_text("You discarded")
        ana.page.locator('[data-key="lang"]').select_option("de")
        expect(ana.page.locator(".event-line")).to_contain_text("Du hast")
        expect(ana.page.locator(".event-line")).not_to_contain_text("You discarded")
        ana.page.locator('[data-key="lang"]').select_option("en")
        expect(ana.page.locator(".event-line")).to_contain_text("You discarded")
        ben.click("act-draw")
        ben.click("act-discard")

        # -- game over, rematch --------------------------------------------------------------------------
        expect(cem.page.locator("#results-title")).to_have_text("You won!")
        expect(ana.page.locator("#results-title")).to_have_text("Winner: Cem")
        expect(ben.page.locator("#results-title")).to_have_text("Gewinner: Cem")
        expect(ana.page.locator(".history .past-games li")).to_have_count(1)
        expect(ana.page.locator('.history .past-games [data-key^="replay-"]')).to_be_visible()
        cem.shot("game-over", axe)
        ana.shot("game-over", axe)
        # The game just played, watched again: the results link it, and the device keeps it for later.
        watch_again = cem.page.locator('[data-key="watch-replay"]')
        expect(watch_again).to_have_attribute("href", re.compile(r"^/g/\w+$"))
        again = cem.context.new_page()
        again.goto(base + "/")
        expect(again.locator(".recent-games li")).to_have_count(1)
        again.goto(base + str(watch_again.get_attribute("href")))
        expect(again.locator(".screen.replay.table")).to_be_visible()
        expect(again.locator(".opponents .seat")).to_have_count(3)  # everything open: every seat in the row
        again.close()
        ana.click("rematch")  # back to the lobby, with the same players and options
        for phone in (ana, ben, cem):
            expect(phone.page.locator(".lobby")).to_be_visible()
        expect(cem.page.locator('[data-key="opt-score_limit"]')).to_have_value("50")
        ana.click("start")
        for phone in (ana, ben, cem):
            expect(phone.page.locator(".peek-panel")).to_be_visible()

        # -- the rules, in both languages ----------------------------------------------------------------
        ana.click("rules")
        expect(ana.page.locator(".rules-text h1")).to_have_text("How to play")
        ana.shot("rules", axe)
        ben.click("rules")
        expect(ben.page.locator(".rules-text h1")).to_have_text("So wird gespielt")
        ben.click("back")
        expect(ben.page.locator(".peek-panel")).to_be_visible()
        # The phone's Back (button or gesture) closes the rules too, and the game's page stays.
        url = ben.page.url
        ben.click("rules")
        expect(ben.page.locator(".rules-text h1")).to_be_visible()
        ben.page.go_back()
        expect(ben.page.locator(".peek-panel")).to_be_visible()
        assert ben.page.url == url
        ben.click("rules")
        ben.click("back")
        expect(ben.page.locator(".peek-panel")).to_be_visible()
        assert ben.page.evaluate("() => history.state?.rules ?? false") is False, "the rules' entry taken back"
    finally:
        for phone in (ana, ben, cem):
            phone.close()
