"""Several server nodes (``CRISP_CLUSTER=true``) on one PostgreSQL database, behind HAProxy, as subprocesses.

HAProxy runs the shipped ``deploy/haproxy.cfg`` unchanged: it is given a first file of its own, a ``global``
section that ``setenv``s the variables the shipped file reads (the frontend's address, the admin socket, each
node's name and address), then the shipped file (``haproxy -W -f env.cfg -f deploy/haproxy.cfg``). Adding a
node rewrites that first file and reloads HAProxy (SIGUSR2 to the master); the shipped file's server line
for that node is enabled by the variable being set, as in production.

Nodes are numbered from 1, as their names: node ``i`` is ``node{i}``, its HAProxy server is the same name.
Every process started here is killed and reaped by :meth:`Cluster.close` (also when a test fails), and
dies with the test process if that is killed (Linux ``PR_SET_PDEATHSIG``, when started from the main
thread).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.conftest import IN_CI
from tests.e2e.procs import listens

ROOT = Path(__file__).resolve().parents[2]
#: The configuration compose.scale.yaml ships; the tests run this very file.
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
#: The shipped file has server lines for this many nodes (1 to 3 always, 4 to 9 when their address is set).
MAX_NODES = 9
HAPROXY_BACKEND = "nodes"


def haproxy_binary() -> str | None:
    """The ``haproxy`` to run: ``CRISP_HAPROXY`` or the one on ``PATH`` (Debian puts it in /usr/sbin)."""
    given = os.environ.get("CRISP_HAPROXY")
    if given:
        return given
    for folder in [*os.environ.get("PATH", "").split(os.pathsep), "/usr/sbin", "/usr/local/sbin"]:
        candidate = Path(folder or ".") / "haproxy"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def require(present: bool, what: str) -> None:
    """Skip the test without ``what`` (PostgreSQL, HAProxy); under CI=true fail it: .ci/run provides both."""
    if present:
        return
    if IN_CI:
        pytest.fail(f"CI=true but {what}: .ci/run installs and starts it")
    pytest.skip(what)


def wait_for(predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> float:
    """Poll ``predicate`` until it holds; the seconds it took. ``TimeoutError`` naming ``what`` after ``timeout``."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)
    return time.monotonic() - start


def tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"({path}: {exc.strerror})"
    return "\n".join(text.splitlines()[-lines:])


#: Log lines that say how a connection or a room ended, besides warnings and errors (see ``notable``).
_NOTABLE = ("WARNING", "ERROR", "closing", "dropping", "handed over", "moved", "lost", "claimed", "refus")


def notable(path: Path, most: int = 200) -> str:
    """The lines of a whole log that say how a connection or a room ended (and every warning and error),
    the last ``most`` of them: a cut at any time of a test shows its cause, not only one in its last lines."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"({path}: {exc.strerror})"
    return "\n".join([line for line in text.splitlines() if any(word in line for word in _NOTABLE)][-most:])


def _free_port(taken: set[int]) -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port not in taken:
            taken.add(port)
            return port


#: prctl(2), looked up here: the child between fork and exec only calls it (no loader, no import).
_PRCTL: Any = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child between fork and exec: SIGKILL when the thread that started it ends (Linux)."""
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _popen(command: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            command,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killed whole at teardown, no terminal's Ctrl-C
            # PDEATHSIG follows the starting thread, not the process: only from the main thread. The hook calls
            # prctl alone (looked up beforehand), so no lock another thread might hold at the fork is needed.
            preexec_fn=_die_with_parent  # noqa: PLW1509
            if _PRCTL is not None and threading.current_thread() is threading.main_thread()
            else None,
        )


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


