"""The table tells the whole story: a seat left mid-game can be taken back, the link page follows its room
live, a spectator is not told to remember cards, a round's end shows every hand before the results, Remove
asks first, the table's words say what they mean, and the home screen puts "Play now" in sight with one name
field. Each test finds things as a player would: by role and visible text."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from crisp_server.remote.client import CrispClient
from tests.browser.conftest import rigged_server
from tests.browser.harness import Bots, deck, join, join_and_play, open_page, play_turns, watch

# Two players, Ana (seat 0) deals, so Me (seat 1) starts; the deal goes Me, Ana, Me, Ana, Me, Ana.
# Me holds 2, 3, 4 (9); Ana holds 9, 9, 9 (27). Draws: Me a 5 of clubs, Ana a Queen of hearts, then numbers.
TWO = deck(["2S", "9S", "3S", "9H", "4S", "9D", "5C", "QH", "6C", "7C", "8C", "6D", "7D", "8D"])


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    yield from rigged_server(tmp_path, [TWO] * 4)


def confirm(page: Page, question: str | re.Pattern[str]) -> None:
    """Answer the in-page question with its confirming button (Cancel is the other one)."""
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(question)
    dialog.locator('[data-key="confirm-ok"]').click()
    expect(dialog).to_have_count(0)


def test_a_player_who_leaves_mid_game_takes_the_seat_back(browser: Browser, base: str, shots: Path) -> None:
    bots = Bots(base, ["Ana", "Ben"])
    context, page = open_page(browser, 360, 640)
    errors: list[str] = []
    watch(page, errors)
    try:
        join_and_play(page, base, bots, "Me")
        page.get_by_role("button", name="Leave").click()
        # Without stand-ins, the seat's moves time out until its player is back: the question says so.
        page.screenshot(path=str(shots / "story-leave-question.png"))
        confirm(page, "Your moves time out at once until you come back")
        # Back on the room's page, the way back is offered at once, with the room's players as they are now.
        expect(page.get_by_role("button", name="Take your seat back")).to_be_visible()
        expect(page.get_by_text("Players (3/8): Ana, Ben, and Me")).to_be_visible()
        # The home screen lists the room with the way back.
        page.goto(base)
        rooms = page.locator(".your-rooms")
        expect(rooms).to_contain_text(bots.code)
        expect(rooms.get_by_role("button", name="Take your seat back")).to_be_visible()
        # The room's link offers it too (before: only Watch, while a computer or the time-outs played on).
        page.goto(f"{base}/r/{bots.code}")
        expect(page.get_by_text("You left this game")).to_be_visible()
        page.screenshot(path=str(shots / "story-take-seat-back.png"))
        page.get_by_role("button", name="Take your seat back").click()
        expect(page.locator(".screen.table")).to_be_visible()
        expect(page.locator(".my-name")).to_have_text("Me")

        # The others see the seat connected again, not left.
        def me_back(c: CrispClient) -> bool:
            seat = (c.state or {})["room"]["seats"][2]
            return bool(seat["connected"] and not seat["left"])

        bots.run(bots.host.wait_for(me_back, what="Me back"))
        assert not errors, errors
    finally:
        context.close()
        bots.close()


def test_leaving_the_lobby_gives_the_seat_up(browser: Browser, base: str, shots: Path) -> None:
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    try:
        join(page, base, bots.code, "Me")
        page.get_by_role("button", name="Leave").click()
        confirm(page, "Your seat is given up")
        expect(page.locator(".home")).to_be_visible()
        expect(page.locator(".your-rooms")).to_have_count(0)
        expect(page.get_by_role("button", name="Join", exact=True)).to_be_visible()
    finally:
        context.close()
        bots.close()


def test_the_link_page_follows_its_room_live(browser: Browser, base: str, shots: Path) -> None:
    """Opened in the lobby, the page shows who sits down and turns into Watch when the game starts; the
    spectator is then told what the players do in the peek, not to remember cards."""
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    errors: list[str] = []
    watch(page, errors)
    try:
        page.goto(f"{base}/r/{bots.code}")
        card = page.locator(".link-room")
        expect(card).to_contain_text("Players (1/8): Ana")
        expect(card.get_by_role("button", name="Join", exact=True)).to_be_visible()
        bots.run(bots._seat(["Ben"], bots.code))
        expect(card).to_contain_text("Players (2/8): Ana and Ben")  # no reload
        bots.run(bots.host.start())
        expect(card.get_by_role("button", name="Watch")).to_be_visible()
        expect(card.get_by_role("button", name="Join", exact=True)).to_have_count(0)
        expect(card).to_contain_text("This game has already started")
        card.get_by_role("button", name="Watch").click()
        expect(page.locator(".phase-peek")).to_be_visible()
        expect(page.locator("#peek-title")).to_contain_text("The players look at their cards")
        expect(page.get_by_text("Remember your cards")).to_have_count(0)
        expect(page.get_by_text("You are watching")).to_be_visible()
        page.screenshot(path=str(shots / "story-spectator-peek.png"))
        assert not errors, errors
    finally:
        context.close()
        bots.close()


def test_the_round_end_shows_every_hand_before_the_results(browser: Browser, base: str, shots: Path) -> None:
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    try:
        join_and_play(page, base, bots, "Me")
        # The score limit is in sight at the table.
        expect(page.locator(".my-line")).to_contain_text("Game score 0 of 100")
        bots.spawn(play_turns(bots.host, call_crisp=True))
        page.get_by_role("button", name="Draw", exact=True).click()
        page.get_by_role("button", name="Discard", exact=True).click()
        expect(page.locator(".final-turns")).to_contain_text("Ana called Crisp")
        page.get_by_role("button", name="Draw", exact=True).click()
        page.get_by_role("button", name="Discard", exact=True).click()
        # The round is over: Ana's hand lies face up on the table, with the sums, before any results.
        revealing = page.locator(".screen.table.revealing")
        expect(revealing).to_be_visible()
        shown_at = time.monotonic()
        expect(page.locator(".overlay.results")).to_have_count(0)
        expect(page.locator(".seat .mini-card").first).to_have_attribute("aria-label", re.compile(r": 9 of"))
        expect(page.locator(".reveal-line")).to_contain_text("Ana called Crisp")
        expect(page.locator(".my-total")).to_contain_text("Sum 9")
        page.wait_for_timeout(500)  # the flip
        page.screenshot(path=str(shots / "story-round-end-reveal.png"))
        expect(page.locator(".overlay.results")).to_be_visible(timeout=5000)
        assert time.monotonic() - shown_at >= 1.5, "the hands were shown for less than 1.5 s"
        expect(revealing).to_have_count(0)
    finally:
        context.close()
        bots.close()


def test_removing_a_seat_in_the_lobby_asks_first(browser: Browser, base: str, shots: Path) -> None:
    context, page = open_page(browser, 360, 640)
    try:
        page.goto(base)
        page.get_by_label("Your name").fill("Ana")
        page.get_by_role("button", name="Create a room").click()
        code = page.locator(".lobby .code-badge").inner_text().strip()
        page.get_by_role("button", name="Add a computer player").click()
        bots = Bots(base, ["Ben"], code=code)
        try:
            seats = page.locator(".seats li")
            expect(seats).to_have_count(3)
            page.get_by_role("button", name="Remove Ada from the room").click()
            dialog = page.get_by_role("dialog")
            expect(dialog).to_contain_text("Remove the computer player Ada?")
            page.screenshot(path=str(shots / "story-remove-question.png"))
            dialog.get_by_role("button", name="Cancel").click()
            expect(seats).to_have_count(3)  # nothing happened
            page.get_by_role("button", name="Remove Ben from the room").click()
            confirm(page, "Remove Ben from the room?")
            expect(seats).to_have_count(2)
            expect(page.locator(".seats")).not_to_contain_text("Ben")
            expect(page.locator(".seats")).to_contain_text("Ada")
        finally:
            bots.close()
    finally:
        context.close()


def test_the_table_says_what_things_are(browser: Browser, base: str, shots: Path) -> None:
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    de_context, de_page = open_page(browser, 360, 640, locale="de-DE", dark=True)
    try:
        join(page, base, bots.code, "Me")
        bots.run(bots.start_and_ready())
        page.get_by_role("button", name="Ready").click()
        expect(page.locator(".phase-play")).to_be_visible()
        # The lobby's comings and goings left with the deal; the piles are labelled; "Total" says what it is.
        expect(page.locator(".event-line")).not_to_contain_text("joined")
        expect(page.locator(".draw-pile .pile-label")).to_have_text("Draw")
        expect(page.locator(".discard-pile .pile-label")).to_have_text("Discard")
        expect(page.locator(".my-line")).to_contain_text("Game score 0")
        # A German spectator follows along.
        de_page.goto(f"{base}/r/{bots.code}")
        de_page.get_by_role("button", name="Zuschauen").click()
        expect(de_page.locator(".phase-play")).to_be_visible()
        page.get_by_role("button", name="Draw", exact=True).click()
        # The swap prompt names the other way out too.
        expect(page.locator(".prompt-text")).to_have_text("Tap one of your cards to swap it, or Discard")
        page.get_by_role("button", name="Discard", exact=True).click()
        # Your own moves are told to you in the second person; others read your name.
        expect(page.locator(".event-line")).to_contain_text("You discarded 5 of clubs.")
        expect(de_page.locator(".event-line")).to_contain_text("Me hat Kreuz 5 abgelegt.")
        bots.spawn(play_turns(bots.host))
        # Ana draws the Queen of hearts and discards it: "Herz-Dame", with a hyphen.
        expect(de_page.locator('[data-key="discard-pile"]')).to_have_attribute(
            "aria-label", "Ablagestapel, oben liegt Herz-Dame"
        )
        expect(de_page.locator(".pile-label")).to_have_text(["Ziehen", "Ablage"])
        page.screenshot(path=str(shots / "story-wording-en.png"))
        de_page.screenshot(path=str(shots / "story-wording-de-dark.png"))
    finally:
        de_context.close()
        context.close()
        bots.close()


def test_play_now_is_in_sight_with_one_name_for_every_way_in(browser: Browser, base: str, shots: Path) -> None:
    context, page = open_page(browser, 360, 640)
    try:
        page.goto(base)
        expect(page.get_by_role("button", name="Play now")).to_be_in_viewport(ratio=1)
        expect(page.get_by_role("textbox", name="Your name")).to_have_count(1)
        page.screenshot(path=str(shots / "story-home-360x640.png"))
        # No name yet: the one field asks for it, whichever way in was tapped.
        page.get_by_role("button", name="Create a room").click()
        expect(page.get_by_role("textbox", name="Your name")).to_be_focused()
        assert page.eval_on_selector("#name", "el => el.validationMessage") == "Type your name first."
        page.get_by_role("textbox", name="Your name").fill("Ana")
        page.get_by_role("button", name="Play now").click()
        expect(page.locator(".screen.table")).to_be_visible()
    finally:
        context.close()


# A whole game of two rounds. Round 1 as TWO: Ben (seat 1) starts with 9 in hand, Ana holds 27 and calls
# Crisp (+5: 32). Round 2: Ben deals, Ana starts; Ana holds 29, Ben 9 and calls (-5): Ana reaches 61.
ROUND_2 = deck(["9C", "2H", "TC", "3H", "TH", "4H", "5D", "6H", "7H", "8H", "5S", "6S"])


@pytest.fixture
def game_base(tmp_path: Path) -> Iterator[str]:
    yield from rigged_server(tmp_path, [TWO, ROUND_2, TWO])


def test_three_phones_leave_take_back_watch_and_sit_after_a_rematch(
    browser: Browser, game_base: str, shots: Path
) -> None:
    """Ana hosts, Ben joins; Cem opens the link in the lobby and watches once it starts. Ben leaves in his
    final turn and takes the seat back; the round's end shows the hands first; at the game's end the results
    say why; Ana's rematch goes through the lobby, where Cem sits down, and the three play on."""
    base = game_base
    phones: dict[str, tuple[Page, list[str]]] = {}
    contexts = []
    for name, (w, hgt), locale, dark in (
        ("ana", (412, 915), "en-GB", False),
        ("ben", (360, 640), "de-DE", True),
        ("cem", (360, 640), "en-GB", False),
    ):
        context, page = open_page(browser, w, hgt, locale=locale, dark=dark)
        contexts.append(context)
        errors: list[str] = []
        watch(page, errors)
        phones[name] = (page, errors)
    ana, ben, cem = (phones[n][0] for n in ("ana", "ben", "cem"))

    def shot(page: Page, what: str) -> None:
        who = next(n for n, (p, _) in phones.items() if p is page)
        page.screenshot(path=str(shots / f"story-game-{what}-{who}.png"))

    try:
        # -- the lobby: Ana makes the room, Ben joins by the link, Cem's link page follows it ---------------
        ana.goto(base)
        ana.get_by_label("Your name").fill("Ana")
        ana.get_by_role("button", name="Create a room").click()
        expect(ana.locator(".lobby")).to_be_visible()
        link = ana.locator(".link-text").inner_text()
        ana.select_option('[data-key="opt-score_limit"]', "50")
        cem.goto(link)
        expect(cem.locator(".link-room")).to_contain_text("Players (1/8): Ana")
        ben.goto(link)
        ben.get_by_label("Dein Name").fill("Ben")
        ben.get_by_role("button", name="Beitreten", exact=True).click()
        expect(ben.locator(".lobby")).to_be_visible()
        expect(cem.locator(".link-room")).to_contain_text("Players (2/8): Ana and Ben")
        ana.get_by_role("button", name="Start the game").click()
        # Cem's page turns into Watch by itself; watching, Cem is not told to remember cards.
        cem.get_by_role("button", name="Watch").click()
        expect(cem.locator("#peek-title")).to_have_text(re.compile("The players look at their cards"))
        shot(cem, "peek")
        for page, ready in ((ana, "Ready"), (ben, "Bereit")):
            page.get_by_role("button", name=ready).click()

        # -- round 1: Ben discards, Ana calls Crisp, Ben leaves in his final turn -----------------------------
        ben.get_by_role("button", name="Ziehen", exact=True).click()
        ben.get_by_role("button", name="Ablegen", exact=True).click()
        ana.get_by_role("button", name="Draw", exact=True).click()
        ana.get_by_role("button", name="Discard", exact=True).click()
        ana.locator('[data-key="crisp"]').click()
        expect(ben.locator(".final-turns")).to_contain_text("Ana rief Crisp")
        ben.get_by_role("button", name="Verlassen").click()
        confirm(ben, "Deine Züge laufen sofort ab")
        # The seat's move times out: the round ends, and the others see every hand before the results.
        for page in (ana, cem):
            expect(page.locator(".screen.table.revealing")).to_be_visible()
        cem.wait_for_timeout(600)  # the flip
        shot(cem, "reveal")
        for page in (ana, cem):
            expect(page.locator(".overlay.results")).to_be_visible(timeout=5000)
        expect(ana.locator(".round-table td.total")).to_have_text(["32", "9"])
        shot(ana, "round-1")
        # Ben comes back by the link.
        ben.goto(link)
        ben.get_by_role("button", name="Platz wieder einnehmen").click()
        expect(ben.locator(".overlay.results")).to_be_visible()
        shot(ben, "back")
        expect(ana.locator(".seat .dot.on")).to_have_count(1)  # Ben is connected again
        # A seat that left counted as ready, and comes back so: Ana's Ready deals the next round.
        ana.get_by_role("button", name="Ready", exact=True).click()

        # -- round 2: Ben calls Crisp, Ana's last turn ends the game --------------------------------------
        for page in (ana, ben):
            expect(page.locator(".phase-peek")).to_be_visible()
        for page, ready in ((ana, "Ready"), (ben, "Bereit")):
            page.get_by_role("button", name=ready, exact=True).click()
        ana.get_by_role("button", name="Draw", exact=True).click()
        ana.get_by_role("button", name="Discard", exact=True).click()
        ben.get_by_role("button", name="Ziehen", exact=True).click()
        ben.get_by_role("button", name="Ablegen", exact=True).click()
        ben.locator('[data-key="crisp"]').click()
        ana.get_by_role("button", name="Draw", exact=True).click()
        ana.get_by_role("button", name="Discard", exact=True).click()
        for page in (ana, ben, cem):
            expect(page.locator(".screen.table.revealing")).to_be_visible()
        expect(ana.locator("#results-title")).to_have_text("Winner: Ben", timeout=5000)
        expect(ana.locator(".end-line")).to_have_text("Ana (61) reached the limit of 50 points: the game is over.")
        expect(ben.locator("#results-title")).to_have_text("Du hast gewonnen!")
        shot(ana, "game-over")
        shot(ben, "game-over")

        # -- the rematch goes through the lobby: Cem takes a seat, Ana starts -----------------------------
        ana.get_by_role("button", name="Rematch").click()
        for page in (ana, ben, cem):
            expect(page.locator(".lobby")).to_be_visible()
        cem.get_by_role("textbox", name="Your name").fill("Cem")
        shot(cem, "lobby-sit")
        cem.get_by_role("button", name="Sit down").click()
        expect(ana.locator(".seats li")).to_have_count(3)
        expect(cem.locator(".seats")).to_contain_text("Cem (you)")
        ana.get_by_role("button", name="Start the game").click()
        for page in (ana, ben, cem):
            expect(page.locator(".phase-peek")).to_be_visible()
        expect(cem.locator("#peek-title")).to_have_text(re.compile("Remember your cards"))
        shot(cem, "seated-peek")
        for name, (_, errors) in phones.items():
            assert not errors, (name, errors)
    finally:
        for context in contexts:
            context.close()


