"""Short runs of `crisp-server loadtest` against the real server and the bare one: games finish, nothing
goes wrong, and the figures the performance note relies on are printed; its bots follow rooms that move to
another server node (or restart) and play on."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from crisp_server.remote import loadplayers
from crisp_server.remote import loadtest as load
from crisp_server.remote.client import OPEN_TIMEOUT_S
from crisp_server.remote.loadtest import Probe
from crisp_server.settings import Settings
from crisp_server.web.app import create_app
from tests.e2e.procs import free_port, server_process
from tests.frozen import Relay
from tests.moving import MovingProxy
from tests.web.bots import OPEN_LIMITS
from tests.web.harness import uvicorn_serving

ROOT = Path(__file__).resolve().parents[2]
# Every bot comes from 127.0.0.1: the look-up limit per address is for strangers guessing codes.
LOOKUPS = {"CRISP_LOOKUP_BURST": "10000", "CRISP_LOOKUP_PER_MINUTE": "10000"}


def loadtest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crisp_server", "loadtest", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def figures(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    last = run.stdout.strip().splitlines()[-1]
    result: dict[str, Any] = json.loads(last)
    return result


def test_a_short_load_test_plays_games_without_errors(tmp_path: Path) -> None:
    with server_process(tmp_path, LOOKUPS) as (base, _proc):
        args = ["--url", base, "--rooms", "4", "--players", "3", "--pace", "20", "--crisp", "1", "--duration", "8"]
        run = loadtest(*args, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    games = re.search(r"games finished: (\d+)", run.stdout)
    assert games is not None, run.stdout
    assert int(games.group(1)) >= 1, run.stdout
    assert "errors: 0 " in run.stdout
    assert "disconnects: 0" in run.stdout
    assert re.search(r"p99 \d+\.\d", run.stdout), run.stdout
    result = figures(run)
    assert result["actions_per_s"] > 0
    assert result["p99_ms"] is not None
    assert result["errors"] == result["disconnects"] == result["failed_rooms"] == 0
    # CPU and memory come from the server's /metrics.
    assert result["server_cpu_s"] is not None
    assert result["views_per_cpu_s"] > 0
    assert result["rss_after"] > 0


def test_rooms_join_while_others_play_as_fast_as_the_rules_allow(tmp_path: Path) -> None:
    with server_process(tmp_path, LOOKUPS) as (base, _proc):
        args = ["--url", base, "--rooms", "4", "--pace", "0", "--duration", "6", "--churn", "2", "--churn-seconds", "2"]
        run = loadtest(*args, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    churned = r"while 2 more rooms \(8 players\) joined \(over 2 s\) and began: p99 \d+\.\d ms"
    assert re.search(churned, run.stdout), run.stdout
    result = figures(run)
    assert result["churn_p99_ms"] is not None
    # With the crisp window's block, a room plays at most about two actions per two seconds, plus specials.
    assert 0 < result["actions_per_s"] < 3 * 5


def test_idle_lobbies_report_memory_per_connection(tmp_path: Path) -> None:
    with server_process(tmp_path, LOOKUPS) as (base, _proc):
        run = loadtest("--url", base, "--rooms", "5", "--lobby", "--duration", "3", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "KB per connection" in run.stdout
    result = figures(run)
    assert result["actions_per_s"] == 0
    assert result["rss_after"] is not None


def test_the_bare_server_plays_the_same_bots(tmp_path: Path) -> None:
    port = free_port()
    bare = subprocess.Popen([sys.executable, str(ROOT / "bench" / "bare_broadcast.py"), "--port", str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the bare server did not start"
                time.sleep(0.1)
        args = ["--url", f"http://127.0.0.1:{port}", "--rooms", "3", "--pace", "0", "--duration", "5"]
        run = loadtest(*args, "--server-pid", str(bare.pid), "--json")
    finally:
        bare.terminate()
        bare.wait(10)
    assert run.returncode == 0, run.stdout + run.stderr
    result = figures(run)
    assert result["actions_per_s"] > 0
    assert result["errors"] == 0
    # CPU (with its kernel part) and memory come from /proc for a server without /metrics.
    assert result["server_cpu_s"] is not None
    assert 0 <= result["server_system_s"] <= result["server_cpu_s"]
    assert result["rss_after"] is not None


def test_cpu_between_samples_is_whole_ticks_so_the_kernel_part_never_exceeds_the_whole() -> None:
    # 10 ticks (7 user, 3 system), then 11 (7 and 4), at 100 ticks a second: the raw differences of the
    # seconds are 0.009999999999999995 for the whole and 0.010000000000000002 for the kernel's part.
    whole, kernel = load._spent(10 / 100, 11 / 100), load._spent(3 / 100, 4 / 100)
    assert whole == kernel == 0.01
    assert load._spent(None, 0.5) is None
    assert load._spent(0.5, None) is None


def test_the_load_test_refuses_another_machine() -> None:
    run = loadtest("--url", "http://192.0.2.10:8000", "--duration", "1")
    assert run.returncode == 2
    assert "--allow-remote" in run.stdout


async def test_the_probe_counts_the_cpu_of_the_processes_the_server_started() -> None:
    """The server's WAL checkpoint process works for it: its CPU time is part of the server's. And the part
    spent in the kernel is told apart: a busy loop in user space adds next to nothing to it."""
    probe = Probe("http://127.0.0.1:1", os.getpid())  # this test process stands in for the server
    before, _ = await probe.sample()
    burn = (
        "import sys, time\nprint('started', flush=True)\nsys.stdin.readline()\n"
        # (The clock is read once per 200,000 additions: reading a process's CPU clock is a system call.)
        "t = time.process_time()\nwhile time.process_time() - t < 0.5: sum(range(200_000))\n"
        "print('burnt', flush=True)\ntime.sleep(30)"
    )
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        # The child starts (its start-up costs system time too), then burns 0.5 s of CPU in user space, however
        # long a busy machine takes to give it that, and says so; it sleeps while it is sampled.
        assert child.stdin is not None
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "started"
        started, _ = await probe.sample()
        system_started = probe.system_s
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "burnt"
        after, rss = await probe.sample()
    finally:
        child.kill()
        child.wait()
    assert before is not None
    assert started is not None
    assert after is not None
    assert rss is not None
    assert after - before >= 0.4
    assert system_started is not None
    assert probe.system_s is not None
    burnt, in_kernel = after - started, probe.system_s - system_started
    assert burnt >= 0.4
    assert 0 <= in_kernel < 0.1, (burnt, in_kernel)


MOVES = ("draw", "swap", "discard", "jack", "queen", "king", "crisp")


@pytest.mark.parametrize("how", ["moved", "close-alone", "restarting"])
async def test_bots_follow_their_rooms_to_another_node_and_play_on(
    how: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rooms of three bots play through a proxy that moves each room twice (``moved`` and 4005, the close
    alone, or ``restarting`` and 1012): every bot reconnects at once (a back-off would take 30 s here) to
    /ws?room=CODE, resumes its seat, and the rooms play on; the reconnects are counted, not as disconnects."""
    monkeypatch.setattr(loadplayers, "RECONNECT_FIRST_S", 30.0)
    rooms, players = 2, 3
    app = create_app(Settings(**OPEN_LIMITS), persist=False)
    async with uvicorn_serving(app, lifespan="on") as port:
        proxy = MovingProxy(f"ws://127.0.0.1:{port}")
        async with proxy.serving() as base:
            # 10 s: after the last move (4 to 6 s in) the rooms have time to play on, on a busy machine too (at 7 s a
            # CI run under load once saw only the resumes and the readies of the peek that starts over).
            run = asyncio.create_task(
                load.run(base, rooms, players, pace=10, duration=10, json_out=True, server_pid=os.getpid())
            )
            async with asyncio.timeout(30):
                while sum(1 for leg in proxy.legs if "ready" in leg.sent) < rooms * players:
                    await asyncio.sleep(0.05)
            codes = sorted({leg.code for leg in proxy.legs if leg.code is not None})
            assert len(codes) == rooms
            for _ in range(2):
                await asyncio.sleep(1.5)
                for code in codes:
                    moved = await (
                        proxy.restart(code) if how == "restarting" else proxy.move(code, announce=how == "moved")
                    )
                    assert moved == players
            status = await asyncio.wait_for(run, 60)
    out = capsys.readouterr().out
    assert status == 0, out
    result = json.loads(out.strip().splitlines()[-1])
    assert result["errors"] == result["disconnects"] == result["failed_rooms"] == 0, out
    counted = "restarted" if how == "restarting" else "moved"
    assert result[counted] == 2 * rooms * players, out
    assert result["moved" if counted == "restarted" else "restarted"] == 0, out
    assert f"{result['moved']} after their room moved to another node (4005), " in out
    for code in codes:
        legs = [leg for leg in proxy.legs if leg.code == code]
        assert len(legs) == 3 * players  # each bot's first socket, and one after each move
        assert legs[0].path == "/ws"  # the host's create: no code yet
        assert legs[0].entry is not None
        assert legs[0].entry["type"] == "create"
        assert all(leg.path == f"/ws?room={code}" for leg in legs[1:]), [leg.path for leg in legs]
        resumes = [leg for leg in legs if leg.entry is not None and leg.entry["type"] == "resume"]
        assert len(resumes) == 2 * players
        assert all(leg.entry is not None and leg.entry["room"] == code for leg in resumes)
        # At once: every bot of the room is back within a few seconds of each move, not after the back-off.
        moves = sorted({leg.moved for leg in legs if leg.moved is not None})
        for move in moves:
            back = [leg.opened - move for leg in resumes if leg.opened > move]
            assert len([gap for gap in back if gap < 5]) >= players, back
        # And they play on after the last move.
        after = [kind for leg in legs if leg.opened > moves[-1] for kind in leg.sent]
        assert any(kind in MOVES for kind in after), after


