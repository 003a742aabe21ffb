"""A practice game's hint marks where to tap with a ring: at 360 px with 2 to 8 players the ring crosses no
text (a player's name, a pile's label, a line), on the piles, the hand's slots, the move buttons and the
other players' cards a Queen swaps with. The rings are measured in the page (js/hint_rings.js): outline and
offset, and hard box-shadow rings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.harness import NUMBERS_FIRST, deck, open_page, page_check, watch
from tests.e2e.procs import server_process

PLAYERS = range(2, 9)


def queen_for_the_page(players: int) -> list[str]:
    """Seat 0 (the page) deals and moves last: 3 cards each dealt, one drawn by each computer player (number
    cards: no extra draws), then the page draws a Queen."""
    return deck([*NUMBERS_FIRST[: 3 * players + players - 1], "QS"])


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server, its computer players acting at once, dealing one game's first deck per player count."""
    decks = [queen_for_the_page(n) for n in PLAYERS]
    env = {"CRISP_BOT_PAUSE": "0", "CRISP_TEST_DECKS": json.dumps(decks)}
    data = tmp_path_factory.mktemp("hints")
    with server_process(data, env, rigged=True, log=data / "server.log") as (url, _proc):
        yield url


def ring_problems(page: Page, keys: list[str]) -> list[str]:
    """Each of ``keys`` marked as a hint marks it (the class the table adds), its ring measured, unmarked."""
    problems: list[str] = []
    for key in keys:
        element = page.locator(f'[data-key="{key}"]')
        if element.count() == 0:
            continue
        element.evaluate("e => e.classList.add('hinted')")
        problems += page.evaluate(page_check("hint_rings"))
        element.evaluate("e => e.classList.remove('hinted')")
    return problems


def test_hint_rings_cross_no_text(browser: Browser, base: str, shots: Path) -> None:
    """One practice game per player count, in turn (the server deals them the decks above, in order)."""
    for players in PLAYERS:
        locale = "de-DE" if players % 2 else "en-GB"
        context, page = open_page(browser, 360, 640, locale, dark=players % 3 == 0)
        errors: list[str] = []
        watch(page, errors)
        try:
            page.goto(base)
            page.fill("#name", "Ana")
            page.select_option('[data-key="practice-bots"]', str(players - 1))
            page.locator('[data-key="practice"]').click()
            page.locator('[data-key="ready"]').click()
            expect(page.locator('[data-key="act-draw"]:enabled')).to_be_visible(timeout=60_000)
            # The hint itself marks its move; then every place a hint can mark, one at a time.
            page.locator('[data-key="hint"]').click()
            expect(page.locator(".hinted").first).to_be_visible()
            page.wait_for_timeout(300)
            page.screenshot(path=str(shots / f"hint-ring-{players}.png"))
            found = page.evaluate(page_check("hint_rings"))
            assert found == [], (players, found)
            keys = ["draw-pile", "discard-pile", "act-draw", "slot-left", "slot-middle", "slot-right"]
            found = ring_problems(page, keys)
            assert found == [], (players, found)
            # The Queen drawn: its button, then your card, then another player's card to swap with.
            page.locator('[data-key="act-draw"]').click()
            expect(page.locator('[data-key="act-queen"]:enabled')).to_be_visible()
            assert ring_problems(page, ["act-queen", "act-discard"]) == [], players
            page.locator('[data-key="act-queen"]').click()
            page.locator('[data-key="slot-left"]').click()
            targets = page.locator('[data-key^="target-"]')
            expect(targets.first).to_be_visible()
            keys = [targets.nth(k).get_attribute("data-key") or "" for k in range(targets.count())]
            assert len(keys) == 3 * (players - 1)
            page.locator(f'[data-key="{keys[0]}"]').evaluate("e => e.classList.add('hinted')")
            page.screenshot(path=str(shots / f"hint-ring-target-{players}.png"))
            found = ring_problems(page, keys)
            assert found == [], (players, found)
            assert not errors, errors
        finally:
            context.close()
