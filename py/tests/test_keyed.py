"""``sds.KeyedLimit``: keys, rules, arguments, answers, and shared tables
seen by other processes (a second interpreter, a fork child) and threads.
The rules' semantics are the conformance scenarios'
(test_keyed_conformance.py)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import threading
from typing import Any, Dict, List

import pytest

import sds

RATE: Dict[str, Any] = {"kind": "rate", "limit": 2, "period_ms": 1000}
WINDOW: Dict[str, Any] = {"kind": "fixedWindow", "limit": 10, "periodMs": 60000}


def test_a_decision_is_a_named_tuple_of_the_core_fields() -> None:
    keys = sds.KeyedLimit(RATE, 16)
    d = keys.decide("a", now_ms=1000)
    assert isinstance(d, sds.KeyDecision) and isinstance(d, tuple)
    assert d == sds.KeyDecision(
        admitted=True, limit=2, remaining=1, reset_ms=500, retry_after_ms=0, window_ms=1000
    )
    assert d._asdict()["reset_ms"] == 500
    admitted, limit, remaining, reset_ms, retry_after_ms, window_ms = keys.decide("a", now_ms=1000)
    assert (admitted, remaining, reset_ms) == (True, 0, 1000)
    refused = keys.decide("a", now_ms=1000)
    assert (refused.admitted, refused.remaining, refused.retry_after_ms) == (False, 0, 500)


def test_the_usual_call_answers_every_field_and_never_changes_a_held_decision() -> None:
    # `decide(key)` alone takes the method's shortest way and refills the
    # decision the caller dropped in place: the same answers as a parsed
    # call, each field, and a decision still held stays as it was.
    rule = {"kind": "fixedWindow", "limit": 2, "periodMs": 60000, "windowFromFirstHit": True}
    usual, parsed = sds.KeyedLimit(rule, 16), sds.KeyedLimit(rule, 16)
    answers = []
    for _ in range(4):
        d = usual.decide("k")
        answers.append(tuple(d))
        assert type(d) is sds.KeyDecision
        del d
        other = parsed.decide("k", 1, now_ms=None)
        assert (tuple(other)[:3], other.window_ms) == (answers[-1][:3], answers[-1][5])
    assert [a[:3] for a in answers] == [(True, 2, 1), (True, 2, 0), (False, 2, 0), (False, 2, 0)]
    for admitted, _, _, reset_ms, retry_after_ms, window_ms in answers:
        assert 59000 < reset_ms <= 60000 and window_ms == 60000
        # Refused in a window: retry when it ends.
        assert retry_after_ms == (0 if admitted else reset_ms)
    held = usual.decide("h")
    again = usual.decide("h")
    assert held is not again and (held.remaining, again.remaining) == (1, 0)
    assert usual.decide("h").admitted is False and held == (True, 2, 1, held.reset_ms, 0, 60000)
    # A minute's rate: one of a second would admit the second call if the
    # two were a second apart (a stalled run).
    rate = sds.KeyedLimit({"kind": "rate", "limit": 1, "periodMs": 60000}, 16)
    assert rate.decide(b"k")[:3] == (True, 1, 0)
    refused = tuple(rate.decide("k"))
    assert refused[:3] == (False, 1, 0) and 0 < refused[4] <= refused[3] <= 60000

    class Key(str):
        pass

    assert usual.decide(Key("k")).admitted is False, "a str subclass is its text"
    with pytest.raises(sds.InvalidArgument, match="key must be a str or bytes, not int"):
        usual.decide(1)  # type: ignore[arg-type]
    with pytest.raises(sds.InvalidArgument, match="lone surrogate"):
        usual.decide("\udc00")


def test_a_cost_no_wait_admits_retries_never() -> None:
    keys = sds.KeyedLimit(RATE, 16)
    d = keys.decide("a", 3, now_ms=1000)
    assert d.admitted is False and d.retry_after_ms is None
    assert keys.stats().resident == 0, "a refused call on a fresh key takes no cell"


def test_str_and_bytes_keys_are_one_key_for_the_same_bytes() -> None:
    keys = sds.KeyedLimit({"kind": "rate", "limit": 1, "periodMs": 60000}, 16)
    for text in ["é", "", "user-42", "🔑" * 100]:
        assert keys.decide(text, now_ms=1000).admitted, text
        assert not keys.decide(text.encode(), now_ms=1000).admitted, text
    # NFC and NFD of one text are different bytes, so different keys.
    assert keys.decide("e\u0301", now_ms=1000).admitted
    assert keys.decide(b"\xff\x00", now_ms=1000).admitted
    assert not keys.peek(b"\xff\x00", now_ms=1000).remaining
    assert keys.stats().resident == 6


def test_peek_takes_nothing() -> None:
    keys = sds.KeyedLimit(RATE, 16)
    assert keys.peek("a", now_ms=1000) == keys.peek(b"a", now_ms=1000)
    assert keys.peek("a", now_ms=1000).remaining == 2
    assert keys.stats().resident == 0


def test_names_are_camel_case_or_snake_case_and_flags_bools() -> None:
    snake = sds.KeyedLimit(
        {"kind": "fixedWindow", "limit": 3, "period_ms": 1000, "window_from_first_hit": True, "count_refused": 1}, 8
    )
    camel = sds.KeyedLimit('{"kind": "fixedWindow", "limit": 3, "periodMs": 1000, "windowFromFirstHit": true, "countRefused": true}', 8)
    for keys in (snake, camel):
        assert keys.kind == "fixedWindow"
        # From the first hit at 1500, the window ends at 2500.
        assert keys.decide("a", now_ms=1500).reset_ms == 1000
        assert keys.count("a", now_ms=2000) == sds.KeyCount(count=1, previous=0, reset_ms=500)


@pytest.mark.parametrize(
    "rule, cls, message, field",
    [
        ({"kind": "rate", "limit": 0, "periodMs": 1000}, sds.InvalidStrategy, "invalid key rule: limit must be >= 1", "limit"),
        ({"kind": "rate", "limit": 1.5, "periodMs": 1000}, sds.InvalidStrategy, "invalid key rule: limit must be an integer", "limit"),
        ({"kind": "rate", "limit": "10", "periodMs": 1000}, sds.InvalidStrategy, "invalid key rule: limit must be an integer", "limit"),
        ({"kind": "rate", "limit": 10}, sds.InvalidStrategy, "invalid key rule: periodMs is required", "periodMs"),
        ({"limit": 10}, sds.InvalidStrategy, "invalid key rule: kind is required", "kind"),
        ({"kind": "leaky"}, sds.InvalidStrategy, "invalid key rule: kind must be one of rate, fixedWindow, slidingWindow, inFlight", "kind"),
        ({"kind": "rate", "limit": 1, "periodMs": 1, "period_ms": 1}, sds.InvalidStrategy, 'invalid key rule: "periodMs" is given twice', "periodMs"),
        ({"kind": "rate", "limit": 1, "periodMs": 1, "colour": 1}, sds.UnknownField, 'unknown key rule field "colour"', "colour"),
        ({"kind": "rate", "limit": 1, "periodMs": 1000, "exceptions": {"vip": 5}}, sds.InvalidStrategy, "invalid key rule: exceptions must be a list of [key, limit] pairs", "exceptions"),
        ({"kind": "rate", "limit": 1, "periodMs": 1000, "exceptions": [[b"vip", 5]]}, sds.InvalidStrategy, "invalid key rule: exceptions must be a list of [key, limit] pairs", "exceptions"),
        ({"kind": "fixedWindow", "limit": 1, "periodMs": 1000, "countRefused": 2}, sds.InvalidStrategy, "invalid key rule: countRefused must be 0 or 1 (false or true)", "countRefused"),
    ],
)
def test_a_bad_rule_raises_the_core_class_and_message(rule: Dict[str, Any], cls: type, message: str, field: str) -> None:
    with pytest.raises(cls) as raised:
        sds.KeyedLimit(rule, 16)
    assert str(raised.value) == message
    assert raised.value.field == field  # type: ignore[attr-defined]


def test_a_rule_of_the_wrong_shape_is_an_argument_error() -> None:
    with pytest.raises(sds.InvalidArgument, match="rule must be a mapping or JSON text, not int"):
        sds.KeyedLimit(5)  # type: ignore[arg-type]
    with pytest.raises(sds.InvalidArgument, match="field names must be str, not int"):
        sds.KeyedLimit({1: 2})  # type: ignore[dict-item]
    with pytest.raises(sds.InvalidJson, match="EOF while parsing"):
        sds.KeyedLimit('{"kind": "rate"')


def test_a_rule_as_json_text_gets_the_same_verdict() -> None:
    with pytest.raises(sds.InvalidStrategy) as raised:
        sds.KeyedLimit('{"kind": "rate", "limit": 0, "periodMs": 1000}')
    assert (str(raised.value), raised.value.field) == ("invalid key rule: limit must be >= 1", "limit")
    with pytest.raises(sds.InvalidStrategy, match='"kind" is given twice'):
        sds.KeyedLimit('{"kind": "rate", "kind": "rate", "limit": 1, "periodMs": 1000}')


def test_exceptions_give_named_keys_their_own_limit() -> None:
    keys = sds.KeyedLimit({"kind": "fixedWindow", "limit": 1, "periodMs": 1000, "exceptions": [("vip", 3)]}, 16)
    assert keys.decide("vip", now_ms=0).limit == 3
    assert keys.decide(b"vip", now_ms=0).remaining == 1
    assert keys.decide("other", now_ms=0).limit == 1


@pytest.mark.parametrize(
    "cost, cls, message",
    [
        (0, sds.InvalidArgument, "cost must be >= 1"),
        (-1, sds.InvalidArgument, "cost must be an integer from 1 to 4294967295"),
        (2**32, sds.InvalidArgument, "cost must be an integer from 1 to 4294967295"),
        (2**200, sds.InvalidArgument, "cost must be an integer from 1 to 4294967295"),
        # Judged by the core as Node's and Java's are: one message.
        (True, sds.InvalidArgument, "cost must be an integer from 1 to 4294967295"),
        (1.5, sds.InvalidArgument, "cost must be an integer from 1 to 4294967295"),
        (float("nan"), sds.InvalidArgument, "cost must be an integer from 1 to 4294967295"),
        ("1", sds.InvalidArgument, "cost must be an integer from 1 to 4294967295"),
    ],
)
def test_a_bad_cost_raises(cost: Any, cls: type, message: str) -> None:
    keys = sds.KeyedLimit(WINDOW, 16)
    with pytest.raises(cls) as raised:
        keys.decide("a", cost, now_ms=0)
    assert str(raised.value) == message
    assert keys.stats().resident == 0


def test_two_bad_arguments_name_the_time_then_the_cost_then_the_key() -> None:
    # The order of every binding (Node and Java too): one input, one message.
    keys = sds.KeyedLimit({"kind": "inFlight", "limit": 2}, 16)
    time = "time must be a whole number of ms within 0..2^64"
    cost = "cost must be an integer from 1 to 4294967295"
    for call, message in (
        (lambda: keys.decide(5, 1.5, now_ms=-1), time),
        (lambda: keys.decide(5, 1.5, now_ms=0), cost),
        (lambda: keys.release(5, -1), "units must be an integer from 1 to 4294967295"),
    ):
        with pytest.raises(sds.InvalidArgument) as raised:
            call()
        assert str(raised.value) == message


def test_a_whole_float_cost_is_its_integer() -> None:
    # As a strategy's 10.0 and a time's 2000.0 (and a JavaScript number).
    keys = sds.KeyedLimit(WINDOW, 16)
    decision = keys.decide("a", 2.0, now_ms=0)
    assert (decision.admitted, decision.remaining) == (True, 8)
    assert keys.increment("a", 1e1, now_ms=0).count == 12


def test_units_take_the_same_checks() -> None:
    window = sds.KeyedLimit(WINDOW, 16)
    flight = sds.KeyedLimit({"kind": "inFlight", "limit": 2}, 16)
    for call in (
        lambda: window.increment("a", 0, now_ms=0),
        lambda: window.decrement("a", 0, now_ms=0),
        lambda: flight.release("a", 0),
    ):
        with pytest.raises(sds.InvalidArgument, match="^cost must be >= 1$"):
            call()
    for call in (
        lambda: window.increment("a", 2**40, now_ms=0),
        lambda: window.decrement("a", -1, now_ms=0),
        lambda: flight.release("a", -5),
    ):
        with pytest.raises(sds.InvalidArgument, match="^units must be an integer from 1 to 4294967295$"):
            call()


def test_a_bad_key_raises() -> None:
    keys = sds.KeyedLimit(RATE, 16)
    for key, message in [
        (1, "key must be a str or bytes, not int"),
        (None, "key must be a str or bytes, not NoneType"),
        (bytearray(b"a"), "key must be a str or bytes, not bytearray"),
        ("a\ud800", "key must be valid Unicode text: lone surrogate \\ud800 at index 1"),
    ]:
        with pytest.raises(sds.InvalidArgument) as raised:
            keys.decide(key, now_ms=0)
        assert str(raised.value) == message
    with pytest.raises(sds.InvalidArgument):
        keys.decide("a", now_ms=-1)


def test_calls_a_rule_does_not_take_are_argument_errors() -> None:
    rate = sds.KeyedLimit(RATE, 16)
    with pytest.raises(sds.InvalidArgument, match="only an inFlight rule gives units back"):
        rate.release("a")
    with pytest.raises(sds.InvalidArgument, match="only a window rule counts hits"):
        rate.count("a")


def test_in_flight_units_are_held_until_released() -> None:
    keys = sds.KeyedLimit({"kind": "inFlight", "limit": 2}, 16)
    assert keys.decide("a", 2).admitted
    refused = keys.decide("a")
    assert not refused.admitted and refused.retry_after_ms == 0
    assert keys.release("a") is True
    assert keys.decide("a").admitted
    assert keys.release("nobody") is False


def test_store_counts() -> None:
    keys = sds.KeyedLimit({"kind": "fixedWindow", "limit": 2, "periodMs": 1000, "windowFromFirstHit": True}, 16)
    assert keys.count("a", now_ms=100) == (0, 0, 0)
    assert keys.increment("a", now_ms=100) == sds.KeyCount(1, 0, 1000)
    assert keys.increment("a", 4, now_ms=200).count == 5
    assert keys.decrement(b"a", 2, now_ms=300) == sds.KeyCount(3, 0, 800)
    assert keys.reset("a") is True and keys.reset("a") is False
    keys.increment("b", now_ms=0)
    keys.increment("c", now_ms=0)
    assert keys.reset_all() == 2


def test_capacity_stats_path_and_repr() -> None:
    keys = sds.KeyedLimit(RATE, 5)
    assert keys.capacity == 8, "rounded up to buckets of 4"
    assert keys.stats() == sds.KeyStats(
        capacity=8, resident=0, evictions=0, lossy_evictions=0, admitted=0, refused=0
    )
    assert keys.path is None
    assert repr(keys) == "sds.KeyedLimit(kind='rate', capacity=8)"
    assert sds.KeyedLimit(RATE).capacity == 65536


def test_stats_count_decisions_exactly(tmp_path: pathlib.Path) -> None:
    keys = sds.KeyedLimit({"kind": "rate", "limit": 3, "periodMs": 60000}, 16)
    answers = [keys.decide("k", now_ms=1000).admitted for _ in range(5)]
    assert answers == [True, True, True, False, False]
    keys.peek("k", now_ms=1000)
    with pytest.raises(sds.InvalidArgument):
        keys.decide("k", 0, now_ms=1000)
    stats = keys.stats()
    assert (stats.admitted, stats.refused) == (3, 2), "peek and a raising call are no decisions"
    assert stats._fields == ("capacity", "resident", "evictions", "lossy_evictions", "admitted", "refused")
    assert stats == (16, 1, 0, 0, 3, 2)
    # A shared table counts every handle's decisions: each sees the host's.
    rule = {"kind": "rate", "limit": 3, "periodMs": 60000}
    first = sds.KeyedLimit.shared(tmp_path / "keys", rule, 16)
    second = sds.KeyedLimit.shared(tmp_path / "keys", rule, 16)
    assert [first.decide("k", now_ms=1000).admitted for _ in range(2)] == [True, True]
    assert [second.decide("k", now_ms=1000).admitted for _ in range(3)] == [True, False, False]
    assert first.stats()[-2:] == second.stats()[-2:] == (3, 2)


def test_key_stats_must_name_the_core_fields() -> None:
    from typing import NamedTuple

    from sds import _native

    class Renamed(NamedTuple):
        capacity: int
        resident: int
        evictions: int
        lossy_evictions: int
        allowed: int
        refused: int

    with pytest.raises(TypeError, match="must name its fields"):
        _native._register_key_results(sds.KeyDecision, sds.KeyCount, Renamed)


def test_a_bad_capacity_or_mode_raises() -> None:
    for capacity in (0, -1, 2**64, 2**40):
        with pytest.raises(sds.InvalidCapacity, match="a key table needs"):
            sds.KeyedLimit(RATE, capacity)
    with pytest.raises(sds.InvalidArgument, match="capacity must be an int, not str"):
        sds.KeyedLimit(RATE, "8")  # type: ignore[arg-type]
    with pytest.raises(sds.InvalidArgument, match="mode is only for a shared table"):
        sds.KeyedLimit(RATE, 8, mode=0o600)


def test_shared_tables_name_files_like_client_shared(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "keys"
    keys = sds.KeyedLimit.shared(path, RATE, 16)
    assert keys.path == path and path.stat().st_mode & 0o777 == 0o600
    assert repr(keys) == f"sds.KeyedLimit(kind='rate', capacity=16, shared={str(path)!r})"
    # The umask may take the group's write bit; never more than the mode.
    group = sds.KeyedLimit.shared(str(tmp_path / "group"), RATE, 16, mode=0o660)
    assert group.path is not None and group.path.stat().st_mode & 0o777 & ~0o660 == 0
    with pytest.raises(sds.InvalidArgument, match="mode"):
        sds.KeyedLimit.shared(tmp_path / "other", RATE, 16, mode=0o644)


def test_a_bare_name_is_a_file_under_dev_shm() -> None:
    name = f"sds-test-keyed-{os.getpid()}"
    keys = sds.KeyedLimit.shared(name, RATE, 16)
    try:
        assert keys.path == pathlib.Path("/dev/shm") / name
    finally:
        os.unlink(f"/dev/shm/{name}")


def test_table_path_is_the_core_naming_rule(tmp_path: pathlib.Path) -> None:
    from sds import _native

    assert _native.table_path("sessions") == "/dev/shm/sessions"
    assert _native.table_path(tmp_path / "keys") == str(tmp_path / "keys")
    with pytest.raises(sds.InvalidArgument, match="NUL"):
        _native.table_path("a\0b")


def test_a_shared_file_must_match(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "keys"
    sds.KeyedLimit.shared(path, RATE, 16)
    with pytest.raises(sds.LayoutMismatch):
        sds.KeyedLimit.shared(path, RATE, 32)
    with pytest.raises(sds.LayoutMismatch):
        sds.KeyedLimit.shared(path, {**RATE, "limit": 3}, 16)
    sds.Client.shared(tmp_path / "points", 16)
    with pytest.raises(sds.LayoutMismatch):
        sds.KeyedLimit.shared(tmp_path / "points", RATE, 16)
    flight = sds.KeyedLimit.shared(tmp_path / "flight", {"kind": "inFlight", "limit": 1}, 16)
    assert flight.decide("a").admitted
    assert not flight.decide("a").admitted
    assert flight.release("a")


def test_two_handles_on_one_file_share_keys(tmp_path: pathlib.Path) -> None:
    first = sds.KeyedLimit.shared(tmp_path / "keys", RATE, 16)
    second = sds.KeyedLimit.shared(tmp_path / "keys", RATE, 16)
    assert first.decide("a", now_ms=1000).admitted
    assert first.decide(b"a", now_ms=1000).admitted
    assert not second.decide("a", now_ms=1000).admitted
    assert second.stats().resident == 1


# Decides `n` times on the key "k" of the table file, at one instant, and
# prints how many were admitted.
CHILD = """
import sys, sds
keys = sds.KeyedLimit.shared(sys.argv[1], {"kind": "fixedWindow", "limit": 300, "periodMs": 60000}, 64)
print(sum(keys.decide("k", now_ms=1000).admitted for _ in range(int(sys.argv[2]))))
"""


def test_processes_count_once_host_wide(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "keys")
    rule = {"kind": "fixedWindow", "limit": 300, "periodMs": 60000}
    keys = sds.KeyedLimit.shared(path, rule, 64)
    assert keys.decide("k", 100, now_ms=1000).admitted
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, path, "200"], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=60)[0] for child in children]
    assert [child.returncode for child in children] == [0, 0]
    admitted = [int(out) for out in outputs]
    assert sum(admitted) == 200, f"400 calls after 100 of 300 admitted {admitted}"
    assert keys.peek("k", now_ms=1000).remaining == 0
    assert keys.count("k", now_ms=1000).count == 300
    # Every process's decisions, seen from this one: 1 + 400, 200 refused.
    assert (keys.stats().admitted, keys.stats().refused) == (201, 200)


def test_a_fork_child_uses_the_shared_table(tmp_path: pathlib.Path) -> None:
    keys = sds.KeyedLimit.shared(tmp_path / "keys", {"kind": "fixedWindow", "limit": 5, "periodMs": 60000}, 16)
    assert keys.decide("k", 2, now_ms=1000).admitted
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its admissions, then leave at once
        try:
            admitted = sum(keys.decide("k", now_ms=1000).admitted for _ in range(10))
            os.write(write, str(admitted).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child_admitted = int(pipe.read())
    assert os.waitpid(pid, 0)[1] == 0
    assert child_admitted == 3
    assert keys.peek("k", now_ms=1000).remaining == 0


def test_threads_count_exactly() -> None:
    keys = sds.KeyedLimit({"kind": "fixedWindow", "limit": 3000, "periodMs": 60000}, 16)
    admitted: List[int] = []
    lock = threading.Lock()

    def work() -> None:
        n = sum(keys.decide("k", now_ms=1000).admitted for _ in range(1000))
        with lock:
            admitted.append(n)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(admitted) == 3000
    assert keys.count("k", now_ms=1000).count == 3000


def test_the_wall_clock_is_sds_now_ms() -> None:
    keys = sds.KeyedLimit({"kind": "fixedWindow", "limit": 1, "periodMs": 1000}, 16)
    # About the aligned window, so on the real clock: a decision between two
    # reads in one second is in that second's window; one whose reads
    # straddle a second's end may be in either, so it is taken again.
    for attempt in range(5):
        key = f"a{attempt}"
        before = sds.now_ms()
        d = keys.decide(key)
        after = sds.now_ms()
        if before // 1000 == after // 1000:
            break
    assert before // 1000 == after // 1000, "five decisions each straddled a second's end"
    # An aligned window of 1 s ends at the next whole second.
    assert 1000 - after % 1000 <= d.reset_ms <= 1000 - before % 1000
    assert keys.count(key, now_ms=before - before % 1000 + 999).count == 1
