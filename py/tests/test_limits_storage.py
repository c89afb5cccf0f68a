"""``sds.limits``: the storage ``sds://`` of Python's ``limits``, method by
method against ``limits``' own ``MemoryStorage`` given the same calls at the
same (injected) times, then shared between storages as workers share it,
then inside flask-limiter and slowapi."""

from __future__ import annotations

import math
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, List, Tuple

import pytest
from fastapi import Request  # FastAPI reads the route's annotations from the module
from limits import RateLimitItemPerMinute, RateLimitItemPerSecond, parse
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter, MovingWindowRateLimiter, SlidingWindowCounterRateLimiter

import limits.storage.memory
import limits.strategies
import sds
import sds.limits
from sds.limits import MovingWindowUnsupported, SdsStorage

# A start well inside a minute and a second, so the windows a test crosses
# are the ones it names.
T0 = 1_800_000_000_000 + 1_000


class Clock:
    """One time for both storages: ``limits``' modules read it as
    ``time.time()``, ours as ``clock_ms``."""

    def __init__(self) -> None:
        self.ms = T0

    def time(self) -> float:
        return self.ms / 1000

    def now_ms(self) -> int:
        return self.ms

    def at(self, offset_ms: int) -> None:
        self.ms = T0 + offset_ms


def at_t0() -> int:
    """A storage's clock for tests that would otherwise read the wall clock
    in a sliding window: its windows are aligned to the period, and one
    crossed between two hits weighs the earlier ones less (2 of 2 per
    minute just before a minute's end, then a third admitted just after)."""
    return T0


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(limits.storage.memory, "time", c)
    monkeypatch.setattr(limits.strategies, "time", c)
    return c


@pytest.fixture
def pair(clock: Clock) -> Iterator[Tuple[MemoryStorage, SdsStorage]]:
    memory = MemoryStorage()
    yield memory, SdsStorage("sds://", clock_ms=clock.now_ms)
    memory.timer.cancel()


def both(pair: Tuple[Any, Any], call: Callable[[Any], Any]) -> Any:
    """``call`` on memory and on sds: their answers must be equal."""
    expected, got = call(pair[0]), call(pair[1])
    assert got == expected
    return got


def test_the_scheme_is_registered_by_importing_sds_limits(tmp_path: Path) -> None:
    assert isinstance(storage_from_string("sds://"), SdsStorage)
    shared = storage_from_string(f"sds://{tmp_path}/app?capacity=128&mode=0o660")
    assert isinstance(shared, SdsStorage)
    assert (shared.name, shared.capacity, shared.mode) == (f"{tmp_path}/app", 128, 0o660)
    # Keyword options (flask-limiter's storage_options) win over the query.
    assert storage_from_string(f"sds://{tmp_path}/app?capacity=128", capacity=256).capacity == 256  # type: ignore[attr-defined]
    bare = storage_from_string("sds://web-limits")
    assert (bare.name, bare.capacity, bare.mode) == ("web-limits", 65536, 0o600)  # type: ignore[attr-defined]


