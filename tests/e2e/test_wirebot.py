"""``crisp-server bot``: computer players over the wire join a room through the protocol and play it to the end.

The game runs on the real app over real sockets in the test's event loop, on a clock that runs 20 times
faster than the wall clock (:class:`FastClock`), so that the rules' two-second draw blocks and crisp
windows pass in a blink and a game to 50 takes seconds; the bots only ever act on the round times the
server sends them. One bot is a real ``python -m crisp_server bot`` process, one runs the command's async
main in process, and the host is played by the same decision code through its own ``CrispClient``.
Resuming after the server dropped every connection is tested on a real server process, killed and started
again on its database; following a room that moved to another server node (``moved``, close 4005), through
a proxy that moves it (``tests.moving``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from crisp_server.bots import Bot
from crisp_server.remote import wirebot
from crisp_server.remote.client import OPEN_TIMEOUT_S, CrispClient
from crisp_server.remote.wirebot import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_USAGE,
    BotOptions,
    End,
    SeatPlayer,
    run_bot,
    ws_url,
)
from crisp_server.rooms.clock import TimerHandle
from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from tests.e2e.procs import free_port, server_process
from tests.frozen import Relay
from tests.moving import Leg, MovingProxy
from tests.web.bots import OPEN_LIMITS
from tests.web.harness import uvicorn_serving

#: How much faster than the wall clock the in-process server's rooms see time pass.
SPEED = 20


class FastClock:
    """The rooms' clock running ``speed`` times faster than the monotonic clock, with real timers."""

    def __init__(self, speed: int) -> None:
        self.speed = speed

    def now(self) -> int:
        return time.monotonic_ns() * self.speed // 1_000_000

    def call_at(self, when: int, callback: Callable[[], None]) -> TimerHandle:
        delay = max(0, when - self.now()) / self.speed / 1000
        return asyncio.get_running_loop().call_later(delay + 0.001, callback)


@contextlib.asynccontextmanager
async def fast_server(**settings: Any) -> AsyncIterator[str]:
    """The app on a free loopback port, its rooms on a :class:`FastClock`; the WebSocket URL. The message
    limits run on the wall clock, while the bots play 20 times faster than people: they are lifted."""
    app = create_app(Settings(**{**OPEN_LIMITS, **settings}), FastClock(SPEED), persist=False)
    async with uvicorn_serving(app, lifespan="on") as port:
        yield f"ws://127.0.0.1:{port}/ws"


