"""Adaptive concurrency on a downstream that slows down when crowded
(standard library + sds only).

The downstream has 8 workers and takes 20 ms a call: up to 8 calls at
once answer in 20 ms, more wait in its queue (capacity 400 calls a
second). We send it 1 600 calls a second for 2 s, four times its capacity,
through a guarded `async def` on a point whose in-flight limit adapts:

- GRADIENT (Envoy's gradient controller, `adaptiveConcurrency` 4): measures
  the min RTT first (at its minimum limit, 3), then moves the limit every
  100 ms window by minRtt / p50; it settles near 1.25 x 8 + sqrt(10) = 13
  (its fixed point on a server that only queues), so the calls admitted
  queue briefly: 30 to 45 ms instead of 20.
- AIMD (`adaptiveConcurrency` 1) reacts to failures only, so its
  downstream here has no queue: a call that finds the 8 workers busy fails
  at once (an exception the guard counts). AIMD grows by 1 while busy and
  backs off x0.9 on each failure: it saws around 8.

Each row: the time, the limit and the RTTs the point shows
(`stats()["adaptiveLimit"]`, `adaptiveMinRttUs`, `adaptiveRttUs`), and
what the calls of the last 250 ms saw: answered, failed by the downstream,
refused by the point (the fallback, at once), latency of those answered.

    python examples/python/adaptive.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import List

import sds

WORKERS, SERVICE_S, RATE, SECONDS = 8, 0.020, 1_600, 2.0


class Overloaded(Exception):
    pass


async def run(name: str, strategy: sds.Strategy, queues: bool) -> None:
    client = sds.Client(8)
    client.set_strategy("downstream", strategy)
    point = client.point("downstream")
    workers = asyncio.Semaphore(WORKERS)
    latencies: List[float] = []
    refused = failed = 0

    async def busy() -> None:
        nonlocal refused
        refused += 1

    @point.guard(fallback=busy)
    async def call() -> None:
        start = time.monotonic()
        if not queues and workers.locked():
            raise Overloaded("all workers busy")
        async with workers:
            await asyncio.sleep(SERVICE_S)
        latencies.append((time.monotonic() - start) * 1000)

    async def request() -> None:
        nonlocal failed
        try:
            await call()
        except Overloaded:
            failed += 1

    print(f"\n{name}: {strategy!r}")
    print("    t   limit  minRtt  rtt(ms)   answered  failed  refused  p50(ms)  max(ms)")
    begin = time.monotonic()
    tasks = set()
    next_report = 0.25
    sent = 0
    while (now := time.monotonic() - begin) < SECONDS:
        # Open-loop arrivals: whatever is due by now, in one go.
        while sent < now * RATE:
            task = asyncio.ensure_future(request())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            sent += 1
        if now >= next_report:
            s = point.stats()
            done, latencies[:] = latencies[:], []
            p50 = statistics.median(done) if done else 0.0
            print(f"{now:5.2f} {s['adaptiveLimit']:7} {s['adaptiveMinRttUs'] / 1000:7.1f} "
                  f"{s['adaptiveRttUs'] / 1000:8.1f} {len(done):10} {failed:7} {refused:8} {p50:8.1f} "
                  f"{max(done, default=0.0):8.1f}")
            refused = failed = 0
            next_report += 0.25
        await asyncio.sleep(0.002)
    await asyncio.gather(*tasks)


async def main() -> None:
    await run("GRADIENT (Envoy), a downstream that queues", sds.Strategy(adaptive_concurrency=4), queues=True)
    await run("AIMD, a downstream that fails when its workers are busy",
              sds.Strategy(adaptive_concurrency=1, adaptive_min_limit=1, adaptive_initial_limit=4), queues=False)


asyncio.run(main())
