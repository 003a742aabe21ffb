"""Every command the documents show works as written after the README's quick start.

The README's quick start makes ``.venv`` and says how to put its ``bin`` folder on ``PATH``
(``. .venv/bin/activate``); the documents' commands are written for such a shell, in the checkout's folder.
This test reads that setup from the README itself: where the README does not activate the environment, only
the system's ``PATH`` is there, and ``crisp-server`` or ``alembic`` is "command not found", as a host who
followed the README met it. The checkout's environment is the one running the tests (``sys.prefix``: in CI,
the ``.venv`` that ``./scripts/test`` made).

Every shell line of a ``sh``/``bash`` code block in README.md and docs/*.md is split into its simple commands
(``&&``, ``;``, ``|``, ``&``), and each command's program must be found the way the line names it: the
project's commands on the documented ``PATH`` (``crisp-server``'s arguments must also parse), scripts and
benchmarks as files of the checkout, the system's tools on the system's ``PATH``. :data:`RUN` lists the lines
that are also run, in a scratch folder (a data folder, ``/srv/crisp`` made there): the backup, the cron job
(with cron's bare ``PATH``), the restore, the Alembic downgrade, ``crisp-server --help`` and each way of
starting the server (each on a free port, until ``/healthz`` answers and ``SIGTERM`` stops it with status 0).
:data:`HOSTS_OWN` lists, with why, the programs CI does not have or cannot run (Docker, HAProxy in the
foreground, PostgreSQL's tools against a named server). Inline commands in the prose (``crisp-server
migrate``, ``./scripts/serve --host 0.0.0.0``) are checked for their program and subcommand.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from crisp_server.__main__ import build_parser
from tests.test_docs import prose_lines

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_FENCES = {"sh", "bash", "shell"}
#: The checkout's environment (``.venv`` in the documents).
VENV = Path(sys.prefix)
#: Where the documents' examples put a checkout (systemd, cron).
EXAMPLE_CHECKOUT = "/srv/crisp"

#: The programs that are the host's own, not the project's, and why CI neither runs nor looks for them.
HOSTS_OWN = {
    "docker": "Docker is not installed where the tests run; the image is built and run by the container "
    "smoke test, and its commands' flags are Docker's",
    "haproxy": "cluster.md's HAProxy runs in the foreground in front of three nodes; tests/cluster runs the "
    "same deploy/haproxy.cfg",
    "pg_dump": "PostgreSQL's client, against the server named in the line (db-host)",
    "pg_restore": "PostgreSQL's client, against the server named in the line (db-host)",
}
#: The system's tools the documents use as a shell has them.
SYSTEM = {"date", "find", "cd", "export", "for", "done"}

#: Shell words that only start or end a compound command.
KEYWORDS = {"do", "then", "else", "{"}


@dataclass(frozen=True)
class Line:
    doc: Path
    number: int
    text: str

    def __str__(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.number}: {self.text}"


def shell_lines(doc: Path) -> Iterator[Line]:
    """The shell lines of ``doc``'s ``sh``/``bash`` code blocks, a ``\\`` continuation joined, comments and
    blank lines left out."""
    fence: str | None = None
    pending = ""
    start = 0
    for number, line in enumerate(doc.read_text().splitlines(), start=1):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```"):
                fence = stripped[3:].strip() or "text"
            continue
        if stripped.startswith("```"):
            fence = None
            continue
        if fence not in SHELL_FENCES or (not pending and (not stripped or stripped.startswith("#"))):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\") and not stripped.endswith("\\\\"):
            pending += stripped[:-1] + " "
            continue
        yield Line(doc, start, re.sub(r"\s+#\s.*$", "", pending + stripped))  # its comment left out
        pending = ""


def all_shell_lines() -> list[Line]:
    return [line for doc in DOCUMENTS for line in shell_lines(doc)]


CRON = re.compile(r"^(?:[\d*/,-]+\s+){5}(?P<command>.*)$")


def as_shell(text: str) -> str:
    """A crontab line's command as the shell gets it (cron turns ``\\%`` into ``%``); others as they are."""
    cron = CRON.match(text)
    return cron["command"].replace("\\%", "%") if cron else text


