"""Every bad input raises its documented error and changes nothing."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Dict, Type

import pytest

import sds

GOOD = {"visitThreshold": 5}


def snapshot(client: sds.Client) -> Any:
    return (len(client), client.strategy("p"), client.stats("p", now_ms=1000))


@pytest.fixture
def used() -> sds.Client:
    client = sds.Client(capacity=4)
    client.set_strategy("p", GOOD)
    client.enter("p", now_ms=1000).exit(now_ms=1000)
    return client



CASES = [
    # (description, strategy input, error class, field)
    ("unknown dict key", {"visitThreshold": 1, "nope": 2}, sds.UnknownField, "nope"),
    ("snake_case key in a dict", {"visit_threshold": 1}, sds.UnknownField, "visit_threshold"),
    ("float value", {"visitThreshold": 1.5}, sds.InvalidStrategy, "visitThreshold"),
    ("NaN value", {"visitThreshold": math.nan}, sds.InvalidStrategy, "visitThreshold"),
    ("infinite value", {"delayTime": math.inf}, sds.InvalidStrategy, "delayTime"),
    ("str value", {"visitThreshold": "10"}, sds.InvalidStrategy, "visitThreshold"),
    ("bool value", {"visitThreshold": True}, sds.InvalidStrategy, "visitThreshold"),
    ("list value", {"visitThreshold": [1]}, sds.InvalidStrategy, "visitThreshold"),
    ("point not a str", {"point": 5}, sds.InvalidStrategy, "point"),
    ("beyond 64 bits", {"visitThreshold": 2**64}, sds.InvalidStrategy, "visitThreshold"),
    ("delay too short", {"delayTime": 5}, sds.InvalidStrategy, "delayTime"),
    ("retry beyond delay", {"delayTime": 10_000, "retryInterval": 20_000}, sds.InvalidStrategy, "retryInterval"),
    ("percent above 100", {"downgradeRate": 101}, sds.InvalidStrategy, "downgradeRate"),
    ("flag not 0/1", {"pressureTestDowngrade": 2}, sds.InvalidStrategy, "pressureTestDowngrade"),
    ("non-str key", {1: 2}, sds.InvalidArgument, None),
    ("malformed JSON", '{"visitThreshold": ', sds.InvalidJson, None),
    ("JSON array", "[1]", sds.InvalidJson, None),
    ("JSON unknown key", '{"nope": 1}', sds.UnknownField, "nope"),
    ("JSON NaN", '{"visitThreshold": NaN}', sds.InvalidJson, None),
    ("JSON float", '{"visitThreshold": 1.5}', sds.InvalidStrategy, "visitThreshold"),
    ("JSON text with a lone surrogate", '{"point":"\ud800"}', sds.InvalidJson, None),
    ("dict key with a lone surrogate", {"\udc00": 1}, sds.InvalidArgument, None),
    ("a list", [("visitThreshold", 1)], sds.InvalidArgument, None),
    ("None", None, sds.InvalidArgument, None),
]


@pytest.mark.parametrize("what,strategy,error,field", CASES, ids=[c[0] for c in CASES])
def test_bad_strategies_are_rejected_whole(
    used: sds.Client, what: str, strategy: Any, error: Type[sds.SdsError], field: Any
) -> None:
    before = snapshot(used)
    with pytest.raises(error) as info:
        used.set_strategy("p", strategy)
    assert type(info.value) is error, f"{what}: {type(info.value).__name__}"
    assert info.value.field == field
    assert info.value.code == error.code and info.value.number == error.number
    if field is not None:
        assert field in str(info.value)
    assert snapshot(used) == before


KEYWORD_CASES = [
    (dict(visit_threshold=1.5), sds.InvalidStrategy, "visitThreshold"),
    (dict(visit_threshold=math.nan), sds.InvalidStrategy, "visitThreshold"),
    (dict(visitThreshold=1), sds.UnknownField, "visitThreshold"),
    (dict(nope=1), sds.UnknownField, "nope"),
    (dict(delay_time=9_999), sds.InvalidStrategy, "delayTime"),
    (dict(exception_rate_threshold=-(2**63) - 1), sds.InvalidStrategy, "exceptionRateThreshold"),
]


@pytest.mark.parametrize("kwargs,error,field", KEYWORD_CASES)
def test_bad_strategy_keywords(kwargs: Dict[str, Any], error: Type[sds.SdsError], field: str) -> None:
    with pytest.raises(error) as info:
        sds.Strategy(**kwargs)
    assert info.value.field == field


def test_invalid_strategy_is_a_value_error() -> None:
    assert issubclass(sds.InvalidStrategy, ValueError)
    assert issubclass(sds.UnknownField, sds.InvalidStrategy)
    assert issubclass(sds.InvalidArgument, TypeError)
    assert sds.InvalidStrategy.code == "SDS_INVALID_STRATEGY" and sds.TableFull.code == "SDS_TABLE_FULL"
    assert sds.TableFull.number == 6 and sds.TableFull.description == "point table is full"
    assert sds.Strategy.from_json  # exists
    with pytest.raises(sds.InvalidArgument):
        sds.Strategy.from_json(b'{"visitThreshold": 1}')


POINT_CASES = [
    (5, sds.InvalidArgument),
    (None, sds.InvalidArgument),
    (b"p", sds.InvalidArgument),
    ("", sds.EmptyName),
    ("x" * (sds.MAX_NAME_LEN + 1), sds.NameTooLong),
    ("é" * (sds.MAX_NAME_LEN // 2 + 1), sds.NameTooLong),
    ("\ud800", sds.InvalidArgument),
    ("x" * 10_000_000, sds.NameTooLong),
]


@pytest.mark.parametrize("point,error", POINT_CASES, ids=[repr(p)[:20] for p, _ in POINT_CASES])
def test_bad_points(used: sds.Client, point: Any, error: Type[sds.SdsError]) -> None:
    before = snapshot(used)
    calls: Dict[str, Callable[[], Any]] = {
        "enter": lambda: used.enter(point, now_ms=1000),
        "point": lambda: used.point(point),
        "set_strategy": lambda: used.set_strategy(point, GOOD),
        "remove_strategy": lambda: used.remove_strategy(point),
        "stats": lambda: used.stats(point, now_ms=1000),
        "guard": lambda: used.guard(point),
    }
    for name, call in calls.items():
        with pytest.raises(error):
            call()
    assert snapshot(used) == before


def test_a_lone_surrogate_is_named_wherever_a_name_is_taken(used: sds.Client) -> None:
    before = snapshot(used)
    point = "ab\udc00"
    calls: Dict[str, Callable[[], Any]] = {
        "enter": lambda: used.enter(point, now_ms=1000),
        "point": lambda: used.point(point),
        "set_strategy": lambda: used.set_strategy(point, GOOD),
        "remove_strategy": lambda: used.remove_strategy(point),
        "strategy": lambda: used.strategy(point),
        "stats": lambda: used.stats(point, now_ms=1000),
        "guard": lambda: used.guard(point),
    }
    for name, call in calls.items():
        with pytest.raises(sds.InvalidArgument) as info:
            call()
        assert str(info.value) == "point name must be valid Unicode text: lone surrogate \\udc00 at index 2", name
        assert info.value.code == "SDS_INVALID_ARGUMENT"
    assert snapshot(used) == before


def test_strategy_text_and_keys_with_a_lone_surrogate() -> None:
    with pytest.raises(sds.InvalidJson) as info:
        sds.Strategy.from_json('{"point":"\ud800"}')
    assert str(info.value) == "strategy JSON text must be valid Unicode text: lone surrogate \\ud800 at index 10"
    assert info.value.code == "SDS_INVALID_JSON"
    for call in (lambda: sds.Strategy.from_dict({"\ud800": 1}), lambda: sds.Strategy(**{"\ud800": 1})):
        with pytest.raises(sds.InvalidArgument, match="a strategy key must be valid Unicode text"):
            call()


def test_the_longest_name_is_accepted(used: sds.Client) -> None:
    used.enter("x" * sds.MAX_NAME_LEN, now_ms=1).exit(now_ms=1)


TIME_CASES = [-1, 2**64, -(2**200), 1.5, -1.0, math.nan, math.inf, "1000", True, [1000]]


@pytest.mark.parametrize("now_ms", TIME_CASES, ids=repr)
def test_bad_times(used: sds.Client, now_ms: Any) -> None:
    """The core's one time rule, message and code, wherever a time is taken."""
    before = snapshot(used)
    entry = used.enter("p", now_ms=1000)
    handle = used.point("p")
    for call in (
        lambda: used.enter("p", now_ms=now_ms),
        lambda: handle.enter(now_ms=now_ms),
        lambda: used.stats("p", now_ms=now_ms),
        lambda: handle.stats(now_ms=now_ms),
        lambda: entry.exit(now_ms=now_ms),
        lambda: sds.SlidingWindow().increment(now_ms),
    ):
        with pytest.raises(sds.InvalidArgument) as info:
            call()
        assert str(info.value) == "time must be a whole number of ms within 0..2^64"
    assert not entry.exited
    entry.exit(now_ms=1000)
    after = snapshot(used)
    assert after[2]["visit"] == before[2]["visit"] + 1


