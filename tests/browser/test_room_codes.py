"""A room link's page says why there is no room: a code no room ever had ("No room has this code", a typo),
or a room that closed ("This room does not exist any more", an old link), in both languages; and offers what
is left instead of a Join button: the closed room's games (their replays where this device may open them), a
new room, the home screen."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from crisp_server.engine import Options
from crisp_server.remote.client import CrispClient
from crisp_server.rooms.tokens import hash_token
from crisp_server.settings import Settings
from crisp_server.store.migrate import upgrade
from crisp_server.store.operations import CloseRoom
from crisp_server.store.store import Store
from tests.browser.harness import fits, open_page, watch
from tests.e2e.procs import server_process
from tests.store.games import save_room, store_game

TIMEOUT = 15_000  # ms: generous for a shared 2-core machine


async def _closed_room(ws: str) -> str:
    """A lobby whose only player left: its room closed."""
    async with CrispClient.connect(ws) as ana:
        code = await ana.create("Ana")
        await ana.request({"type": "leave"})
        return code


def test_a_code_no_room_had_is_told_apart_from_a_closed_room(browser: Browser, tmp_path: Path) -> None:
    with server_process(tmp_path) as (base, _proc):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:  # sync Playwright holds this thread's loop
            closed = pool.submit(asyncio.run, _closed_room(base.replace("http", "ws") + "/ws")).result()
        errors: list[str] = []
        for lang, never, gone in (
            ("en-GB", "No room has this code.", "This room does not exist any more."),
            ("de-DE", "Es gibt keinen Raum mit diesem Code.", "Diesen Raum gibt es nicht mehr."),
        ):
            context = browser.new_context(locale=lang, viewport={"width": 412, "height": 915}, is_mobile=True)
            context.set_default_timeout(TIMEOUT)
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/r/ACDEFG")
            expect(page.get_by_role("alert")).to_have_text(never)
            page.goto(f"{base}/r/{closed}")
            expect(page.get_by_role("alert")).to_have_text(gone)
            assert not errors, errors
            context.close()


CLOSED = "CDEFGH"  # a room that closed after three finished games
SHORT = Options(50, None, False)


async def _closed_room_with_games(data_dir: Path) -> dict[str, str]:
    """Room CLOSED as a room leaves it: three games played to their end (the second one's replay made public
    by its host), then closed. Each game's id, and the token of Ana's seat in the first."""
    settings = Settings(data_dir=data_dir)
    url = settings.resolved_database_url()
    await asyncio.to_thread(upgrade, url, settings.migrations_dir)
    store = Store(url)
    await store.start()
    try:
        games = {"played": ["Ana", "Ben"], "public": ["Ana", "Cem"], "private": ["Dan", "Eve"]}
        await save_room(store, "closed-room", CLOSED, games["played"], options=SHORT)
        for seed, (game_id, names) in enumerate(games.items()):
            hashes = [hash_token(f"token-{game_id}-{seat}") for seat in range(len(names))]
            await store_game(store, "closed-room", game_id, names, seed, options=SHORT, token_hashes=hashes)
        assert await store.set_public("public", True)
        await store.commit([CloseRoom("closed-room")])
        return {"token": "token-played-0"}
    finally:
        await store.close()


@contextlib.contextmanager
def _serving_closed_room(data_dir: Path, env: dict[str, str] | None = None) -> Iterator[tuple[str, str]]:
    """A server whose database has room CLOSED (``_closed_room_with_games``): its base URL, and the token."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # sync Playwright holds this thread's loop
        token = pool.submit(asyncio.run, _closed_room_with_games(data_dir)).result(120)["token"]
    with server_process(data_dir, env, log=data_dir / "server.log") as (base, _proc):
        yield base, token


@pytest.fixture(scope="module")
def closed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    # The server's own look-up limit (20 in vain at once, then 30 a minute): every page of an old link counts
    # once (its room; the closed room's games count for nothing), which the tests below stay well within.
    with _serving_closed_room(tmp_path_factory.mktemp("closed")) as served:
        yield served


def _keep_played_game(page: Page, base: str, token: str) -> None:
    """This device played the first game in seat 0 (as the page keeps a finished game: crisp.games)."""
    page.goto(base + "/rules-unknown-path")  # any page of the origin, for its localStorage
    entry = {"id": "played", "room": CLOSED, "players": ["Ana", "Ben"], "seat": 0, "token": token}
    page.evaluate("e => localStorage.setItem('crisp.games', JSON.stringify([e]))", entry)


