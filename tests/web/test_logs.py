"""No log line carries a seat token or a card: logs may be shipped anywhere. A client's mistake is no server
error: it is logged at INFO, without a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Iterator
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
        await mover.play_drawn()
        await mover.send({"type": "swap", "slot": "nowhere"})
        await mover.next_message("error")
        tokens = [ana.token, ben.token]
    lines = [JsonFormatter().format(r) for r in caplog.records] + [TextFormatter().format(r) for r in caplog.records]
    assert any("room created" in line for line in lines), "the test saw the server's logs"
    for line in lines:
        assert not any(token and token in line for token in tokens), line
        assert not CARD.search(line), line


@contextlib.contextmanager
def server_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Capture uvicorn's loggers too (its own logging setup keeps them from the root logger)."""
    uvicorn_log = logging.getLogger("uvicorn")
    uvicorn_log.addHandler(caplog.handler)
    caplog.set_level(logging.INFO)
    try:
        yield
    finally:
        uvicorn_log.removeHandler(caplog.handler)


def errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize(
    ("frame", "text", "code"),
    [
        (b'{"type": "ping"}', False, 1003),  # binary: the protocol is text frames
        (b'{"type": "ping", "n": "\xff\xfe"}', True, 1007),  # a text frame that is not UTF-8
        (b" " * 70_000, True, 1009),  # beyond what the WebSocket layer reads at all
    ],
    ids=["binary", "not-utf8", "too-big"],
)
async def test_a_refused_frame_closes_the_socket_with_its_code_and_logs_no_error(
    caplog: pytest.LogCaptureFixture, frame: bytes, text: bool, code: int
) -> None:
    async with running_server() as server:
        with server_logs(caplog):
            ana = await server.client()
            ben = await server.client()
            room = await ana.create("Ana")
            await ben.join(room, "Ben")
            await ben.ws.send(frame, text=text)
            await asyncio.wait_for(ben.ws.wait_closed(), 5)
            assert ben.ws.close_code == code
            # The other player's room goes on.
            assert (await ana.request({"type": "ping"}))["type"] == "pong"
            assert not errors(caplog), caplog.text
            if code != 1009:  # (websockets refuses that one before the server sees it, silently)
                assert any(r.levelno == logging.INFO and str(code) in r.getMessage() for r in caplog.records)
