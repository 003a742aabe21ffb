"""Prometheus metrics at ``/metrics``: rooms by phase, connections, messages, latencies.

Each app has its own registry (tests build many apps in one process). Nothing here carries a name, a
token or a card: only counts and durations.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left
from collections import Counter as Tally
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector, generate_latest
from prometheus_client import metrics as prometheus_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from crisp_server.rooms.phase import Phase

#: Action-to-publish: from the frame's arrival to the views handed to the connections (commit included).
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)


class _RoomsByPhase(Collector):
    def __init__(self, phases: Callable[[], list[Phase]]) -> None:
        self._phases = phases

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("crisp_rooms", "Rooms in this process, by phase", labels=["phase"])
        counts = Tally(p.value for p in self._phases())
        for phase in Phase:
            family.add_metric([phase.value], counts.get(phase.value, 0))
        yield family


class _Frames(Collector):
    """Frames in and out: counted with a plain addition per frame, read when scraped (a prometheus
    ``Counter`` takes a lock for each one: ~1.5% of a busy server's CPU)."""

    def __init__(self) -> None:
        self.received = 0
        self.sent = 0

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily("crisp_messages_in", "WebSocket frames received", value=self.received)
        yield CounterMetricFamily("crisp_messages_out", "WebSocket frames sent", value=self.sent)


class _Histogram:
    """A histogram kept in a plain list (one count per bucket, not cumulative: as a prometheus ``Histogram``
    keeps them, each observation in the first bucket whose bound is not below it), read when scraped: a
    ``Histogram``'s ``observe`` takes two locks (issue 19)."""

    __slots__ = ("bounds", "counts", "created", "documentation", "les", "name", "sum")

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.bounds = [*map(float, buckets), math.inf]
        self.les: list[str] = [floatToGoString(b) for b in self.bounds]  # type: ignore[no-untyped-call]
        self.counts = [0] * len(self.bounds)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, amount: float) -> None:
        self.counts[bisect_left(self.bounds, amount)] += 1
        self.sum += amount

    def metric(self) -> Metric:
        """The samples a prometheus ``Histogram`` gives: cumulative buckets, count, sum and created."""
        family = Metric(self.name, self.documentation, "histogram")
        total = 0.0
        for le, count in zip(self.les, self.counts, strict=True):
            total += count
            family.add_sample(self.name + "_bucket", {"le": le}, total)
        family.add_sample(self.name + "_count", {}, total)
        family.add_sample(self.name + "_sum", {}, self.sum)
        if prometheus_metrics._use_created:
            family.add_sample(self.name + "_created", {}, self.created)
        return family


class _Count:
    """A counter kept in a plain number, read when scraped (as a prometheus ``Counter`` exports it)."""

    __slots__ = ("created", "documentation", "name", "value")

    def __init__(self, name: str, documentation: str) -> None:
        self.name = name
        self.documentation = documentation
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1) -> None:
        self.value += amount

    def metric(self) -> Metric:
        created = self.created if prometheus_metrics._use_created else None
        return CounterMetricFamily(self.name, self.documentation, value=self.value, created=created)


class _Plain(Collector):
    """The per-action and per-commit histograms and counter, read when scraped."""

    def __init__(self, *metrics: _Histogram | _Count) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        for metric in self._metrics:
            yield metric.metric()


class _Outages(Collector):
    """Rooms waiting for the database now, and the seconds spent with some waiting (read when scraped)."""

    def __init__(self, suspended: Callable[[], int], seconds: Callable[[], float]) -> None:
        self._suspended = suspended
        self._seconds = seconds

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "crisp_rooms_suspended", "Rooms waiting for the database after a failed commit", value=self._suspended()
        )
        yield CounterMetricFamily(
            "crisp_db_suspended_seconds",
            "Seconds spent with rooms waiting for the database (commits failing, or rooms coming back)",
            value=self._seconds(),
        )


class _Checkpoints(Collector):
    """SQLite: failed WAL checkpoints, and the WAL file's size (read when scraped)."""

    def __init__(self, failures: Callable[[], int], wal_bytes: Callable[[], int]) -> None:
        self._failures = failures
        self._wal_bytes = wal_bytes

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "crisp_db_checkpoint_failures",
            "SQLite WAL checkpoints that failed (each second's try counts)",
            value=self._failures(),
        )
        yield GaugeMetricFamily(
            "crisp_db_wal_bytes", "The size of SQLite's WAL file, as of the last checkpoint", value=self._wal_bytes()
        )


class _Leases(Collector):
    """In a cluster: rooms claimed, handed over and lost by this node (read when scraped)."""

    def __init__(self, counts: Callable[[], tuple[int, int, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[Metric]:
        claimed, handed_over, lost = self._counts()
        yield CounterMetricFamily("crisp_rooms_claimed", "Rooms this node claimed and rebuilt", value=claimed)
        yield CounterMetricFamily(
            "crisp_rooms_handed_over",
            "Rooms this node handed over (asked by another node, or draining)",
            value=handed_over,
        )
        yield CounterMetricFamily(
            "crisp_rooms_lost", "Rooms this node stopped because another node took their lease, or may have", value=lost
        )


class Metrics:
    def __init__(self, phases: Callable[[], list[Phase]]) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_RoomsByPhase(phases))
        # process_resident_memory_bytes and friends (Linux): what the load test reads before and after.
        ProcessCollector(registry=self.registry)
        self.connections = Gauge("crisp_connections", "Open WebSocket connections", registry=self.registry)
        self.frames = _Frames()
        self.registry.register(self.frames)
        self.refused = Counter(
            "crisp_messages_refused",
            "Frames refused (too large, bad, rate-limited, binary)",
            ["code"],
            registry=self.registry,
        )
        self.action_latency = _Histogram(
            "crisp_action_publish_seconds",
            "From an action's arrival to its views handed to every connection (commit included)",
            LATENCY_BUCKETS,
        )
        self.db_commit = _Histogram("crisp_db_commit_seconds", "Duration of one group commit", LATENCY_BUCKETS)
        self.db_ops = _Count("crisp_db_operations", "Operations written to the database")
        self.registry.register(_Plain(self.action_latency, self.db_commit, self.db_ops))
        self.db_failures = Counter(
            "crisp_db_commit_failures", "Commits that failed (each one a try)", registry=self.registry
        )

    def watch_outages(self, suspended: Callable[[], int], seconds: Callable[[], float]) -> None:
        """Report the rooms waiting for the database and the time spent waiting (from the registry)."""
        self.registry.register(_Outages(suspended, seconds))

    def watch_checkpoints(self, failures: Callable[[], int], wal_bytes: Callable[[], int]) -> None:
        """Report SQLite's failed checkpoints and its WAL's size (from the store)."""
        self.registry.register(_Checkpoints(failures, wal_bytes))

    def watch_leases(self, counts: Callable[[], tuple[int, int, int]]) -> None:
        """Report the cluster's claims, hand-overs and losses."""
        self.registry.register(_Leases(counts))

    def on_commit_failure(self, _reason: str) -> None:
        self.db_failures.inc()

    def received(self) -> None:
        self.frames.received += 1

    def sent(self) -> None:
        self.frames.sent += 1

    def on_commit(self, seconds: float, ops: int) -> None:
        self.db_commit.observe(seconds)
        self.db_ops.inc(ops)

    def render(self) -> bytes:
        return generate_latest(self.registry)