async def bot_process(*args: str) -> asyncio.subprocess.Process:
    """``python -m crisp_server bot ARGS`` (its messages on stderr, a pipe)."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "crisp_server", "bot", *args, stderr=asyncio.subprocess.PIPE
    )


async def finished(proc: asyncio.subprocess.Process, timeout: float = 60) -> tuple[int, str]:
    """The exit status and stderr of ``proc`` once it has ended (killed if it has not within ``timeout``)."""
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        _, err = await proc.communicate()
        raise AssertionError(f"the bot did not exit within {timeout} s:\n{err.decode()}") from None
    assert proc.returncode is not None
    return proc.returncode, err.decode()


def state(c: CrispClient) -> dict[str, Any]:
    assert c.state is not None
    return c.state


def seated(n: int) -> Callable[[CrispClient], bool]:
    return lambda c: c.state is not None and len(c.state["room"]["seats"]) == n


def seat_is(seat: int, flag: str) -> Callable[[CrispClient], bool]:
    """The room shows ``seat`` ``connected``, ``ready`` (in a peek) or ``left``."""
    return lambda c: state(c)["room"]["seats"][seat][flag] and (flag != "ready" or c.phase == "peek")


def ready_again(seat: int) -> Callable[[CrispClient], bool]:
    """After a restart: the room shows ``seat`` ``ready`` in the peek, or in the play its ready started."""
    return lambda c: state(c)["room"]["seats"][seat]["ready"] and c.phase in ("peek", "play")


async def test_two_bots_over_the_wire_play_a_game_to_its_end_with_the_host() -> None:
    async with fast_server() as url, CrispClient.connect(url) as host:
        code = await host.create("Ana")
        await host.set_options(score_limit=50)
        hard = await bot_process("--url", url, "--room", code.lower(), "--level", "hard", "--pause", "0", "--seed", "1")
        await host.wait_for(seated(2), timeout=30, what="the bot process seated")
        said: list[str] = []
        normal = asyncio.create_task(run_bot(BotOptions(url, code, "normal", pause=0, seed=2), said.append))
        await host.wait_for(seated(3), timeout=10, what="the in-process bot seated")
        assert [s["name"] for s in state(host)["room"]["seats"]] == ["Ana", "Hard bot", "Normal bot"]
        await host.start()

        ana = SeatPlayer(Bot("hard", random.Random(3)), random.Random(4), pause=0, games=1, say=lambda _: None)
        assert await asyncio.wait_for(ana.play(host), 60) is End.DONE

        table = state(host)["table"]
        assert table["game_over"]
        assert max(table["totals"]) >= 50
        assert len(table["scores"]) >= 2
        status, err = await finished(hard)
        assert status == EXIT_OK, err
        assert await asyncio.wait_for(normal, 30) == EXIT_OK, said
    # What each bot tells: its seat, every round's points, the final totals as the host saw them, leaving.
    totals = ", ".join(f"{n} {t}" for n, t in zip(table["players"], table["totals"], strict=True))
    for lines, seat in ((err.splitlines(), 1), (said, 2)):
        assert (
            lines[0]
            == f"joined room {code} as seat {seat} ({table['players'][seat]}, level {('hard', 'normal')[seat - 1]})"
        )
        assert sum(line.startswith("round ") for line in lines) == len(table["scores"])
        assert any(line.startswith(f"game 1 over: {totals};") for line in lines), lines
        assert lines[-1] == f"left room {code} after 1 game(s)"
        assert not any("refused" in line for line in lines), lines  # it never sent a move out of turn


async def test_a_bot_over_the_wire_plays_with_the_rooms_own_computer_players() -> None:
    async with fast_server(bot_pause=0) as url, CrispClient.connect(url) as host:
        code = await host.create("Ana")
        await host.set_options(score_limit=50)
        await host.request({"type": "add_bot", "level": "hard"})
        said: list[str] = []
        bot = asyncio.create_task(run_bot(BotOptions(url, code, "normal", pause=0, seed=11), said.append))
        await host.wait_for(seated(3), timeout=10, what="the bot over the wire seated")
        seats = state(host)["room"]["seats"]
        assert [(s["name"], s["bot"]) for s in seats] == [("Ana", None), ("Ada", "hard"), ("Normal bot", None)]
        await host.start()
        ana = SeatPlayer(Bot("easy", random.Random(12)), random.Random(13), pause=0, games=1, say=_ignore)
        assert await asyncio.wait_for(ana.play(host), 60) is End.DONE
        assert await asyncio.wait_for(bot, 30) == EXIT_OK, said
    assert any(line.startswith("game 1 over: ") for line in said), said
    assert not any("refused" in line for line in said), said


async def test_a_bot_plays_on_after_a_rematch_while_games_remain() -> None:
    async with fast_server() as url, CrispClient.connect(url) as host:
        code = await host.create("Ana")
        await host.set_options(score_limit=50)
        said: list[str] = []
        bot = asyncio.create_task(run_bot(BotOptions(url, code, "easy", games=2, pause=0, seed=5), said.append))
        await host.wait_for(seated(2), timeout=10, what="the bot seated")
        await host.start()
        ana = SeatPlayer(Bot("normal", random.Random(6)), random.Random(7), pause=0, games=1, say=lambda _: None)
        assert await asyncio.wait_for(ana.play(host), 60) is End.DONE
        await host.send({"type": "rematch"})  # back to the lobby: the bot waits there for the host's start
        await host.wait_for(lambda c: c.phase == "lobby", what="the lobby after the rematch")
        await host.start()
        ana.games = 2  # the host's player goes on reading the same connection
        assert await asyncio.wait_for(ana.play(host), 60) is End.DONE
        assert await asyncio.wait_for(bot, 30) == EXIT_OK, said
    games = [line.split(":")[0] for line in said if line.startswith("game")]
    assert games == ["game 1 started", "game 1 over", "game 2 started", "game 2 over"]
    assert said[-1] == f"left room {code} after 2 game(s)"


async def test_refused_joins_say_why_and_exit_non_zero() -> None:
    async with fast_server() as url, CrispClient.connect(url) as host:
        code = await host.create("Ana")
        # An unknown room, through the real command.
        proc = await bot_process("--url", url, "--room", "ZZZZZZ", "--level", "hard")
        status, err = await finished(proc, 30)
        assert status == EXIT_FAILED
        assert "cannot join room ZZZZZZ:" in err
        assert "(room_not_found)" in err

        said: list[str] = []
        assert await run_bot(BotOptions(url, code, "hard", name="ana"), said.append) == EXIT_FAILED
        assert said[-1].endswith("(name_taken)")
        # Without --name it takes the next free default name.
        async with CrispClient.connect(url) as other:
            await other.join(code, "Hard bot")
            bot = asyncio.create_task(run_bot(BotOptions(url, code, "hard", pause=0), said.append))
            await host.wait_for(seated(3), timeout=10, what="the bot seated")
            assert state(host)["room"]["seats"][2]["name"] == "Hard bot 2"
            await host.start()
            said.clear()
            assert await run_bot(BotOptions(url, code, "hard", name="Late"), said.append) == EXIT_FAILED
            assert said[-1].endswith("(game_running)")
            bot.cancel()
            assert await bot == EXIT_STOPPED  # cancelled (SIGINT, SIGTERM), it leaves the room


@pytest.mark.parametrize("room_bots", [0, 1])
async def test_a_bot_left_alone_in_the_lobby_leaves(room_bots: int) -> None:
    """The host leaves: the bot is the host now, with nobody to start a game for (the room's own computer
    players never do)."""
    async with fast_server() as url, CrispClient.connect(url) as host:
        code = await host.create("Ana")
        for _ in range(room_bots):
            await host.request({"type": "add_bot", "level": "easy"})
        said: list[str] = []
        bot = asyncio.create_task(run_bot(BotOptions(url, code, "hard", pause=0), said.append))
        await host.wait_for(seated(2 + room_bots), timeout=10, what="the bot seated")
        await host.request({"type": "leave"})
        assert await asyncio.wait_for(bot, 10) == EXIT_OK
    assert said[-2:] == ["every other player left", f"left room {code} after 0 game(s)"]


async def test_a_full_room_refuses_the_bot() -> None:
    async with fast_server() as url, contextlib.AsyncExitStack() as stack:
        host = await stack.enter_async_context(CrispClient.connect(url))
        code = await host.create("P0")
        for i in range(1, 8):
            player = await stack.enter_async_context(CrispClient.connect(url))
            await player.join(code, f"P{i}")
        said: list[str] = []
        assert await run_bot(BotOptions(url, code, "easy"), said.append) == EXIT_FAILED
        assert said[-1].endswith("(room_full)")


@pytest.mark.parametrize(
    ("options", "status", "says"),
    [
        (BotOptions("ftp://127.0.0.1/ws", "ABCDEF", "hard"), EXIT_USAGE, "is not a server address"),
        (BotOptions("ws://127.0.0.1:99999/ws", "ABCDEF", "hard"), EXIT_USAGE, "is not a server address"),
        (BotOptions("ws://127.0.0.1/ws", "ABCDEF", "genius"), EXIT_USAGE, "unknown level 'genius'"),
        (BotOptions("ws://127.0.0.1/ws", "ABCDEF", "hard", games=0), EXIT_USAGE, "--games must be at least 1"),
        (BotOptions("ws://127.0.0.1/ws", " ", "hard"), EXIT_USAGE, "a room code is needed"),
        (BotOptions(f"ws://127.0.0.1:{free_port()}/ws", "ABCDEF", "hard"), EXIT_FAILED, "cannot connect to ws://"),
    ],
)
async def test_bad_arguments_and_no_server_are_clear_errors(options: BotOptions, status: int, says: str) -> None:
    said: list[str] = []
    assert await run_bot(options, said.append) == status
    assert says in said[-1]


def test_server_addresses() -> None:
    assert ws_url("ws://example.org/ws") == "ws://example.org/ws"
    assert ws_url(" http://127.0.0.1:8000 ") == "ws://127.0.0.1:8000/ws"
    assert ws_url("https://crisp.example.org/") == "wss://crisp.example.org/ws"
    with pytest.raises(ValueError, match="is not a server address"):
        ws_url("127.0.0.1:8000")


def _moved(seat: int) -> Callable[[CrispClient], bool]:
    kinds = ("drew", "timed_out")
    return lambda c: any(
        e.get("type") in kinds and e.get("seat") == seat
        for m in c.messages
        if m["type"] == "update"
        for e in m["events"]
    )


async def test_the_bot_resumes_its_seat_after_the_server_dropped_it(tmp_path: Path) -> None:
    """The server is killed (every socket drops without a close) in the peek and started again on its
    database: the bot reconnects with its back-off, resumes, says ready again and plays its moves."""
    port = free_port()
    with server_process(tmp_path, port=port, log=tmp_path / "server-1.log") as (base, server):
        url = base.replace("http", "ws") + "/ws"
        async with CrispClient.connect(url) as host:
            code = await host.create("Ana")
            token = host.token
            assert token is not None
            await host.set_options(score_limit=50)
            bot = await bot_process("--url", url, "--room", code, "--level", "normal", "--pause", "0", "--name", "Bo")
            await host.wait_for(seated(2), timeout=30, what="the bot seated")
            await host.start()
            await host.wait_for(seat_is(1, "ready"), timeout=10, what="the bot's ready")
            server.kill()
            await asyncio.to_thread(server.wait, 10)
    try:
        with server_process(tmp_path, port=port, log=tmp_path / "server-2.log"):
            async with CrispClient.connect(url) as host:
                await host.resume(code, token)
                await host.wait_for(seat_is(1, "connected"), timeout=30, what="the bot resumed")
                # Ready again, in the peek that started over; or already in play: when the bot is back before
                # the host, it is the only connected player, and its ready alone starts play (docs/protocol.md).
                await host.wait_for(ready_again(1), timeout=10, what="the bot's ready again")
                ana = SeatPlayer(Bot("normal", random.Random(1)), random.Random(2), pause=0, games=1, say=_ignore)
                playing = asyncio.create_task(ana.play(host))
                try:
                    await host.wait_for(_moved(1), timeout=30, what="a move of the bot")
                finally:
                    playing.cancel()
                bot.send_signal(signal.SIGINT)
                status, err = await finished(bot, 15)
                await host.wait_for(seat_is(1, "left"), timeout=10, what="the bot's leaving")
    finally:
        if bot.returncode is None:
            bot.kill()
    assert status == EXIT_STOPPED, err
    lines = err.splitlines()
    assert lines[0] == f"joined room {code} as seat 1 (Bo, level normal)"
    assert any(line.startswith("connection lost") and line.endswith("resuming in 0.25 s") for line in lines), lines
    assert "resumed seat 1" in lines
    assert lines[-1] == "stopped: left the room"


def _ignore(_: Any) -> None:
    pass


async def _arrived(proxy: MovingProxy, legs: int) -> Leg:
    """The ``legs``-th socket through ``proxy`` once its first message came (a few seconds at most)."""
    async with asyncio.timeout(10):
        while len(proxy.legs) < legs or (proxy.legs[legs - 1].entry is None and not proxy.legs[legs - 1].refused):
            await asyncio.sleep(0.01)
    return proxy.legs[legs - 1]


#: Refusals a move can meet when the state changed while it was on its way (a clock ran out, the other seat).
_RACES = frozenset({"not_your_turn", "too_early", "round_over", "crisp_not_allowed", "already_drawn", "nothing_drawn"})


@pytest.mark.parametrize("announce", [True, False], ids=["moved", "close-alone"])
async def test_a_bot_follows_its_room_to_another_node_at_once(announce: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The room moves in the lobby and again in the middle of the game: each time the bot reconnects at once
    (a back-off would take 30 s here) to /ws?room=CODE, resumes, and plays the game to its end."""
    monkeypatch.setattr(wirebot, "RECONNECT_FIRST_S", 30.0)
    async with fast_server() as url, CrispClient.connect(url) as host:
        proxy = MovingProxy(url.removesuffix("/ws"))
        async with proxy.serving() as base:
            code = await host.create("Ana")
            await host.set_options(score_limit=50)
            said: list[str] = []
            bot = asyncio.create_task(run_bot(BotOptions(base, code.lower(), "normal", pause=0, seed=3), said.append))
            await host.wait_for(seated(2), timeout=10, what="the bot seated")
            assert await proxy.move(code, announce=announce) == 1
            await _arrived(proxy, 2)
            await host.start()
            ana = SeatPlayer(Bot("normal", random.Random(4)), random.Random(5), pause=0, games=1, say=_ignore)
            playing = asyncio.create_task(ana.play(host))
            try:
                await host.wait_for(_moved(1), timeout=30, what="a move of the bot")
                assert await proxy.move(code, announce=announce) == 1
                await _arrived(proxy, 3)
                assert await asyncio.wait_for(playing, 60) is End.DONE
            finally:
                playing.cancel()
            assert await asyncio.wait_for(bot, 30) == EXIT_OK, said
    legs = proxy.legs
    assert [leg.path for leg in legs] == [f"/ws?room={code}"] * 3
    assert legs[0].entry is not None
    assert legs[0].entry["type"] == "join"
    for before, after in itertools.pairwise(legs):
        assert after.entry is not None
        assert after.entry["type"] == "resume", after.entry
        assert after.entry["room"] == code
        assert before.moved is not None
        assert after.opened - before.moved < 5, "not at once"
    assert legs[1].entry == legs[2].entry  # the same seat's token
    assert said.count("connection lost (code 4005); resuming at once") == 2, said
    assert said.count("resumed seat 1") == 2, said
    assert said.count("the room moved to another server node") == (2 if announce else 0), said
    assert any(line.startswith("game 1 over: ") for line in said), said
    # The game runs on while the bot reconnects (a 20x clock): a move it decided on the old socket's view may
    # meet the clock or the other seat first; such a race is refused and decided again. Nothing else is.
    refused = [line for line in said if line.startswith("refused: ")]
    assert len(refused) <= 3, said
    assert all(line.split()[1] in _RACES for line in refused), refused


