"""Pacing in real use (issue 27): an asyncio service under uvicorn (its own
process), guarded by ``sds.asgi.SdsMiddleware`` with a paced point, calls a
downstream that accepts at most ``RATE`` calls per wall-clock second and
refuses the rest. A burst of ``10 * RATE`` requests at once reaches the
downstream evenly spaced, ``1000 / RATE`` ms apart, never more than
``RATE`` in a second; the requests whose wait would pass
``maxQueueingTimeMs`` are refused by the service (503) and never reach it.

The allowance (stated in py/README.md, "Warm-up, pacing and slow calls"):
the core decides on the ms clock and the middleware sleeps ``wait_ms``
from when it got the entry, so a call runs at its slot, never earlier than
``EARLY_MS`` (the enter time rounded down to the ms), and later by the
timer's lateness and the loopback hops (a few ms; more when the service's
process waits for a CPU). Calls ``i`` and ``i + RATE`` are 1000 ms apart
less that lateness, so a 1 s window holds ``RATE`` calls, or ``RATE + 1``
when a late call and a boundary meet, plus one more for every
``1000 / RATE`` ms the latest call was late (a process that waited that
long for a CPU). The downstream counts by the wall-clock second; the test
measures the worst lateness, asserts the counts within ``RATE + 1 +
floor(worst / STEP_MS)`` (``RATE + 1`` on a quiet machine) and prints the
figures.

This module is also the service uvicorn loads (``paced_app``, a factory
reading ``DOWNSTREAM_PORT``)."""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from helpers import stop_server, wait_for
from redis_server import free_port

RATE = 20
BURST = 10 * RATE
QUEUE_MS = 9_000
STEP_MS = 1000 // RATE
# A call's distance from its slot: never earlier than EARLY_MS (the enter
# time's rounding down to the ms), half within it, 95 % no later than
# JITTER_MS (on a loaded machine).
EARLY_MS = 2
JITTER_MS = 10
TESTS = Path(__file__).resolve().parent


def paced_app() -> Any:
    """The service: ``GET /call`` calls the downstream once (a TCP line
    ``call``, answered ``ok`` or ``refused``) and answers 200 or 502; its
    point ``downstream`` paces those calls at ``RATE`` a second."""
    import sds
    from sds.asgi import SdsMiddleware
    from sds.web import Route

    port = int(os.environ["DOWNSTREAM_PORT"])

    async def call(scope: Any, receive: Any, send: Any) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"call " + scope["query_string"] + b"\n")
        answer = await reader.readline()
        writer.close()
        status = 200 if answer == b"ok\n" else 502
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": answer})

    client = sds.Client()
    client.set_strategy("downstream", {"tokenBucketGeneratedTokensInSecond": RATE,
                                       "maxQueueingTimeMs": QUEUE_MS})
    return SdsMiddleware(call, client=client, routes={"/call": Route(point="downstream")})


class Downstream:
    """A TCP server on its own thread and loop that counts its calls per
    wall-clock second (``extra``: the seconds that took ``RATE + 1``) and
    records every call's wall-clock and monotonic times."""

    def __init__(self) -> None:
        self.per_second: Counter[int] = Counter()
        self.calls: List[Tuple[float, float]] = []
        self.extra = 0
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="downstream", daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.server = server
        self.ready.set()
        self.loop.run_forever()
        server.close()
        self.loop.run_until_complete(server.wait_closed())
        self.loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not (await reader.readline()).startswith(b"call"):
            # A connection that sent no call (a port probe) is no call.
            writer.close()
            return
        wall, mono = time.time(), time.monotonic()
        second = int(wall)
        self.per_second[second] += 1
        self.calls.append((wall, mono))
        self.extra += self.per_second[second] == RATE + 1
        writer.write(b"ok\n")
        await writer.drain()
        writer.close()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Tuple[int, Downstream]]:
    downstream = Downstream()
    port = free_port()
    log = open(tmp_path / "uvicorn.log", "w")
    env = dict(os.environ, DOWNSTREAM_PORT=str(downstream.port))
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "test_pacing_service:paced_app", "--app-dir", str(TESTS),
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"],
        env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        def listening() -> bool:
            assert process.poll() is None, (tmp_path / "uvicorn.log").read_text()
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        wait_for("uvicorn listening", listening, within=30)
        yield port, downstream
    finally:
        stop_server(process, log)
        downstream.stop()


