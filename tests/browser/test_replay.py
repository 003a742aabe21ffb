"""The replay page (/g/GAME_ID) in a real browser: finished games stored as a room stores them, served by the
real server, stepped through at phone size and on a desktop, in both points of view, en and de, light and
dark, every refusal in words, axe clean. Prints the time a step takes to draw with 8 players (not asserted:
this machine's timings are noisy)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from crisp_server.engine import Options
from crisp_server.settings import Settings
from crisp_server.store.migrate import upgrade
from crisp_server.store.store import Store
from tests.browser.harness import OTHER_LANGUAGES, fits, open_page, page_check, watch
from tests.e2e.procs import server_process
from tests.store.games import StoredGame, store_played


async def fill(data_dir: Path) -> dict[str, StoredGame]:
    settings = Settings(data_dir=data_dir)
    url = settings.resolved_database_url()
    await asyncio.to_thread(upgrade, url, settings.migrations_dir)
    store = Store(url)
    await store.start()
    try:
        return {
            "three": await store_played(store, 7, 3, Options(50, None, False)),
            "eight": await store_played(store, 11, 8, Options(150, 30, True)),
            "running": await store_played(store, 13, 2, Options(50, None, False), finish=False),
        }
    finally:
        await store.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, StoredGame]]]:
    data_dir = tmp_path_factory.mktemp("replays")
    # In a thread of its own: sync Playwright runs an event loop in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        games = pool.submit(asyncio.run, fill(data_dir)).result(120)
    # Its output to a file: a pipe nobody reads fills up over a module's worth of requests and stops the server.
    with server_process(data_dir, log=data_dir / "server.log") as (base, _proc):
        yield base, games


def keep(page: Page, base: str, game: StoredGame, seat: int) -> None:
    """This device played ``game`` in ``seat``: its token is kept as the page keeps a finished game's."""
    page.goto(base + "/rules-unknown-path")  # any page of the origin, for its localStorage
    entry = {"id": game.id, "room": game.room, "players": game.players, "seat": seat, "token": game.tokens[seat]}
    page.evaluate("e => localStorage.setItem('crisp.games', JSON.stringify([e]))", entry)


def axe_problems(page: Page) -> list[str]:
    violations = Axe().run(page).response["violations"]
    bad = [v for v in violations if v.get("impact") in ("serious", "critical")]
    return [f"{v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:5]}" for v in bad]


def card_label(page: Page, seat_name: str, slot: str) -> str:
    """The spoken label of a seat's card in the seats' row (the other players' cards)."""
    cards = page.locator(".opponents .mini-card")
    for k in range(cards.count()):
        label = cards.nth(k).get_attribute("aria-label") or ""
        if label.startswith(seat_name) and f" {slot} " in label:
            return label
    raise AssertionError(f"no {slot} card of {seat_name} on the table")


def step_text(page: Page) -> str:
    return page.locator(".replay-lines").inner_text()


def step_index(page: Page) -> int:
    return int(page.locator(".replay-lines").get_attribute("data-step") or "-1")


def pick(page: Page, value: str) -> None:
    page.locator('[data-key="pov"]').select_option(value)
    expect(page.locator(f'[data-key="pov"] option[value="{value}"]')).to_have_js_property("selected", True)
    expect(page.locator('[data-key="pov"]')).to_be_enabled()


