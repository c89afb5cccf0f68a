"""The native pieces sds.web takes from the crate sds-http
(``_native.RoutePolicies``, ``_native.ClientAddress``): what Python
hands them and gets back. Their rules are sds-http's own tests'."""

from __future__ import annotations

import pytest

import sds
from sds import _native


NOW = 1_700_000_040_000  # the start of a minute


def window(limit: int) -> sds.KeyedLimit:
    return sds.KeyedLimit({"kind": "fixedWindow", "limit": limit, "periodMs": 60_000}, 64)


def test_fields_in_text_and_in_asgi_bytes_and_a_policy_without_a_key() -> None:
    a, b = window(10), window(5)
    route = _native.RoutePolicies("draft-10", [("a", a), ("b", b)])
    assert (route.style, route.policies) == ("draft-10", ("a", "b"))
    verdict, held, text = route.decide([None, "alice"], [1, 2], now_ms=NOW)
    assert (verdict, held) == (0, 0)
    assert text == [("RateLimit-Policy", '"b";q=5;w=60'), ("RateLimit", '"b";r=3;t=60')]
    _, _, raw = route.decide([None, b"bob"], [1, 2], True, NOW)
    assert raw == [(b"ratelimit-policy", b'"b";q=5;w=60'), (b"ratelimit", b'"b";r=3;t=60')]
    assert route.decide([None, None], [1, 1], now_ms=NOW)[2] == []
    assert a.peek("alice", now_ms=NOW).remaining == 10
    six = _native.RoutePolicies("x-ratelimit", [("a", a)])
    assert six.decide(["k"], [1], True, NOW)[2][0] == (b"x-ratelimit-limit", b"10")


def test_after_a_refusal_the_later_policies_only_peek() -> None:
    first, tight, last = window(10), window(1), window(10)
    route = _native.RoutePolicies("draft-10", [("a", first), ("b", tight), ("c", last)])
    assert route.decide(["k", "k", "k"], [1, 1, 1], now_ms=NOW)[0] == 0
    verdict, held, fields = route.decide(["k", "k", "k"], [1, 1, 1], now_ms=NOW + 1)
    assert (verdict, held) == (1, 0)
    assert [first.peek("k", now_ms=NOW).remaining, last.peek("k", now_ms=NOW).remaining] == [8, 9]
    assert fields[1] == ("RateLimit", '"a";r=8;t=60, "b";r=0;t=60, "c";r=9;t=60')
    assert fields[2] == ("Retry-After", "60")


def test_in_flight_units_are_held_until_released_and_a_full_table_is_verdict_2() -> None:
    conns = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 4)
    route = _native.RoutePolicies("draft-10", [("conns", conns)])
    held = []
    for k in range(64):
        verdict, mask, fields = route.decide([f"k{k}"], [1], now_ms=NOW)
        if verdict == 2:
            assert (mask, fields) == (0, [])
            break
        assert (verdict, mask) == (0, 1)
        held.append(f"k{k}")
    assert len(held) >= 4
    for key in held:
        route.release(1, [key], [1])
        assert conns.peek(key, now_ms=NOW).remaining == 1


def test_what_the_native_pieces_refuse() -> None:
    a = window(1)
    with pytest.raises(sds.InvalidArgument, match='"draft-10", "draft-6" or "x-ratelimit"'):
        _native.RoutePolicies("Draft-10", [])
    with pytest.raises(sds.InvalidArgument, match="printable ASCII"):
        _native.RoutePolicies("draft-10", [("ok", a), ("tab\there", a)])
    with pytest.raises(sds.InvalidArgument, match='policy names must differ within a route: "a" is twice'):
        _native.RoutePolicies("draft-10", [("a", a), ("a", a)])
    with pytest.raises(sds.InvalidArgument, match="at most 64 policies, not 65"):
        _native.RoutePolicies("draft-10", [(f"p{i}", a) for i in range(65)])
    route = _native.RoutePolicies("draft-10", [("a", a)])
    with pytest.raises(sds.InvalidArgument, match="2 keys for 1 policies"):
        route.decide([None, None], [1])
    with pytest.raises(sds.InvalidArgument, match="0 costs for 1 policies"):
        route.decide([None], [])
    with pytest.raises(sds.InvalidArgument, match="cost"):
        route.decide(["k"], [0])
    with pytest.raises(sds.InvalidArgument, match="key must be a str or bytes"):
        route.decide([7], [1])
    with pytest.raises(sds.InvalidArgument, match=r'peer address "1.2.3.4:80" is not an IP address'):
        _native.ClientAddress().key("1.2.3.4:80")
    _native.check_policy_name("per-user 100/min")
    with pytest.raises(sds.InvalidArgument, match="printable ASCII"):
        _native.check_policy_name("x" * 65)


def test_client_keys() -> None:
    keys = _native.ClientAddress(24, 48, ["10.0.0.0/8"])
    assert keys.trusts_proxies and not _native.ClientAddress().trusts_proxies
    assert keys.key("203.0.113.77") == "203.0.113.0/24"
    assert keys.key("2001:db8:1:2::1") == "2001:db8:1::/48"
    assert keys.key("10.1.2.3", ["198.51.100.9, 10.0.0.2"]) == "198.51.100.0/24"
    with pytest.raises(sds.InvalidArgument, match="at most 32"):
        _native.ClientAddress(300, 64)
