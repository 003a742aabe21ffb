"""The package's architecture (docs/development.md, "The layout of the code"), read from the source as the
engine's purity test reads the engine: no import loop among the modules of ``crisp_server``, no import from
a lower layer to a higher one, no module or class too long to read, a package top of a few modules, and a
room composed of parts rather than built as a chain of classes. Every import counts: at the top of a module,
inside a function, and under ``if TYPE_CHECKING:`` (a loop of type-only imports is a loop all the same for
whoever reads the code, and for mypyc). Nothing of the package is imported here."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1] / "crisp_server"
PACKAGE: Final = "crisp_server"

#: The parts of the package, lowest first. A module belongs to the part named by its first name under
#: ``crisp_server`` (``crisp_server.rooms.table`` to ``rooms``; ``crisp_server.settings`` to ``settings``;
#: the package's own ``__init__`` to ``crisp_server``). A module imports modules of its own part, or of
#: a lower layer: never one of a higher layer, nor one of another part of its own layer.
LAYERS: Final[tuple[tuple[str, ...], ...]] = (
    # Leaves: they import nothing of the package (``texts``: every text the server sends, by language).
    ("native", "settings", "logs", "tasks", "collector", "texts"),
    # The package itself: its version, and the choice of compiled or interpreted modules at import.
    ("crisp_server",),
    # The rules, pure (tests/engine/test_purity.py).
    ("engine",),
    # On the engine (and the leaves): the computer players, the wire format, the store.
    ("bots", "wire", "store"),
    # The rooms (engine, players, wire format, store); a finished game's replay (engine, players' memory).
    ("rooms", "replays"),
    # HTTP and WebSocket: the app, its routes, the bridge to the rooms, the protocols uvicorn runs.
    ("web",),
    # The server's start (uvicorn with the app).
    ("serve",),
    # Around the server: what talks to one from outside, and the offline tools.
    ("remote", "tools"),
    # The command line: every command.
    ("__main__",),
)
#: The parts that run outside the server, around it: they use none of the running server's parts.
OUTSIDE: Final = frozenset({"remote", "tools"})
SERVER: Final = frozenset({"store", "rooms", "replays", "web", "serve"})

MAX_MODULE_LINES: Final = 600
MAX_CLASS_LINES: Final = 400
MAX_TOP_MODULES: Final = 10


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    lines: int


def import_source(here: str, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` reads from, with a relative import resolved against package ``here``."""
    if not node.level:
        return node.module or ""
    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        text = path.read_text(encoding="utf-8")
        name = ".".join(parts)
        found[name] = Module(name, path, is_package, ast.parse(text, str(path)), len(text.splitlines()))
    return found


