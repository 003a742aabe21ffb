"""The real server as a subprocess (``python -m crisp_server``), on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

RIGGED = Path(__file__).resolve().parent / "rigged_server.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def listens(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds the socket listening on ``port`` (Linux's /proc; elsewhere: assumed)."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        return True
    inodes = set()
    for table in tables:
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
                inodes.add(fields[9])
    try:
        links = {os.readlink(f) for f in Path(f"/proc/{pid}/fd").iterdir()}
    except OSError:
        return False
    return any(f"socket:[{inode}]" in links for inode in inodes)


@contextmanager
def server_process(
    data_dir: Path,
    env: dict[str, str] | None = None,
    port: int | None = None,
    rigged: bool = False,
    log: Path | None = None,
    *,
    nofile: int | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Start ``crisp-server`` (its data in ``data_dir``) and wait for ``/healthz``; the base URL and the
    process. ``rigged``: the server deals the decks of ``CRISP_TEST_DECKS`` (see rigged_server.py).
    ``log``: a file for its output (a pipe nobody reads would stop a server that logs much). ``nofile``: its
    descriptor limit (``RLIMIT_NOFILE``, soft and hard), as ``ulimit -n`` would set it."""
    port = port or free_port()
    full_env = {
        **os.environ,
        "CRISP_HOST": "127.0.0.1",
        "CRISP_PORT": str(port),
        "CRISP_DATA_DIR": str(data_dir),
        **(env or {}),
    }
    command = [sys.executable, str(RIGGED)] if rigged else [sys.executable, "-m", "crisp_server", "serve"]
    out = log.open("wb") if log is not None else subprocess.PIPE
    if nofile is not None:  # set in a small Python that then becomes the server (the same process)
        limit = f"import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, {nofile})); "
        command = [sys.executable, "-c", limit + "os.execv(sys.argv[1], sys.argv[1:])", *command]
    proc = subprocess.Popen(command, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                said = proc.stdout.read().decode() if proc.stdout else log.read_text() if log else ""
                raise RuntimeError(f"the server exited with {proc.returncode}:\n{said}")
            try:
                # Healthy, and the listener on the port is this process's: the port was free when chosen, but
                # another program on the machine may take it first (this server then exits, and its health
                # check would have reached the other one).
                if httpx.get(base + "/healthz", timeout=1).status_code == 200 and listens(proc.pid, port):
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("the server did not answer /healthz within 30 s")
            time.sleep(0.1)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        if not isinstance(out, int):
            out.close()
