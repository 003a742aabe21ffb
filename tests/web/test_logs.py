"""No log line carries a seat token or a card: logs may be shipped anywhere."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from crisp_server.engine import FULL_DECK
from crisp_server.logs import JsonFormatter, TextFormatter, quiet_libraries
from tests.web.harness import running_server

CARD = re.compile(r"\b(" + "|".join(FULL_DECK) + r")\b")


async def test_a_game_logs_no_token_and_no_card(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    quiet_libraries()  # as the server's logging setup does, even at CRISP_LOG_LEVEL=debug
    caplog.set_level(logging.DEBUG)
    async with running_server(persist=True, data_dir=tmp_path) as server:
        _, (ana, ben) = await server.table(["Ana", "Ben"])
        mover = ana if ana.my_turn() else ben
        await mover.draw()
        await (mover.discard() if "discard" in mover.you["can"] else mover.king())  # a drawn King is played
        await mover.send({"type": "swap", "slot": "nowhere"})
        await mover.next_message("error")
        tokens = [ana.token, ben.token]
    lines = [JsonFormatter().format(r) for r in caplog.records] + [TextFormatter().format(r) for r in caplog.records]
    assert any("room created" in line for line in lines), "the test saw the server's logs"
    for line in lines:
        assert not any(token and token in line for token in tokens), line
        assert not CARD.search(line), line
