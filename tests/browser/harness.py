"""Tables for browser tests: players over the protocol (bots, in a thread of their own) seated with one or
more browser pages, so that a test can put a page into any moment of a game quickly."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, WebSocket, expect
from pydantic import ValidationError

from crisp_server.engine import FULL_DECK
from crisp_server.remote.client import CrispClient, ProtocolError
from crisp_server.wire.schema import InboundMessage, validate_outbound

TIMEOUT = 15_000  # ms: generous for a shared 2-core machine

#: Sizes the table must fit: small and large phones, and a desktop.
SIZES = [(360, 640), (412, 915), (1280, 800)]

#: The languages of the client: one catalog each in static/js/lang/ (English and German, and the others there).
LANGUAGES = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "static" / "js" / "lang").glob("*.js"))
#: The languages beside English and German, which the layout matrices cover in full: one pass each.
OTHER_LANGUAGES = [lang for lang in LANGUAGES if lang not in ("en", "de")]


def page_check(name: str) -> str:
    """A check the tests run in the page: a function in ``js/NAME.js`` (its opening comment dropped)."""
    text = (Path(__file__).resolve().parent / "js" / f"{name}.js").read_text()
    return "\n".join(line for line in text.splitlines() if not line.startswith("//"))


def deck(first: list[str]) -> list[str]:
    return first + [c for c in FULL_DECK if c not in first]


#: Number cards first: every draw of a short round is one (bots and pages discard them).
NUMBERS_FIRST = [c for c in FULL_DECK if c[0] not in "JQK"] + [c for c in FULL_DECK if c[0] in "JQK"]


class Bots:
    """Players over the protocol on an event loop in a thread; ``run`` waits for one of their coroutines.

    The first bot creates the room (and hosts it) unless ``code`` names a room to join; a browser page
    joins afterwards and takes the next seat.
    """

    def __init__(self, base: str, names: list[str], code: str | None = None) -> None:
        self.url = base.replace("http", "ws") + "/ws"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stack = contextlib.AsyncExitStack()
        self.clients: list[CrispClient] = []
        self.tasks: list[concurrent.futures.Future[Any]] = []
        self.code: str = self.run(self._seat(names, code))

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` in the background (e.g. bots playing while the page is looked at)."""
        self.tasks.append(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def _seat(self, names: list[str], code: str | None) -> str:
        if code is None:
            host = await self.stack.enter_async_context(CrispClient.connect(self.url))
            code = await host.create(names[0])
            self.clients.append(host)
            names = names[1:]
        for name in names:
            c = await self.stack.enter_async_context(CrispClient.connect(self.url))
            await c.join(code, name)
            self.clients.append(c)
        return code

    @property
    def host(self) -> CrispClient:
        return self.clients[0]

    async def start_and_ready(self) -> None:
        """The host starts; every bot says ready once the peek phase is there."""
        await self.host.start()
        for c in self.clients:
            await c.wait_for(lambda c: c.phase == "peek", what="peek")
            await c.ready()

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            self.run(self.stack.aclose(), timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


async def play_turns(c: CrispClient, call_crisp: bool = False) -> None:
    """Play every turn of ``c`` (draw, then ``play_drawn``) until the round ends; call Crisp after the
    first whole turn when ``call_crisp``."""
    while True:
        await c.wait_for(
            lambda c: c.phase in ("round_over", "game_over") or (c.my_turn() and "draw_deck" in c.you["can"]),
            timeout=120,
            what="my turn",
        )
        if c.phase != "play":
            return
        may_draw = (c.state or {}).get("clock", {}).get("may_draw_in") or 0
        await asyncio.sleep(may_draw / 1000 + 0.05)
        try:
            await c.draw()
        except ProtocolError as err:
            if err.args and "too_early" in str(err.args[0]):
                await asyncio.sleep(0.2)
                continue
            raise
        await c.play_drawn()  # a King gives extra moves: the loop plays them
        if call_crisp and not ((c.table or {}).get("round") or {}).get("extra_moves"):  # after the whole turn
            call_crisp = False
            await c.wait_for(lambda c: "crisp" in c.you["can"], what="the crisp window")
            await c.crisp()


def open_page(
    browser: Browser, width: int, height: int, locale: str = "en-GB", dark: bool = False
) -> tuple[BrowserContext, Page]:
    context = browser.new_context(
        viewport={"width": width, "height": height},
        is_mobile=width < 800,
        has_touch=True,
        locale=locale,
        color_scheme="dark" if dark else "light",
    )
    context.set_default_timeout(TIMEOUT)
    return context, context.new_page()


def join(page: Page, base: str, code: str, name: str) -> None:
    page.goto(f"{base}/r/{code}")
    page.fill("#name", name)
    page.locator('[data-key="join"]').click()
    expect(page.locator(".lobby")).to_be_visible()


def fits(page: Page, controls: bool = True) -> list[str]:
    """What does not fit the screen (js/fits.js); ``controls``: every control must be on screen too."""
    return list(page.evaluate(page_check("fits"), controls))


def contrast_problems(page: Page) -> list[str]:
    """The texts below WCAG AA contrast (js/contrast.js), once animations and transitions settled."""
    page.wait_for_timeout(450)
    return list(page.evaluate(page_check("contrast")))


def join_and_play(page: Page, base: str, bots: Bots, name: str) -> None:
    """The page takes the next seat; the host starts; everyone is ready: the first turn is on."""
    join(page, base, bots.code, name)
    bots.run(bots.start_and_ready())
    page.locator('[data-key="ready"]').click()
    expect(page.locator(".phase-play")).to_be_visible()


def watch(page: Page, errors: list[str]) -> None:
    """Collect in ``errors`` the page's script errors and every frame it sends or receives that is not a
    message of the protocol's JSON Schema."""

    def check_frames(socket: WebSocket) -> None:
        def check(validate: Callable[[str | bytes], object], frame: str | bytes) -> None:
            try:
                validate(frame)
            except ValidationError as exc:
                errors.append(f"{exc}\nin the frame: {str(frame)[:2000]}")

        socket.on("framereceived", lambda frame: check(validate_outbound, frame))
        socket.on("framesent", lambda frame: check(InboundMessage.model_validate_json, frame))

    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("websocket", check_frames)


def sent_messages(page: Page) -> list[str]:
    """Every frame the page sends over its WebSockets, from now on (the list fills as they go)."""
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: frames.append(str(payload))))
    return frames
