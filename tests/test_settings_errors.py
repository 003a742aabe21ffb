"""A wrong setting stops the server with one line per problem, naming its variable, and exit status 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("env", "lines"),
    [
        (
            {"CRISP_CLUSTER": "true"},
            ["crisp-server: CRISP_CLUSTER needs PostgreSQL: set CRISP_DATABASE_URL=postgresql://"],
        ),
        (
            {"CRISP_PORT": "abc", "CRISP_LEASE_SECONDS": "0"},
            ["crisp-server: CRISP_PORT: Input should be a valid integer", "crisp-server: CRISP_LEASE_SECONDS: "],
        ),
        (
            {"CRISP_COMMIT_INTERVAL_MS": "-1"},
            ["crisp-server: CRISP_COMMIT_INTERVAL_MS: Input should be greater than or equal to 0"],
        ),
        (
            {
                "CRISP_CLUSTER": "1",
                "CRISP_DATABASE_URL": "postgresql://u@127.0.0.1:1/d",
                "CRISP_LEASE_SECONDS": "4",
                "CRISP_LEASE_RENEW_SECONDS": "3",
            },
            ["crisp-server: CRISP_LEASE_RENEW_SECONDS must be at most half of CRISP_LEASE_SECONDS"],
        ),
        ({"CRISP_NATIVE": "maybe"}, ["crisp-server: CRISP_NATIVE must be auto, off or require, not 'maybe'"]),
        *(
            (
                {"CRISP_DATABASE_URL": url},
                ["crisp-server: CRISP_DATABASE_URL: not a database URL the server speaks: sqlite:///"],
            )
            for url in ("mysql://u@h/db", "notaurl", "postgresql://")
        ),
    ],
)
@pytest.mark.parametrize("command", ["serve", "migrate"])
def test_a_wrong_setting_is_one_line_and_exit_2(env: dict[str, str], lines: list[str], command: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CRISP_") and k != "PORT"}
    done = subprocess.run(
        [sys.executable, "-m", "crisp_server", command],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == len(lines), said
    for line, start in zip(said, lines, strict=True):
        assert line.startswith(start), said
    assert "Traceback" not in done.stderr
