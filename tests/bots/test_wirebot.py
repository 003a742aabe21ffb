"""The bot over the wire when the server refuses what it sends: it logs the refusal, decides again from the
state it is sent after a back-off that doubles, and never floods the server (``crisp_server.remote.wirebot``).

The connection is a script here (:class:`RefusingServer`): one state where it is the bot's move, and an error
for every move. The whole command against a real server is in ``tests/e2e/test_wirebot.py``.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close

from crisp_server.bots import Bot
from crisp_server.engine import Game, Options, event_to_dict, visible_to
from crisp_server.engine.views import private_view, table_view
from crisp_server.remote import wirebot
from crisp_server.remote.client import CLOSE_MOVED, CrispClient
from crisp_server.remote.wirebot import End, SeatPlayer
from crisp_server.tools.simulate import shuffled_deck

#: The back-off, ten times faster than the real one, so that the test sees several refusals quickly.
RETRY_FIRST_S = 0.025
RETRY_MAX_S = 0.5


def first_move_state() -> dict[str, Any]:
    """An update of a two-player round in play where seat 0 may draw."""
    game = Game(["Ana", "Bob"], Options(), first_dealer=1)
    events = game.start_round(shuffled_deck(random.Random(3)))
    seats = [{"name": n, "connected": True, "left": False, "ready": True} for n in ("Ana", "Bob")]
    room = {"phase": "play", "seats": seats, "host": 1}
    you = {**private_view(game, 0), "spectator": False, "host": False}
    visible = [event_to_dict(e) for e in events if visible_to(e, 0)]
    return {"type": "update", "v": 5, "room": room, "table": table_view(game), "you": you, "events": visible}


class RefusingServer:
    """Stands in for a ``CrispClient`` in a room: a welcome, then one state where it is the bot's move; every
    message sent is answered with the error ``code``, except ``sync`` (with a snapshot of the same state)
    unless ``code`` is ``rate_limited``, which refuses everything."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.state = first_move_state()
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.inbox.put_nowait({"type": "welcome", "v": 4, "room": "ABCDEF", "seat": 0, "token": None, "link": ""})
        self.inbox.put_nowait(self.state)
        self.sent: list[tuple[float, str]] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append((asyncio.get_running_loop().time(), message["type"]))
        if message["type"] == "sync" and self.code != "rate_limited":
            await self.inbox.put({**self.state, "type": "snapshot", "events": []})
        else:
            await self.inbox.put({"type": "error", "v": 5, "code": self.code, "message": "No."})

    async def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        try:
            return await asyncio.wait_for(self.inbox.get(), timeout)
        except TimeoutError:
            return None


@pytest.mark.parametrize("code", ["too_early", "rate_limited"])
async def test_a_refused_move_is_tried_again_after_a_doubling_back_off(
    code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wirebot, "RETRY_FIRST_S", RETRY_FIRST_S)
    monkeypatch.setattr(wirebot, "RETRY_MAX_S", RETRY_MAX_S)
    said: list[str] = []
    player = SeatPlayer(Bot("hard", random.Random(1)), random.Random(2), pause=0, games=1, say=said.append)
    server = RefusingServer(code)
    client: CrispClient = server  # type: ignore[assignment]
    with pytest.raises(TimeoutError):  # the state never changes: it keeps trying, slowly
        await asyncio.wait_for(player.play(client), 1.2)
    draws = [t for t, kind in server.sent if kind == "draw"]
    syncs = [kind for _, kind in server.sent if kind == "sync"]
    # Refused at 0, then tried again after 0.025, 0.05, 0.1, 0.2, 0.4 s (0.775 s in all), then every 0.5 s.
    assert 6 <= len(draws) <= 7, server.sent
    gaps = [b - a for a, b in itertools.pairwise(draws)]
    for gap, wanted in zip(gaps, (0.025, 0.05, 0.1, 0.2, 0.4, 0.5), strict=False):
        assert wanted - 0.005 <= gap <= wanted + 0.1, gaps
    # After a refusal it asks for the state again (once per refusal), but not when it was only too fast.
    assert len(syncs) == (0 if code == "rate_limited" else len(draws)), server.sent
    assert said == ["game 1 started: Ana, Bob"] + [f"refused: {code} (No.)"] * len(draws)


class MovedServer:
    """Stands in for a ``CrispClient`` whose room moved while it was the bot's move: a welcome, the state,
    then ``moved``, and the connection closed (4005) under it: every send fails."""

    def __init__(self) -> None:
        self.inbox = [
            {"type": "welcome", "v": 4, "room": "ABCDEF", "seat": 0, "token": None, "link": ""},
            first_move_state(),
            {"type": "moved", "v": 5},
        ]
        self.tried: list[str] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.tried.append(message["type"])
        raise ConnectionClosed(Close(CLOSE_MOVED, "moved"), None)

    async def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        if not self.inbox:
            raise ConnectionError("connection closed")
        return self.inbox.pop(0)


async def test_a_move_sent_on_a_closed_connection_still_reads_what_came_before_the_close() -> None:
    """The bot's move meets the closed socket: it does not drop what the server said before the close (the
    ``moved`` that tells the room went to another node), and then knows the connection is lost."""
    said: list[str] = []
    player = SeatPlayer(Bot("hard", random.Random(1)), random.Random(2), pause=0, games=1, say=said.append)
    server = MovedServer()
    client: CrispClient = server  # type: ignore[assignment]
    assert await player.play(client) is End.LOST
    assert server.tried == ["draw"]
    assert said == ["game 1 started: Ana, Bob", "the room moved to another server node"]
