"""The bots are pure and blind: they import a few standard-library modules, the card values, the server's
texts (words for the hints, no knowledge of a game) and their own files, nothing of the rooms, the web layer,
the store or the engine's game state, and do no I/O. Randomness is only ever a generator they are handed
(``random.Random``, never the module's functions). This reads the package's source; it does not import it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

BOTS = Path(__file__).resolve().parents[2] / "crisp_server" / "bots"

ALLOWED: Final = frozenset(
    {"__future__", "collections", "collections.abc", "dataclasses", "enum", "functools", "itertools", "math", "typing"}
)
#: The engine's plain value types: card codes and values. Its game state, views and events are not allowed.
ENGINE_VALUES: Final = frozenset({"crisp_server.engine.cards"})
#: The server's texts in each language (the hints' words): data, no game state.
TEXTS: Final = frozenset({"crisp_server.texts"})
FORBIDDEN_CALLS: Final = frozenset({"open", "print", "input", "__import__", "breakpoint", "eval", "exec"})


def _module_problem(module: str, names: list[str]) -> str | None:
    if module == "random":
        return None if names == ["Random"] else f"imports {module} {names}: only the Random type (a seeded generator)"
    if module in ENGINE_VALUES or module in TEXTS:
        return None
    if module.partition(".")[0] == "crisp_server":
        return f"imports {module}: the bots see only what a seat is sent"
    if module not in ALLOWED:
        return f"imports {module}: not in the bots' allow-list"
    return None


def purity_problems(source: str, filename: str = "<source>") -> list[str]:
    """Every impure import or call in ``source``, as ``file:line: what``."""
    problems: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        found: str | None = None
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = found or _module_problem(alias.name, [])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                assert node.module is not None
                found = _module_problem(node.module, [a.name for a in node.names])
            elif node.level > 1:
                found = f"imports {'.' * node.level}{node.module or ''}: outside the bots"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found = f"calls {node.func.id}(): no I/O in the bots"
        if found is not None:
            problems.append(f"{filename}:{getattr(node, 'lineno', 0)}: {found}")
    return problems


BOT_FILES = sorted(BOTS.rglob("*.py"))


def test_the_package_has_files_to_check() -> None:
    assert {"__init__.py", "memory.py", "hard.py", "normal.py", "easy.py", "random_level.py"} <= {
        p.name for p in BOT_FILES
    }


@pytest.mark.parametrize("path", BOT_FILES, ids=lambda p: p.name)
def test_bot_file_is_pure(path: Path) -> None:
    assert purity_problems(path.read_text(encoding="utf-8"), path.name) == []


@pytest.mark.parametrize(
    ("source", "mentions"),
    [
        ("import random\n", "only the Random type"),
        ("from random import choice\n", "only the Random type"),
        ("import time\n", "not in the bots' allow-list"),
        ("import asyncio\n", "not in the bots' allow-list"),
        ("from crisp_server.engine import Game\n", "the bots see only what a seat is sent"),
        ("from crisp_server.engine.views import seat_view\n", "the bots see only what a seat is sent"),
        ("from crisp_server.engine.game import Round\n", "the bots see only what a seat is sent"),
        ("from crisp_server.rooms.room import Room\n", "the bots see only what a seat is sent"),
        ("from crisp_server.web import app\n", "the bots see only what a seat is sent"),
        ("from crisp_server.store import models\n", "the bots see only what a seat is sent"),
        ("from crisp_server.wire.protocol import Join\n", "the bots see only what a seat is sent"),
        ("from ..engine import game\n", "outside the bots"),
        ("def f() -> None:\n    print('x')\n", "calls print()"),
    ],
)
def test_the_checker_reports_an_impure_source(source: str, mentions: str) -> None:
    problems = purity_problems(source, "bad.py")
    assert len(problems) == 1
    assert mentions in problems[0]


def test_the_checker_accepts_what_the_bots_may_use() -> None:
    source = (
        "from __future__ import annotations\n"
        "import math\n"
        "from random import Random\n"
        "from crisp_server.engine.cards import VALUES\n"
        "from crisp_server.texts import Texts, texts\n"
        "from .memory import Memory\n"
    )
    assert purity_problems(source) == []