async def test_a_bot_whose_immediate_reconnect_fails_backs_off_and_plays_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node the room went to closes each bot's first socket with 4005 again: the bots try again after the
    back-off, resume, and the room plays on."""
    monkeypatch.setattr(loadplayers, "RECONNECT_FIRST_S", 0.5)
    players = 2
    app = create_app(Settings(**OPEN_LIMITS), persist=False)
    async with uvicorn_serving(app, lifespan="on") as port:
        proxy = MovingProxy(f"ws://127.0.0.1:{port}")
        async with proxy.serving() as base:
            run = asyncio.create_task(
                load.run(base, 1, players, pace=10, duration=5, json_out=True, server_pid=os.getpid())
            )
            async with asyncio.timeout(30):
                while sum(1 for leg in proxy.legs if "ready" in leg.sent) < players:
                    await asyncio.sleep(0.05)
            code = proxy.legs[0].code
            assert code is not None
            await asyncio.sleep(1)
            proxy.refuse = players
            assert await proxy.move(code) == players
            status = await asyncio.wait_for(run, 60)
    out = capsys.readouterr().out
    assert status == 0, out
    result = json.loads(out.strip().splitlines()[-1])
    assert result["errors"] == result["disconnects"] == 0, out
    assert result["moved"] == players, out
    moved = proxy.legs[0].moved
    assert moved is not None
    refused = [leg for leg in proxy.legs if leg.refused]
    resumed = [leg for leg in proxy.legs if leg.entry is not None and leg.entry["type"] == "resume"]
    assert len(refused) == len(resumed) == players
    assert all(leg.path == f"/ws?room={code}" for leg in refused + resumed)
    assert all(leg.opened - moved < 5 for leg in refused)  # at once first
    assert min(leg.opened for leg in resumed) - max(leg.opened for leg in refused) >= 0.4  # then backed off
    assert any(kind in MOVES for leg in resumed for kind in leg.sent)


async def test_a_bot_whose_reconnect_hangs_gives_it_up_and_plays_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The room moves and each bot's reconnect at once reaches a frozen node (the connection is taken, the
    handshake never answered): the bots give it up after ``OPEN_TIMEOUT_S``, try again after the back-off,
    resume, and the room plays on."""
    monkeypatch.setattr(loadplayers, "RECONNECT_FIRST_S", 0.5)
    players = 2
    app = create_app(Settings(**OPEN_LIMITS), persist=False)
    async with uvicorn_serving(app, lifespan="on") as port:
        proxy = MovingProxy(f"ws://127.0.0.1:{port}")
        async with proxy.serving() as base:
            relay = Relay(("127.0.0.1", int(base.rsplit(":", 1)[1])))
            await relay.start()
            try:
                run = asyncio.create_task(
                    load.run(
                        f"http://127.0.0.1:{relay.port}",
                        1,
                        players,
                        pace=10,
                        duration=OPEN_TIMEOUT_S + 7,
                        json_out=True,
                        server_pid=os.getpid(),
                    )
                )
                async with asyncio.timeout(30):
                    while sum(1 for leg in proxy.legs if "ready" in leg.sent) < players:
                        await asyncio.sleep(0.05)
                code = proxy.legs[0].code
                assert code is not None
                await asyncio.sleep(1)
                relay.hold(players)
                assert await proxy.move(code) == players
                status = await asyncio.wait_for(run, 60)
            finally:
                await relay.close()
    out = capsys.readouterr().out
    assert status == 0, out
    result = json.loads(out.strip().splitlines()[-1])
    assert result["errors"] == result["disconnects"] == 0, out
    assert result["moved"] == players, out
    assert relay.held == players
    moved = proxy.legs[0].moved
    assert moved is not None
    resumed = [leg for leg in proxy.legs if leg.entry is not None and leg.entry["type"] == "resume"]
    assert len(resumed) == players
    # Each gave its hanging socket up after OPEN_TIMEOUT_S and came back after the back-off (not after picows'
    # or the proxy's own, longer limits).
    assert all(OPEN_TIMEOUT_S <= leg.opened - moved < OPEN_TIMEOUT_S + 3 for leg in resumed), [
        leg.opened - moved for leg in resumed
    ]
    assert any(kind in MOVES for leg in resumed for kind in leg.sent)