def test_a_whole_float_is_a_time(used: sds.Client) -> None:
    entry = used.enter("p", now_ms=2000.0)
    assert entry.start_ms == 2000
    entry.exit(now_ms=float(2**63))
    assert used.stats("p", now_ms=2000.0)["visit"] == 2  # the fixture entered once


@pytest.mark.parametrize("flag", [1, None, "yes"], ids=repr)
def test_bad_pressure_test_flag(used: sds.Client, flag: Any) -> None:
    handle = used.point("p")
    for call in (lambda: used.enter("p", now_ms=1000, pressure_test=flag), lambda: handle.enter(pressure_test=flag)):
        with pytest.raises(sds.InvalidArgument, match="pressure_test must be a bool"):
            call()
    assert used.stats("p", now_ms=1000)["visit"] == 1


@pytest.mark.parametrize("capacity,error", [
    (-1, sds.InvalidCapacity), (0, sds.InvalidCapacity), (sds.MAX_CAPACITY + 1, sds.InvalidCapacity),
    (2**70, sds.InvalidCapacity), (1.5, sds.InvalidArgument), ("8", sds.InvalidArgument), (True, sds.InvalidArgument),
])
def test_bad_capacity(capacity: Any, error: Type[sds.SdsError]) -> None:
    with pytest.raises(error) as info:
        sds.Client(capacity=capacity)
    if error is sds.InvalidCapacity:
        assert str(info.value) == "table capacity must be within 1..=1048576"


