"""``bench/compare.py``: its arguments and what it prints of several runs (no server is started)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "bench" / "compare.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_compare", module)
    spec.loader.exec_module(module)
    return module


compare = _load()


def _figures(views_per_cpu_s: float, cpu_s: float, p99: float, *, errors: int = 0, ok: bool = True) -> dict[str, Any]:
    return {
        "actions_per_s": views_per_cpu_s / 10,
        "messages_per_s": views_per_cpu_s,
        "server_cpu_s": cpu_s,
        "server_system_s": cpu_s / 4,
        "views_per_cpu_s": views_per_cpu_s,
        "p50_ms": p99 / 4,
        "p99_ms": p99,
        "window": 30.0,
        "rss_before": 100 * 2**20,
        "rss_after": 100 * 2**20 + 4 * 1000 * 28 * 1024,  # 28 KB for each of 1,000 rooms x 4
        "errors": errors,
        "disconnects": 0,
        "failed_rooms": 0,
        "ok": ok,
    }


def _run(crisp: float, bare: float, p99: float, **kwargs: Any) -> list[tuple[int, str, dict[str, Any]]]:
    return [(1000, "crisp", _figures(crisp, 12.0, p99, **kwargs)), (1000, "bare", _figures(bare, 6.0, 2.0))]


def test_the_arguments() -> None:
    args = compare.parse_args(["--rooms", "1000,2000", "--runs", "3", "--together"])
    assert (args.rooms, args.runs, args.together) == ([1000, 2000], 3, True)
    default = compare.parse_args([])
    assert (default.rooms, default.runs, default.together) == ([500, 1000, 2000], 1, False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--runs", "0"], "--runs: at least 1, not 0"),
        (["--runs", "two"], "--runs: a whole number, not 'two'"),
        (["--rooms", "1000,x"], "room counts are whole numbers"),
        (["--rooms", "0"], "each room count is at least 1"),
    ],
)
def test_bad_arguments_are_refused_with_a_reason(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        compare.parse_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_the_servers_take_turns_to_go_first() -> None:
    assert [compare.order_of(run) for run in range(3)] == [("crisp", "bare"), ("bare", "crisp"), ("crisp", "bare")]


def test_one_run_prints_its_table_alone() -> None:
    lines = compare.report([_run(6000, 10000, 8.0)], 4)
    assert len(lines) == 3
    assert lines[1].split()[:2] == ["1000", "crisp"]
    assert lines[1].endswith("60%")
    assert "28.0" in lines[1].split()  # KB per connection


def test_several_runs_print_each_run_then_the_medians() -> None:
    runs = [_run(6000, 10000, 8.0), _run(5000, 10000, 20.0, errors=3), _run(7000, 10000, 6.0, ok=False)]
    lines = compare.report(runs, 4)
    assert lines.count("") == 3
    assert [line for line in lines if line.startswith(("run ", "medians"))] == [
        "run 1 of 3",
        "run 2 of 3",
        "run 3 of 3",
        "medians of 3 runs",
    ]
    crisp = [line for line in lines if line.split()[:2] == ["1000", "crisp"]]
    assert [line.split()[-1] for line in crisp[:3]] == ["60%", "50%", "70%"]
    median = crisp[3].split()
    # views per CPU-second, p99 and the CPU share are each the median of the runs; errors the most of any.
    assert median[6] == "6,000"
    assert median[8] == "8.0"
    assert median[4] == "40"  # 12 s of a 30 s window
    assert median[10] == "3"
    assert crisp[3].endswith("60% (50-70%: 60%, 50%, 70%)")
    medians = compare.medians(runs)
    assert medians[0][2]["ok"] is False
    assert medians[1][2]["views_per_cpu_s"] == 10000


def test_a_run_without_a_share_is_shown_as_such_and_left_out_of_the_median() -> None:
    """A server that measured no views per CPU-second (a run too short for its CPU to be counted)."""
    runs = [_run(6000, 10000, 8.0), _run(5000, 10000, 8.0), _run(7000, 10000, 8.0)]
    runs[0][1][2]["views_per_cpu_s"] = None
    lines = compare.report(runs, 4)
    assert lines[-2].endswith("60% (50-70%: -, 50%, 70%)")