@pytest.mark.parametrize(("locale", "dark"), [("en-GB", False), ("de-DE", True), ("en-GB", True), ("de-DE", False)])
def test_an_old_link_offers_the_closed_rooms_games_a_new_room_and_home(
    browser: Browser, closed_server: tuple[str, str], shots: Path, locale: str, dark: bool
) -> None:
    base, token = closed_server
    lang, theme = locale[:2], "dark" if dark else "light"
    gone = {"en": "This room does not exist any more.", "de": "Diesen Raum gibt es nicht mehr."}[lang]
    context, page = open_page(browser, 360, 640, locale, dark)
    errors: list[str] = []
    watch(page, errors)
    try:
        _keep_played_game(page, base, token)
        page.goto(f"{base}/r/{CLOSED}")
        expect(page.get_by_role("alert")).to_have_text(gone)
        card = page.locator(".link-gone")
        expect(card.locator(".past-games li")).to_have_count(3)
        # No seat to take in a closed room: no Join button, no Watch.
        assert page.locator('[data-key="join"], [data-key="watch"]').count() == 0
        # The game this device played: its replay and its record; the public one: its replay; the third
        # (neither): its result only.
        expect(card.locator('[data-key="replay-played"]')).to_be_visible()
        expect(card.locator('[data-key="record-played"]')).to_be_visible()
        expect(card.locator('[data-key="replay-public"]')).to_be_visible()
        hidden = '[data-key="record-public"], [data-key="replay-private"], [data-key="record-private"]'
        assert card.locator(hidden).count() == 0
        expect(card.locator(".past-games li").nth(0)).to_contain_text("Dan")  # newest first
        page.screenshot(path=str(shots / f"link-closed-{lang}-{theme}.png"), full_page=True)
        assert fits(page, controls=False) == []

        # Each offer works: the two replays open...
        for game_id in ("public", "played"):
            card.locator(f'[data-key="replay-{game_id}"]').click()
            expect(page.locator(".screen.replay.table")).to_be_visible()
            assert page.url == f"{base}/g/{game_id}"
            page.go_back()
            expect(card.locator(".past-games li")).to_have_count(3)
        # ... Home is the home screen without the link (a code to type there) ...
        card.locator('[data-key="home"]').click()
        expect(page.locator('[data-key="join-code"]')).to_be_visible()
        assert page.url == f"{base}/"
        assert page.locator(".link-room").count() == 0
        page.go_back()
        # ... and a new room asks for a name first, then is made, and its page is its own.
        card.locator('[data-key="create-new"]').click()
        expect(page.locator(".lobby")).to_have_count(0)
        page.fill("#name", "Ana")
        card.locator('[data-key="create-new"]').click()
        expect(page.locator(".lobby")).to_be_visible()
        assert page.url != f"{base}/r/{CLOSED}"
        assert page.url.startswith(f"{base}/r/")
        assert not errors, errors
    finally:
        context.close()


def test_a_code_no_room_had_offers_a_new_room_and_home(
    browser: Browser, closed_server: tuple[str, str], shots: Path
) -> None:
    base, _token = closed_server
    for locale in ("en-GB", "de-DE"):
        lang = locale[:2]
        context, page = open_page(browser, 360, 640, locale)
        errors: list[str] = []
        watch(page, errors)
        try:
            page.goto(f"{base}/r/ACDEFG")
            expect(page.get_by_role("alert")).to_be_visible()
            card = page.locator(".link-gone")
            expect(card.locator('[data-key="create-new"]')).to_be_visible()
            assert page.locator('[data-key="join"], [data-key="watch"]').count() == 0
            assert card.locator(".past-games").count() == 0  # no room had it: no games to list
            page.screenshot(path=str(shots / f"link-never-{lang}.png"), full_page=True)
            card.locator('[data-key="home"]').click()
            expect(page.locator('[data-key="join-code"]')).to_be_visible()
            assert page.url == f"{base}/"
            assert not errors, errors
        finally:
            context.close()


def _use_up_look_ups(base: str) -> None:
    """Look codes no room had up from this machine's address (the page's) until the server refuses (429)."""
    for _ in range(10):
        if httpx.get(f"{base}/api/rooms/ACDEFG").status_code == 429:
            return
    raise AssertionError("the look-ups were never refused")


def test_an_old_links_page_whose_look_ups_are_refused_says_so_and_asks_again(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    """An address that looked up too many codes in vain is refused every look-up for a while (429; here 1 at
    once, then one each 5 s). The old link's page whose look-up is refused knows nothing of its room: it says
    why, offers no Join button (the room may have closed), and asks again until it is answered: the closed
    room's games. A new room refused there (rooms made count too) leaves the page as it was, to try again."""
    limits = {"CRISP_LOOKUP_BURST": "1", "CRISP_LOOKUP_PER_MINUTE": "12"}
    with _serving_closed_room(tmp_path, limits) as (base, token):
        context, page = open_page(browser, 360, 640)
        errors: list[str] = []
        watch(page, errors)
        try:
            _keep_played_game(page, base, token)

            def used_up_first(route: Route) -> None:
                # The page's first look-up reaches the server once the allowance is used up, however slow the
                # machine; the later ones (the page's own tries again) are let through as they come.
                _use_up_look_ups(base)
                route.continue_()

            page.route(f"{base}/api/rooms/{CLOSED}", used_up_first, times=1)
            page.goto(f"{base}/r/{CLOSED}")
            expect(page.get_by_role("alert")).to_have_text(
                "Too many room codes were looked up from this connection just now. Trying again in a moment…"
            )
            expect(page.locator(".link-room h2")).to_have_text(f"Room {CLOSED}")
            assert page.locator('[data-key="join"], [data-key="watch"]').count() == 0
            page.screenshot(path=str(shots / "link-refused-en.png"), full_page=True)
            # Asked again (after 2.5 s, then 5 s more) once the allowance has refilled: the room closed; its games
            # (the room's look-up took the one look-up refilled: they may be refused once, and asked again too).
            card = page.locator(".link-gone")
            expect(card.locator(".past-games li")).to_have_count(3, timeout=30_000)
            expect(page.get_by_role("alert")).to_have_text("This room does not exist any more.")
            assert page.locator('[data-key="join"], [data-key="watch"]').count() == 0

            page.fill("#name", "Ana")
            _use_up_look_ups(base)
            card.locator('[data-key="create-new"]').click()
            expect(page.locator("#toast")).to_have_text("Slow down a little.")
            expect(card.locator(".past-games li")).to_have_count(3)  # still the closed room's page
            expect(card.locator('[data-key="create-new"]')).to_be_enabled()
            assert page.url == f"{base}/r/{CLOSED}"
            assert page.locator(".lobby").count() == 0
            assert not errors, errors
        finally:
            context.close()
