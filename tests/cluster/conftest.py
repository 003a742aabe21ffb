"""Fixtures of the cluster tests: ``make_cluster`` (nodes on a throwaway PostgreSQL database, behind HAProxy)
and ``cluster`` (three of them, the harness's settings). Without PostgreSQL (``CRISP_TEST_DATABASE_URL``) or
HAProxy these tests are skipped, and fail under CI=true. A failed test's report ends with every log's tail."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.harness import Cluster, haproxy_binary, require
from tests.databases import PG_AVAILABLE, PG_PROBLEM, database

MakeCluster = Callable[..., Cluster]

_CLUSTERS = pytest.StashKey[list[Cluster]]()


@pytest.fixture
def make_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeCluster]:
    """``make_cluster(nodes=3, **options)``: a started :class:`Cluster` (options as its constructor's) on a
    database of its own; everything is stopped and the database dropped when the test ends."""
    require(PG_AVAILABLE, f"the cluster tests need PostgreSQL: {PG_PROBLEM}")
    require(haproxy_binary() is not None, "no haproxy (apt-get install haproxy)")
    clusters = request.node.stash.setdefault(_CLUSTERS, [])
    with ExitStack() as stack:

        def make(nodes: int = 3, **options: Any) -> Cluster:
            n = len(clusters) + 1
            url = stack.enter_context(database("postgresql", tmp_path))
            made = Cluster(tmp_path / f"cluster{n}", url, nodes, **options)
            clusters.append(made)  # before it starts: a start that fails shows its logs too
            stack.enter_context(made)
            return made

        yield make


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    """A migrated throwaway PostgreSQL database (for nodes in the test's own process)."""
    from crisp_server.store.migrate import upgrade

    require(PG_AVAILABLE, f"the cluster tests need PostgreSQL: {PG_PROBLEM}")
    with database("postgresql", tmp_path) as url:
        upgrade(url)
        yield url


@pytest.fixture
def cluster(make_cluster: MakeCluster) -> Cluster:
    """Three nodes behind HAProxy, with the harness's short leases."""
    return make_cluster()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    clusters: list[Cluster] = item.stash.get(_CLUSTERS, [])
    if report.failed:
        for n, made in enumerate(clusters, 1):
            report.sections.append((f"cluster {n}: the end of each log ({call.when})", made.tails()))
    return report
