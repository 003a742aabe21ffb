"""The example records (copied from the shared rules folder) replay to their expected results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

RECORDS = Path(__file__).resolve().parent.parent / "records"
CASES = sorted(p for p in RECORDS.glob("*.json") if not p.name.endswith(".expected.json"))


def _expected(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    return data


def test_there_are_records() -> None:
    assert len(CASES) >= 5


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_replay_command_gives_the_expected_result(path: Path) -> None:
    expected = _expected(path)
    run = subprocess.run(
        [sys.executable, "-m", "crisp_server", "replay", str(path)], capture_output=True, text=True, check=False
    )
    if "exit_status" in expected:
        assert run.returncode == expected["exit_status"]
        assert run.stdout == ""
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, "a malformed record gives a one-line message"
        assert str(expected["error_mentions"]) in lines[0]
        assert "Traceback" not in run.stderr
        return
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == expected


def test_several_files_give_one_compact_line_each_in_order() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "crisp_server", "replay", *map(str, CASES)], capture_output=True, text=True, check=False
    )
    lines = run.stdout.splitlines()
    assert len(lines) == len(CASES)
    malformed = False
    for path, line in zip(CASES, lines, strict=True):
        got = json.loads(line)
        assert line == json.dumps(got, separators=(",", ":")), "one compact object per line"
        expected = _expected(path)
        if "exit_status" in expected:
            malformed = True
            assert set(got) == {"error"}
            assert str(expected["error_mentions"]) in got["error"]
        else:
            assert got == expected
    assert run.returncode == (2 if malformed else 0)


MALFORMED_RESUMES = [
    ([{"after": 4, "at": 1500}], "resumes[0].after"),  # past the round's three actions
    ([{"after": 2, "at": 1500}, {"after": 1, "at": 800}], "resumes[1].after"),  # out of order
    ([{"after": 2, "at": 1500}, {"after": 2, "at": 1400}], "resumes[1].at"),  # time going back, same place
    ([{"after": 2, "at": 900}], "resumes[0].at"),  # before the action it follows (at 1000)
    ([{"after": 1, "at": 1200}], "resumes[0].at"),  # after the action it precedes (at 1000)
    ([{"after": 3, "at": 40000}], "resumes[0].at"),  # after the round's end_at (31600)
    ([{"after": -1, "at": 0}], "resumes[0].after"),
    ([{"after": "2", "at": 1500}], "resumes[0].after"),
    ([{"after": 2}], "resumes[0]"),
    ({"after": 2, "at": 1500}, "resumes"),
]


@pytest.mark.parametrize(("resumes", "where"), MALFORMED_RESUMES)
def test_a_resume_that_breaks_the_format_is_malformed(tmp_path: Path, resumes: object, where: str) -> None:
    """docs/record-format.md: entries in order, `after` at most the number of actions, `at` between the actions
    around it (and not after `end_at`); a record that breaks these rules is malformed (exit 2, one line)."""
    record = json.loads((RECORDS / "restart-resumes.json").read_text())
    record["rounds"][0]["resumes"] = resumes
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    run = subprocess.run(
        [sys.executable, "-m", "crisp_server", "replay", str(path)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"rounds[0].{where}" in lines[0]


def _first_action(record: dict[str, Any], do: str) -> tuple[int, int]:
    for r, round_ in enumerate(record["rounds"]):
        for a, action in enumerate(round_["actions"]):
            if action["do"] == do:
                return r, a
    raise AssertionError(f"no {do} in the record")


@pytest.mark.parametrize("value", [0, None, ["left"], {"slot": "left"}, 1.5, True])
@pytest.mark.parametrize(("do", "key"), [("swap", "slot"), ("queen", "slot"), ("queen", "target_slot")])
def test_a_slot_that_is_not_a_name_is_malformed(tmp_path: Path, do: str, key: str, value: object) -> None:
    """Any JSON value but a slot's name where a slot belongs: malformed, one line naming the field, exit 2 (the
    compiled engine refused a non-string with a TypeError and a traceback)."""
    record = json.loads((RECORDS / "kings-queen-jack.json").read_text())
    r, a = _first_action(record, do)
    record["rounds"][r]["actions"][a][key] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    run = subprocess.run(
        [sys.executable, "-m", "crisp_server", "replay", str(path)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert f"rounds[{r}].actions[{a}].{key}: unknown slot" in lines[0]
