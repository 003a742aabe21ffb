"""Room codes and seat tokens, drawn with ``secrets``."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final

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


def new_token() -> str:
    """A seat token: a random 128-bit secret, given to the player once, URL-safe."""
    return secrets.token_urlsafe(16)


def hash_token(token: str) -> str:
    """What the server keeps of a token: its SHA-256 (the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str, token_hash: str) -> bool:
    return hmac.compare_digest(hash_token(token), token_hash)
