"""A short run of `crisp-server loadtest` against the real server: games finish, nothing goes wrong."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.procs import server_process


def test_a_short_load_test_plays_games_without_errors(tmp_path: Path) -> None:
    # Every bot comes from 127.0.0.1: the look-up limit per address is for strangers guessing codes.
    env = {"CRISP_LOOKUP_BURST": "10000", "CRISP_LOOKUP_PER_MINUTE": "10000"}
    with server_process(tmp_path, env) as (base, _proc):
        args = ["--url", base, "--rooms", "4", "--players", "3", "--pace", "20", "--crisp", "1", "--duration", "6"]
        run = subprocess.run(
            [sys.executable, "-m", "crisp_server", "loadtest", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert run.returncode == 0, run.stdout + run.stderr
    games = re.search(r"games finished: (\d+)", run.stdout)
    assert games is not None, run.stdout
    assert int(games.group(1)) >= 1, run.stdout
    assert "errors: 0 " in run.stdout
    assert "disconnects: 0" in run.stdout
    assert re.search(r"p99 \d+\.\d", run.stdout), run.stdout


def test_the_load_test_refuses_another_machine() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "crisp_server", "loadtest", "--url", "http://192.0.2.10:8000", "--duration", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2
    assert "--allow-remote" in run.stdout