def commands(text: str) -> list[list[str]]:
    """The simple commands of a shell line: each a list of words, its leading ``NAME=value`` assignments and a
    compound command's keywords left out."""
    # A command substitution, $(date +%F), is one word's part here: what it runs is the system's.
    plain = re.sub(r"\$\([^)]*\)", "SUBSTITUTED", as_shell(text))
    lexer = shlex.shlex(plain, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    found: list[list[str]] = []
    words: list[str] = []
    redirect = False
    for token in lexer:
        if token and set(token) <= set(";&|"):
            found.append(words)
            words = []
            continue
        if token and set(token) <= set("<>"):
            redirect = True  # the next word is a file
            continue
        if redirect:
            redirect = False
            continue
        words.append(token)
    found.append(words)
    out = []
    for simple in found:
        first = 0
        while first < len(simple) and (
            re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", simple[first]) or simple[first] in KEYWORDS
        ):
            first += 1
        if simple[first:]:
            out.append(simple[first:])
    return out


def documented_path() -> dict[str, str]:
    """The environment of a shell set up as the README's quick start says: the system's ``PATH`` (without any
    virtual environment), and the checkout's ``.venv/bin`` first if the quick start activates it."""
    venvs = {str(VENV / "bin")}
    if os.environ.get("VIRTUAL_ENV"):
        venvs.add(str(Path(os.environ["VIRTUAL_ENV"]) / "bin"))
    system = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p not in venvs]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PATH")}
    env["PATH"] = os.pathsep.join(system)
    if activates(ROOT / "README.md"):
        env["VIRTUAL_ENV"] = str(VENV)
        env["PATH"] = os.pathsep.join([str(VENV / "bin"), *system])
    return env


def activates(readme: Path) -> bool:
    """Whether the README's quick start activates ``.venv`` in a shell line (``. .venv/bin/activate``)."""
    text = readme.read_text()
    quick = text.split("## Quick start", 1)[-1].split("\n## ", 1)[0]
    shown = [as_shell(line.text) for line in shell_lines(readme) if line.text in quick]
    return any(re.match(r"^(\.|source)\s+\.venv/bin/activate(\s|$)", line) for line in shown)


def problem(words: list[str], env: dict[str, str]) -> str | None:
    """Why the simple command ``words`` would not run as written in the documented shell, or ``None``."""
    program = words[0]
    if program in HOSTS_OWN or program in SYSTEM:
        return None
    if program in (".", "source"):  # activating an environment: the file must be there
        sourced = words[1] if len(words) > 1 else ""
        script = VENV / sourced.removeprefix(".venv/") if sourced.startswith(".venv/") else ROOT / sourced
        return None if script.is_file() else f"{sourced}: no such file"
    if program.startswith(f"{EXAMPLE_CHECKOUT}/"):  # a checkout in /srv/crisp: this one
        program = program.removeprefix(f"{EXAMPLE_CHECKOUT}/")
    if program.startswith(".venv/"):  # the checkout's environment, named by its path
        found = VENV / program.removeprefix(".venv/")
        return None if os.access(found, os.X_OK) else f"{found} is not an executable"
    if program.startswith("./"):
        script = ROOT / program
        return None if os.access(script, os.X_OK) else f"{program} is not an executable of the checkout"
    if "/" in program:
        return f"{program}: a path outside the checkout"
    if shutil.which(program, path=env["PATH"]) is None:
        return f"{program}: command not found (PATH={env['PATH']})"
    if program == "crisp-server":
        return unparsable(words[1:])
    if program == "python":
        if words[1:2] == ["-m"] and words[2:3] == ["crisp_server"]:
            return unparsable(words[3:])
        if words[1:2] == ["-m"]:  # a module of the environment (its python runs this test)
            module = words[2] if len(words) > 2 else ""
            return None if importlib.util.find_spec(module) is not None else f"python -m {module}: no such module"
        named = next((w for w in words[1:] if not w.startswith("-")), None)
        if named is not None and not (ROOT / named).is_file():
            return f"python {named}: no such file in the checkout"
    if program == "alembic" and not (ROOT / "alembic.ini").is_file():
        return "alembic: no alembic.ini in the checkout"
    return None


def unparsable(args: list[str]) -> str | None:
    """Why ``crisp-server`` would refuse ``args``, or ``None``; a usage template's optional parts
    (``[--name NAME]``) are left out."""
    argv: list[str] = []
    optional = False
    for word in args:
        optional = optional or word.startswith("[")
        if not optional:
            argv.append(word)
        optional = optional and not word.endswith("]")
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv.insert(0, "serve")
    if argv[0] in ("-h", "--help"):
        return None
    try:
        build_parser().parse_args(argv)
    except SystemExit:
        return f"crisp-server refuses {' '.join(argv)!r}"
    return None


