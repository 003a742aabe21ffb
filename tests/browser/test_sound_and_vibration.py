"""Sound and vibration at the table: off by default; once turned on (at the table itself), every player's
moves, a Crisp call and the round's end are heard, and your turn and your own clock's last 10 seconds are
heard and felt; the switches say their state in words and fit the table's bar on a small phone.

The page's WebAudio and navigator.vibrate are recorders (js/fake_audio.js): the test reads the notes
played and matches them against the page's own table of sounds (js/sounds_played.js)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from crisp_server.remote.client import CrispClient, ProtocolError
from tests.browser.conftest import rigged_server
from tests.browser.harness import NUMBERS_FIRST, Bots, fits, join_and_play, open_page, page_check

FAKE_AUDIO = (Path(__file__).resolve().parent / "js" / "fake_audio.js").read_text()
SOUNDS_PLAYED = page_check("sounds_played")
ONE_LINE = page_check("one_line")
ROUND_TEN_ON_ONE_LINE = f"""(bar) => {{
  const copy = bar.cloneNode(true);
  const round = [...copy.querySelectorAll(".round-long, .round-short")];
  for (const el of round) el.textContent = el.textContent.replace(/\\d+/, "10");
  bar.after(copy);
  try {{
    return round.length === 2 && round.every((el) => el.textContent.includes("10")) ? ({ONE_LINE})(copy) : ["no round"];
  }} finally {{
    copy.remove();
  }}
}}"""
#: The words of the switches, as the home screen and the lobby write them and the table's icons are named.
WORDS = {
    "en-GB": {"sound": "Sound: {}", "vibration": "Vibration: {}", "on": "on", "off": "off", "mine": "Your turn"},
    "de-DE": {"sound": "Ton: {}", "vibration": "Vibration: {}", "on": "an", "off": "aus", "mine": "Du bist dran"},
}


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    # Number cards only in the first draws: every drawn card may simply be discarded.
    yield from rigged_server(tmp_path, [NUMBERS_FIRST] * 3)


def open_recorded(browser: Browser, locale: str = "en-GB") -> tuple[BrowserContext, Page]:
    context, page = open_page(browser, 360, 640, locale=locale)
    context.add_init_script(FAKE_AUDIO)
    return context, page


def played(page: Page) -> list[str]:
    return list(page.evaluate(SOUNDS_PLAYED))


def buzzes(page: Page) -> list[Any]:
    return list(page.evaluate("window.__buzzes"))


def sounds_are(page: Page, expected: list[str]) -> None:
    """Wait until the page has played exactly ``expected`` (sounds wait for the one before them)."""
    for _ in range(40):
        if played(page) == expected:
            return
        page.wait_for_timeout(100)
    assert played(page) == expected


async def move(c: CrispClient, swap: bool = False) -> None:
    """``c`` plays one move once its turn is on: draws from the deck, then swaps its left card or discards."""
    await c.wait_for(lambda c: c.phase == "play" and c.my_turn(), what="its turn")
    while True:
        may_draw = (c.state or {}).get("clock", {}).get("may_draw_in") or 0
        await asyncio.sleep(may_draw / 1000 + 0.05)
        try:
            await c.draw()
            break
        except ProtocolError as err:
            if "too_early" not in str(err):
                raise
            await asyncio.sleep(0.2)
    if swap:
        await c.swap("left")
    else:
        await c.discard()


def switch(page: Page, locale: str, what: str, on: bool) -> Any:
    words = WORDS[locale]
    return page.get_by_role("button", name=words[what].format(words["on" if on else "off"]), exact=True)


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_the_table_is_heard_and_felt_once_turned_on(browser: Browser, base: str, shots: Path, locale: str) -> None:
    """Ana is a bot, the page is Me (seat 1), who starts."""
    bots = Bots(base, ["Ana"])
    ana = bots.clients[0]
    context, page = open_recorded(browser, locale)
    lang = locale[:2]
    try:
        join_and_play(page, base, bots, "Me")
        draw = page.locator('[data-key="act-draw"]')
        expect(draw).to_be_enabled()
        # Off by default: the first turn came in silence, and nothing vibrated.
        page.wait_for_timeout(300)
        assert played(page) == []
        assert buzzes(page) == []
        # The table's switches: crossed-out icons while off, their state in their names.
        sound, vibration = switch(page, locale, "sound", False), switch(page, locale, "vibration", False)
        expect(sound).to_have_attribute("aria-pressed", "false")
        expect(sound).to_have_text("🔇")
        expect(vibration).to_have_attribute("aria-pressed", "false")
        expect(vibration.locator(".crossed")).to_have_text("📳")
        bar = page.locator(".table .bar")
        bar.screenshot(path=str(shots / f"table-bar-off-{lang}-360x640.png"))
        sound.click()
        sound = switch(page, locale, "sound", True)
        expect(sound).to_have_attribute("aria-pressed", "true")
        expect(sound).to_have_text("🔊")
        sounds_are(page, ["on"])
        assert buzzes(page) == []  # sound is not vibration
        # My own moves are heard.
        draw.click()
        page.locator('[data-key="act-discard"]').click()
        sounds_are(page, ["on", "draw", "discard"])
        # Vibration on: it buzzes once to say so, and not for Ana's moves; my turn is heard and felt.
        vibration.click()
        vibration = switch(page, locale, "vibration", True)
        expect(vibration).to_have_attribute("aria-pressed", "true")
        expect(vibration.locator(".crossed")).to_have_count(0)
        assert buzzes(page) == [40]
        page.screenshot(path=str(shots / f"table-sound-on-{lang}-360x640.png"))
        bar.screenshot(path=str(shots / f"table-bar-on-{lang}-360x640.png"))
        bots.run(move(ana, swap=True))
        expect(page.locator(".turn-state")).to_contain_text(WORDS[locale]["mine"], timeout=5000)
        sounds_are(page, ["on", "draw", "discard", "draw", "swap", "turn"])
        assert buzzes(page) == [40, 50]
        # A Crisp call is heard and felt; Ana's final turn and the round's end are heard.
        draw.click()
        page.locator('[data-key="act-discard"]').click()
        page.locator('[data-key="crisp"]').click()
        heard = ["on", "draw", "discard", "draw", "swap", "turn", "draw", "discard"]
        sounds_are(page, [*heard, "crisp"])
        assert buzzes(page) == [40, 50, [80, 60, 80]]
        bots.run(move(ana))
        expect(page.locator(".phase-round_over")).to_be_visible()
        sounds_are(page, [*heard, "crisp", "draw", "discard", "roundEnd"])
        assert buzzes(page) == [40, 50, [80, 60, 80]]
    finally:
        context.close()
        bots.close()


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_the_table_bar_fits_a_small_phone(browser: Browser, base: str, shots: Path, locale: str) -> None:
    """The bar's one line, with both switches, in English and in German; and the home screen's switches
    use the same words as the table's."""
    bots = Bots(base, ["Ana"])
    context, page = open_recorded(browser, locale)
    try:
        page.goto(base)
        # The home screen's switches say it in the words the table's icons are named with.
        expect(switch(page, locale, "sound", False)).to_have_text(WORDS[locale]["sound"].format(WORDS[locale]["off"]))
        expect(switch(page, locale, "vibration", False)).to_have_attribute("aria-pressed", "false")
        join_and_play(page, base, bots, "Me")
        bar = page.locator(".table .bar")
        for on in (False, True):
            if on:
                switch(page, locale, "sound", False).click()
                switch(page, locale, "vibration", False).click()
            expect(switch(page, locale, "sound", on)).to_be_visible()
            expect(switch(page, locale, "vibration", on)).to_be_visible()
            page.screenshot(path=str(shots / f"table-{'on' if on else 'off'}-{locale[:2]}-360x640.png"))
            # One line, nothing cut or pushed out: every item of the bar within it, all at the same height.
            assert bar.evaluate(ONE_LINE) == []
            assert fits(page) == []
        # A long game's round (two digits) fits as well: a copy of the bar says round 10 (the page draws its
        # own bar anew at any time), looked at beside the real one and taken away again.
        assert bar.evaluate(ROUND_TEN_ON_ONE_LINE) == []
    finally:
        context.close()
        bots.close()


