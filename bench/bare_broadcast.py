"""The smallest server that does Crisp's fan-out: the yardstick for ``crisp-server loadtest`` (issue 7).

picows + uvloop + orjson, the fastest Python stack measured on this machine. It speaks just enough of
the protocol for the load test's bots (create, join, start, draw, swap, discard) and keeps a toy table
per room: whose turn it is, whether they drew, and the 2-second block of the crisp window. Per action
it parses the frame, builds a ~1.3 KB view for each player (the shape of the real server's update) and
serialises and sends each one. No rules, no database, no rate limits, no reconnection: everything the
real server does besides the fan-out is what the comparison measures.

    python bench/bare_broadcast.py --port 8100
    crisp-server loadtest --url http://127.0.0.1:8100 --server-pid <its pid> ...
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from typing import Any

import orjson
import uvloop
from picows import WSFrame, WSListener, WSMsgType, WSTransport, WSUpgradeRequest, ws_create_server

EVENTS = {"draw": "drew", "swap": "swapped", "discard": "discarded"}
OPTIONS = {"score_limit": 50, "turn_seconds": None, "discard_draw": True}
BLOCK = 2.0  # seconds before the next player may draw (the crisp window)


class Table:
    def __init__(self, code: str) -> None:
        self.code = code
        self.players: list[Player] = []
        self.phase = "lobby"
        self.v = 0
        self.turn = 0
        self.drawn = False
        self.may_draw_at = 0.0
        self.discard: list[str] = []
        self.draw_pile = 40
        self.started = time.monotonic()

    def act(self, player: Player, message: dict[str, Any]) -> None:
        kind = message.get("type")
        seat = self.players.index(player)
        now = time.monotonic()
        if kind not in EVENTS or self.phase != "play" or seat != self.turn:
            player.send({"type": "error", "v": self.v, "code": "not_your_turn", "message": "not your turn"})
            return
        if kind == "draw":
            if self.drawn or now < self.may_draw_at:
                player.send({"type": "error", "v": self.v, "code": "too_early", "message": "too early"})
                return
            self.drawn = True
            self.draw_pile = self.draw_pile - 1 if self.draw_pile > 1 else 40
        else:
            self.drawn = False
            self.discard = [*self.discard[-19:], "7H"]
            self.turn = (self.turn + 1) % len(self.players)
            self.may_draw_at = now + BLOCK
            # As the real server does, tell the table when the next player may draw.
            asyncio.get_running_loop().call_later(BLOCK, self.broadcast, [{"type": "may_draw", "seat": self.turn}])
        self.broadcast([{"type": EVENTS[kind], "seat": seat}])

    def broadcast(self, events: list[dict[str, Any]]) -> None:
        self.v += 1
        for seat, player in enumerate(self.players):
            player.send(self.view(seat, events))

    def view(self, seat: int, events: list[dict[str, Any]]) -> dict[str, Any]:
        now = time.monotonic()
        names = [p.name for p in self.players]
        may_draw_in = max(0, int((self.may_draw_at - now) * 1000))
        can: list[str] = []
        if self.phase == "play" and seat == self.turn:
            can = ["swap", "discard"] if self.drawn else [] if may_draw_in else ["draw_deck"]
        at = int((now - self.started) * 1000)
        return {
            "type": "update",
            "v": self.v,
            "room": {
                "code": self.code,
                "link": f"http://127.0.0.1/r/{self.code}",
                "phase": self.phase,
                "host": 0,
                "seats": [{"name": n, "connected": True, "left": False, "ready": True} for n in names],
                "options": OPTIONS,
                "spectators": 0,
                "fair": {"round": 0, "commitment": "b7a45ac09b81a38cdb7bd7733b0664fe18ec6bb0a6d0cee28fac4386351bccb0"},
            },
            "table": {
                "players": names,
                "options": OPTIONS,
                "totals": [0] * len(names),
                "scores": [],
                "game_over": False,
                "winners": [],
                "round": {
                    "index": 0,
                    "dealer": 0,
                    "starter": 1,
                    "now": at,
                    "ended": False,
                    "turn": self.turn,
                    "drawn": "pile" if self.drawn else None,
                    "extra_moves": 0,
                    "may_draw_at": at + may_draw_in,
                    "deadline": None,
                    "window": None,
                    "caller": None,
                    "final_turns_left": None,
                    "draw_pile": self.draw_pile,
                    "discard": self.discard,
                    "hands": None,
                    "sums": None,
                    "points": None,
                },
            },
            "clock": {
                "peek_ends_in": None,
                "next_round_in": None,
                "deadline_in": None,
                "may_draw_in": may_draw_in,
                "window_closes_in": None,
                "auto_timeout_in": None,
            },
            "you": {"seat": seat, "drawn_card": "4C" if self.drawn and seat == self.turn else None, "can": can},
            "events": events,
        }


class Server:
    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}
        self.codes = (f"R{n:05d}" for n in itertools.count())


class Player(WSListener):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.transport: WSTransport | None = None
        self.table: Table | None = None
        self.name = ""

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.transport = transport

    def send(self, message: dict[str, Any]) -> None:
        if self.transport is not None:
            self.transport.send(WSMsgType.TEXT, orjson.dumps(message))

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        if frame.msg_type == WSMsgType.CLOSE:
            transport.send_close(frame.get_close_code())
            transport.disconnect()
            return
        if frame.msg_type != WSMsgType.TEXT:
            return
        message = orjson.loads(frame.get_payload_as_memoryview())
        kind = message.get("type")
        table = self.table
        if kind in ("create", "join"):
            if kind == "create":
                table = Table(next(self.server.codes))
                self.server.tables[table.code] = table
            else:
                table = self.server.tables.get(message.get("room", ""))
                if table is None:
                    self.send({"type": "error", "v": 0, "code": "room_not_found", "message": "no such room"})
                    return
            self.table = table
            self.name = str(message.get("name", ""))
            table.players.append(self)
            seat = len(table.players) - 1
            self.send({"type": "welcome", "v": table.v, "room": table.code, "seat": seat, "token": "t", "link": ""})
        elif table is None:
            return
        elif kind == "start":
            table.phase = "play"
            table.turn = 1 % len(table.players)
            table.broadcast([{"type": "play"}])
        elif kind in EVENTS:
            table.act(self, message)

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        if self.table is not None and self in self.table.players:
            self.table.players.remove(self)
            if not self.table.players:
                self.server.tables.pop(self.table.code, None)


async def main(host: str, port: int) -> None:
    server = Server()

    def listener(request: WSUpgradeRequest) -> Player:
        return Player(server)

    ws_server = await ws_create_server(listener, host, port)
    print(f"bare broadcast server on ws://{host}:{port}/ws", flush=True)
    await ws_server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    args = parser.parse_args()
    uvloop.run(main(args.host, args.port))
