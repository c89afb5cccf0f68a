"""Warm-up, pacing and the slow-call rate (issue 27) through the public
API: the decisions with explicit times (the core's formulas; the peers'
own sequences are the conformance scenarios ``shaping-*.json``), the new
fields' validation word for word, ``Entry.wait_ms`` on every kind of
entry, and the sugar actually waiting before the protected code, measured
with a monotonic clock."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, NamedTuple, Optional

import pytest

import sds
from helpers import refused_everywhere

T = 1_700_000_000_000
NEW_FIELDS = ["slow_call_rate_threshold", "slow_call_rate_start", "warm_up_period_sec", "cold_factor",
              "max_queueing_time_ms"]
# How much later than its slot the sugar may run the code: the enter time
# is the ms clock rounded down (up to 1 ms), the sleep wakes a little late.
LATE_MS = 40.0


def pace(client: sds.Client, rate: int, queue_ms: int, point: str = "p", **more: int) -> sds.Point:
    client.set_strategy(point, sds.Strategy(token_bucket_generated_tokens_in_second=rate,
                                            max_queueing_time_ms=queue_ms, **more))
    return client.point(point)


def waits(enter: Callable[..., sds.Entry], now: int, n: int) -> List[Optional[int]]:
    """The wait of each of ``n`` entries at ``now``, ``None`` for a
    downgraded one."""
    got: List[Optional[int]] = []
    for _ in range(n):
        entry = enter(now_ms=now)
        got.append(None if entry.downgraded else entry.wait_ms)
        entry.exit(now_ms=now)
    return got


# The fields -------------------------------------------------------------


def test_the_new_fields_follow_sds_own_in_the_core_order_with_their_defaults() -> None:
    # After SDS's 13 fields; the adaptive row follows (test_adaptive.py).
    assert sds.Strategy.fields()[13:18] == NEW_FIELDS
    default = sds.Strategy()
    assert [getattr(default, f) for f in NEW_FIELDS] == [-1, 0, -1, 3, -1]
    s = sds.Strategy.from_json('{"tokenBucketGeneratedTokensInSecond": 10, "warmUpPeriodSec": 5, "coldFactor": 4,'
                               ' "maxQueueingTimeMs": 500, "timeoutThreshold": 100, "slowCallRateThreshold": 50,'
                               ' "slowCallRateStart": 20}')
    assert s == sds.Strategy(token_bucket_generated_tokens_in_second=10, warm_up_period_sec=5, cold_factor=4,
                             max_queueing_time_ms=500, timeout_threshold=100, slow_call_rate_threshold=50,
                             slow_call_rate_start=20)
    d = s.to_dict()
    assert [d[k] for k in ("slowCallRateThreshold", "slowCallRateStart", "warmUpPeriodSec", "coldFactor",
                           "maxQueueingTimeMs")] == [50, 20, 5, 4, 500]
    assert sds.Strategy.from_dict(d) == s
    assert repr(sds.Strategy(cold_factor=5)) == "Strategy(cold_factor=5)"
    assert "SLOW_CALL_RATE" in sds.REASONS and sds.REASONS.index("SLOW_CALL_RATE") == 8


RATE = {"token_bucket_generated_tokens_in_second": 10}
INVALID = [
    # (keywords, field, the core's message)
    (dict(slow_call_rate_threshold=10), "slowCallRateThreshold",
     "invalid strategy: slowCallRateThreshold needs a timeoutThreshold > 0: the time above which a call is slow"),
    (dict(timeout_threshold=5, slow_call_rate_threshold=101), "slowCallRateThreshold",
     "invalid strategy: slowCallRateThreshold must be within 0..=100 (or negative: off)"),
    (dict(cold_factor=1), "coldFactor", "invalid strategy: coldFactor must be > 1"),
    (dict(cold_factor=0), "coldFactor", "invalid strategy: coldFactor must be > 1"),
    (dict(warm_up_period_sec=0, **RATE), "warmUpPeriodSec",
     "invalid strategy: warmUpPeriodSec must be >= 1 s (or negative: no warm-up)"),
    (dict(warm_up_period_sec=10), "warmUpPeriodSec",
     "invalid strategy: warmUpPeriodSec needs tokenBucketGeneratedTokensInSecond: the rate it shapes"
     " (>= 1 to warm up)"),
    (dict(warm_up_period_sec=10, token_bucket_generated_tokens_in_second=0), "warmUpPeriodSec",
     "invalid strategy: warmUpPeriodSec needs tokenBucketGeneratedTokensInSecond: the rate it shapes"
     " (>= 1 to warm up)"),
    (dict(max_queueing_time_ms=100), "maxQueueingTimeMs",
     "invalid strategy: maxQueueingTimeMs needs tokenBucketGeneratedTokensInSecond: the rate it shapes"
     " (>= 1 to warm up)"),
    (dict(max_queueing_time_ms=65_536, **RATE), "maxQueueingTimeMs",
     "invalid strategy: maxQueueingTimeMs must be <= 65535 ms (or negative: no pacing)"),
    (dict(max_queueing_time_ms=100, token_bucket_size=20, **RATE), "tokenBucketSize",
     "invalid strategy: tokenBucketSize must not exceed the rate with warmUpPeriodSec or maxQueueingTimeMs"
     " (they have no burst)"),
]


@pytest.mark.parametrize("kwargs,field,message", INVALID, ids=[m.split(": ", 1)[1][:40] for _, _, m in INVALID])
def test_the_new_fields_are_validated_with_the_core_messages(kwargs: Dict[str, int], field: str,
                                                             message: str) -> None:
    refused_everywhere(kwargs, field, message, kept={"visitThreshold": 7})


def test_the_edges_that_are_valid() -> None:
    sds.Strategy(max_queueing_time_ms=65_535, **RATE)
    sds.Strategy(max_queueing_time_ms=0, token_bucket_generated_tokens_in_second=0)  # closed, not shaped
    sds.Strategy(warm_up_period_sec=1, cold_factor=2, token_bucket_size=10, **RATE)
    sds.Strategy(timeout_threshold=1, slow_call_rate_threshold=0)
    sds.Strategy(cold_factor=2)  # kept, used once warm-up is on


# Pacing -----------------------------------------------------------------


@pytest.fixture(params=["private", "handle", "shared"])
def enter(request: Any, tmp_path: Path) -> Iterator[Callable[..., Callable[..., sds.Entry]]]:
    """A factory: a paced point's ``enter`` on a private table by name,
    through a point handle, or on a shared table."""

    made = 0

    def make(rate: int, queue_ms: int, **more: int) -> Callable[..., sds.Entry]:
        nonlocal made
        made += 1
        shared = request.param == "shared"
        client = sds.Client.shared(tmp_path / f"table{made}", capacity=8) if shared else sds.Client(8)
        point = pace(client, rate, queue_ms, **more)
        if request.param == "private":
            return lambda **kw: client.enter("p", **kw)
        return point.enter

    yield make


def test_pacing_spaces_a_burst_at_the_rate_and_refuses_past_the_queue(enter: Any) -> None:
    e = enter(10, 500)
    assert waits(e, T, 8) == [0, 100, 200, 300, 400, 500, None, None]
    refused = e(now_ms=T)
    assert (refused.reason, refused.wait_ms, repr(refused)) == (
        "TOKEN_BUCKET", 0, 'Entry(downgraded, reason="TOKEN_BUCKET")')
    refused.exit(now_ms=T)
    # 250 ms later the slots go on from 600 ms: 350 and 450 ms away.
    assert waits(e, T + 250, 3) == [350, 450, None]
    # Once the queue has drained, the next request runs at once.
    assert waits(e, T + 2_000, 2) == [0, 100]


def test_waits_are_rounded_up_to_the_ms(enter: Any) -> None:
    assert waits(enter(3, 2_000), T, 5) == [0, 334, 667, 1_000, 1_334]
    assert waits(enter(2_000, 1), T, 4) == [0, 1, 1, None]


def test_no_queue_is_a_strict_rate_and_rate_zero_closes(enter: Any) -> None:
    e = enter(10, 0)
    assert waits(e, T, 2) == [0, None]
    assert waits(e, T + 99, 1) == [None]
    assert waits(e, T + 100, 2) == [0, None]
    assert waits(enter(0, 1_000), T, 1) == [None]


def test_a_paced_entry_repr_shows_its_wait() -> None:
    client = sds.Client(4)
    pace(client, 10, 1_000)
    client.enter("p", now_ms=T).exit(now_ms=T)
    second = client.enter("p", now_ms=T)
    assert (second.downgraded, second.wait_ms, repr(second)) == (False, 100, "Entry(passed, wait_ms=100)")
    second.exit(now_ms=T)
    with client.enter("q", now_ms=T) as other:
        assert other.wait_ms == 0  # no strategy


def test_a_paced_request_is_timed_from_when_it_may_run() -> None:
    client = sds.Client(4)
    pace(client, 2, 1_000, timeout_threshold=100)
    first, second = client.enter("p", now_ms=T), client.enter("p", now_ms=T)
    assert (second.start_ms, second.wait_ms) == (T, 500)
    first.exit(now_ms=T + 50)
    # 550 ms after enter, 50 ms after it could start: no timeout.
    second.exit(now_ms=T + 550)
    assert client.stats("p", now_ms=T + 600)["timeout"] == 0
    third = client.enter("p", now_ms=T + 600)
    third.exit(now_ms=T + 600 + third.wait_ms + 101)
    assert client.stats("p", now_ms=T + 2_000)["timeout"] == 1


# Warm-up ----------------------------------------------------------------


def admitted_per_second(client: sds.Client, start: int, seconds: int, per_second: int) -> List[int]:
    counts = []
    for k in range(seconds):
        admitted = 0
        for i in range(per_second):
            at = start + k * 1_000 + i * (1_000 // per_second)
            entry = client.enter("p", now_ms=at)
            admitted += not entry.downgraded
            entry.exit(now_ms=at)
        counts.append(admitted)
    return counts


def test_warm_up_climbs_from_the_cold_rate_to_the_full_rate() -> None:
    # Rate 10, 10 s, cold factor 3: 1 / (50 * 0.004 + 0.1) = 3.33 a second cold.
    client = sds.Client(4)
    client.set_strategy("p", {"tokenBucketGeneratedTokensInSecond": 10, "warmUpPeriodSec": 10, "coldFactor": 3})
    got = admitted_per_second(client, T, 40, 20)
    assert got[0] == 3, got
    assert all(a <= b for a, b in zip(got, got[1:])), got
    full = got.index(10)
    assert 8 <= full <= 25 and set(got[full:]) == {10}, got
    # A cold point's refusals are the token bucket's.
    cold = sds.Client(4)
    cold.set_strategy("p", {"tokenBucketGeneratedTokensInSecond": 10, "warmUpPeriodSec": 10})
    entries = [cold.enter("p", now_ms=T) for _ in range(4)]
    assert [e.reason for e in entries] == [None, None, None, "TOKEN_BUCKET"]
    for e in entries:
        e.exit()


def test_warm_pacing_spaces_requests_at_the_warming_rate() -> None:
    client = sds.Client(4)
    pace(client, 10, 1_000, warm_up_period_sec=10, cold_factor=3)
    # Cold: 3.33 a second, so 300 ms apart.
    assert waits(lambda **kw: client.enter("p", **kw), T, 5) == [0, 300, 600, 900, None]


# The slow-call rate -----------------------------------------------------


def test_slow_call_rate_downgrades_then_delays_with_probes() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(timeout_threshold=100, slow_call_rate_threshold=50,
                                          slow_call_rate_start=3, delay_time=10_000, retry_interval=1_000))
    heard: List[Any] = []
    client.on_downgrade(lambda point, reason, at: heard.append((point, reason, at)))

    def call(at: int, took: int) -> None:
        entry = client.enter("p", now_ms=at)
        assert not entry.downgraded and entry.wait_ms == 0
        entry.exit(now_ms=at + took)

    call(T, 10)
    call(T + 200, 150)
    call(T + 400, 150)
    # 4 visits > start 3; 2 of the 3 admitted were slow: 67 % > 50 %.
    first = client.enter("p", now_ms=T + 600)
    assert (first.downgraded, first.reason) == (True, "SLOW_CALL_RATE")
    first.exit()
    with client.enter("p", now_ms=T + 700) as delayed:
        assert delayed.reason == "DELAY"
    probe = client.enter("p", now_ms=T + 1_700)
    assert (probe.downgraded, probe.wait_ms) == (False, 0)
    probe.exit(now_ms=T + 1_710)
    assert heard == [("p", "SLOW_CALL_RATE", T + 600), ("p", "DELAY", T + 700)]
    stats = client.stats("p", now_ms=T + 1_800)
    assert (stats["visit"], stats["timeout"], stats["downgrade"]) == (6, 2, 2)


def test_slow_call_rate_waits_for_its_start() -> None:
    client = sds.Client(4)
    client.set_strategy("p", sds.Strategy(timeout_threshold=100, slow_call_rate_threshold=0,
                                          slow_call_rate_start=2))
    reasons = []
    for i in range(4):
        entry = client.enter("p", now_ms=T + i * 10)
        reasons.append(entry.reason)
        entry.exit(now_ms=T + i * 10 + 200)
    assert reasons == [None, None, "SLOW_CALL_RATE", "SLOW_CALL_RATE"]


# The sugar waits ---------------------------------------------------------


def assert_waited(elapsed_s: float, wait_ms: float) -> None:
    """``elapsed_s`` since the sugar got the entry: never less than its
    wait, a few ms more at most."""
    elapsed = elapsed_s * 1000
    assert wait_ms - 0.5 <= elapsed <= wait_ms + LATE_MS, f"waited {elapsed:.2f} ms for {wait_ms} ms"


def assert_on_slot(ran_s: float, slot_ms: int) -> None:
    """Code that ran at wall-clock ``ran_s`` (``time.time()``) ran at its
    slot (``start_ms + wait_ms`` on the same clock, CLOCK_REALTIME), never
    before, a few ms after at most (the enter time is rounded down to the
    ms, the sleep wakes a little late)."""
    late = ran_s * 1000 - slot_ms
    assert -0.5 <= late <= LATE_MS, f"ran {late:+.2f} ms from its slot"


class Paced(NamedTuple):
    point: sds.Point
    first: int


@pytest.fixture
def paced() -> Paced:
    """A point paced at 10 a second (100 ms apart), queue 1 s, wall clock,
    after one entry: the next slot is 100 ms after ``first`` (that entry's
    start)."""
    point = pace(sds.Client(8), 10, 1_000)
    with point.enter() as first:
        assert first.wait_ms == 0
    return Paced(point, first.start_ms)


def test_with_waits_before_its_body(paced: Paced) -> None:
    second = paced.point.enter()
    assert 98 <= second.wait_ms <= 100 and not second.downgraded
    before = time.monotonic()
    with second as entered:
        assert_waited(time.monotonic() - before, second.wait_ms)
        assert_on_slot(time.time(), second.start_ms + second.wait_ms)
        assert entered is second and not second.exited
    assert second.exited


def test_the_guarded_function_runs_after_its_wait(paced: Paced) -> None:
    runs: List[float] = []

    @paced.point.guard()
    def work(x: int) -> int:
        runs.append(time.time())
        return x * 2

    assert isinstance(work, sds._native.Guarded)
    assert work(1) == 2 and work(2) == 4
    first: int = paced.first
    assert_on_slot(runs[0], first + 100)
    assert_on_slot(runs[1], first + 200)


def test_a_generator_waits_before_its_first_item(paced: Paced) -> None:
    runs: List[float] = []

    @paced.point.guard()
    def items() -> Iterator[int]:
        runs.append(time.time())
        yield 1

    assert list(items()) == [1]
    assert_on_slot(runs[0], paced.first + 100)


def test_the_async_sugar_waits_with_asyncio_sleep_and_the_loop_runs_meanwhile(paced: Paced) -> None:
    runs: List[float] = []
    first: int = paced.first

    @paced.point.guard()
    async def work() -> str:
        runs.append(time.time())
        return "done"

    @paced.point.guard()
    async def stream() -> AsyncIterator[int]:
        runs.append(time.time())
        yield 1

    async def main() -> List[Any]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        tick = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        got: List[Any] = [await work(), await work()]
        assert_on_slot(runs[0], first + 100)
        assert_on_slot(runs[1], first + 200)
        during = ticks
        # `async with`: the entry's wait, then the body.
        entry = paced.point.enter()
        before = time.monotonic()
        async with entry as entered:
            assert_waited(time.monotonic() - before, entry.wait_ms)
            assert_on_slot(time.time(), first + 300)
            got.append(entered is entry)
        got.append(entry.exited)
        got.append([item async for item in stream()])
        assert_on_slot(runs[2], first + 400)
        tick.cancel()
        # Other tasks ran through the waits: about one tick per 5 ms.
        assert during >= 20 and ticks >= 50, (during, ticks)
        return got

    assert asyncio.run(main()) == ["done", "done", True, True, [1]]


def test_async_with_an_exception_counts_and_a_cancelled_wait_exits_the_entry() -> None:
    point = pace(sds.Client(4), 10, 1_000, concurrent_threshold=5)

    async def main() -> None:
        with pytest.raises(ValueError):
            async with point.enter():
                raise ValueError("counted")
        waiting = point.enter()
        assert waiting.wait_ms >= 98

        async def body() -> None:
            async with waiting:
                raise AssertionError("never runs")

        task = asyncio.create_task(body())
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert waiting.exited

    asyncio.run(main())
    stats = point.stats()
    # The ValueError counted; the cancelled wait did not; no permit is held.
    assert (stats["exception"], stats["concurrent"]) == (1, 0)


def test_an_interrupted_sync_wait_exits_the_entry_uncounted() -> None:
    client = sds.Client(4)
    point = pace(client, 10, 1_000, concurrent_threshold=5)
    ran: List[int] = []

    @point.guard()
    def work() -> None:
        ran.append(1)

    class Interrupted(Exception):
        pass

    def interrupt(signum: int, frame: Any) -> None:
        raise Interrupted()

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        work()
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        with pytest.raises(Interrupted):
            work()
        waiting = point.enter()
        assert waiting.wait_ms > 100
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        with pytest.raises(Interrupted):
            with waiting:
                ran.append(2)
        assert waiting.exited
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert ran == [1]
    stats = point.stats()
    assert (stats["exception"], stats["concurrent"]) == (0, 0)


# The middleware waits -----------------------------------------------------


def test_the_asgi_middleware_waits_before_the_app() -> None:
    from sds.asgi import SdsMiddleware
    from sds.web import Route

    client = sds.Client(4)
    pace(client, 10, 1_000, point="paced")
    runs: List[float] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        runs.append(time.time())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guarded = SdsMiddleware(app, client=client, routes={"/p": Route(point="paced")})

    async def main() -> List[int]:
        statuses: List[int] = []

        async def request() -> None:
            async def receive() -> Dict[str, Any]:
                return {"type": "http.request", "body": b""}

            async def send(message: Dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    statuses.append(message["status"])

            scope = {"type": "http", "method": "GET", "path": "/p", "headers": [], "client": ("127.0.0.1", 1)}
            await guarded(scope, receive, send)

        with client.enter("paced") as first:
            assert first.wait_ms == 0
        # Three at once: paced, not serialised by the loop.
        await asyncio.gather(request(), request(), request())
        for i, ran in enumerate(runs):
            assert_on_slot(ran, first.start_ms + 100 * (i + 1))
        return statuses

    assert asyncio.run(main()) == [200, 200, 200]


def test_the_wsgi_middleware_waits_before_the_app() -> None:
    from sds.web import Route
    from sds.wsgi import SdsMiddleware

    client = sds.Client(4)
    pace(client, 10, 1_000, point="paced")
    runs: List[float] = []

    def app(environ: Any, start_response: Any) -> List[bytes]:
        runs.append(time.time())
        start_response("200 OK", [])
        return [b"ok"]

    guarded = SdsMiddleware(app, client=client, routes={"/p": Route(point="paced")})
    with client.enter("paced") as first:
        assert first.wait_ms == 0
    for _ in range(2):
        body = guarded({"REQUEST_METHOD": "GET", "PATH_INFO": "/p", "REMOTE_ADDR": "127.0.0.1"},
                       lambda status, headers, exc_info=None: None)
        assert b"".join(body) == b"ok"
        body.close()  # type: ignore[attr-defined]
    assert_on_slot(runs[0], first.start_ms + 100)
    assert_on_slot(runs[1], first.start_ms + 200)
    assert client.stats("paced")["concurrent"] == 0