def test_only_your_own_clock_warns_at_ten_seconds(browser: Browser, base: str, shots: Path) -> None:
    """Ana and Ben are bots, the page is Cem (seat 2); with a 30 s turn timer Ben starts, then Cem."""
    bots = Bots(base, ["Ana", "Ben"])
    ben = bots.clients[1]
    context, page = open_recorded(browser)
    try:
        bots.run(bots.host.set_options(turn_seconds=30))
        join_and_play(page, base, bots, "Cem")
        switch(page, "en-GB", "sound", False).click()
        switch(page, "en-GB", "vibration", False).click()
        sounds_are(page, ["on"])
        # Ben's clock passes 10 s (his ring turns red): not a sound, not a buzz.
        expect(page.locator(".turn-state")).to_contain_text("Ben: draw")
        expect(page.locator(".clock.low")).to_be_visible(timeout=30_000)
        page.wait_for_timeout(1000)
        assert played(page) == ["on"]
        assert buzzes(page) == [40]
        bots.run(move(ben))
        expect(page.locator(".turn-state")).to_contain_text("Your turn", timeout=5000)
        expect(page.locator(".clock.low")).to_have_count(0)
        sounds_are(page, ["on", "draw", "discard", "turn"])
        assert buzzes(page) == [40, 50]
        # Mine passes 10 s: warned once, heard and felt, and not again while it runs on.
        expect(page.locator(".clock.low")).to_be_visible(timeout=30_000)
        sounds_are(page, ["on", "draw", "discard", "turn", "warning"])
        assert buzzes(page) == [40, 50, 150]
        page.screenshot(path=str(shots / "table-ten-seconds-left-360x640.png"))
        page.wait_for_timeout(2000)
        assert played(page) == ["on", "draw", "discard", "turn", "warning"]
        assert buzzes(page) == [40, 50, 150]
    finally:
        context.close()
        bots.close()


def test_no_vibration_switch_where_the_phone_cannot_vibrate(browser: Browser, base: str) -> None:
    """A browser without navigator.vibrate (Safari on an iPhone): the table offers sound only."""
    bots = Bots(base, ["Ana", "Ben"])
    context, page = open_recorded(browser)
    context.add_init_script("delete Navigator.prototype.vibrate")
    try:
        bots.run(bots.start_and_ready())
        page.goto(f"{base}/r/{bots.code}")
        page.locator('[data-key="watch"]').click()
        expect(page.locator(".spectating")).to_be_visible()
        expect(switch(page, "en-GB", "sound", False)).to_be_visible()
        expect(page.locator('[data-key="vibrate"]')).to_have_count(0)
    finally:
        context.close()
        bots.close()
