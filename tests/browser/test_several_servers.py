"""The web client with several server nodes (docs/protocol.md, "Several servers"): its sockets name the room
in their URL, and when the room moves to another node (``moved`` and the close 4005, or the close alone) it
reconnects at once, resumes its seat and plays on, without an error; if that reconnect fails, it backs off.

The page's sockets go through Playwright's WebSocket routing to the real server, so that the test can close
one as a node handing its room over does. ``Math.random`` is pinned to 1 in the page: the client's first
back-off is then exactly one second, which a reconnect "at once" comes well before.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from crisp_server.remote.client import CrispClient
from tests.browser.harness import Bots, join_and_play, open_page
from tests.e2e.procs import server_process
from tests.frozen import relay_in_thread

#: The client's first back-off with Math.random pinned to 1 (static/js/net.js: 500 ms * 2, in full).
BACK_OFF_S = 1.0


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    with server_process(tmp_path) as (url, _proc):
        yield url


@dataclass
class Leg:
    """One socket of the page."""

    url: str
    route: WebSocketRoute
    opened: float  # time.monotonic()
    sent: list[dict[str, object]] = field(default_factory=list)  # what the page sent on it
    refused: bool = False


class Sockets:
    """Every socket the page opens, relayed to the server (or, ``refuse``, closed with 4005 as soon as it
    opens: a node not ready for the room yet)."""

    def __init__(self, page: Page) -> None:
        self.legs: list[Leg] = []
        self.refuse = 0
        page.route_web_socket(re.compile(r"/ws(\?.*)?$"), self._route)

    def _route(self, route: WebSocketRoute) -> None:
        leg = Leg(route.url, route, time.monotonic())
        self.legs.append(leg)
        if self.refuse > 0:
            self.refuse -= 1
            leg.refused = True
            route.close(code=4005, reason="moved")
            return
        server = route.connect_to_server()

        def up(message: str | bytes) -> None:
            leg.sent.append(json.loads(message))
            server.send(message)

        route.on_message(up)

    def next(self, page: Page, count: int, timeout: float = 10) -> Leg:
        """The ``count``-th socket, once it has been opened (and its first message sent, unless refused)."""
        deadline = time.monotonic() + timeout
        while len(self.legs) < count or not (self.legs[count - 1].sent or self.legs[count - 1].refused):
            assert time.monotonic() < deadline, f"no socket {count}: {[leg.url for leg in self.legs]}"
            page.wait_for_timeout(10)
        return self.legs[count - 1]


def move(leg: Leg, announce: bool) -> float:
    """What a node handing the room over does to this socket; when it closed it."""
    if announce:
        leg.route.send(json.dumps({"type": "moved", "v": 1}))
    closed = time.monotonic()
    leg.route.close(code=4005, reason="moved")
    return closed


def token(page: Page) -> str:
    return str(page.evaluate("JSON.parse(localStorage.getItem('crisp.sessions'))[0].token"))


def react_and_be_seen(page: Page, bots: Bots, count: int) -> None:
    """The page sends a reaction; the host sees it (the ``count``-th from the page's seat): the page's socket
    reaches the room."""
    page.locator('[data-key="react-👍"]').click()

    def seen(c: CrispClient) -> bool:
        events = [e for m in c.messages if m.get("type") == "update" for e in m["events"]]
        return sum(1 for e in events if e.get("type") == "reaction" and e.get("seat") == 1) >= count

    bots.run(bots.host.wait_for(seen, timeout=10, what="the page's reaction"))


@pytest.mark.parametrize("announce", [True, False], ids=["moved", "close-alone"])
def test_the_page_follows_its_room_to_another_node_at_once(browser: Browser, base: str, announce: bool) -> None:
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    try:
        page.add_init_script("Math.random = () => 1;")
        sockets = Sockets(page)
        join_and_play(page, base, bots, "Me")
        first = sockets.next(page, 1)
        assert first.url.endswith(f"/ws?room={bots.code}")  # a link page knows its room
        # The link page follows the room as a spectator and takes the seat on the same socket.
        assert [m["type"] for m in first.sent[:2]] == ["watch", "sit"]
        seat_token = token(page)

        for count in (2, 3):  # twice: a room may move again
            closed = move(sockets.legs[-1], announce)
            leg = sockets.next(page, count)
            assert leg.opened - closed < BACK_OFF_S * 0.9, "not at once"
            assert leg.url.endswith(f"/ws?room={bots.code}")
            assert leg.sent[0]["type"] == "resume"
            assert leg.sent[0]["room"] == bots.code
            assert leg.sent[0]["token"] == seat_token
            expect(page.locator("#status.show")).to_have_count(0)
            expect(page.locator(".phase-play")).to_be_visible()
            react_and_be_seen(page, bots, count - 1)
        expect(page.locator("#toast.show")).to_have_count(0)  # no error, no notice
        assert len(sockets.legs) == 3
    finally:
        context.close()
        bots.close()


def test_the_page_backs_off_when_following_the_move_fails(browser: Browser, base: str) -> None:
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    try:
        page.add_init_script("Math.random = () => 1;")
        sockets = Sockets(page)
        join_and_play(page, base, bots, "Me")
        sockets.next(page, 1)
        sockets.refuse = 1
        closed = move(sockets.legs[-1], announce=True)
        refused, resumed = sockets.next(page, 2), sockets.next(page, 3)
        assert refused.refused
        assert resumed.sent[0]["type"] == "resume"
        assert refused.opened - closed < BACK_OFF_S * 0.9  # at once first
        assert resumed.opened - refused.opened >= BACK_OFF_S * 0.9  # then the usual back-off
        assert resumed.url.endswith(f"/ws?room={bots.code}")
        expect(page.locator(".phase-play")).to_be_visible()
        expect(page.locator("#status.show")).to_have_count(0)
        react_and_be_seen(page, bots, 1)
    finally:
        context.close()
        bots.close()


def test_the_page_gives_up_a_handshake_a_frozen_node_never_answers(browser: Browser, base: str) -> None:
    """The page's node freezes: its socket goes silent (the page gives it up after its dead time) and its
    reconnect is taken and never answered. The page gives that handshake up after OPEN_TIMEOUT_MS, shows
    "Reconnecting…" meanwhile, and once new connections reach a live node again (the proxy took the frozen
    one out) its next try after the back-off resumes the seat, where waiting for the first would hang."""
    bots = Bots(base, ["Ana"])
    context, page = open_page(browser, 360, 640)
    port = int(base.rsplit(":", 1)[1])
    try:
        with relay_in_thread(("127.0.0.1", port)) as relay:
            page.add_init_script("Math.random = () => 1;")
            # The page and its sockets through the relay (location.host): the relay plays the page's node.
            join_and_play(page, f"http://127.0.0.1:{relay.port}", bots, "Me")
            relay.freeze()
            status = page.locator("#status.show")
            expect(status).to_have_text("Reconnecting…", timeout=10_000)  # the silent socket given up
            deadline = time.monotonic() + 10
            while relay.held == 0:
                assert time.monotonic() < deadline, "the page did not try to reconnect"
                page.wait_for_timeout(20)
            held_at = time.monotonic()
            relay.thaw()  # new connections reach the server again; the held one never will
            expect(status).to_have_text("Reconnecting…")
            # Given up after OPEN_TIMEOUT_MS (5 s), then the back-off (2 s with Math.random pinned to 1).
            expect(page.locator("#status.show")).to_have_count(0, timeout=15_000)
            back = time.monotonic() - held_at
            expect(page.locator(".phase-play")).to_be_visible()
            react_and_be_seen(page, bots, 1)
            assert relay.held == 1, relay.held
            assert 4.5 <= back < 12, back
            print(f"\nthe page back {back:.1f} s after its handshake to the frozen node")
    finally:
        context.close()
        bots.close()
