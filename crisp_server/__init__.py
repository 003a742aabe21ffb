"""Crisp: a multiplayer server for the card game of memory and bluff."""

from crisp_server import native as _native

__version__ = "0.1.0"

# Before any module of the package is imported: compiled engine and rooms, or all of them interpreted.
_native.install()