@pytest.mark.parametrize(("locale", "dark"), [("en-GB", False), ("de-DE", True), ("en-GB", True), ("de-DE", False)])
def test_step_through_both_points_of_view_on_a_phone(
    browser: Browser, served: tuple[str, dict[str, StoredGame]], shots: Path, locale: str, dark: bool
) -> None:
    base, games = served
    game = games["three"]
    lang = locale[:2]
    theme = "dark" if dark else "light"
    context, page = open_page(browser, 360, 640, locale, dark)
    errors: list[str] = []
    watch(page, errors)
    try:
        keep(page, base, game, 0)
        page.goto(f"{base}/g/{game.id}")
        expect(page.locator(".screen.replay")).to_be_visible()
        assert step_index(page) == 0
        # Everything open, at the deal: every card face up, the other players' too.
        face_down = "face down" if lang == "en" else "verdeckt"
        other = game.players[1]
        assert face_down not in card_label(page, other, "left" if lang == "en" else "linke")
        assert page.locator(".my-hand").count() == 0  # nobody's hand is "yours" with everything open
        page.screenshot(path=str(shots / f"replay-open-{lang}-{theme}.png"))
        assert fits(page) == []
        assert axe_problems(page) == []

        # What the first player knew: their own two peeked cards, nobody else's.
        pick(page, "0")
        assert step_index(page) == 0
        assert face_down in card_label(page, other, "left" if lang == "en" else "linke")
        own = page.locator(".my-hand .slot .card")
        assert own.count() == 3
        assert page.locator(".my-hand .slot .card.face").count() == 2
        page.screenshot(path=str(shots / f"replay-seat-{lang}-{theme}.png"))
        assert fits(page) == []
        assert axe_problems(page) == []

        # Step forward and back with the buttons and the keys; the words follow.
        first = step_text(page)
        page.locator('[data-key="step"]').click()
        assert step_index(page) == 1
        assert step_text(page) != first
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert step_index(page) == 3
        page.keyboard.press("ArrowLeft")
        assert step_index(page) == 2
        page.locator('[data-key="step-back"]').click()
        page.locator('[data-key="step-back"]').click()
        assert step_index(page) == 0
        assert step_text(page) == first

        # Rounds: the next deal, back to the first, the end and the start.
        page.keyboard.press("ArrowDown")
        second_round = step_index(page)
        assert second_round > 3
        expect(page.locator(".round-label .round-long")).to_contain_text("2")
        page.locator('[data-key="prev-round"]').click()
        assert step_index(page) == 0
        page.keyboard.press("End")
        last = step_index(page)
        assert last > second_round
        # The game's end: every hand face up, even in a seat's point of view, and the result in words.
        assert face_down not in card_label(page, other, "left" if lang == "en" else "linke")
        page.wait_for_timeout(1200)  # the hands turn face up as in live play
        page.screenshot(path=str(shots / f"replay-end-{lang}-{theme}.png"))
        assert axe_problems(page) == []
        page.keyboard.press("Home")
        assert step_index(page) == 0

        # The slider: anywhere at once.
        page.locator('[data-key="slider"]').fill(str(second_round))
        assert step_index(page) == second_round
        # Both points of view at the same step: a card the seat did not know is face down in its view only.
        pick(page, "all")
        assert step_index(page) == second_round
        assert face_down not in card_label(page, other, "left" if lang == "en" else "linke")
        pick(page, "0")
        assert face_down in card_label(page, other, "left" if lang == "en" else "linke")

        # Playing: a step a second, then pause.
        page.locator('[data-key="play"]').click()
        page.wait_for_timeout(2300)
        page.locator('[data-key="play"]').click()
        assert step_index(page) >= second_round + 2
        assert not errors, errors
    finally:
        context.close()


def test_eight_players_on_a_desktop_and_a_phone(
    browser: Browser, served: tuple[str, dict[str, StoredGame]], shots: Path
) -> None:
    base, games = served
    game = games["eight"]
    for width, height in ((1280, 800), (360, 640)):
        context, page = open_page(browser, width, height, "en-GB")
        errors: list[str] = []
        watch(page, errors)
        try:
            keep(page, base, game, 0)
            page.goto(f"{base}/g/{game.id}")
            expect(page.locator(".screen.replay.seats-8")).to_be_visible()
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(600)  # the flights land
            page.screenshot(path=str(shots / f"replay-8-open-{width}.png"))
            assert fits(page) == []
            assert axe_problems(page) == []
            pick(page, "3")
            page.screenshot(path=str(shots / f"replay-8-seat-{width}.png"))
            assert fits(page) == []
            assert axe_problems(page) == []
            assert not errors, errors
        finally:
            context.close()


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_every_refusal_in_words(
    browser: Browser, served: tuple[str, dict[str, StoredGame]], shots: Path, locale: str
) -> None:
    base, games = served
    lang = locale[:2]
    words = {
        "en": ["only for the game's players", "no game with this link", "still being played", "connection"],
        "de": ["nur für die Spieler", "kein Spiel", "läuft noch", "Verbindung"],
    }[lang]
    context, page = open_page(browser, 360, 640, locale)
    try:
        # No token on this device, and the game is not public: 403.
        page.goto(f"{base}/g/{games['three'].id}")
        expect(page.locator(".replay-message .notice")).to_contain_text(words[0])
        page.screenshot(path=str(shots / f"replay-403-{lang}.png"))
        assert axe_problems(page) == []
        page.goto(f"{base}/g/nosuchgame")
        expect(page.locator(".replay-message .notice")).to_contain_text(words[1])
        running = games["running"]
        keep(page, base, running, 1)
        page.goto(f"{base}/g/{running.id}")
        expect(page.locator(".replay-message .notice")).to_contain_text(words[2])
        # The network gone: a sentence and a way to try again.
        page.route("**/api/games/**", lambda route: route.abort())
        page.goto(f"{base}/g/{games['three'].id}")
        expect(page.locator('[data-key="retry"]')).to_be_visible()
        page.unroute("**/api/games/**")
        keep(page, base, games["three"], 2)
        page.goto(f"{base}/g/{games['three'].id}")
        expect(page.locator(".screen.replay.table")).to_be_visible()
        # Not the host: no switch, but a sentence about it; the link to copy is there.
        page.locator('[data-key="share"]').click()
        expect(page.locator('[data-key="copy-link"]')).to_be_visible()
        assert page.locator('[data-key="public"]').count() == 0
        expect(page.locator(".share-note")).to_be_visible()
        page.screenshot(path=str(shots / f"replay-share-{lang}.png"))
        assert axe_problems(page) == []
        # Another point of view that cannot be fetched: the one shown stays, a toast says why.
        page.locator('[data-key="share"]').click()
        page.route("**/replay?seat=*", lambda route: route.abort())
        page.locator('[data-key="pov"]').select_option("1")
        expect(page.locator("#toast")).to_contain_text(words[3])
        expect(page.locator('[data-key="pov"]')).to_have_value("all")
        expect(page.locator(".screen.replay.table")).to_be_visible()
    finally:
        context.close()


