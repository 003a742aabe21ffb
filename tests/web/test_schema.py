"""The protocol's JSON Schema: generated from the models, committed as it is generated, complete, and strict.

Every frame the tests' clients receive is validated against it (``tests/conftest.py``); these tests show
that the committed document is the command's output, that every engine event and error code has its
place, and that the validation rejects what the server must not send.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ValidationError

from crisp_server import schema
from crisp_server.engine import Code as RuleCode
from crisp_server.engine import events as engine_events
from crisp_server.protocol import DrawMsg, Join, Ping, ProtocolCode, parse_inbound
from crisp_server.rooms.room import Room
from tests.web.harness import Harness

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


def test_the_committed_schema_is_the_generated_one() -> None:
    generated = subprocess.run(
        [sys.executable, "-m", "crisp_server", "schema"], capture_output=True, text=True, check=True
    ).stdout
    assert DOCUMENT.read_text(encoding="utf-8") == generated, (
        "docs/protocol.schema.json is out of date: python -m crisp_server schema > docs/protocol.schema.json"
    )


def event_models() -> dict[str, type[BaseModel]]:
    union = typing.get_args(typing.get_args(schema.Event)[0])
    return {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in union}


def test_every_engine_event_has_a_model_with_its_fields() -> None:
    models = event_models()
    for kind in typing.get_args(engine_events.Event):
        model = models[kind.kind]
        fields = {f.name for f in dataclasses.fields(kind)}
        assert set(model.model_fields) == {"type", *fields}, kind.kind


def test_every_error_code_is_in_the_schema() -> None:
    codes = set(typing.get_args(schema.ErrorMessage.model_fields["code"].annotation))
    assert codes == {c.value for c in ProtocolCode} | {c.value for c in RuleCode}


def test_inbound_fields_not_defined_are_ignored_and_a_draw_is_from_the_deck() -> None:
    draw = parse_inbound('{"type": "draw"}')
    assert isinstance(draw, DrawMsg)
    assert draw.source == "deck"
    # "source" (the name of drew's field) is not another name for "from": it is ignored like any other.
    draw = parse_inbound('{"type": "draw", "source": "discard", "id": 7}')
    assert isinstance(draw, DrawMsg)
    assert draw.source == "deck"
    assert parse_inbound('{"type": "ping", "id": "a1", "nested": {"x": [1]}}') == Ping(type="ping")
    join = parse_inbound('{"type": "join", "room": "K7QMXT", "name": "Ana", "seat": 3, "host": true}')
    assert join == Join(type="join", room="K7QMXT", name="Ana", lang="en")


async def a_drawn_card(server: Harness) -> dict[str, Any]:
    """An update as the player who just drew from the deck receives it."""
    _, (ana, ben) = await server.table(["Ana", "Ben"], discard_draw=True)
    mover = ana if ana.my_turn() else ben
    return await mover.draw()


def mutations(update: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Wrong versions of a real update, each breaking one promise of the protocol."""

    def changed(why: str, change: Any) -> tuple[str, dict[str, Any]]:
        copy: dict[str, Any] = orjson.loads(orjson.dumps(update))
        change(copy)
        return why, copy

    r = "round"
    return [
        changed("an extra field", lambda m: m["you"].update(secret=1)),
        changed("a field missing", lambda m: m["clock"].pop("deadline_in")),
        changed("drawn without its card", lambda m: m["table"][r]["drawn"].pop("card")),
        changed("drawn's origin misspelled", lambda m: m["table"][r]["drawn"].update({"from": "pile"})),
        changed("a window without closes_at", lambda m: m["table"][r].update(window={"seat": 0})),
        changed("not a card", lambda m: m["you"].update(drawn_card="1H")),
        changed("a negative clock", lambda m: m["clock"].update(may_draw_in=-5)),
        changed("a number as text", lambda m: m.update(v=str(m["v"]))),
        changed("an unknown move", lambda m: m["you"].update(can=["fly"])),
        changed("an unknown event", lambda m: m["events"].append({"type": "teleported"})),
        changed("an event without its field", lambda m: m["events"].append({"type": "drew", "seat": 0})),
        changed("an unknown message", lambda m: m.update(type="news")),
    ]


async def test_a_real_update_validates_and_each_wrong_one_is_rejected(server: Harness) -> None:
    update = await a_drawn_card(server)
    assert update["you"]["drawn_card"] is not None
    schema.validate_outbound(orjson.dumps(update))
    accepted = []
    for why, wrong in mutations(update):
        try:
            schema.validate_outbound(orjson.dumps(wrong))
        except ValidationError:
            continue
        accepted.append(why)
    assert accepted == []


async def test_the_tests_see_a_frame_the_schema_does_not_allow(
    server: Harness, monkeypatch: pytest.MonkeyPatch, schema_violations: list[str]
) -> None:
    """The check every test runs can fail: a server that adds a field to its welcome is caught."""
    welcome = Room._welcome

    def with_a_stray_field(self: Room, index: int | None, token: str | None) -> bytes:
        return welcome(self, index, token)[:-1] + b',"debug":true}'

    monkeypatch.setattr(Room, "_welcome", with_a_stray_field)
    client = await server.client()
    await client.create("Ana")
    assert len(schema_violations) == 1
    assert "debug" in schema_violations[0]
    schema_violations.clear()  # caught, as it should be: the test passes
