"""The engine, the rooms and the store's write path compiled to C with mypyc, and whether this process runs
them.

The hot path of every action (the rules engine, the views, the room that applies the action and fans its
views out, the statements of its group commit) is fully typed, so mypyc (part of mypy) compiles it to a C
extension with the same behaviour and less CPU per action. Compiling is optional: without a C compiler, or
before anyone built them, the same modules run interpreted, and :func:`status` says so (the server logs it
at start and ``/healthz`` reports it).

``scripts/compile`` builds them in place, next to the sources, for a checkout (``scripts/build_native.py``
does the work). ``python -m crisp_server.native status`` says
what is built, ``python -m crisp_server.native clean`` removes it.

A build writes, next to each compiled module ``m.py``, an extension ``m.<abi>.so`` that Python imports
instead of ``m.py``, and the shared ``crisp_server/_native__mypyc.<abi>.so`` they all link to, plus
``crisp_server/_native.json`` with the SHA-256 of every compiled source. An extension whose source has
changed since is stale, so edited code never runs as its old compiled self.

``CRISP_NATIVE`` chooses, once per process when the package is first imported (:func:`install`):

- ``auto`` (the default): the compiled modules if all of them are built and current, else all of them
  interpreted, with a warning when the build is stale (never a mix: the compiled modules call each other
  directly);
- ``off``: interpreted, built or not (A/B measurements, debugging);
- ``require``: compiled, or the import fails with :class:`NativeUnavailable` saying why (where a build that
  silently fell back would hide a broken compile).

This module itself stays interpreted and imports nothing of the package.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Final

PACKAGE: Final = "crisp_server"
GROUP: Final = f"{PACKAGE}._native"
"""mypyc's shared library for all compiled modules, inside the package (``crisp_server/_native__mypyc``)."""
MANIFEST: Final = "_native.json"

NATIVE_MODULES: Final[tuple[str, ...]] = (
    "engine/actions.py",
    "engine/cards.py",
    "engine/events.py",
    "engine/game.py",
    "engine/rejections.py",
    "engine/views.py",
    "rooms/actor.py",
    "rooms/botseat.py",
    "rooms/clock.py",
    "rooms/computers.py",
    "rooms/driver.py",
    "rooms/messages.py",
    "rooms/phase.py",
    "rooms/publishing.py",
    "rooms/recovery.py",
    "rooms/registry.py",
    "rooms/room.py",
    "rooms/seating.py",
    "rooms/seats.py",
    "rooms/state.py",
    "rooms/table.py",
    "rooms/tokens.py",
    "store/group.py",
    "store/operations.py",
    "store/sqlite_fast.py",
    "store/writes.py",
)
"""The compiled modules, relative to the package folder."""

_SUFFIXES: Final = tuple(importlib.machinery.EXTENSION_SUFFIXES)


class NativeUnavailable(ImportError):
    """``CRISP_NATIVE=require``, and the compiled modules are missing or stale."""


@dataclass(frozen=True, slots=True)
class Status:
    compiled: tuple[str, ...]
    """Modules that have an extension (dotted names)."""
    stale: tuple[str, ...]
    """Compiled modules whose source changed after the build."""
    missing: tuple[str, ...]
    """Modules of :data:`NATIVE_MODULES` with no extension."""

    @property
    def native(self) -> bool:
        """Every module of :data:`NATIVE_MODULES` is compiled and current."""
        return not self.stale and not self.missing

    def describe(self) -> str:
        if self.native:
            return f"compiled (mypyc): {len(self.compiled)} modules"
        if not self.compiled:
            return "interpreted (no compiled modules; scripts/compile builds them)"
        if self.stale:
            return "STALE compiled modules: " + ", ".join(self.stale)
        return "partly compiled; interpreted: " + ", ".join(self.missing)


def _package_dir(root: Path | None = None) -> Path:
    return (root / PACKAGE) if root is not None else Path(__file__).resolve().parent


def _dotted(relative: str) -> str:
    return f"{PACKAGE}." + relative.removesuffix(".py").replace("/", ".")