async def _dropped_by_a_rematch(bots: Bots) -> str:
    """Ana (host) and Ben play; Ben leaves during the first round, Ana plays the game to its end (Ben's moves
    time out) and asks for a rematch, which drops Ben's seat. Ben's token, which holds nothing any more."""
    ana, ben = bots.clients
    await ana.set_options(score_limit=50)
    await bots.start_and_ready()
    token = ben.token
    assert token is not None
    await ben.request({"type": "leave"})
    while ana.phase != "game_over":
        await play_turns(ana, call_crisp=True)
        await ana.wait_for(lambda c: c.phase in ("round_over", "game_over"), what="the round's end")
        if ana.phase == "round_over":
            await ana.ready()
            await ana.wait_for(lambda c: c.phase == "peek", what="the next deal")
            await ana.ready()
    await ana.request({"type": "rematch"})
    await ana.wait_for(lambda c: c.phase == "lobby", what="the rematch's lobby")
    return token


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_your_rooms_offers_to_join_again_once_a_rematch_dropped_the_seat(
    browser: Browser, base: str, shots: Path, locale: str
) -> None:
    """Ben left a game on this phone; a rematch dropped his seat. The home screen's "Your rooms" asks the server
    (``/api/rooms/{code}/seat``) and offers to join the lobby again, not to take the seat back."""
    bots = Bots(base, ["Ana", "Ben"])
    context, page = open_page(browser, 360, 640, locale=locale)
    errors: list[str] = []
    watch(page, errors)
    try:
        token = bots.run(_dropped_by_a_rematch(bots), timeout=120)
        page.goto(base + "/rules-unknown-path")  # any page of the origin, for its localStorage
        session = {"room": bots.code, "token": token, "name": "Ben", "left": True}
        page.evaluate("s => localStorage.setItem('crisp.sessions', JSON.stringify([s]))", session)
        page.goto(base)
        de = locale.startswith("de")
        row = page.locator(".your-rooms li")
        expect(row).to_contain_text("dein Platz ist weg" if de else "your seat is gone")
        take_back = "Platz wieder einnehmen" if de else "Take your seat back"
        expect(row.get_by_role("button", name=take_back)).to_have_count(0)
        again = row.get_by_role("button", name="Wieder beitreten" if de else "Join again")
        expect(again).to_be_visible()
        page.screenshot(path=str(shots / f"your-rooms-seat-gone-{locale[:2]}.png"))
        # The room's link page says the same: Join (the lobby is open), not "Take your seat back".
        page.goto(f"{base}/r/{bots.code}")
        card = page.locator(".link-room")
        expect(card.get_by_role("button", name="Beitreten" if de else "Join", exact=True)).to_be_visible()
        expect(card.get_by_role("button", name=take_back)).to_have_count(0)
        page.goto(base)
        again.click()
        expect(page.locator(".lobby")).to_be_visible()
        expect(page.locator(".seats")).to_contain_text("Ben")
        bots.run(bots.host.wait_for(lambda c: [s["name"] for s in (c.state or {})["room"]["seats"]] == ["Ana", "Ben"]))
        assert not errors, errors
    finally:
        context.close()
        bots.close()