@dataclass
class Node:
    index: int
    name: str
    port: int
    data_dir: Path
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Cluster:
    """``nodes`` server nodes on the empty PostgreSQL database ``database_url`` (its role owns it), and HAProxy.

    ``lease_seconds``, ``lease_renew_seconds``, ``drain_seconds``: the nodes' ``CRISP_LEASE_SECONDS``,
    ``CRISP_LEASE_RENEW_SECONDS``, ``CRISP_DRAIN_SECONDS`` (short: a test waits for them). ``env``: more
    settings for every node (over the harness's). ``together``: start every node at once (they apply the
    migrations under an advisory lock); False: the first, then the others once it is up. Use it as a context
    manager, or call :meth:`open` and :meth:`close`.
    """

    def __init__(
        self,
        tmp: Path,
        database_url: str,
        nodes: int = 3,
        *,
        lease_seconds: float = 3,
        lease_renew_seconds: float = 0.5,
        drain_seconds: float = 10,
        env: Mapping[str, str] | None = None,
        together: bool = True,
        startup_timeout: float = 60,
    ) -> None:
        if not 1 <= nodes <= MAX_NODES:
            raise ValueError(f"1 to {MAX_NODES} nodes (the server lines of {HAPROXY_CFG.name})")
        self.tmp = tmp
        self.database_url = database_url
        self.together = together
        self.startup_timeout = startup_timeout
        self.common_env: dict[str, str] = {
            "CRISP_HOST": "127.0.0.1",
            "CRISP_CLUSTER": "true",
            "CRISP_DATABASE_URL": database_url,
            "CRISP_LEASE_SECONDS": f"{lease_seconds:g}",
            "CRISP_LEASE_RENEW_SECONDS": f"{lease_renew_seconds:g}",
            "CRISP_DRAIN_SECONDS": f"{drain_seconds:g}",
            # Every test client comes from 127.0.0.1 (HAProxy forwards it): no look-up limit for the tests.
            "CRISP_LOOKUP_BURST": "100000",
            "CRISP_LOOKUP_PER_MINUTE": "100000",
            # Behind HAProxy, as docs/hosting.md's "Behind a reverse proxy" says (HAProxy is on loopback).
            "CRISP_PROXY_HEADERS": "true",
            "CRISP_FORWARDED_ALLOW_IPS": "127.0.0.1",
            "CRISP_LOG_LEVEL": "info",
            **(env or {}),
        }
        self._ports: set[int] = set()
        self.nodes: dict[int, Node] = {}
        for _ in range(nodes):
            self._new_node()
        # HAProxy's files: a short folder if the test's is too long for a unix socket's path (108 bytes).
        self.haproxy_dir = tmp / "haproxy"
        self._short_dir: str | None = None
        if len(str(self.haproxy_dir / "admin.sock")) > 100:
            self._short_dir = tempfile.mkdtemp(prefix="crisp-ha-")
            self.haproxy_dir = Path(self._short_dir)
        self.haproxy_port = _free_port(self._ports)
        self.haproxy_env_cfg = self.haproxy_dir / "env.cfg"
        self.haproxy_pidfile = self.haproxy_dir / "haproxy.pid"
        self.haproxy_socket = self.haproxy_dir / "admin.sock"
        self.haproxy_log = tmp / "haproxy.log"
        self.haproxy: subprocess.Popen[bytes] | None = None
        self._http: httpx.Client | None = None
        self._closed = False

    # --- addresses -----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """HAProxy's base URL (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self.haproxy_port}"

    @property
    def ws_url(self) -> str:
        """The WebSocket through HAProxy (``ws://127.0.0.1:PORT/ws``); add ``?room=CODE`` for a room's."""
        return f"ws://127.0.0.1:{self.haproxy_port}/ws"

    def room_ws_url(self, code: str) -> str:
        return f"{self.ws_url}?room={code}"

    def node_url(self, i: int) -> str:
        """Node ``i``'s own base URL, past HAProxy."""
        return self.nodes[i].url

    def node_name(self, i: int) -> str:
        return self.nodes[i].name

    def index_of(self, name: str) -> int:
        return next(i for i, node in self.nodes.items() if node.name == name)

    def pid(self, i: int) -> int:
        proc = self.nodes[i].proc
        assert proc is not None, f"node{i} was never started"
        return proc.pid

    def running(self, i: int) -> bool:
        return self.nodes[i].running()

    # --- life ----------------------------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def open(self) -> None:
        """Start the nodes, wait until each is up, then HAProxy, and wait until it routes to every node."""
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.haproxy_dir.mkdir(parents=True, exist_ok=True)
        indexes = sorted(self.nodes)
        if self.together:
            self._start_nodes(indexes)
        else:
            # The first node applies the migrations alone; the others start together once it is up.
            self._start_nodes(indexes[:1])
            self._start_nodes(indexes[1:])
        self._start_haproxy()

    def close(self) -> None:
        """Kill every node and HAProxy (its workers too) and reap them; remove HAProxy's short folder."""
        if self._closed:
            return
        self._closed = True
        if self._http is not None:
            self._http.close()
        problems: list[str] = []
        for node in self.nodes.values():
            if node.proc is not None:
                self._kill_group(node.proc, signal.SIGKILL)
        if self.haproxy is not None:
            # SIGTERM: the master stops its workers (old ones from reloads too) and exits once they have.
            self._kill_group(self.haproxy, signal.SIGTERM, grace=5)
            with contextlib.suppress(OSError):
                self.haproxy_socket.unlink()
        for proc in [*(n.proc for n in self.nodes.values()), self.haproxy]:
            if proc is not None and not _group_gone(proc.pid):
                problems.append(f"process group {proc.pid} still has processes")
        if self._short_dir is not None:
            for item in Path(self._short_dir).iterdir():
                with contextlib.suppress(OSError):
                    item.unlink()
            with contextlib.suppress(OSError):
                os.rmdir(self._short_dir)
        if problems:
            raise RuntimeError("; ".join(problems))

    @staticmethod
    def _kill_group(proc: subprocess.Popen[bytes], sig: signal.Signals, grace: float = 0) -> None:
        """SIGKILL ``proc``'s process group (its own, made at start); with another ``sig``, first send that to
        ``proc`` alone (HAProxy's master then stops its workers and reaps them) and wait ``grace`` seconds."""
        if proc.poll() is None and sig != signal.SIGKILL:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
                proc.send_signal(signal.SIGCONT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it left behind
        proc.wait(10)
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: _group_gone(proc.pid), 5, f"process group {proc.pid}")

    # --- nodes ---------------------------------------------------------------------------------------

    def _new_node(self) -> Node:
        i = len(self.nodes) + 1
        if i > MAX_NODES:
            raise ValueError(f"{HAPROXY_CFG.name} has server lines for {MAX_NODES} nodes")
        node = Node(
            index=i,
            name=f"node{i}",
            port=_free_port(self._ports),
            data_dir=self.tmp / f"node{i}",
            log=self.tmp / f"node{i}.log",
        )
        self.nodes[i] = node
        return node

    def _node_env(self, node: Node) -> dict[str, str]:
        return {
            **os.environ,
            **self.common_env,
            "CRISP_NODE": node.name,
            "CRISP_PORT": str(node.port),
            "CRISP_DATA_DIR": str(node.data_dir),
            **node.env,
        }

    def _start_nodes(self, indexes: list[int]) -> None:
        for i in indexes:
            node = self.nodes[i]
            if node.running():
                raise RuntimeError(f"{node.name} is running")
            node.data_dir.mkdir(parents=True, exist_ok=True)
            with node.log.open("ab") as log:
                log.write(f"==== harness: starting {node.name} on port {node.port} ====\n".encode())
            node.proc = _popen([sys.executable, "-m", "crisp_server", "serve"], self._node_env(node), node.log)
        for i in indexes:
            self.wait_up(i)

    def wait_up(self, i: int, timeout: float | None = None) -> float:
        """Wait until node ``i`` answers its own ``/healthz`` with 200 and the port's listener is its own."""
        node = self.nodes[i]
        proc = node.proc
        assert proc is not None

        def up() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"{node.name} exited with {proc.returncode}:\n{tail(node.log, 40)}")
            try:
                healthy = httpx.get(node.url + "/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False
            # The port was free when chosen, but another program may take it first: it must be this process's.
            return healthy and listens(proc.pid, node.port)

        try:
            return wait_for(up, timeout or self.startup_timeout, f"{node.name} up", interval=0.1)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\n{tail(node.log, 40)}") from None

    def start(self, i: int, env: Mapping[str, str] | None = None) -> None:
        """Start node ``i`` again (same name, port and data folder; its log goes on), and wait until it is up.
        ``env``: settings for this node from now on (over the cluster's)."""
        if env:
            self.nodes[i].env.update(env)
        self._start_nodes([i])

    def kill(self, i: int) -> None:
        """SIGKILL node ``i`` and reap it."""
        proc = self.nodes[i].proc
        assert proc is not None
        self._kill_group(proc, signal.SIGKILL)

    def stop(self, i: int) -> None:
        """SIGSTOP node ``i``: frozen, its sockets open (as a node that hangs)."""
        os.kill(self.pid(i), signal.SIGSTOP)

    def cont(self, i: int) -> None:
        """SIGCONT node ``i``."""
        os.kill(self.pid(i), signal.SIGCONT)

    def terminate(self, i: int, timeout: float | None = None) -> int:
        """SIGTERM node ``i`` (it drains) and wait until it exits; its exit status. ``TimeoutError`` after
        ``timeout`` (default: the drain time and 20 s), the node then left running for the test to inspect."""
        proc = self.nodes[i].proc
        assert proc is not None
        proc.send_signal(signal.SIGTERM)
        if timeout is None:
            timeout = float(self.common_env["CRISP_DRAIN_SECONDS"]) + 20
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"node{i} did not exit within {timeout:g} s of SIGTERM") from None

    def add_node(self, env: Mapping[str, str] | None = None) -> int:
        """Start one more node, wait until it is up, add it to HAProxy (the shipped file's next server line)
        with a graceful reload, and wait until HAProxy sees it up; its index."""
        node = self._new_node()
        if env:
            node.env.update(env)
        self._start_nodes([node.index])
        self.reload_haproxy()
        self.wait_state(node.index, "UP", 10)
        return node.index

    def logs(self, i: int) -> str:
        """Everything node ``i`` wrote (all its runs)."""
        return self.nodes[i].log.read_text(errors="replace")

    def haproxy_logs(self) -> str:
        return self.haproxy_log.read_text(errors="replace") if self.haproxy_log.exists() else ""

    def tails(self, lines: int = 60) -> str:
        """The end of every log, and what the nodes' whole logs say of how connections and rooms ended, for a
        failed test's report."""
        parts = [f"---- {node.name} ({node.url}) ----\n{tail(node.log, lines)}" for node in self.nodes.values()]
        parts += [
            f"---- {node.name}: how connections and rooms ended ----\n{notable(node.log)}"
            for node in self.nodes.values()
        ]
        parts.append(f"---- haproxy ({self.url}) ----\n{tail(self.haproxy_log, lines)}")
        return "\n".join(parts)

    # --- HAProxy -------------------------------------------------------------------------------------

    def _write_haproxy_env(self) -> None:
        lines = [
            "# Written by tests/cluster/harness.py: the variables deploy/haproxy.cfg reads.",
            "global",
            f"    setenv CRISP_LISTEN 127.0.0.1:{self.haproxy_port}",
            f'    setenv CRISP_HAPROXY_SOCKET "{self.haproxy_socket}"',
        ]
        for i, node in sorted(self.nodes.items()):
            lines += [
                f"    setenv CRISP_NODE{i}_NAME {node.name}",
                f"    setenv CRISP_NODE{i}_ADDR 127.0.0.1:{node.port}",
            ]
        temporary = self.haproxy_env_cfg.with_suffix(".new")
        temporary.write_text("\n".join(lines) + "\n")
        temporary.replace(self.haproxy_env_cfg)

    def haproxy_command(self, *options: str) -> list[str]:
        """``haproxy -f <the variables> -f deploy/haproxy.cfg`` with ``options``."""
        binary = haproxy_binary()
        if binary is None:
            raise RuntimeError("no haproxy (apt-get install haproxy, or CRISP_HAPROXY=/path/to/haproxy)")
        return [binary, "-f", str(self.haproxy_env_cfg), "-f", str(HAPROXY_CFG), *options]

    def check_haproxy_config(self) -> str:
        """``haproxy -c`` on the files it runs; its output (``RuntimeError`` if it finds them invalid)."""
        self.haproxy_dir.mkdir(parents=True, exist_ok=True)
        self._write_haproxy_env()
        command = self.haproxy_command("-c")
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"haproxy -c: {done.returncode}\n{done.stdout}{done.stderr}")
        return done.stdout + done.stderr

    def _start_haproxy(self) -> None:
        self._write_haproxy_env()
        # -W: master-worker (a reload is SIGUSR2 to the master), -db: in the foreground, as the image runs it.
        command = self.haproxy_command("-W", "-db", "-p", str(self.haproxy_pidfile))
        self.haproxy = _popen(command, os.environ, self.haproxy_log)
        try:
            wait_for(self._haproxy_ready, 20, "HAProxy routing to every node", interval=0.1)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\n{tail(self.haproxy_log, 40)}") from None

    def _haproxy_ready(self) -> bool:
        assert self.haproxy is not None
        if self.haproxy.poll() is not None:
            raise RuntimeError(f"haproxy exited with {self.haproxy.returncode}:\n{tail(self.haproxy_log, 40)}")
        if not any(listens(pid, self.haproxy_port) for pid in [self.haproxy.pid, *_children(self.haproxy.pid)]):
            return False
        try:
            states = self.server_states()
            if self.haproxy_workers() != 1:
                return False
            healthy = httpx.get(self.url + "/healthz", timeout=2).status_code == 200
        except (OSError, httpx.HTTPError):
            return False
        running = {node.name for node in self.nodes.values() if node.running()}
        return healthy and all(states.get(name) == "UP" for name in running)

    @property
    def haproxy_pid(self) -> int:
        """HAProxy's master process (what ``-p`` wrote)."""
        assert self.haproxy is not None
        return self.haproxy.pid

    def haproxy_workers(self) -> int:
        """How many worker processes the master has now (more than one for a while after a reload)."""
        return len(_children(self.haproxy_pid))

    def reload_haproxy(self) -> None:
        """Write HAProxy's variables for the current nodes and reload it gracefully (SIGUSR2 to the master):
        the new worker takes new connections, the old one keeps its WebSockets for a while. Waits until the
        new worker answers with every running node's server in its backend."""
        self._write_haproxy_env()
        # A kept-alive connection would go on with the old worker (and its old servers) for a while.
        if self._http is not None:
            self._http.close()
            self._http = None
        before = set(_children(self.haproxy_pid))
        os.kill(self.haproxy_pid, signal.SIGUSR2)
        names = {node.name for node in self.nodes.values()}

        def reloaded() -> bool:
            assert self.haproxy is not None
            if self.haproxy.poll() is not None:
                raise RuntimeError(f"haproxy exited on reload:\n{tail(self.haproxy_log, 40)}")
            workers = set(_children(self.haproxy_pid))
            if not workers - before:
                return False
            # The old worker stops listening once the new one is ready (it keeps its WebSockets a while).
            if any(listens(pid, self.haproxy_port) for pid in workers & before):
                return False
            try:
                return names <= set(self.server_states())
            except OSError:
                return False

        try:
            wait_for(reloaded, 20, "HAProxy reloaded", interval=0.1)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\n{tail(self.haproxy_log, 40)}") from None

    def admin(self, command: str) -> str:
        """One command on HAProxy's admin socket (``show stat``, ``disable server nodes/node2``, ...)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(self.haproxy_socket))
            s.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def server_states(self) -> dict[str, str]:
        """HAProxy's view of each node: server name to ``UP``, ``DOWN``, ``UP 1/2`` (going down), ``MAINT``..."""
        lines = self.admin("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        px, sv, status = header.index("pxname"), header.index("svname"), header.index("status")
        states: dict[str, str] = {}
        for line in lines[1:]:
            fields = line.split(",")
            if len(fields) > status and fields[px] == HAPROXY_BACKEND and fields[sv] not in ("BACKEND", "FRONTEND"):
                states[fields[sv]] = fields[status]
        return states

    def wait_state(self, i: int, state: str, timeout: float) -> float:
        """Wait until HAProxy holds node ``i`` to be ``state`` (``UP``, ``DOWN``); the seconds it took."""
        name = self.nodes[i].name
        try:
            return wait_for(lambda: self.server_states().get(name) == state, timeout, f"HAProxy: {name} {state}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc} (now {self.server_states().get(name)})") from None

    # --- what the cluster says -------------------------------------------------------------------------

    @property
    def http(self) -> httpx.Client:
        """An HTTP client on HAProxy, kept alive (HAProxy balances each request on its own, not the connection)."""
        if self._http is None:
            self._http = httpx.Client(base_url=self.url, timeout=5)
        return self._http

    def served_by(self, room: str | None = None, path: str = "/healthz", timeout: float = 5) -> str | None:
        """The node that answers ``path?room=ROOM`` through HAProxy (hashed as ``/ws?room=ROOM`` is): the
        ``node`` of its ``/healthz``, else HAProxy's ``X-Served-By``. None if no node answered 200 within
        ``timeout``."""
        params = {"room": room} if room is not None else None
        try:
            response = self.http.get(path, params=params, timeout=timeout)
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        header = response.headers.get("x-served-by")
        body: Any = response.json() if path == "/healthz" else None
        node = body.get("node") if isinstance(body, dict) else None
        if node is not None and header is not None and node != header:
            raise AssertionError(f"/healthz says {node}, HAProxy's X-Served-By {header}")
        return str(node) if node is not None else header

    def owners(self) -> dict[str, str]:
        """``room_owners`` rows with a live lease: room code to node name."""
        rows = self.query(
            "SELECT code, node FROM room_owners WHERE node IS NOT NULL AND expires_at > now() ORDER BY code"
        )
        return {str(row["code"]): str(row["node"]) for row in rows}

    def query(self, sql: str, *args: Any) -> list[Mapping[str, Any]]:
        """Rows of one statement on the cluster's database (asyncpg, in a thread of its own: callers may be in
        an event loop)."""

        async def run() -> list[Mapping[str, Any]]:
            import asyncpg

            url = make_url(self.database_url)
            conn = await asyncpg.connect(
                user=url.username,
                password=url.password,
                host=url.host,
                port=url.port or 5432,
                database=url.database,
            )
            try:
                return [dict(row) for row in await conn.fetch(sql, *args)]
            finally:
                await conn.close()

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, run()).result()

    def has_table(self, name: str) -> bool:
        return bool(self.query("SELECT to_regclass($1) IS NOT NULL AS present", name)[0]["present"])
