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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from a checkout

from crisp_server.__main__ import main
from crisp_server.rooms import luck

DECKS: list[list[str]] = json.loads(os.environ["CRISP_TEST_DECKS"])


class RiggedLuck:
    """The decks of ``CRISP_TEST_DECKS`` in turn (then the last deck as it was), and seat 0 deals first."""

    def shuffle(self, items: list[Any]) -> None:
        items[:] = DECKS.pop(0) if DECKS else items

    def randbelow(self, n: int) -> int:
        return 0

    def token_hex(self, nbytes: int) -> str:
        return secrets.token_hex(nbytes)


luck.LUCK = RiggedLuck()

if __name__ == "__main__":
    sys.exit(main(["serve"]))
