"""Room codes, seat tokens and shuffles, drawn from the operating system's CSPRNG (``secrets``)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from typing import Any, Final

#: Bytes per draw of a shuffle: a 64-bit number.
_WORD: Final = 8

#: No look-alikes: no 0/O, 1/I/L, 2/Z, 5/S, 8/B.
CODE_ALPHABET: Final = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH: Final = 6


def new_room_code() -> str:
    """Six characters, about 2^27.9 possibilities: unguessable with look-ups rate-limited per address."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(code: str) -> str:
    """Codes are typed by people: ignore case and surrounding blanks."""
    return code.strip().upper()


def is_room_code(code: str) -> bool:
    return len(code) == CODE_LENGTH and all(c in CODE_ALPHABET for c in code)


def tv_link(join_link: str) -> str:
    """The big-screen address of the room whose join link is ``join_link`` (``…/r/CODE``): ``…/tv/CODE``, on
    the same base (what the TV QR code encodes; a TV or a laptop there shows the room's table)."""
    base, sep, code = join_link.rpartition("/r/")
    if not sep or not code or "/" in code:
        raise ValueError(f"not a room's join link: {join_link!r}")
    return f"{base}/tv/{code}"


def new_token() -> str:
    """A seat token: a random 128-bit secret, given to the player once, URL-safe."""
    return secrets.token_urlsafe(16)


def hash_token(token: str) -> str:
    """What the server keeps of a token: its SHA-256 (the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_index(token: str, token_hashes: Iterable[str]) -> int | None:
    """The position of ``token``'s hash among ``token_hashes`` (the seats' order), or ``None``: the token is
    hashed once, and each comparison takes constant time."""
    hashed = hash_token(token)
    for index, token_hash in enumerate(token_hashes):
        if hmac.compare_digest(hashed, token_hash):
            return index
    return None


def shuffle(items: list[Any]) -> None:
    """Shuffle ``items`` in place, every order equally likely (Fisher-Yates), from one read of the CSPRNG.

    ``secrets.SystemRandom().shuffle`` reads it once per card (51 system calls for a deck, with the Python
    around each: about 1% of a busy server's CPU). Each draw here is a 64-bit number, and a number in the
    uneven top of the range is drawn again instead of folded in, so no order is favoured; a redraw is
    needed once in about 2^58 draws."""
    pool = secrets.token_bytes(_WORD * len(items))
    at = 0
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        limit = (1 << 64) - (1 << 64) % n
        while True:
            if at == len(pool):
                pool, at = secrets.token_bytes(_WORD * i), 0
            word = int.from_bytes(pool[at : at + _WORD], "little")
            at += _WORD
            if word < limit:
                break
        j = word % n
        items[i], items[j] = items[j], items[i]
