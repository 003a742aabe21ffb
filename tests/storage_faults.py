"""Storage faults a test can make on a SQLite database's files: a full disk (a small tmpfs filled to its last
byte), an immutable file (``chattr +i``), and files whose permissions deny a non-root user its writes.

Mounting, ``chattr`` and switching to another user need root (CI runs as root); ``can_*`` say whether this
process may, so that a test elsewhere can skip with the reason."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

#: The user a test runs the database's side as, for permission faults (root may write anything).
NON_ROOT = "nobody"


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


def can_chattr() -> bool:
    return os.geteuid() == 0 and shutil.which("chattr") is not None


def can_be_non_root() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        pwd.getpwnam(NON_ROOT)
    except KeyError:
        return False
    return True


def mount_tmpfs(where: Path, size: str) -> bool:
    """A tmpfs of ``size`` at ``where`` (made), if this process may mount one: whether it did."""
    where.mkdir()
    if not can_mount():
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, check=False
    )
    return done.returncode == 0


def unmount(where: Path) -> None:
    # Lazily if something still holds a file there (a server process being reaped): never left mounted.
    if subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode:
        subprocess.run(["umount", "-l", str(where)], check=True)


@contextlib.contextmanager
def small_disk(where: Path, size: str = "8m") -> Iterator[bool]:
    """A tmpfs of ``size`` at ``where`` if this process may mount one (whether it did)."""
    mounted = mount_tmpfs(where, size) and not os.environ.get("CRISP_TEST_NO_MOUNT")
    try:
        yield mounted
    finally:
        if mounted:
            unmount(where)


def fill(where: Path) -> Path:
    """Write a filler file until the file system is full, to its last byte; the filler."""
    filler = where / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for size in (65536, 4096, 512, 1):
            chunk = b"\0" * size
            with contextlib.suppress(OSError):
                while os.write(fd, chunk) == size:
                    pass
    finally:
        os.close(fd)
    return filler


def chattr(path: Path, on: bool) -> None:
    """Make ``path`` immutable (no write, even through a descriptor already open, nor by root), or not."""
    subprocess.run(["chattr", "+i" if on else "-i", str(path)], check=True, capture_output=True)


@contextlib.contextmanager
def as_non_root() -> Iterator[tuple[int, int]]:
    """This process's file accesses as ``NON_ROOT`` (effective user and group; root's again after): its
    (uid, gid). Every thread follows (glibc switches them all), and so do the processes it starts."""
    user = pwd.getpwnam(NON_ROOT)
    os.setegid(user.pw_gid)
    os.seteuid(user.pw_uid)
    try:
        yield user.pw_uid, user.pw_gid
    finally:
        os.seteuid(0)
        os.setegid(0)