def test_the_host_shares_the_replay_by_link(browser: Browser, served: tuple[str, dict[str, StoredGame]]) -> None:
    base, games = served
    game = games["three"]
    host_context, host = open_page(browser, 360, 640, "en-GB")
    guest_context, guest = open_page(browser, 360, 640, "en-GB")
    try:
        keep(host, base, game, 0)
        host.goto(f"{base}/g/{game.id}")
        host.locator('[data-key="share"]').click()
        switch = host.locator('[data-key="public"]')
        expect(switch).not_to_be_checked()
        guest.goto(f"{base}/g/{game.id}")
        expect(guest.locator(".replay-message .notice")).to_be_visible()
        switch.check()
        expect(switch).to_be_enabled()
        expect(switch).to_be_checked()
        guest.goto(f"{base}/g/{game.id}")
        expect(guest.locator(".screen.replay.table")).to_be_visible()
        pick(guest, "1")  # a public replay: every point of view
        switch.uncheck()
        expect(switch).to_be_enabled()
        expect(switch).not_to_be_checked()
        guest.goto(f"{base}/g/{game.id}")
        expect(guest.locator(".replay-message .notice")).to_be_visible()
    finally:
        host_context.close()
        guest_context.close()


def test_how_fast_a_step_draws(browser: Browser, served: tuple[str, dict[str, StoredGame]]) -> None:
    """Median and 95th percentile of one step's drawing with 8 players in a 150-point game (printed)."""
    base, games = served
    game = games["eight"]
    context, page = open_page(browser, 360, 640, "en-GB")
    try:
        keep(page, base, game, 0)
        page.goto(f"{base}/g/{game.id}")
        expect(page.locator(".screen.replay")).to_be_visible()
        page.emulate_media(reduced_motion="reduce")  # the drawing, not the flights
        steps = step_count(page)
        for pov in ("all", "0"):
            pick(page, pov)
            # Each step: the key press, the drawing, and the layout the browser then does (offsetHeight).
            times = page.evaluate(
                """async (n) => {
                  const out = [];
                  for (let k = 0; k < n; k++) {
                    const t0 = performance.now();
                    document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
                    void document.body.offsetHeight;
                    out.push(performance.now() - t0);
                  }
                  return out;
                }""",
                steps,
            )
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            figures = {"median_ms": round(statistics.median(times), 2), "p95_ms": round(p95, 2)}
            print(json.dumps({"pov": pov, "steps": len(times), **figures}))
            assert step_index(page) == steps
            page.keyboard.press("Home")
    finally:
        context.close()


def step_count(page: Page) -> int:
    return int(page.locator('[data-key="slider"]').get_attribute("max") or "0")


WORDS = """async () => {
  const { getLang, setLang } = await import("/js/i18n.js");
  const { replayLine } = await import("/js/lines.js");
  const { callerText } = await import("/js/screens/results.js");
  const names = ["Ana", "Ben", "Cem"];
  const who = (s) => names[s];
  const seats = names.map((name) => ({ name }));
  const peek = { type: "card_shown", seat: 1, slot: "left", card: "7H", why: "deal" };
  const before = getLang();
  const out = {};
  for (const lang of ["en", "de"]) {
    await setLang(lang);
    out[lang] = [
      callerText({ caller: 0, sums: [9, 8, 9], points: [14, 8, 9] }, seats),
      callerText({ caller: 2, sums: [4, 8, 9], points: [4, 8, 14] }, seats),
      replayLine({ type: "game_ended", winners: [0, 1, 2] }, who),
      replayLine(peek, who),
      replayLine(peek, who, 1),
      replayLine({ type: "drew", seat: 1, source: "deck", card: null }, who, 1),
    ];
  }
  await setLang(before);
  return out;
}"""


