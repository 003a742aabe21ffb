"""SIGTERM: players are told the server is restarting before their sockets close, and it exits cleanly."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from crisp_server.remote.client import CrispClient
from tests.e2e.procs import server_process


async def test_sigterm_tells_every_player_and_exits_cleanly(tmp_path: Path) -> None:
    with server_process(tmp_path) as (base, proc):
        url = base.replace("http", "ws") + "/ws"
        async with CrispClient.connect(url) as ana, CrispClient.connect(url) as ben:
            code = await ana.create("Ana")
            await ben.join(code, "Ben")
            proc.send_signal(signal.SIGTERM)
            for client in (ana, ben):
                await client.wait_for(lambda c: c.closed is not None, timeout=10, what="the close")
                assert any(m["type"] == "restarting" for m in client.messages)
                assert client.closed is not None
                assert client.closed.rcvd is not None
                assert client.closed.rcvd.code == 1012
        returncode = await asyncio.to_thread(proc.wait, 15)
        output = proc.stdout.read().decode() if proc.stdout else ""
        # A clean stop exits 0: uvicorn would raise the signal again after its graceful shutdown, and
        # `docker ps` would show "Exited (143)", which reads as a crash.
        assert returncode == 0, output
        assert "Finished server process" in output
        assert "Traceback" not in output
        assert "ERROR" not in output  # e.g. the checkpoint process the shutdown ended (issue 15)


async def test_ctrl_c_on_an_idle_server_exits_0(tmp_path: Path) -> None:
    with server_process(tmp_path) as (_base, proc):
        proc.send_signal(signal.SIGINT)
        returncode = await asyncio.to_thread(proc.wait, 15)
        output = proc.stdout.read().decode() if proc.stdout else ""
        assert returncode == 0, output
        assert "Finished server process" in output
        assert "Traceback" not in output
