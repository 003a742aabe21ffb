"""/metrics moves while a game is played: rooms by phase, connections, messages, latencies, database writes."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.web.harness import running_server


async def _scrape(base: str) -> dict[str, float]:
    async with httpx.AsyncClient(base_url=base) as http:
        response = await http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return values


async def test_metrics_follow_a_game(tmp_path: Path) -> None:
    async with running_server(persist=True, data_dir=tmp_path) as server:
        before = await _scrape(server.http)
        assert before["crisp_connections"] == 0
        _, (ana, ben) = await server.table(["Ana", "Ben"])
        mover = ana if ana.my_turn() else ben
        await mover.draw()
        # A King from the draw pile must be played; any other card may be discarded: a second action.
        await mover.play_drawn()
        await mover.request({"type": "ping"})
        await mover.send({"type": "nonsense"})
        await mover.next_message("error")
        after = await _scrape(server.http)
    assert after["crisp_connections"] == 2
    assert after["crisp_rooms{phase=play}"] == 1
    assert after["crisp_rooms{phase=lobby}"] == 0
    assert after["crisp_messages_in_total"] >= 8
    assert after["crisp_messages_out_total"] > after["crisp_messages_in_total"]
    assert after["crisp_messages_refused_total{code=bad_message}"] == 1
    assert after["crisp_action_publish_seconds_count"] == 2  # the draw and the discard (or King)
    assert after["crisp_db_commit_seconds_count"] > before.get("crisp_db_commit_seconds_count", 0)
    assert after["crisp_db_operations_total"] >= 6  # the room, game, round, two actions...