@pytest.mark.parametrize("capacity", [-1, 0, sds.MAX_CAPACITY + 1, 2**70, -(2**70)])
def test_bad_shared_capacity_is_the_same_verdict(tmp_path: Path, capacity: int) -> None:
    with pytest.raises(sds.InvalidCapacity) as info:
        sds.Client.shared(tmp_path / "t.sds", capacity)
    assert info.value.code == "SDS_INVALID_CAPACITY"
    assert str(info.value) == "table capacity must be within 1..=1048576"
    assert not (tmp_path / "t.sds").exists()


def test_a_full_table_raises_and_keeps_its_points() -> None:
    client = sds.Client(capacity=2)
    client.enter("a", now_ms=1).exit(now_ms=1)
    client.set_strategy("b", GOOD)
    for call in (lambda: client.enter("c"), lambda: client.point("c"), lambda: client.set_strategy("c", GOOD)):
        with pytest.raises(sds.TableFull) as info:
            call()
        assert info.value.code == "SDS_TABLE_FULL"
        assert str(info.value) == "point table is full (capacity 2)"
    assert len(client) == 2 and client.strategy("c") is None
    client.enter("a", now_ms=1).exit(now_ms=1)
    assert client.stats("a", now_ms=1)["visit"] == 2


GUARD_CASES = [
    (dict(fallback=5), "guard: fallback must be callable or None, not int"),
    (dict(fallback="cached"), "guard: fallback must be callable or None, not str"),
    (dict(errors=5), "guard: errors must be an exception class or a tuple of exception classes, not int"),
    (dict(errors=(5,)), "guard: errors must be an exception class or a tuple of exception classes, not a tuple holding 5"),
    (dict(errors=[ValueError]), "guard: errors must be an exception class or a tuple of exception classes, not list"),
    (dict(errors=int), "guard: errors must be an exception class or a tuple of exception classes, not the class int"),
    (dict(ignore=(ValueError, "x")), "guard: ignore must be an exception class or a tuple of exception classes, not a tuple holding 'x'"),
]


