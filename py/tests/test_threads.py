"""Threads: exact counts, bounded permits."""

from __future__ import annotations

import threading
from typing import Callable, List

import sds

THREADS = 8
PER_THREAD = 5000


def run_threads(target: Callable[[int], None]) -> None:
    start = threading.Barrier(THREADS)

    def body(i: int) -> None:
        start.wait()
        target(i)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_every_visit_is_counted_once() -> None:
    client = sds.Client(capacity=8)
    point = client.point("p")

    def work(i: int) -> None:
        for _ in range(PER_THREAD):
            point.enter(now_ms=50_000).exit(now_ms=50_000)
            client.enter("q", now_ms=50_000).exit(now_ms=50_000)

    run_threads(work)
    for name in ("p", "q"):
        stats = client.stats(name, now_ms=50_000)
        assert (stats["visit"], stats["concurrent"]) == (THREADS * PER_THREAD, 0)


def test_visit_threshold_admits_exactly_its_number() -> None:
    client = sds.Client(capacity=8)
    client.set_strategy("p", {"visitThreshold": 1000})
    passed: List[int] = [0] * THREADS

    def work(i: int) -> None:
        for _ in range(PER_THREAD):
            entry = client.enter("p", now_ms=80_000)
            passed[i] += not entry.downgraded
            entry.exit(now_ms=80_000)

    run_threads(work)
    assert sum(passed) == 1000
    assert client.stats("p", now_ms=80_000)["downgrade"] == THREADS * PER_THREAD - 1000


def test_concurrent_threshold_bounds_held_permits() -> None:
    client = sds.Client(capacity=8)
    client.set_strategy("p", {"concurrentThreshold": 3})
    lock = threading.Lock()
    held = 0
    peak = 0

    def work(i: int) -> None:
        nonlocal held, peak
        for _ in range(2000):
            entry = client.enter("p", now_ms=90_000)
            if not entry.downgraded:
                with lock:
                    held += 1
                    peak = max(peak, held)
                with lock:
                    held -= 1
            entry.exit(now_ms=90_000)

    run_threads(work)
    assert 1 <= peak <= 3
    assert client.stats("p", now_ms=90_000)["concurrent"] == 0
    assert client.stats("p", now_ms=100_000)["lastCycle"]["concurrentNum"] <= 3


def test_many_threads_insert_distinct_points_exactly_once() -> None:
    client = sds.Client(capacity=THREADS * 10 + 10)

    def work(i: int) -> None:
        for n in range(10):
            for name in (f"t{i}-{n}", f"shared-{n}"):
                client.enter(name, now_ms=1).exit(now_ms=1)

    run_threads(work)
    assert len(client) == THREADS * 10 + 10
    assert all(client.stats(f"shared-{n}", now_ms=1)["visit"] == THREADS for n in range(10))
