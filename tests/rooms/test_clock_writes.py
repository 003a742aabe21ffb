"""What a timer tick writes (issue 19): a crisp window closing and a move's clock starting are not written, as a
resume after a restart does both again; a move timed out and a round ended by the clock are written before
anyone hears of them.

Three players, P0 to P2; P2 deals, so P0 starts; round time 0 is when play starts.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any, Final

import pytest

from crisp_server.store.store import Store
from tests.web.bots import OPEN_LIMITS, Bots, Style, rig, stacked_deck
from tests.web.harness import Harness, running_server

HANDS: Final = (("AS", "2S", "3S"), ("9H", "9D", "9C"), ("TH", "TD", "TC"))
PILE: Final = ("7C", "4H", "5H", "6H", "4D", "5D", "6D", "2C", "3C", "8C")
DRAW: Final = {"type": "draw", "from": "deck"}
DISCARD: Final = {"type": "discard"}


async def three(server: Harness, monkeypatch: pytest.MonkeyPatch, turn_seconds: int | None = None) -> Bots:
    rig(monkeypatch, first_dealer=2, decks=[stacked_deck(2, HANDS, PILE)])
    opts = {"score_limit": 100, "turn_seconds": turn_seconds, "discard_draw": False}
    bots = await Bots.start(server, 3, random.Random(0), style=Style(passive=True), options=opts)
    await bots.ready_all()
    assert bots.round["turn"] == 0
    return bots


def store_of(server: Harness) -> Store:
    store: Store = server.app.state.store
    return store


def round_row(data: Path) -> tuple[Any, ...]:
    """The only round's stored clock and resumes."""
    with sqlite3.connect(data / "crisp.sqlite3") as db:
        row: tuple[Any, ...] = db.execute('SELECT end_at, resumes FROM rounds WHERE "index" = 0').fetchone()
        return row


async def test_a_window_that_closes_is_sent_at_once_and_a_restart_closes_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_server(persist=True, data_dir=tmp_path, **OPEN_LIMITS) as server:
        bots = await three(server, monkeypatch)
        await bots.advance(500)
        await bots.do(0, DRAW)
        await bots.do(0, DISCARD)  # at 500: P0's window opens until 3500, P1 may draw from 2500
        store = store_of(server)
        commits = store.timing.commits
        await bots.advance(3000)
        assert {"type": "window_closed", "seat": 0, "at": 3500} in bots.state["events"]
        assert bots.round["window"] is None
        assert store.timing.commits == commits, "the window's end was written"
        assert round_row(tmp_path)[0] is None  # nothing but the actions: their last instant is the clock
        tokens = [p.token for p in bots.players]

    async with running_server(persist=True, data_dir=tmp_path, **OPEN_LIMITS) as server:
        clients = [await server.client() for _ in tokens]
        for client, token in zip(clients, tokens, strict=True):
            await client.resume(bots.code, token)
        for client in clients:
            await client.request({"type": "ping"})
        table = clients[1].table
        assert table is not None
        r = table["round"]
        # The round goes on from the last instant written (the discard): its window closed, P1 to draw at once.
        assert (r["turn"], r["window"], r["now"], r["caller"]) == (1, None, 500, None)
        assert clients[1].you["can"] == ["draw_deck"]
        assert clients[0].you["can"] == []
        await clients[1].draw()
        assert json.loads(round_row(tmp_path)[1]) == [{"after": 2, "at": 500}]


async def test_a_move_timed_out_by_the_clock_is_written_before_it_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_server(persist=True, data_dir=tmp_path, **OPEN_LIMITS) as server:
        bots = await three(server, monkeypatch, turn_seconds=30)
        await bots.do(0, DRAW)
        await bots.do(0, DISCARD)  # at 0: P1's clock starts at 2000 and runs out at 32000
        store = store_of(server)
        await bots.advance(3000)
        commits = store.timing.commits
        await bots.advance(29_000)
        assert any(e["type"] == "timed_out" and e["seat"] == 1 for e in bots.state["events"])
        assert store.timing.commits > commits
        assert round_row(tmp_path)[0] == 32_000
