"""The real server with the decks it deals fixed in advance, for tests that need a known deal.

Run as ``python tests/e2e/rigged_server.py``: the decks come from ``CRISP_TEST_DECKS`` (a JSON list of
52-card lists, used in turn) and the first dealer is seat 0. This lives in the tests on purpose: the
server itself has no way to choose its decks.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from a checkout

import crisp_server.rooms.table as room_module
from crisp_server.__main__ import main

DECKS: list[list[str]] = json.loads(os.environ["CRISP_TEST_DECKS"])


def _rigged_shuffle(items: list[Any]) -> None:
    items[:] = DECKS.pop(0) if DECKS else items


room_module.shuffle = _rigged_shuffle  # type: ignore[attr-defined]
room_module.secrets = SimpleNamespace(randbelow=lambda n: 0, token_hex=secrets.token_hex)  # type: ignore[attr-defined,assignment]

if __name__ == "__main__":
    sys.exit(main(["serve"]))