async def get(port: int, path: str) -> Tuple[int, float]:
    """(status, seconds until the answer) of one request on its own
    connection."""
    start = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: service\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return int(answer.split(b" ", 2)[1]), time.monotonic() - start


def test_a_burst_reaches_the_downstream_paced_at_its_rate(service: Tuple[int, Downstream]) -> None:
    port, downstream = service

    async def burst() -> List[Tuple[int, float]]:
        # One call first, as a running service has made: the first
        # connection's setup (the resolver's thread) is not the pacing's.
        assert (await get(port, "/call?warm-up"))[0] == 200
        return await asyncio.gather(*(get(port, f"/call?{i}") for i in range(BURST)))

    started = time.monotonic()
    answers = asyncio.run(burst())
    took = time.monotonic() - started
    statuses = Counter(status for status, _ in answers)
    # Waits up to 9 000 ms are admitted (181 slots, a few more as the burst's
    # own enters spread over some ms); the rest would wait longer: 503.
    assert set(statuses) == {200, 503} and 180 <= statuses[200] <= 185, statuses
    assert len(downstream.calls) == 1 + statuses[200]

    # The burst's calls against a schedule of one every 50 ms (its origin
    # the median fit): never early; late by a few ms (the timer, the hops),
    # more only when the service's process waited for a CPU.
    monos = sorted(mono for _, mono in downstream.calls)
    burst_ms = [(m - monos[1]) * 1000 for m in monos[1:]]
    origin = statistics.median(t - i * STEP_MS for i, t in enumerate(burst_ms))
    errors = [t - origin - i * STEP_MS for i, t in enumerate(burst_ms)]
    gaps = [b - a for a, b in zip(burst_ms, burst_ms[1:])]
    late = sorted(errors)
    p95 = late[int(len(late) * 0.95)]
    assert late[0] >= -EARLY_MS, f"a call {late[0]:.1f} ms early"
    assert statistics.median(abs(e) for e in errors) <= EARLY_MS
    assert p95 <= JITTER_MS, f"95 % within {p95:.1f} ms of the schedule"
    assert late[-1] < 10 * STEP_MS, f"a call {late[-1]:.1f} ms late"
    allowance = 1 + int(late[-1] // STEP_MS)
    # Any two calls RATE apart are a second apart, less the lateness.
    apart = [(b - a) * 1000 for a, b in zip(monos, monos[RATE:])]
    assert min(apart) >= 1000 - late[-1] - EARLY_MS, min(apart)
    per_second = max(downstream.per_second.values())
    assert per_second <= RATE + allowance, (per_second, allowance)
    # Sliding 1 s windows: the most calls any holds.
    ms = [(m - monos[0]) * 1000 for m in monos]
    windows = max(sum(1 for t in ms[i:] if t - ms[i] < 1000) for i in range(len(ms)))
    assert windows <= RATE + allowance, (windows, allowance)
    # What the clients saw: the admitted answers came 50 ms apart, the
    # last after about 9 s; the refusals at once.
    latencies = sorted(t * 1000 for status, t in answers if status == 200)
    refusals = [t * 1000 for status, t in answers if status == 503]
    assert latencies[-1] >= QUEUE_MS - 2 * STEP_MS and max(refusals) < 1000
    print(f"\n{BURST} requests in {took:.2f} s: {statuses[200]} admitted, {statuses[503]} refused (503, "
          f"within {max(refusals):.0f} ms); downstream: {len(monos)} calls with the warm-up one, max {per_second} "
          f"in a wall-clock second ({downstream.extra} seconds with the extra call), max {windows} in a sliding 1 s "
          f"window (allowance {allowance}); gaps {min(gaps):.1f}..{max(gaps):.1f} ms, from the 50 ms "
          f"schedule {min(errors):+.1f}..{max(errors):+.1f} ms (95 % within {p95:+.1f}); calls {RATE} apart >= {min(apart):.1f} ms; "
          f"latency first {latencies[0]:.1f} ms, last {latencies[-1]:.1f} ms")
