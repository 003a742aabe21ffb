"""The engine is pure (docs/development.md): it imports only a few standard-library
modules and its own files, and does no I/O. This reads the engine's source; it does not import it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "crisp_server" / "engine"
ENGINE_PACKAGE: Final = "crisp_server.engine"

#: Standard-library modules the engine may use: data, types and pure computation only.
ALLOWED: Final = frozenset(
    {
        "__future__",
        "collections",
        "collections.abc",
        "dataclasses",
        "enum",
        "functools",
        "itertools",
        "json",
        "math",
        "operator",
        "re",
        "typing",
    }
)
#: Named so that the message says why: clocks, randomness, I/O, the OS, and the server's other layers.
FORBIDDEN: Final = frozenset(
    {
        "asyncio",
        "time",
        "datetime",
        "random",
        "secrets",
        "os",
        "sys",
        "io",
        "socket",
        "pathlib",
        "logging",
        "threading",
        "subprocess",
        "fastapi",
        "sqlalchemy",
        "orjson",
    }
)
#: Built-ins that do I/O (or would smuggle in an import).
FORBIDDEN_CALLS: Final = frozenset({"open", "print", "input", "__import__", "breakpoint"})


def _module_problem(module: str) -> str | None:
    top = module.partition(".")[0]
    if top in FORBIDDEN:
        return f"imports {module}: forbidden in the engine"
    if module == ENGINE_PACKAGE or module.startswith(ENGINE_PACKAGE + "."):
        return None
    if top == "crisp_server":
        return f"imports {module}: the engine imports nothing of the server outside it"
    if module not in ALLOWED:
        return f"imports {module}: not in the engine's allow-list"
    return None


def purity_problems(source: str, filename: str = "<source>") -> list[str]:
    """Every impure import or call in ``source``, as ``file:line: what``; empty when it is pure."""
    problems: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        found: list[str | None] = []
        line = 0
        if isinstance(node, ast.Import):
            line, found = node.lineno, [_module_problem(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            line = node.lineno
            if node.level == 0:
                assert node.module is not None
                found = [_module_problem(node.module)]
            elif node.level > 1:  # from .. import x: above the engine, in crisp_server
                found = [f"imports {'.' * node.level}{node.module or ''}: outside the engine"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            line, found = node.lineno, [f"calls {node.func.id}(): no I/O in the engine"]
        problems.extend(f"{filename}:{line}: {p}" for p in found if p is not None)
    return problems


ENGINE_FILES = sorted(ENGINE.rglob("*.py"))


def test_the_engine_has_files_to_check() -> None:
    names = {p.name for p in ENGINE_FILES}
    assert {"__init__.py", "game.py", "views.py", "record.py"} <= names


def test_forbidden_modules_are_not_allowed() -> None:
    assert not ALLOWED & FORBIDDEN


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_engine_file_is_pure(path: Path) -> None:
    assert purity_problems(path.read_text(encoding="utf-8"), path.name) == []


# -- the checker can fail -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "mentions"),
    [
        ("import time\n", "imports time: forbidden"),
        ("import os.path\n", "imports os.path: forbidden"),
        ("from datetime import datetime\n", "imports datetime: forbidden"),
        ("import json, random\n", "imports random: forbidden"),
        ("from sqlalchemy.orm import Session\n", "imports sqlalchemy.orm: forbidden"),
        ("import urllib.request\n", "imports urllib.request: not in the engine's allow-list"),
        ("from crisp_server import simulate\n", "imports crisp_server: the engine imports nothing"),
        ("from crisp_server.rooms import room\n", "imports crisp_server.rooms: the engine imports nothing"),
        ("from .. import simulate\n", "imports ..: outside the engine"),
        ("from ..rooms import Room\n", "imports ..rooms: outside the engine"),
        ("def f() -> None:\n    import asyncio\n", "imports asyncio: forbidden"),
        ("def f() -> None:\n    print('hi')\n", "calls print(): no I/O"),
        ("data = open('x').read()\n", "calls open(): no I/O"),
        ("name = input()\n", "calls input(): no I/O"),
    ],
)
def test_the_checker_reports_an_impure_source(source: str, mentions: str) -> None:
    problems = purity_problems(source, "bad.py")
    assert len(problems) == 1
    assert mentions in problems[0]
    assert problems[0].startswith("bad.py:")


def test_the_checker_reports_the_line_of_an_import_of_time() -> None:
    source = "from __future__ import annotations\n\nimport time\n"
    assert purity_problems(source, "game.py") == ["game.py:3: imports time: forbidden in the engine"]


def test_the_checker_accepts_what_the_engine_may_use() -> None:
    source = (
        "from __future__ import annotations\n"
        "import json\n"
        "from collections.abc import Sequence\n"
        "from dataclasses import dataclass\n"
        "from .cards import Slot\n"
        "from . import events\n"
        "from crisp_server.engine.game import Game\n"
        "def f(xs: Sequence[int]) -> str:\n"
        "    return json.dumps(sorted(xs))\n"
        "log = []\n"
        "log.append(len(log))\n"
        "obj.print(1)\n"  # a method named print is not the built-in
    )
    assert purity_problems(source) == []
