"""Compile the engine and the rooms in place with mypyc (see crisp_server/native.py).

    python scripts/build_native.py [--root DIR] [--python-executable PY] [--copy-to DIR] [--opt-level N]

``--root`` is the folder that holds the sources, ``crisp_server/`` (this checkout by default); the extensions
are built next to them. mypy reads the third-party packages of ``--python-executable``'s environment (this
interpreter's by default) to type the compiled code; that environment should not hold an installed copy of
crisp_server (mypy would find the package twice). ``--copy-to`` then copies the extensions and their manifest
into the ``crisp_server/`` of another folder that holds the same sources (an installed ``site-packages``: the
image of a deployment). Needs mypy and setuptools (the ``native`` extra) and a C compiler with Python's
headers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from mypyc.build import mypycify  # type: ignore[import-untyped,unused-ignore]
from setuptools import Distribution

ROOT = Path(__file__).resolve().parent.parent


def build(root: Path, python_executable: str, opt_level: str = "3", copy_to: Path | None = None) -> int:
    sys.path.insert(0, str(root))
    from crisp_server import native

    native.clean(root)
    sources = [f"{native.PACKAGE}/{relative}" for relative in native.NATIVE_MODULES]
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="crisp-mypyc-") as scratch:
        os.chdir(root)  # mypyc names the modules after their paths from here
        try:
            extensions = mypycify(
                ["--python-executable", python_executable, "--ignore-missing-imports", *sources],
                opt_level=opt_level,
                group_name=native.GROUP,
                target_dir=str(Path(scratch) / "c"),
            )
            # A bare Distribution: it must not read the project's pyproject.toml (root may be a site-packages).
            dist = Distribution({"name": "crisp-server-native", "ext_modules": extensions})
            command = dist.get_command_obj("build_ext")
            command.inplace = True
            command.build_temp = str(Path(scratch) / "o")
            dist.run_command("build_ext")
        finally:
            os.chdir(here)
    native.write_manifest(root)
    found = native.status(root)
    if copy_to is not None and found.native:
        for built in native.built_files(root):
            shutil.copy2(built, copy_to / built.relative_to(root))
        found = native.status(copy_to)  # stale, should the sources there differ from the ones built
        print(f"copied to {copy_to}:", end=" ")
    print(found.describe())
    return 0 if found.native else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the folder that holds crisp_server/")
    parser.add_argument("--python-executable", default=sys.executable, help="the Python whose packages mypy reads")
    parser.add_argument("--copy-to", type=Path, help="a folder with the same crisp_server/ to copy the build into")
    parser.add_argument("--opt-level", default="3", help="the C compiler's optimisation level (default 3)")
    args = parser.parse_args()
    copy_to = args.copy_to.resolve() if args.copy_to is not None else None
    return build(args.root.resolve(), args.python_executable, args.opt_level, copy_to)


if __name__ == "__main__":
    sys.exit(main())
