"""The protocol's JSON Schema: generated from the models, committed as it is generated, complete, and strict.

Every frame the tests' clients receive is validated against it (``tests/conftest.py``); these tests show
that the committed document is the command's output, that every engine event and error code has its
place, and that the validation rejects what the server must not send.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ValidationError

from crisp_server.engine import Code as RuleCode
from crisp_server.engine import events as engine_events
from crisp_server.rooms.publishing import Publisher
from crisp_server.wire import schema, schema_events
from crisp_server.wire.protocol import DrawMsg, Inbound, Join, Ping, ProtocolCode, parse_inbound
from crisp_server.wire.schema import InboundMessage
from tests.web.harness import Harness

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs" / "protocol.schema.json"


def test_the_committed_schema_is_the_generated_one() -> None:
    generated = subprocess.run(
        [sys.executable, "-m", "crisp_server", "schema"], capture_output=True, text=True, check=True
    ).stdout
    assert DOCUMENT.read_text(encoding="utf-8") == generated, (
        "docs/protocol.schema.json is out of date: python -m crisp_server schema > docs/protocol.schema.json"
    )


def event_models() -> dict[str, type[BaseModel]]:
    union = typing.get_args(typing.get_args(schema_events.Event)[0])
    return {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in union}


def test_every_engine_event_has_a_model_with_its_fields() -> None:
    models = event_models()
    for kind in typing.get_args(engine_events.Event):
        # ``kind`` is a property of the instances (a compiled class has no class-level value to read).
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", kind.__name__).lower()
        model = models[name]
        fields = {f.name for f in dataclasses.fields(kind)}
        assert set(model.model_fields) == {"type", *fields}, name


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


@pytest.mark.interpreted  # replaces Publisher.welcome
async def test_the_tests_see_a_frame_the_schema_does_not_allow(
    server: Harness, monkeypatch: pytest.MonkeyPatch, schema_violations: list[str]
) -> None:
    """The check every test runs can fail: a server that adds a field to its welcome is caught."""
    welcome = Publisher.welcome

    def with_a_stray_field(self: Publisher, index: int | None, token: str | None) -> bytes:
        return welcome(self, index, token)[:-1] + b',"debug":true}'

    monkeypatch.setattr(Publisher, "welcome", with_a_stray_field)
    client = await server.client()
    await client.create("Ana")
    assert len(schema_violations) == 1
    assert "debug" in schema_violations[0]
    schema_violations.clear()  # caught, as it should be: the test passes


PROTOCOL_MD = DOCUMENT.with_name("protocol.md")


def documented_messages() -> list[dict[str, Any]]:
    """Every complete message written in docs/protocol.md: the JSON blocks (one message, or one per line)
    and inline code that is a JSON object with a ``type``."""
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    found: list[dict[str, Any]] = []
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL):
        try:
            found.append(orjson.loads(block))
        except orjson.JSONDecodeError:
            found.extend(orjson.loads(line) for line in block.splitlines() if line.strip())
    for span in re.findall(r"`(\{\"type\": [^`]*\})`", text):
        with contextlib.suppress(orjson.JSONDecodeError):  # a list of field names, not a message
            found.append(orjson.loads(span))
    return found


def test_every_message_in_the_document_validates() -> None:
    inbound_types = {
        typing.get_args(m.model_fields["type"].annotation)[0] for m in typing.get_args(typing.get_args(Inbound)[0])
    }
    messages = documented_messages()
    assert len(messages) > 30
    for message in messages:
        if message["type"] in inbound_types and "v" not in message:  # ``hint`` goes both ways; answers have v
            InboundMessage.model_validate_json(orjson.dumps(message))
        else:
            schema.validate_outbound(orjson.dumps(message))


def test_the_document_names_every_message_event_error_and_close_code() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    outbound = typing.get_args(typing.get_args(schema.Outbound)[0])
    names = [typing.get_args(m.model_fields["type"].annotation)[0] for m in outbound]
    names += list(event_models())
    names += [c.value for c in (*ProtocolCode, *RuleCode)]
    names += [
        typing.get_args(m.model_fields["type"].annotation)[0] for m in typing.get_args(typing.get_args(Inbound)[0])
    ]
    missing = [name for name in names if f"`{name}`" not in text]
    assert missing == []
    codes = {
        int(c)
        for c in re.findall(
            r"CLOSE_\w+: Final = (\d+)", "".join(p.read_text() for p in (ROOT / "crisp_server").rglob("*.py"))
        )
    }
    assert codes >= {1000, 1008, 1011, 1012, 1013, 4001, 4003}
    assert [c for c in sorted(codes) if f"| {c} |" not in text] == []