# -- the lines that run ----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Scratch:
    """A scratch folder the documented lines run in: ``data/`` with a migrated database, and
    ``srv/crisp`` standing for the documents' checkout (its ``.venv`` the tests' environment)."""

    dir: Path
    env: dict[str, str]

    @property
    def checkout(self) -> Path:
        return self.dir / EXAMPLE_CHECKOUT.lstrip("/")

    def rewrite(self, text: str) -> str:
        return text.replace(EXAMPLE_CHECKOUT, str(self.checkout))

    def bash(self, text: str, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["bash", "-c", self.rewrite(as_shell(text))],
            cwd=cwd or self.dir,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{text}\nexit {done.returncode}\n{done.stdout}{done.stderr}"
        return done.stdout


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Scratch:
    folder = tmp_path_factory.mktemp("docs")
    env = {**documented_path(), "CRISP_DATA_DIR": str(folder / "data")}
    env.pop("CRISP_DATABASE_URL", None)
    made = Scratch(folder, env)
    made.checkout.mkdir(parents=True)
    (made.checkout / ".venv").symlink_to(VENV)
    for data in (folder / "data", made.checkout / "data"):
        subprocess.run(
            [sys.executable, "-m", "crisp_server", "migrate"],
            env={**env, "CRISP_DATA_DIR": str(data)},
            check=True,
            capture_output=True,
            timeout=120,
        )
    return made


def run_help(scratch: Scratch, line: Line) -> None:
    out = scratch.bash(line.text)
    assert "--host HOST" in out
    assert "--port PORT" in out


def run_backup(scratch: Scratch, line: Line) -> None:
    out = scratch.bash(line.text)
    copied = re.match(rf"backed up {re.escape(str(scratch.dir / 'data' / 'crisp.sqlite3'))} to (\S+): ", out)
    assert copied is not None, out
    with sqlite3.connect(scratch.dir / copied[1]) as db:  # in backups/, which the command made
        assert db.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)


