"""Observers of every version a room publishes, called with the room right after its members' messages for
that version are queued: the wire-leak tests use one to keep the truth of each version (every hand, the card
drawn) and check each message against it. Production has none.

It stays interpreted (it is not in ``crisp_server.native.NATIVE_MODULES``) so that the compiled rooms read
:data:`PUBLISHED` anew each time: a test puts its observer there, and compiled code sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PUBLISHED: list[Callable[[Any], None]] = []
