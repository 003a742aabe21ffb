"""Crisp: a multiplayer server for the card game of memory and bluff."""

from crisp_server import native as _native

__version__ = "0.1.0"

# Before any module of the package is imported: compiled engine and rooms, or all of them interpreted.
try:
    _native.install()
except _native.NativeUnavailable as _refused:
    _native.refuse_as_command(_refused)  # the crisp-server command: one line, exit status 2
    raise