async def test_a_bot_backs_off_when_following_the_move_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The node the room went to is not ready for it at once (its first socket is closed with 4005 again):
    the bot tries again after its usual back-off, and resumes."""
    monkeypatch.setattr(wirebot, "RECONNECT_FIRST_S", 0.5)
    async with fast_server() as url, CrispClient.connect(url) as host:
        proxy = MovingProxy(url.removesuffix("/ws"))
        async with proxy.serving() as base:
            code = await host.create("Ana")
            said: list[str] = []
            bot = asyncio.create_task(run_bot(BotOptions(base, code, "easy", pause=0), said.append))
            await host.wait_for(seated(2), timeout=10, what="the bot seated")
            proxy.refuse = 1
            assert await proxy.move(code) == 1
            await _arrived(proxy, 3)
            await host.wait_for(seat_is(1, "connected"), timeout=10, what="the bot back")
            # The room shows the seat connected as soon as the resume is in; the bot has it once its welcome is.
            async with asyncio.timeout(10):
                while "resumed seat 1" not in said:
                    await asyncio.sleep(0.01)
            bot.cancel()
            assert await bot == EXIT_STOPPED
    first, refused, resumed = proxy.legs
    assert refused.refused
    assert refused.path == resumed.path == f"/ws?room={code}"
    assert first.moved is not None
    assert refused.opened - first.moved < 5
    assert resumed.opened - refused.opened >= 0.5  # backed off
    assert resumed.entry is not None
    assert resumed.entry["type"] == "resume"
    lost = said.index("connection lost (code 4005); resuming at once")
    assert said[lost + 1].startswith("cannot reconnect: "), said
    assert said[lost + 1].endswith("; resuming in 0.5 s"), said
    assert said[lost + 2] == "resumed seat 1"


async def test_a_bot_gives_up_a_reconnect_that_hangs_and_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The room moves, and the bot's reconnect at once reaches a frozen node (the connection is taken, the
    handshake never answered): the bot gives it up after ``OPEN_TIMEOUT_S``, backs off, and resumes."""
    monkeypatch.setattr(wirebot, "RECONNECT_FIRST_S", 0.5)
    async with fast_server() as url, CrispClient.connect(url) as host:
        proxy = MovingProxy(url.removesuffix("/ws"))
        async with proxy.serving() as base:
            relay = Relay(("127.0.0.1", int(base.rsplit(":", 1)[1])))
            await relay.start()
            try:
                code = await host.create("Ana")
                said: list[str] = []
                bot_url = f"http://127.0.0.1:{relay.port}"
                bot = asyncio.create_task(run_bot(BotOptions(bot_url, code, "easy", pause=0), said.append))
                await host.wait_for(seated(2), timeout=10, what="the bot seated")
                relay.hold(1)
                assert await proxy.move(code) == 1
                moved = time.monotonic()
                async with asyncio.timeout(OPEN_TIMEOUT_S + 10):
                    while "resumed seat 1" not in said:
                        await asyncio.sleep(0.01)
                back = time.monotonic() - moved
                bot.cancel()
                assert await bot == EXIT_STOPPED
            finally:
                await relay.close()
    assert relay.held == 1
    # The hanging handshake, then the back-off (0.5 s), then the resume: not the 10 s websockets waits by itself.
    assert OPEN_TIMEOUT_S <= back < OPEN_TIMEOUT_S + 3, back
    lost = said.index("connection lost (code 4005); resuming at once")
    assert said[lost + 1] == "cannot reconnect: timed out during opening handshake; resuming in 0.5 s", said
    assert said[lost + 2] == "resumed seat 1"
    assert [leg.path for leg in proxy.legs] == [f"/ws?room={code}"] * 2  # the held one never reached the node