def _imported(module: str, is_package: bool, tree: ast.Module, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that ``tree`` imports anywhere (top, functions, ``if TYPE_CHECKING:``): for
    ``from a import b``, the module ``a.b`` if there is one, else ``a``; a relative import resolved."""
    names = set(known)
    here = module if is_package else module.rpartition(".")[0]

    def owner(name: str) -> str | None:
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name or None

    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [owner(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = import_source(here, node)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                targets.append(full if full in names else owner(source))
        out.update(target for target in targets if target is not None and target != module)
    return out


def _graph(modules: Mapping[str, Module]) -> dict[str, set[str]]:
    return {name: _imported(name, m.is_package, m.tree, modules) for name, m in modules.items()}


def _groups(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (strongly connected components of more
    than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        # Tarjan's algorithm, iterative: (node, its successors still to visit).
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One shortest import loop per group of modules that import each other: ``[a, b, ..., a]``."""
    loops: list[list[str]] = []
    for group in _groups(graph):
        members = set(group)
        first = group[0]
        came_from: dict[str, str] = {}
        queue = deque([first])
        while queue:
            node = queue.popleft()
            if first in graph[node] and (node != first or not came_from):
                path = [node]
                while path[-1] != first:
                    path.append(came_from[path[-1]])
                loops.append([*reversed(path), first])
                break
            for nxt in sorted(graph[node] & members):
                if nxt not in came_from and nxt != first:
                    came_from[nxt] = node
                    queue.append(nxt)
    return loops


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _layer_of() -> dict[str, int]:
    return {part: level for level, parts in enumerate(LAYERS) for part in parts}


def _upward(graph: Mapping[str, set[str]]) -> list[str]:
    layer = _layer_of()
    wrong: list[str] = []
    for module, targets in sorted(graph.items()):
        mine = _part(module)
        for target in sorted(targets):
            theirs = _part(target)
            if theirs == mine:
                continue
            if layer[theirs] > layer[mine]:
                wrong.append(f"{module} imports {target}: {theirs} is a layer above {mine}")
            elif layer[theirs] == layer[mine]:
                wrong.append(f"{module} imports {target}: {theirs} and {mine} are parts of one layer")
            elif mine in OUTSIDE and theirs in SERVER:
                wrong.append(f"{module} imports {target}: {mine} runs outside the server, {theirs} is the server's")
    return wrong


MODULES: Final = _modules()
GRAPH: Final = _graph(MODULES)


def test_no_import_loop() -> None:
    loops = _cycles(GRAPH)
    groups = _groups(GRAPH)
    assert not loops, "import loops:\n" + "\n".join(
        f"{' -> '.join(loop)}\n  (one of the loops among {len(group)} modules: {', '.join(group)})"
        for loop, group in zip(loops, groups, strict=True)
    )


def test_every_part_has_a_layer() -> None:
    layer = _layer_of()
    assert len(layer) == sum(len(parts) for parts in LAYERS), "a part is named in two layers"
    assert sorted({_part(name) for name in MODULES} - set(layer)) == []


def test_no_import_from_a_lower_layer_up() -> None:
    wrong = _upward(GRAPH)
    assert not wrong, "\n".join(wrong)


def test_no_module_too_long() -> None:
    long = [
        f"{m.path.relative_to(ROOT.parent)}: {m.lines} lines" for m in MODULES.values() if m.lines > MAX_MODULE_LINES
    ]
    assert not long, f"over {MAX_MODULE_LINES} lines:\n" + "\n".join(long)


def test_no_class_too_long() -> None:
    long = [
        f"{m.path.relative_to(ROOT.parent)}: {node.name}, {(node.end_lineno or node.lineno) - node.lineno + 1} lines"
        for m in MODULES.values()
        for node in ast.walk(m.tree)
        if isinstance(node, ast.ClassDef) and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_CLASS_LINES
    ]
    assert not long, f"over {MAX_CLASS_LINES} lines:\n" + "\n".join(long)


def test_a_short_package_top() -> None:
    top = sorted(path.name for path in ROOT.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, f"{len(top)} modules directly in crisp_server/: {top}"


def _rooms_chain(modules: Mapping[str, Module], package: str) -> list[str]:
    """Classes of ``package`` that derive from another class of ``package`` (a Protocol, an exception aside)."""
    inside = {name: m for name, m in modules.items() if name == package or name.startswith(package + ".")}
    classes = {
        (name, node.name): node for name, m in inside.items() for node in m.tree.body if isinstance(node, ast.ClassDef)
    }

    def local_names(name: str) -> dict[str, tuple[str, str]]:
        """What each name bound in module ``name`` stands for, where it is a class of ``package``."""
        m = inside[name]
        here = name if m.is_package else name.rpartition(".")[0]
        bound = {node.name: (name, node.name) for node in m.tree.body if isinstance(node, ast.ClassDef)}
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ImportFrom):
                source = import_source(here, node)
                for alias in node.names:
                    if (source, alias.name) in classes:
                        bound[alias.asname or alias.name] = (source, alias.name)
        return bound

    def base_names(node: ast.ClassDef) -> list[str]:
        out = []
        for base in node.bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            if isinstance(target, ast.Name):
                out.append(target.id)
            elif isinstance(target, ast.Attribute):
                out.append(target.attr)
        return out

    def exempt(key: tuple[str, str], seen: frozenset[tuple[str, str]] = frozenset()) -> bool:
        """A Protocol, or an exception (its bases reach ``Exception``, ``BaseException`` or ``...Error``)."""
        node = classes[key]
        bound = local_names(key[0])
        for base in base_names(node):
            if base == "Protocol" or base in {"Exception", "BaseException"} or base.endswith("Error"):
                return True
            inner = bound.get(base)
            if inner is not None and inner not in seen and exempt(inner, seen | {key}):
                return True
        return False

    wrong: list[str] = []
    for (name, cls), node in sorted(classes.items()):
        bound = local_names(name)
        for base in base_names(node):
            parent = bound.get(base)
            if parent is not None and not exempt(parent):
                wrong.append(f"{name}.{cls} derives from {parent[0]}.{parent[1]}")
    return wrong


def test_the_room_is_composed_not_inherited() -> None:
    wrong = _rooms_chain(MODULES, f"{PACKAGE}.rooms")
    assert not wrong, "\n".join(wrong)


# The checks themselves, on made-up packages: each finds what it is there to find.


def _made_up(tmp_path: Path, files: Mapping[str, str]) -> dict[str, Module]:
    for relative, text in files.items():
        path = tmp_path / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in [tmp_path / "pkg", *(p for p in (tmp_path / "pkg").rglob("*") if p.is_dir())]:
        (folder / "__init__.py").touch()
    return _modules(tmp_path / "pkg", "pkg")


def test_imports_are_read_everywhere_and_resolved(tmp_path: Path) -> None:
    modules = _made_up(
        tmp_path,
        {
            "a/one.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .two import X\n",
            "a/two.py": "def f() -> None:\n    from ..b import three\n",
            "a/four.py": "import pkg.b.three as t\nfrom pkg.a import two\nfrom . import one\n",
            "b/three.py": "from pkg.a.two import f\n",
        },
    )
    graph = _graph(modules)
    assert graph["pkg.a.one"] == {"pkg.a.two"}
    assert graph["pkg.a.two"] == {"pkg.b.three"}
    assert graph["pkg.a.four"] == {"pkg.b.three", "pkg.a.two", "pkg.a.one"}
    assert graph["pkg.b.three"] == {"pkg.a.two"}


def test_a_loop_is_found_and_shown(tmp_path: Path) -> None:
    graph = {"m.a": {"m.b"}, "m.b": {"m.c"}, "m.c": {"m.a", "m.d"}, "m.d": set(), "m.e": {"m.d"}}
    assert _cycles(graph) == [["m.a", "m.b", "m.c", "m.a"]]
    assert _groups(graph) == [["m.a", "m.b", "m.c"]]
    assert _cycles({"m.a": {"m.b"}, "m.b": set()}) == []
    modules = _made_up(
        tmp_path,
        {
            "x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.y import Y\n",
            "y.py": "from .x import *\n",
        },
    )
    assert _cycles(_graph(modules)) == [["pkg.x", "pkg.y", "pkg.x"]]


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        (
            {"crisp_server.engine.game": {"crisp_server.bots.bot"}},
            "crisp_server.engine.game imports crisp_server.bots.bot: bots is a layer above engine",
        ),
        (
            {"crisp_server.rooms.room": {"crisp_server.web.app"}},
            "crisp_server.rooms.room imports crisp_server.web.app: web is a layer above rooms",
        ),
        (
            {"crisp_server.bots.bot": {"crisp_server.wire.protocol"}},
            "crisp_server.bots.bot imports crisp_server.wire.protocol: wire and bots are parts of one layer",
        ),
        (
            {"crisp_server.remote.client": {"crisp_server.store.store"}},
            "crisp_server.remote.client imports crisp_server.store.store: remote runs outside the server, store is "
            "the server's",
        ),
    ],
)
def test_an_import_up_is_found(graph: dict[str, set[str]], expected: str) -> None:
    assert _upward(graph) == [expected]
    assert _upward({"crisp_server.rooms.room": {"crisp_server.engine.game", "crisp_server.rooms.seats"}}) == []


def test_an_inherited_room_is_found(tmp_path: Path) -> None:
    modules = _made_up(
        tmp_path,
        {
            "rooms/base.py": "from typing import Protocol\nclass Base:\n    pass\nclass Seat(Protocol):\n    pass\n"
            "class Problem(ValueError):\n    pass\n",
            "rooms/room.py": "from .base import Base, Seat, Problem\nclass Room(Base):\n    pass\n"
            "class Human(Seat):\n    pass\nclass Full(Problem):\n    pass\nclass Own(dict[str, int]):\n    pass\n",
        },
    )
    assert _rooms_chain(modules, "pkg.rooms") == ["pkg.rooms.room.Room derives from pkg.rooms.base.Base"]
