"""Moves you can follow (issue 14): a card flies pile to player, hand to discard pile and between two hands
on a Queen's swap, in at most 400 ms, taking no taps, and not at all under reduced motion; the player whose
card a Queen took reads it in the second person, in English and German, and sees the slot marked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import rigged_server
from tests.browser.harness import Bots, deck, join_and_play, open_page

# Three players: nine number cards dealt, then Ben (seat 1, the starter) draws the Queen of hearts.
QUEEN_DECK = deck(["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "2H", "QH", "4C", "6C"])

# Counts the cards that fly, and keeps the longest flight and whether any took taps.
WATCH_FLIGHTS = """() => {
  window.flights = { count: 0, longest: 0, tappable: false };
  new MutationObserver((changes) => {
    for (const change of changes) for (const node of change.addedNodes) {
      if (!node.classList || !node.classList.contains("flying")) continue;
      window.flights.count += 1;
      for (const a of node.getAnimations())
        window.flights.longest = Math.max(window.flights.longest, a.effect.getTiming().duration);
      if (getComputedStyle(node).pointerEvents !== "none") window.flights.tappable = true;
    }
  }).observe(document.body, { childList: true });
}"""


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    yield from rigged_server(tmp_path, [QUEEN_DECK])


@pytest.mark.parametrize(
    ("locale", "reduced", "line"),
    [
        ("en-GB", False, "Ben swapped your left card with their middle one."),
        ("de-DE", True, "Ben hat deine linke Karte gegen die eigene mittlere getauscht."),
    ],
)
def test_a_queen_swap_can_be_followed(
    browser: Browser, base: str, shots: Path, *, locale: str, reduced: bool, line: str
) -> None:
    bots = Bots(base, ["Ana", "Ben"])
    context, page = open_page(browser, 360, 640, locale=locale)
    if reduced:
        page.emulate_media(reduced_motion="reduce")
    try:
        join_and_play(page, base, bots, "Cem")
        page.evaluate(WATCH_FLIGHTS)
        ben = bots.clients[1]
        bots.run(ben.draw())
        page.wait_for_timeout(500)
        drawn = page.evaluate("window.flights.count")
        bots.run(ben.queen("middle", 2, "left"))  # Ben's middle card for Cem's (the page's) left one
        expect(page.locator(".event-line")).to_contain_text(line)
        expect(page.locator('[data-key="slot-left"]')).to_have_class(re.compile(r"\btouched\b"))
        page.screenshot(path=str(shots / f"queen-swapped-{locale}.png"))
        flights = page.evaluate("window.flights")
        if reduced:
            assert flights["count"] == 0, flights
        else:
            assert drawn >= 1, "no card flew from the pile to Ben"
            assert flights["count"] >= drawn + 2, "the Queen's two cards did not fly between the hands"
            assert 0 < flights["longest"] <= 400, flights
            assert not flights["tappable"], flights
        expect(page.locator(".card.flying")).to_have_count(0, timeout=1000)  # gone once they landed
        # The mark fades after a moment.
        expect(page.locator('[data-key="slot-left"]')).not_to_have_class(re.compile(r"\btouched\b"), timeout=3000)
    finally:
        context.close()
        bots.close()