@pytest.mark.parametrize("uri, message", [
    ("sds://x?size=3", "not size"),
    ("sds://?mode=0o600", "mode is for a shared NAME"),
])
def test_bad_options_are_named(uri: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        storage_from_string(uri)


def test_fixed_window_storage_calls_answer_as_memory(pair: Tuple[Any, Any], clock: Clock) -> None:
    assert both(pair, lambda s: s.get("LIMITER/a/10/1/minute")) == 0
    assert both(pair, lambda s: s.get_expiry("LIMITER/a/10/1/minute")) == clock.time()
    assert both(pair, lambda s: s.incr("LIMITER/a/10/1/minute", 60)) == 1
    clock.at(1_500)
    assert both(pair, lambda s: s.incr("LIMITER/a/10/1/minute", 60, amount=4)) == 5
    assert both(pair, lambda s: s.get("LIMITER/a/10/1/minute")) == 5
    # The window runs from the first hit: 60 s after it, not after the last.
    assert both(pair, lambda s: s.get_expiry("LIMITER/a/10/1/minute")) == (T0 + 60_000) / 1000
    assert both(pair, lambda s: s.decr("LIMITER/a/10/1/minute", 2)) == 3
    clock.at(59_999)
    assert both(pair, lambda s: s.get("LIMITER/a/10/1/minute")) == 3
    clock.at(60_000)
    assert both(pair, lambda s: s.get("LIMITER/a/10/1/minute")) == 0
    assert both(pair, lambda s: s.incr("LIMITER/a/10/1/minute", 60)) == 1
    assert both(pair, lambda s: s.get_expiry("LIMITER/a/10/1/minute")) == (T0 + 120_000) / 1000
    # Never below 0. (Memory would start a new window at the next hit after
    # a count taken to 0; sds keeps the window: no strategy decrements.)
    assert both(pair, lambda s: s.decr("LIMITER/a/10/1/minute", 9)) == 0
    both(pair, lambda s: s.clear("LIMITER/a/10/1/minute"))
    assert both(pair, lambda s: s.get("LIMITER/a/10/1/minute")) == 0
    assert both(pair, lambda s: s.check()) is True


def test_keys_of_any_shape_are_found_without_their_expiry(pair: Tuple[Any, Any], clock: Clock) -> None:
    # limits' own storage tests use keys such as "test": no window in the key.
    assert both(pair, lambda s: s.incr("test", 5, amount=2)) == 2
    assert both(pair, lambda s: s.incr("other", 60)) == 1
    assert both(pair, lambda s: s.get("test")) == 2
    assert both(pair, lambda s: s.get_expiry("test")) == (T0 + 5_000) / 1000
    clock.at(5_000)
    assert both(pair, lambda s: s.get("test")) == 0
    assert both(pair, lambda s: s.get("other")) == 1
    both(pair, lambda s: s.clear("other"))
    assert both(pair, lambda s: s.get("other")) == 0


def test_reset_forgets_every_key_of_every_window(pair: Tuple[Any, Any], clock: Clock) -> None:
    memory, ours = pair
    for s in pair:
        s.incr("LIMITER/a/10/1/minute", 60)
        s.incr("LIMITER/b/10/1/second", 1)
        s.acquire_sliding_window_entry("LIMITER/c/10/1/hour", 10, 3600)
    # MemoryStorage counts its entries (the sliding window's is one); we
    # count keys, one a table here: the same 3.
    assert ours.reset() == memory.reset() == 3
    assert both(pair, lambda s: s.get("LIMITER/a/10/1/minute")) == 0
    assert both(pair, lambda s: s.get_sliding_window("LIMITER/c/10/1/hour", 3600)[2]) == 0


def run_limiter(strategy: Any, pair: Tuple[Any, Any], clock: Clock, script: List[Tuple[int, str, Any, str, int]]) -> None:
    """``script``: (time offset ms, never going back, method, item, key,
    cost); every answer of the strategy on memory and on sds must be
    equal."""
    limiters = [strategy(s) for s in pair]
    for at, method, item, key, cost in script:
        clock.at(at)
        if method == "stats":
            stats = [l.get_window_stats(item, key) for l in limiters]
            # Memory adds seconds in floats, sds ms in integers: the same time
            # within a float's last digits.
            assert stats[1].reset_time == pytest.approx(stats[0].reset_time, abs=1e-6), (at, item, key)
            answers = [s.remaining for s in stats]
        elif method == "clear":
            answers = [l.clear(item, key) for l in limiters]
        else:
            answers = [getattr(l, method)(item, key, cost=cost) for l in limiters]
        assert answers[1] == answers[0], (at, method, item, key, cost)


def test_fixed_window_limiter_answers_as_memory(pair: Tuple[Any, Any], clock: Clock) -> None:
    five = RateLimitItemPerSecond(5, 2)
    ten = RateLimitItemPerMinute(10)
    script = [(0, "stats", five, "k", 1), (0, "test", five, "k", 5), (0, "test", five, "k", 6)]
    script += [(i * 100, "hit", five, "k", 1) for i in range(7)]
    script += [(700, "stats", five, "k", 1), (800, "test", five, "k", 1), (1_999, "hit", five, "k", 1)]
    script += [(2_000, "test", five, "k", 1), (2_000, "stats", five, "k", 1), (2_000, "hit", five, "k", 3)]
    script += [(2_100, "hit", five, "k", 3), (2_200, "stats", five, "k", 1), (2_300, "hit", five, "k", 2)]
    script += [(2_400, "hit", ten, "k", 11), (2_400, "hit", ten, "k", 10), (2_500, "hit", ten, "k", 1)]
    script += [(2_600, "stats", ten, "k", 1), (2_700, "clear", ten, "k", 1), (2_800, "hit", ten, "k", 1)]
    script += [(2_900, "stats", ten, "other", 1), (3_000, "hit", ten, "other", 10), (3_100, "test", ten, "other", 1)]
    run_limiter(FixedWindowRateLimiter, pair, clock, script)


def test_sliding_window_counter_answers_as_memory(pair: Tuple[Any, Any], clock: Clock) -> None:
    ten = RateLimitItemPerSecond(10, 10)
    script = [(0, "stats", ten, "k", 1), (0, "hit", ten, "k", 11)]
    script += [(i * 300, "hit", ten, "k", 1) for i in range(12)]
    # Into the next window (10 s, aligned): the previous window's 10 weigh
    # less and less; memory and sds must admit at the same instants.
    script += [(9_000 + i * 700, "hit", ten, "k", 1) for i in range(20)]
    script += [(t, m, ten, "k", 1) for t in (23_345, 25_001, 28_999) for m in ("test", "stats")]
    script += [(29_500, "hit", ten, "k", 4), (30_000, "stats", ten, "k", 1), (30_100, "clear", ten, "k", 1)]
    script += [(30_200, "stats", ten, "k", 1), (30_300, "test", ten, "k", 10), (30_400, "hit", ten, "k", 10)]
    script += [(51_000, "stats", ten, "k", 1), (51_000, "hit", ten, "k", 10)]
    run_limiter(SlidingWindowCounterRateLimiter, pair, clock, script)


def test_sliding_window_storage_calls_answer_as_memory(pair: Tuple[Any, Any], clock: Clock) -> None:
    key = "LIMITER/k/4/2/second"
    assert both(pair, lambda s: s.get_sliding_window(key, 2)) == (0, 0.0, 0, 3.0)
    assert both(pair, lambda s: s.acquire_sliding_window_entry(key, 4, 2, 5)) is False
    assert both(pair, lambda s: s.acquire_sliding_window_entry(key, 4, 2, 3)) is True
    clock.at(1_500)
    assert both(pair, lambda s: s.get_sliding_window(key, 2)) == (3, 1.5, 0, 3.5)
    clock.at(2_250)
    # Weighted: 3 x 0.75 / 2 = 1.125, floored to 1.
    assert both(pair, lambda s: s.get_sliding_window(key, 2)) == (3, 0.75, 0, 2.75)
    assert both(pair, lambda s: s.acquire_sliding_window_entry(key, 4, 2, 4)) is False
    assert both(pair, lambda s: s.acquire_sliding_window_entry(key, 4, 2, 3)) is True
    assert both(pair, lambda s: s.get_sliding_window(key, 2)) == (3, 0.75, 3, 2.75)
    both(pair, lambda s: s.clear_sliding_window(key, 2))
    assert both(pair, lambda s: s.get_sliding_window(key, 2)) == (0, 0.0, 0, 2.75)


def test_the_moving_window_is_refused_naming_the_strategies_that_work() -> None:
    storage = SdsStorage("sds://")
    with pytest.raises(MovingWindowUnsupported, match="FixedWindowRateLimiter.*SlidingWindowCounterRateLimiter"):
        MovingWindowRateLimiter(storage)
    # What limits and its users catch for a storage without the strategy.
    assert issubclass(MovingWindowUnsupported, NotImplementedError)


def test_shared_tables_are_one_count_for_every_storage_on_the_name(tmp_path: Path) -> None:
    name = f"sds://{tmp_path}/app?capacity=256"
    one, two = storage_from_string(name, clock_ms=at_t0), storage_from_string(name, clock_ms=at_t0)
    minute = parse("3/minute")
    limiters = [FixedWindowRateLimiter(one), FixedWindowRateLimiter(two)]
    assert [limiters[i % 2].hit(minute, "alice") for i in range(5)] == [True, True, True, False, False]
    assert limiters[1].get_window_stats(minute, "alice").remaining == 0
    sliding = [SlidingWindowCounterRateLimiter(one), SlidingWindowCounterRateLimiter(two)]
    assert [sliding[i % 2].hit(minute, "bob") for i in range(4)] == [True, True, True, False]
    # One file per rule beside the name.
    assert sorted(os.listdir(tmp_path)) == ["app.fixed-60000", "app.sliding-60000-3"]
    # A storage that never served a limit still finds every table to reset.
    third = storage_from_string(name)
    assert third.check() is True
    assert third.reset() == 2
    assert limiters[0].hit(minute, "alice") and sliding[0].test(minute, "bob")
    os.remove(tmp_path / "app.fixed-60000")
    assert one.check() is False


def test_threads_on_one_key_admit_exactly_the_limit(tmp_path: Path) -> None:
    limiter = FixedWindowRateLimiter(storage_from_string(f"sds://{tmp_path}/threads"))
    item = parse("100/minute")
    admitted: List[bool] = []

    def hits() -> None:
        admitted.extend(limiter.hit(item, "k") for _ in range(50))

    threads = [threading.Thread(target=hits) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert admitted.count(True) == 100


def test_flask_limiter_refuses_past_the_limit_on_sds() -> None:
    from flask import Flask
    from flask_limiter import Limiter

    app = Flask(__name__)
    limiter = Limiter(lambda: "client", app=app, storage_uri="sds://", headers_enabled=True)

    @app.route("/")
    @limiter.limit("2 per minute")
    def index() -> str:
        return "ok"

    with app.test_client() as client:
        answers = [client.get("/") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[1].headers["X-RateLimit-Remaining"] == "0"
    assert answers[0].headers["X-RateLimit-Limit"] == "2"


def test_slowapi_refuses_past_the_limit_on_sds() -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient
    from slowapi import Limiter, _rate_limit_exceeded_handler
    from slowapi.errors import RateLimitExceeded

    limiter = Limiter(key_func=lambda request: "client", storage_uri="sds://", strategy="sliding-window-counter",
                      storage_options={"clock_ms": at_t0})
    app = FastAPI()
    app.state.limiter = limiter
    app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)  # type: ignore[arg-type]

    @app.get("/")
    @limiter.limit("2/minute")
    def index(request: Request) -> str:
        return "ok"

    with TestClient(app) as client:
        assert [client.get("/").status_code for _ in range(3)] == [200, 200, 429]


def test_storage_errors_are_sds_errors(tmp_path: Path) -> None:
    (tmp_path / "app.fixed-60000").write_bytes(b"not a table")
    storage = SdsStorage(f"sds://{tmp_path}/app", wrap_exceptions=True)
    from limits.errors import StorageError

    with pytest.raises(StorageError) as caught:
        storage.incr("LIMITER/k/1/1/minute", 60)
    assert isinstance(caught.value.storage_error, sds.SdsError)


def test_a_count_stops_at_its_cap_where_hit_refuses() -> None:
    storage = SdsStorage("sds://")
    cap = 2**21 - 1
    # A key far over its limit (a flood) saturates: still refused.
    assert storage.incr("LIMITER/k/100/1/day", 86_400, amount=cap + 5) == cap
    assert FixedWindowRateLimiter(storage).hit(parse("100/day"), "k") is False
    # A limit the cap cannot count past is refused loudly, not admitted forever.
    with pytest.raises(ValueError, match="counts 2097151 hits per key in a window of 86400 s at most"):
        storage.incr("LIMITER/k/3000000/1/day", 86_400, amount=cap)
    # A year's window keeps fewer bits for its counts.
    with pytest.raises(ValueError, match="counts 32767 hits"):
        FixedWindowRateLimiter(storage).hit(parse("40000/year"), "k", cost=40_000)


def test_a_whole_float_cost_answers_as_memory(pair: Tuple[Any, Any], clock: Clock) -> None:
    # slowapi's cost callable may return a float (``int(header) * 1.5``).
    ten = RateLimitItemPerMinute(10)
    script: List[Tuple[int, str, Any, str, Any]] = [(i * 100, "hit", ten, "k", 3.0) for i in range(4)]
    script += [(500, "stats", ten, "k", 1), (600, "test", ten, "k", 1.0)]
    run_limiter(FixedWindowRateLimiter, pair, clock, script)  # type: ignore[arg-type]
    run_limiter(SlidingWindowCounterRateLimiter, pair, clock, script)  # type: ignore[arg-type]


def test_a_fractional_cost_takes_the_next_whole_unit() -> None:
    for strategy in (FixedWindowRateLimiter, SlidingWindowCounterRateLimiter):
        limiter = strategy(SdsStorage("sds://", clock_ms=at_t0))
        # 7.5 counts 8: six fit in 50 (48), the seventh not, as memory's 52.5.
        assert [limiter.hit(parse("50/minute"), "a", cost=7.5) for _ in range(7)] == [True] * 6 + [False]
        # Never more than the limit: 0.5 on a limit of 2 admits 2 (memory: 4).
        assert [limiter.hit(parse("2/minute"), "b", cost=0.5) for _ in range(3)] == [True, True, False]  # type: ignore[arg-type]
    storage = SdsStorage("sds://")
    assert storage.incr("LIMITER/c/9/1/minute", 60, amount=2.5) == 3  # type: ignore[arg-type]
    assert storage.decr("LIMITER/c/9/1/minute", 1.5) == 1  # type: ignore[arg-type]
    with pytest.raises(sds.InvalidArgument, match="^units must be an integer from 1 to 4294967295$"):
        storage.incr("LIMITER/c/9/1/minute", 60, amount="2")  # type: ignore[arg-type]


@pytest.mark.parametrize("cost", [math.nan, math.inf, -math.inf])
def test_a_cost_that_is_no_number_is_the_tables_error(cost: float) -> None:
    # Not rounded first: math.ceil would raise ValueError or OverflowError.
    storage = SdsStorage("sds://")
    assert storage.incr("LIMITER/c/9/1/minute", 60) == 1
    with pytest.raises(sds.InvalidArgument, match="^units must be an integer from 1 to 4294967295$"):
        storage.incr("LIMITER/c/9/1/minute", 60, amount=cost)  # type: ignore[arg-type]
    with pytest.raises(sds.InvalidArgument, match="^units must be an integer from 1 to 4294967295$"):
        storage.decr("LIMITER/c/9/1/minute", cost)  # type: ignore[arg-type]
    assert storage.get("LIMITER/c/9/1/minute") == 1


def test_a_nan_cost_is_refused_where_memory_would_count_it() -> None:
    # memory:// adds the NaN and answers False from then on for that key;
    # the table refuses the call and the key's count stays as it was.
    limiter = FixedWindowRateLimiter(SdsStorage("sds://", clock_ms=at_t0))
    assert limiter.hit(parse("3/minute"), "k")
    with pytest.raises(sds.InvalidArgument, match="^units must be an integer from 1 to 4294967295$"):
        limiter.hit(parse("3/minute"), "k", cost=math.nan)  # type: ignore[arg-type]
    assert [limiter.hit(parse("3/minute"), "k") for _ in range(3)] == [True, True, False]


def test_storage_names_the_tables_open(tmp_path: Path) -> None:
    # limits' own storages expose their backend as ``storage``; flask-limiter's
    # ``flask limiter config`` prints it.
    storage = SdsStorage(f"sds://{tmp_path}/app")
    assert storage.storage == {}
    FixedWindowRateLimiter(storage).hit(parse("2/minute"), "k")
    SlidingWindowCounterRateLimiter(storage).hit(parse("3/second"), "k")
    assert {suffix: t.path for suffix, t in storage.storage.items()} == {
        "fixed-60000": tmp_path / "app.fixed-60000",
        "sliding-1000-3": tmp_path / "app.sliding-1000-3",
    }
    assert all(isinstance(t, sds.KeyedLimit) for t in storage.storage.values())


def test_unknown_keyword_options_are_named() -> None:
    with pytest.raises(ValueError, match="not size"):
        storage_from_string("sds://", size=3)