@pytest.mark.parametrize("kwargs,message", GUARD_CASES, ids=[repr(k) for k, _ in GUARD_CASES])
def test_bad_guard_arguments_raise_at_decoration(used: sds.Client, kwargs: Dict[str, Any], message: str) -> None:
    before = snapshot(used)
    for make in (lambda: used.guard("new", **kwargs), lambda: used.point("p").guard(**kwargs)):
        with pytest.raises(sds.InvalidArgument) as info:
            make()
        assert str(info.value) == message
        assert info.value.code == "SDS_INVALID_ARGUMENT"
    assert snapshot(used) == before  # "new" was not created


def test_bad_listener_and_handle_table(used: sds.Client) -> None:
    with pytest.raises(sds.InvalidArgument):
        used.on_downgrade(42)
    with pytest.raises(sds.InvalidArgument):
        sds.Point(object(), "p")


@pytest.mark.parametrize("kwargs,error", [
    (dict(bucket_ms=0), sds.InvalidWindow), (dict(buckets=0), sds.InvalidWindow),
    (dict(buckets=10, ring=19), sds.InvalidWindow), (dict(ring=10**12), sds.InvalidWindow),
    (dict(buckets=-1), sds.InvalidArgument), (dict(bucket_ms=1.0), sds.InvalidArgument),
])
def test_bad_windows(kwargs: Dict[str, Any], error: Type[sds.SdsError]) -> None:
    with pytest.raises(error):
        sds.SlidingWindow(**kwargs)


def test_bad_window_add_changes_nothing() -> None:
    w = sds.SlidingWindow()
    w.increment(1000)
    for n in (-1, 1.5, None, True, 2**64):
        for call in (
            lambda: w.add(n, 1000),
            lambda: w.add_at(1000, n, now_ms=1000),
            lambda: w.set(n, 1000),
            lambda: w.fetch_max(n, 1000),
        ):
            with pytest.raises(sds.InvalidArgument):
                call()
    for t in (-1, 1.5, "1000"):
        with pytest.raises(sds.InvalidArgument):
            w.add_at(t, 1, now_ms=1000)
        with pytest.raises(sds.InvalidArgument):
            w.clear_next_cycle(t)
    assert w.sum(1000) == 1


CALLS = [
    # (description, a call given the client, its point handle and an open entry)
    ("enter without a point", lambda c, h, e: c.enter()),
    ("enter with a positional time", lambda c, h, e: c.enter("p", 1000)),
    ("enter with an unknown keyword", lambda c, h, e: c.enter("p", nowMs=1000)),
    ("enter with the point twice", lambda c, h, e: c.enter("p", point="p")),
    ("handle enter with a positional time", lambda c, h, e: h.enter(1000)),
    ("handle enter with an unknown keyword", lambda c, h, e: h.enter(now=1000)),
    ("exit with two times", lambda c, h, e: e.exit(1000, 1000)),
    ("exit with an unknown keyword", lambda c, h, e: e.exit(when=1000)),
    ("__exit__ with four arguments", lambda c, h, e: e.__exit__(None, None, None, None)),
]


@pytest.mark.parametrize("call", [c[1] for c in CALLS], ids=[c[0] for c in CALLS])
def test_wrong_arguments_raise_type_error_and_change_nothing(
    used: sds.Client, call: Callable[[sds.Client, Any, Any], Any]
) -> None:
    handle = used.point("p")
    entry = handle.enter(now_ms=1000)
    before = snapshot(used)
    with pytest.raises(TypeError):
        call(used, handle, entry)
    assert snapshot(used) == before
    assert not entry.exited
    entry.exit(now_ms=1000)
    assert used.stats("p", now_ms=1000)["concurrent"] == 0


def test_arguments_by_keyword_and_none_as_the_wall_clock(used: sds.Client) -> None:
    entry = used.enter(point="p", now_ms=2000, pressure_test=False)
    assert entry.start_ms == 2000
    entry.exit(now_ms=None)
    assert entry.exited
    handle_entry = used.point("p").enter(now_ms=None, pressure_test=False)
    handle_entry.exit(2000)
    assert used.stats("p", now_ms=2000)["concurrent"] == 0


def test_the_methods_keep_their_signatures() -> None:
    import inspect

    client = sds.Client()
    entry = client.enter("p", now_ms=1)
    assert str(inspect.signature(client.enter)) == "(point, *, now_ms=None, pressure_test=False)"
    assert str(inspect.signature(client.point("p").enter)) == "(*, now_ms=None, pressure_test=False)"
    assert str(inspect.signature(entry.exit)) == "(now_ms=None)"
    entry.exit(1)