def test_your_rooms_drops_a_room_that_closed(browser: Browser, base: str) -> None:
    """A room this device kept a seat in has closed (its only player left): the server says so, and "Your
    rooms" forgets it; a seat still held stays, with its way back."""
    bots = Bots(base, ["Ana", "Ben"])
    context, page = open_page(browser, 360, 640)
    errors: list[str] = []
    watch(page, errors)

    async def closed_room() -> tuple[str, str]:
        async with CrispClient.connect(bots.url) as olga:
            code = await olga.create("Olga")
            assert olga.token is not None
            token = olga.token
            await olga.request({"type": "leave"})
        return code, token

    try:
        code, token = bots.run(closed_room())
        ben = bots.clients[1]
        sessions = [
            {"room": code, "token": token, "name": "Olga", "left": False},
            {"room": bots.code, "token": ben.token, "name": "Ben", "left": False},
        ]
        page.goto(base + "/rules-unknown-path")  # any page of the origin, for its localStorage
        page.evaluate("s => localStorage.setItem('crisp.sessions', JSON.stringify(s))", sessions)
        page.goto(base)
        rows = page.locator(".your-rooms li")
        expect(rows).to_have_count(1)
        expect(rows).to_contain_text(bots.code)
        expect(rows.get_by_role("button", name="Back to the table")).to_be_visible()
        kept = page.evaluate("JSON.parse(localStorage.getItem('crisp.sessions')).map((s) => s.room)")
        assert kept == [bots.code]
        assert not errors, errors
    finally:
        context.close()
        bots.close()