def test_names_in_a_sentence_and_a_players_own_replay(
    browser: Browser, served: tuple[str, dict[str, StoredGame]]
) -> None:
    """Several names read as a list ("Ben and Cem"), in the page's language; the replay of one's own point of view
    tells one's own moves in the second person ("You looked at your left card")."""
    base, _games = served
    context, page = open_page(browser, 360, 640)
    try:
        page.goto(base + "/")
        assert page.evaluate(WORDS) == {
            "en": [
                "Ana called Crisp, but Ben and Cem had less or the same: +5.",
                "Cem called Crisp, but Ana and Ben had less or the same: +5.",
                "The game is over: Ana, Ben, and Cem share the win.",
                "Ben looked at their own left card: 7 of hearts.",
                "You looked at your left card: 7 of hearts.",
                "You drew from the draw pile.",
            ],
            "de": [
                "Ana hat Crisp gerufen, aber Ben und Cem hatten weniger oder gleich viel: +5.",
                "Cem hat Crisp gerufen, aber Ana und Ben hatten weniger oder gleich viel: +5.",
                "Das Spiel ist vorbei: Ana, Ben und Cem teilen sich den Sieg.",
                "Ben hat sich die eigene linke Karte angesehen: Herz 7.",
                "Du hast dir deine linke Karte angesehen: Herz 7.",
                "Du hast vom Nachziehstapel gezogen.",
            ],
        }
    finally:
        context.close()


def every_step_readable(page: Page) -> tuple[list[str], list[int]]:
    """Where a step's words are hidden (js/replay_lines.js), stepping through the whole game; and the steps
    whose page is taller than the screen."""
    found = page.evaluate(page_check("replay_lines"))
    return list(found["problems"]), list(found["scrolls"])


#: Phone sizes, languages, themes and games (3 or 8 players) the replay's words are checked in.
READABLE = [
    (360, 640, "en-GB", False, "three"),
    (360, 640, "de-DE", True, "three"),
    (360, 640, "en-GB", True, "eight"),
    (360, 640, "de-DE", False, "eight"),
    (320, 568, "de-DE", False, "three"),
    (320, 568, "en-GB", True, "eight"),
    (412, 915, "de-DE", True, "eight"),
]
#: Each other language of the client (a catalog in static/js/lang/), once: eight players at 360x640.
READABLE += [(360, 640, lang, i % 2 == 0, "eight") for i, lang in enumerate(OTHER_LANGUAGES)]


@pytest.mark.parametrize("case", READABLE, ids=lambda c: "-".join(map(str, c)))
def test_every_line_of_every_step_is_readable(
    browser: Browser,
    served: tuple[str, dict[str, StoredGame]],
    shots: Path,
    case: tuple[int, int, str, bool, str],
) -> None:
    """Each step's text box shows all it says (the Crisp call's ±5, the round's points, a seat's peeks): its
    box never hides a line, and it is on the screen or reached by scrolling the page, in both points of view.
    From 360x640 on, every step fits the screen with the controls (no scrolling); on a 320x568 phone the
    page may grow for the longest words."""
    width, height, locale, dark, players = case
    base, games = served
    game = games[players]
    lang, theme = locale[:2], "dark" if dark else "light"
    context, page = open_page(browser, width, height, locale, dark)
    errors: list[str] = []
    watch(page, errors)
    try:
        keep(page, base, game, 0)
        page.goto(f"{base}/g/{game.id}")
        expect(page.locator(".screen.replay")).to_be_visible()
        page.emulate_media(reduced_motion="reduce")  # the text, not the flights
        for pov in ("all", "0"):
            pick(page, pov)
            problems, scrolls = every_step_readable(page)
            assert problems == []
            if width >= 360:
                assert scrolls == [], f"the page scrolls at steps {scrolls} ({pov})"
        # The longest words: a round's end with the Crisp call's ±5 and every player's points.
        page.keyboard.press("End")
        page.wait_for_timeout(1200)
        page.screenshot(path=str(shots / f"replay-lines-{players}-{width}x{height}-{lang}-{theme}.png"), full_page=True)
        assert fits(page, controls=width >= 360) == []
        assert not errors, errors
    finally:
        context.close()
