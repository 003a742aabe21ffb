"""What a table leaves to chance: the shuffle, the first dealer, the game's id and the round's salt.

One object, :data:`LUCK`, that the table asks each time. It stays interpreted (it is not in
``crisp_server.native.NATIVE_MODULES``), so a test that needs a known deal puts its own in its place
(``tests/web/bots.py``'s ``rig``, ``tests/e2e/rigged_server.py``), and the compiled table sees it: a
compiled module binds the functions it imports once, but reads an attribute of an interpreted module each
time. The server itself has no way to choose its decks.
"""

from __future__ import annotations

import secrets
from typing import Any, Protocol

from .tokens import shuffle


class Luck(Protocol):
    def shuffle(self, items: list[Any]) -> None: ...

    def randbelow(self, n: int) -> int: ...

    def token_hex(self, nbytes: int) -> str: ...


class SecretLuck:
    """The operating system's randomness (:mod:`secrets`), as every real table uses."""

    def shuffle(self, items: list[Any]) -> None:
        shuffle(items)

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)

    def token_hex(self, nbytes: int) -> str:
        return secrets.token_hex(nbytes)


LUCK: Luck = SecretLuck()
