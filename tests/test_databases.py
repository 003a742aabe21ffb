"""The tests' PostgreSQL (tests/databases.py): without CRISP_TEST_DATABASE_URL, a cluster of the run's own where
PostgreSQL's programs are installed; where they are not, the skip says how to install them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import databases


def test_the_programs_are_found_in_debians_folder_the_newest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for version in ("13", "15", "16"):
        folder = tmp_path / version / "bin"
        folder.mkdir(parents=True)
        for name in databases.PROGRAMS if version != "16" else ("initdb",):  # 16 is only partly installed
            (folder / name).touch()
    assert databases._pg_bin(tmp_path) == tmp_path / "15" / "bin"


def test_without_the_programs_the_reason_says_how_to_install_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert databases._pg_bin(tmp_path) is None
    problem = databases.own_cluster_problem(None)
    assert problem is not None
    assert "apt-get install postgresql" in problem
    assert "CRISP_TEST_DATABASE_URL" in problem


@pytest.mark.skipif(databases.PG_BIN is None, reason=databases.INSTALL)
def test_a_cluster_of_the_runs_own_starts_takes_a_database_and_is_removed() -> None:
    cluster = databases.Cluster()
    try:
        cluster.start()
        cluster.createdb("crisp_probe")
        assert (cluster.data / "postmaster.pid").exists()
    finally:
        cluster.remove()
    assert not cluster.dir.exists()