def run_cron(scratch: Scratch, line: Line) -> None:
    """As cron runs it: ``sh`` with cron's bare ``PATH`` and nothing activated."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch.dir), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        ["sh", "-c", scratch.rewrite(as_shell(line.text))],
        cwd=scratch.dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
    assert len(list((scratch.checkout / "backups").glob("crisp-*.sqlite3"))) == 1


def run_restore(scratch: Scratch, line: Line) -> None:
    named = re.search(r"backups/crisp-[\d-]+\.sqlite3", line.text)
    assert named is not None
    taken = next((scratch.dir / "backups").glob("crisp-*.sqlite3"), None)
    if taken is None:
        scratch.bash(f"crisp-server backup {named[0]}")
    elif taken.name != Path(named[0]).name:
        shutil.copy(taken, scratch.dir / named[0])
    out = scratch.bash(line.text)
    assert out.startswith(f"restored {named[0]} (schema revision "), out


def run_alembic(scratch: Scratch, line: Line) -> None:
    """In the checkout's folder (its ``alembic.ini``), on the scratch checkout's database."""
    scratch.bash(line.text, cwd=ROOT)
    with sqlite3.connect(scratch.checkout / "data" / "crisp.sqlite3") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("0003",)]


def run_server(scratch: Scratch, line: Line) -> None:
    """The line starts the server: on a free port (its ``--port`` replaced, else ``CRISP_PORT``), until
    ``/healthz`` answers; ``SIGTERM`` then stops it with exit status 0."""
    port = free_port()
    text = re.sub(r"--port \d+", f"--port {port}", line.text)
    # exec after the line's own assignments: the server is the process that gets the SIGTERM
    text = re.sub(r"^((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)", r"\1exec ", text)
    env = {**scratch.env, "CRISP_PORT": str(port)}
    proc = subprocess.Popen(
        ["bash", "-c", scratch.rewrite(text)],
        cwd=scratch.dir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                said = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"{line}: exited {proc.returncode}\n{said}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"{line}: no /healthz within 60 s"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, f"{line}: exit status {proc.returncode}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


#: The documented lines run as written (exactly this text), in the order given, and what each must do.
RUN = {
    "crisp-server --help": run_help,
    "crisp-server backup backups/crisp-$(date +%F).sqlite3": run_backup,
    "crisp-server restore backups/crisp-2026-12-04.sqlite3": run_restore,
    "0 4 * * * cd /srv/crisp && CRISP_DATA_DIR=/srv/crisp/data /srv/crisp/.venv/bin/crisp-server backup "
    "backups/crisp-$(date +\\%F).sqlite3 && find backups -name 'crisp-*.sqlite3' -mtime +14 -delete": run_cron,
    "CRISP_DATA_DIR=/srv/crisp/data alembic downgrade 0003": run_alembic,
    "crisp-server": run_server,
    "crisp-server --host 0.0.0.0 --port 8080": run_server,
    "CRISP_PUBLIC_URL=https://crisp.example.org CRISP_PROXY_HEADERS=true crisp-server": run_server,
    "CRISP_PUBLIC_URL=https://crisp.example.org CRISP_PROXY_HEADERS=true CRISP_FORWARDED_ALLOW_IPS=127.0.0.1 "
    "crisp-server": run_server,
}


def test_the_quick_start_puts_the_environment_on_the_path() -> None:
    assert activates(ROOT / "README.md"), (
        "README's quick start must show `. .venv/bin/activate`: the documents' commands are written for it"
    )


@pytest.mark.parametrize("line", all_shell_lines(), ids=str)
def test_each_documented_command_is_found_as_written(line: Line) -> None:
    env = documented_path()
    problems = [p for words in commands(line.text) if (p := problem(words, env)) is not None]
    assert not problems, f"{line}\n" + "\n".join(problems)


def test_every_line_that_runs_is_still_documented() -> None:
    shown = {as_shell(line.text) for line in all_shell_lines()} | {line.text for line in all_shell_lines()}
    missing = [text for text in RUN if text not in shown and as_shell(text) not in shown]
    assert not missing, f"lines this test runs that no document shows any more: {missing}"


@pytest.mark.parametrize("text", list(RUN), ids=lambda t: t[:60])
def test_the_documented_line_runs(text: str, scratch: Scratch) -> None:
    line = next((line for line in all_shell_lines() if line.text == text), None)
    if line is None:
        pytest.fail(f"no document shows {text!r} any more")
    assert activates(ROOT / "README.md") or RUN[text] is run_cron, "the README does not set up the shell"
    RUN[text](scratch, line)


INLINE = re.compile(r"`((?:crisp-server|alembic|\./scripts/[\w.-]+|\.venv/bin/[\w.-]+)(?: [^`]*)?)`")


def test_inline_commands_name_programs_and_subcommands_that_exist() -> None:
    env = documented_path()
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    commands_known = set(sub.choices)
    problems = []
    for doc in DOCUMENTS:
        for number, text in prose_lines(doc.read_text()):
            for found in INLINE.findall(text):
                words = found.split()
                where = f"{doc.relative_to(ROOT)}:{number}: `{found}`"
                if (p := problem(words[:1], env)) is not None:
                    problems.append(f"{where}: {p}")
                elif (
                    words[0] == "crisp-server"
                    and len(words) > 1
                    and not words[1].startswith("-")
                    and words[1] not in (*commands_known, "COMMAND", "...")
                ):
                    problems.append(f"{where}: crisp-server has no command {words[1]!r}")
    assert not problems, "\n".join(problems)


def test_the_docker_commands_name_the_container_the_readme_starts() -> None:
    """backup.md's ``docker exec``, ``docker cp``, ``docker stop``... work on the container README's
    ``docker run --name`` made, without looking up its id."""
    started = {
        words[words.index("--name") + 1]
        for line in shell_lines(ROOT / "README.md")
        for words in commands(line.text)
        if words[:2] == ["docker", "run"] and "--name" in words
    }
    assert len(started) == 1, "README's docker run names its container (--name)"
    used = set()
    for doc in DOCUMENTS:
        for line in shell_lines(doc):
            for words in commands(line.text):
                if words[:2] in (["docker", "exec"], ["docker", "stop"], ["docker", "start"], ["docker", "logs"]):
                    used.add(next(w for w in words[2:] if not w.startswith("-")))
                if words[:2] == ["docker", "cp"]:
                    used.add(words[2].split(":", 1)[0])
    assert used, "the documents show docker commands on the running container"
    assert used == started, f"docker commands use {used}, README's docker run names {started}"