def _extensions(source: Path) -> list[Path]:
    stem = source.with_suffix("")
    return [Path(f"{stem}{suffix}") for suffix in _SUFFIXES if Path(f"{stem}{suffix}").exists()]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def status(root: Path | None = None) -> Status:
    """Which of :data:`NATIVE_MODULES` have an extension next to them, and whether it is current."""
    package = _package_dir(root)
    try:
        recorded: dict[str, str] = json.loads((package / MANIFEST).read_text())["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        recorded = {}
    compiled: list[str] = []
    stale: list[str] = []
    missing: list[str] = []
    for relative in NATIVE_MODULES:
        source = package / relative
        if not _extensions(source):
            missing.append(_dotted(relative))
            continue
        compiled.append(_dotted(relative))
        if recorded.get(relative) != _digest(source):
            stale.append(_dotted(relative))
    return Status(tuple(compiled), tuple(stale), tuple(missing))


def built_files(root: Path | None = None) -> list[Path]:
    """The files a build made: each module's extension, the shared library, the manifest."""
    package = _package_dir(root)
    candidates = [package / relative for relative in NATIVE_MODULES] + [package / "_native__mypyc.py"]
    found = [extension for source in candidates for extension in _extensions(source)]
    return found + ([package / MANIFEST] if (package / MANIFEST).exists() else [])


def clean(root: Path | None = None) -> list[Path]:
    """Remove every file a build made; the sources run interpreted again."""
    removed = built_files(root)
    for path in removed:
        path.unlink()
    return removed


def write_manifest(root: Path | None = None) -> None:
    """Record the sources the extensions were just built from (``scripts/build_native.py`` calls it)."""
    package = _package_dir(root)
    digests = {relative: _digest(package / relative) for relative in NATIVE_MODULES}
    (package / MANIFEST).write_text(json.dumps({"sources": digests}, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crisp_server.native", description="status or clean")
    parser.add_argument("command", choices=("clean", "status"))
    parser.add_argument("--root", type=Path, help="the folder that holds crisp_server/ (default: this one's)")
    args = parser.parse_args(argv)
    if args.command == "clean":
        for path in clean(args.root):
            print(f"removed {path}")
        return 0
    found = status(args.root)
    print(found.describe())
    return 0 if found.native else 1


class _Interpreted:
    """A finder that loads the compiled modules from their sources, ahead of their extensions."""

    def __init__(self, package: Path) -> None:
        self._sources = {_dotted(relative): package / relative for relative in NATIVE_MODULES}

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        source = self._sources.get(name)
        return None if source is None else importlib.util.spec_from_file_location(name, source)


_chosen: list[tuple[str, str]] = []
"""The choice :func:`install` made for this process and its one-line reason (empty before)."""


def install() -> str:
    """Choose compiled or interpreted for this process, from ``CRISP_NATIVE``; returns the choice.

    Called by the package's ``__init__`` before anything imports a compiled module; later calls return the
    first choice. ``"compiled"`` or ``"interpreted"``.
    """
    if _chosen:
        return _chosen[0][0]
    wanted = os.environ.get("CRISP_NATIVE", "auto").strip().lower() or "auto"
    if wanted not in ("auto", "off", "require"):
        raise NativeUnavailable(f"CRISP_NATIVE must be auto, off or require, not {wanted!r}")
    found = status()
    if wanted == "require" and not found.native:
        raise NativeUnavailable(f"CRISP_NATIVE=require, but the engine and rooms are {found.describe()}")
    if wanted == "off" or not found.native:
        if found.stale and wanted == "auto":
            warnings.warn(f"crisp_server runs interpreted: {found.describe()}", RuntimeWarning, stacklevel=2)
        sys.meta_path.insert(0, _Interpreted(_package_dir()))
        _chosen.append(("interpreted", "interpreted (CRISP_NATIVE=off)" if wanted == "off" else found.describe()))
    else:
        _chosen.append(("compiled", "compiled with mypyc"))
    return _chosen[0][0]


def refuse_as_command(error: NativeUnavailable) -> None:
    """If this process is the ``crisp-server`` command (or ``python -m crisp_server``), end it as a wrong
    setting does: one line naming the problem, exit status 2 (docs/hosting.md). Else return (the caller
    raises: a program that imports the package sees the exception)."""
    argv = getattr(sys, "orig_argv", sys.argv)
    if os.path.basename(sys.argv[0]) == "crisp-server" or argv[1:3] == ["-m", "crisp_server"]:
        sys.stderr.write(f"crisp-server: {error}\n")
        raise SystemExit(2)


def mode() -> str:
    """``"compiled"`` or ``"interpreted"``: what this process runs (after :func:`install`)."""
    return install()


def summary() -> str:
    """One line for the log: what runs, and why when it is interpreted."""
    install()
    return _chosen[0][1]


def loaded_natively(module: ModuleType) -> bool:
    """Whether ``module`` was loaded from a C extension."""
    return str(getattr(module, "__file__", "") or "").endswith(_SUFFIXES)


if __name__ == "__main__":
    sys.exit(main())
