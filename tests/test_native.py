"""The compiled engine and rooms (crisp_server/native.py): what is built, when it is stale, and what a
process runs. Whether this process runs compiled code is checked against CRISP_NATIVE, which scripts/test sets:
``require`` in the compiled pass, ``off`` in the interpreted one."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from crisp_server import native

ROOT = Path(__file__).resolve().parents[1]
SUFFIX = native._SUFFIXES[0]


def tree(tmp_path: Path) -> Path:
    """A copy of the package's sources with no build in it."""
    shutil.copytree(
        ROOT / "crisp_server",
        tmp_path / "crisp_server",
        ignore=shutil.ignore_patterns("*.so", "_native.json", "__pycache__"),
    )
    return tmp_path


def fake_build(root: Path) -> None:
    """What a build leaves (empty extensions: status() only looks at them) and its manifest."""
    package = root / "crisp_server"
    for relative in native.NATIVE_MODULES:
        (package / relative).with_suffix(SUFFIX).write_bytes(b"")
    (package / f"_native__mypyc{SUFFIX}").write_bytes(b"")
    native.write_manifest(root)


def test_a_tree_without_a_build_runs_interpreted(tmp_path: Path) -> None:
    found = native.status(tree(tmp_path))
    assert not found.native
    assert found.compiled == ()
    assert len(found.missing) == len(native.NATIVE_MODULES)
    assert found.describe().startswith("interpreted")


def test_a_build_is_current_until_a_source_changes(tmp_path: Path) -> None:
    root = tree(tmp_path)
    fake_build(root)
    assert native.status(root).native
    game = root / "crisp_server/engine/game.py"
    game.write_text(game.read_text() + "\n# edited\n")
    found = native.status(root)
    assert not found.native
    assert found.stale == ("crisp_server.engine.game",)
    assert found.describe() == "STALE compiled modules: crisp_server.engine.game"


def test_a_missing_or_broken_manifest_makes_every_module_stale(tmp_path: Path) -> None:
    root = tree(tmp_path)
    fake_build(root)
    (root / "crisp_server" / native.MANIFEST).write_text("{not json")
    assert len(native.status(root).stale) == len(native.NATIVE_MODULES)


def test_clean_removes_exactly_what_a_build_made(tmp_path: Path) -> None:
    root = tree(tmp_path)
    before = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    fake_build(root)
    removed = native.clean(root)
    assert len(removed) == len(native.NATIVE_MODULES) + 2  # the shared library and the manifest
    assert sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file()) == before


def run_python(code: str, root: Path, wanted: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CRISP_NATIVE": wanted, "PYTHONPATH": str(root)}
    command = [sys.executable, "-c", code]
    return subprocess.run(command, check=False, env=env, cwd=root, capture_output=True, text=True, timeout=60)


SHOW = "import crisp_server.engine.game as g, crisp_server.native as n; print(n.mode(), g.__file__)"


def test_crisp_native_is_checked_when_the_package_is_imported(tmp_path: Path) -> None:
    root = tree(tmp_path)
    bad = run_python(SHOW, root, "sometimes")
    assert bad.returncode != 0
    assert "CRISP_NATIVE must be auto, off or require, not 'sometimes'" in bad.stderr
    required = run_python(SHOW, root, "require")
    assert required.returncode != 0
    assert "NativeUnavailable: CRISP_NATIVE=require, but the engine and rooms are interpreted" in required.stderr
    auto = run_python(SHOW, root, "auto")
    assert auto.returncode == 0, auto.stderr
    assert auto.stdout.split()[0] == "interpreted"
    assert auto.stdout.split()[1] == str(root / "crisp_server/engine/game.py")


def test_a_stale_build_is_not_loaded_and_says_why(tmp_path: Path) -> None:
    # The fake extensions are empty files: loading one would fail, so a pass shows that none was loaded.
    root = tree(tmp_path)
    fake_build(root)
    game = root / "crisp_server/engine/game.py"
    game.write_text(game.read_text() + "\n# edited\n")
    auto = run_python("import warnings; warnings.simplefilter('always'); " + SHOW, root, "auto")
    assert auto.returncode == 0, auto.stderr
    assert auto.stdout.split()[0] == "interpreted"
    assert (
        "RuntimeWarning: crisp_server runs interpreted: STALE compiled modules: crisp_server.engine.game" in auto.stderr
    )
    off = run_python(SHOW + "; import crisp_server.rooms.table", root, "off")
    assert off.returncode == 0, off.stderr
    assert off.stdout.split() == ["interpreted", str(root / "crisp_server/engine/game.py")]


def test_this_process_runs_what_crisp_native_asked_for() -> None:
    wanted = os.environ.get("CRISP_NATIVE", "auto")
    modules = [importlib.import_module(native._dotted(relative)) for relative in native.NATIVE_MODULES]
    natively = {m.__name__ for m in modules if native.loaded_natively(m)}
    if wanted == "require":
        assert native.mode() == "compiled"
        assert natively == {m.__name__ for m in modules}
    elif wanted == "off":
        assert native.mode() == "interpreted"
        assert natively == set()
    else:
        assert natively in (set(), {m.__name__ for m in modules})  # never a mix
    assert json.dumps(native.summary())
