"""The native pieces sds.web takes from the crate sds-http
(``_native.RoutePlan``, ``_native.ClientAddress``): what Python hands
them and gets back. Their rules are sds-http's own tests'."""

from __future__ import annotations

import types
from typing import Any, List, Tuple

import pytest

import sds
from sds import _native
from sds.web import client_address, header


NOW = 1_700_000_040_000  # the start of a minute


def window(limit: int) -> sds.KeyedLimit:
    return sds.KeyedLimit({"kind": "fixedWindow", "limit": limit, "periodMs": 60_000}, 64)


def plan(style: str, policies: List[Tuple[str, sds.KeyedLimit]], *, point: Any = None,
         asgi: bool = False) -> _native.RoutePlan:
    """A plan whose policy ``name`` reads its key (and cost) from the
    request dict's entries ``name`` (and ``name + "$"``, default 1)."""
    steps = [(name, limit, lambda r, n=name: r.get(n), lambda r, n=name: r.get(n + "$", 1))
             for name, limit in policies]
    return _native.RoutePlan(style, steps, point, asgi, lambda raw: raw)


def test_fields_in_text_and_in_asgi_bytes_and_a_policy_without_a_key() -> None:
    a, b = window(10), window(5)
    route = plan("draft-10", [("a", a), ("b", b)])
    assert (route.style, route.policies) == ("draft-10", ("a", "b"))
    decided = route.admit({"b": "alice", "b$": 2}, NOW)
    assert decided.verdict == 0
    assert decided.headers == [("RateLimit-Policy", '"b";q=5;w=60'), ("RateLimit", '"b";r=3;t=60')]
    raw = plan("draft-10", [("a", a), ("b", b)], asgi=True).admit({"b": b"bob", "b$": 2}, NOW)
    assert raw.headers == [(b"ratelimit-policy", b'"b";q=5;w=60'), (b"ratelimit", b'"b";r=3;t=60')]
    assert route.admit({}, NOW).headers == []
    assert a.peek("alice", now_ms=NOW).remaining == 10
    six = plan("x-ratelimit", [("a", a)], asgi=True)
    assert six.admit({"a": "k"}, NOW).headers[0] == (b"x-ratelimit-limit", b"10")


def test_after_a_refusal_the_later_policies_only_peek() -> None:
    first, tight, last = window(10), window(1), window(10)
    route = plan("draft-10", [("a", first), ("b", tight), ("c", last)])
    keys = {"a": "k", "b": "k", "c": "k"}
    assert route.admit(keys, NOW).verdict == 0
    decided = route.admit(keys, NOW + 1)
    assert decided.verdict == 1
    assert [first.peek("k", now_ms=NOW).remaining, last.peek("k", now_ms=NOW).remaining] == [8, 9]
    assert decided.headers[1] == ("RateLimit", '"a";r=8;t=60, "b";r=0;t=60, "c";r=9;t=60')
    assert decided.headers[2] == ("Retry-After", "60")


def test_in_flight_units_are_held_until_finished_and_a_full_table_is_verdict_2() -> None:
    conns = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 4)
    route = plan("draft-10", [("conns", conns)])
    held = []
    for k in range(64):
        decided = route.admit({"conns": f"k{k}"}, NOW)
        if decided.verdict == 2:
            assert decided.headers == []
            break
        assert decided.verdict == 0 and conns.peek(f"k{k}", now_ms=NOW).remaining == 0
        held.append((f"k{k}", decided))
    assert len(held) >= 4
    for key, decided in held:
        decided.finish(None, 200)
        assert conns.peek(key, now_ms=NOW).remaining == 1
        decided.finish(None, 200)  # later calls do nothing
        assert conns.peek(key, now_ms=NOW).remaining == 1


def test_an_admission_collected_unfinished_gives_its_units_back() -> None:
    conns = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 4)
    route = plan("draft-10", [("conns", conns)])
    assert route.admit({"conns": "k"}, NOW).verdict == 0  # dropped at once
    assert conns.peek("k", now_ms=NOW).remaining == 1


def test_the_point_decides_after_the_policies_and_a_downgrade_gives_the_units_back() -> None:
    client = sds.Client(8)
    client.set_strategy("p", sds.Strategy(concurrent_threshold=1))
    conns = sds.KeyedLimit({"kind": "inFlight", "limit": 5}, 4)
    route = plan("draft-10", [("conns", conns)], point=client.point("p"))
    first = route.admit({"conns": "k"}, NOW)
    assert (first.verdict, conns.peek("k", now_ms=NOW).remaining) == (0, 4)
    second = route.admit({"conns": "k"}, NOW)
    assert (second.verdict, conns.peek("k", now_ms=NOW).remaining) == (3, 4)
    assert [n for n, _ in second.headers] == ["RateLimit-Policy", "RateLimit"]
    first.finish(RuntimeError("app failed"))
    assert conns.peek("k", now_ms=NOW).remaining == 5
    assert client.point("p").stats(now_ms=NOW)["exception"] == 1
    ok = route.admit({"conns": "k"}, NOW)
    ok.finish(None, 503)  # a 5xx is a failure too
    assert client.point("p").stats(now_ms=NOW)["exception"] == 2
    cancelled = route.admit({"conns": "k"}, NOW)
    cancelled.finish(KeyboardInterrupt(), 200)  # a cancellation is none
    assert client.point("p").stats(now_ms=NOW)["exception"] == 2


def test_what_the_native_pieces_refuse() -> None:
    a = window(1)
    with pytest.raises(sds.InvalidArgument, match='"draft-10", "draft-6" or "x-ratelimit"'):
        plan("Draft-10", [])
    with pytest.raises(sds.InvalidArgument, match="printable ASCII"):
        plan("draft-10", [("ok", a), ("tab\there", a)])
    with pytest.raises(sds.InvalidArgument, match='policy names must differ within a route: "a" is twice'):
        plan("draft-10", [("a", a), ("a", a)])
    with pytest.raises(sds.InvalidArgument, match="at most 64 policies, not 65"):
        plan("draft-10", [(f"p{i}", a) for i in range(65)])
    with pytest.raises(sds.InvalidArgument, match="cost"):
        _native.RoutePlan("draft-10", [("a", a, lambda r: "k", 0)], None, False, lambda raw: raw)
    route = plan("draft-10", [("a", a)])
    with pytest.raises(sds.InvalidArgument, match="cost"):
        route.admit({"a": "k", "a$": 0})
    with pytest.raises(sds.InvalidArgument, match="key must be a str or bytes"):
        route.admit({"a": 7})
    assert a.peek("k").remaining == 1  # nothing decided
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


class Seen:
    """What a key function reads of a request: its peer and headers."""

    def __init__(self, peer: Any, forwarded: List[str] = []) -> None:
        self.peer, self.forwarded = peer, forwarded

    def header_values(self, name: str) -> List[str]:
        assert name == "x-forwarded-for"
        return self.forwarded

    def header(self, name: str) -> Any:
        return None


def test_client_address_is_a_key_function_of_any_request() -> None:
    keys = client_address(ipv4_prefix=24, trusted_proxies=("10.0.0.0/8",))
    assert keys(Seen("10.1.2.3", ["198.51.100.9"])) == "198.51.100.0/24"
    assert keys(Seen("10.1.2.3")) == "10.1.2.0/24"  # no hop: the peer's own
    assert keys(Seen("203.0.113.9", ["198.51.100.9"])) == "203.0.113.0/24"  # untrusted peer
    assert keys(Seen(None)) == "" and keys(Seen("unix:/run/app.sock")) == "unix:/run/app.sock"
    assert repr(keys).startswith("sds.web.client_address(")
    plain = client_address()
    for n in range(5000):  # past what it remembers: it starts afresh
        assert plain(Seen(f"10.0.{n // 256}.{n % 256}")) == f"10.0.{n // 256}.{n % 256}"


def test_the_client_key_is_read_from_a_scope_or_environ_of_any_mapping() -> None:
    limit = window(10)
    wsgi = _native.RoutePlan("draft-10", [("ip", limit, client_address(), 1)], None, False, lambda raw: raw)
    assert wsgi.admit(types.MappingProxyType({"REMOTE_ADDR": "203.0.113.9"}), NOW).verdict == 0
    assert wsgi.admit({"REMOTE_ADDR": ""}, NOW).verdict == 0  # no peer: the key ""
    asgi = _native.RoutePlan("draft-10", [("ip", limit, client_address(ipv4_prefix=24), 1)], None, True,
                             lambda raw: raw)
    assert asgi.admit({"client": ["203.0.113.10", 1234]}, NOW).verdict == 0
    assert asgi.admit({"client": None}, NOW).verdict == 0
    assert [limit.peek(k, now_ms=NOW).remaining for k in ("203.0.113.9", "203.0.113.0/24", "")] == [9, 9, 8]


def test_a_header_key_is_read_from_the_scope_or_environ_the_first_value_or_the_default() -> None:
    limit = window(10)
    asgi = _native.RoutePlan("draft-10", [("k", limit, header("X-Api-Key"), 1)], None, True, lambda raw: raw)
    pairs = [(b"host", b"h"), (b"x-api-key", b"k1"), (b"x-api-key", b"k2")]
    assert asgi.admit({"headers": pairs}, NOW).verdict == 0
    assert asgi.admit({"headers": [(b"x-api-key", b"caf\xe9")]}, NOW).verdict == 0  # Latin-1 text
    assert asgi.admit({"headers": []}, NOW).headers == []  # no header, no default: exempt
    wsgi = _native.RoutePlan("draft-10", [("k", limit, header("x-api-key", default="anonymous"), 1)], None, False,
                             lambda raw: raw)
    assert wsgi.admit({"HTTP_X_API_KEY": "k1"}, NOW).verdict == 0
    assert wsgi.admit({}, NOW).verdict == 0
    remaining = [limit.peek(k, now_ms=NOW).remaining for k in ("k1", "k2", "café", "anonymous")]
    assert remaining == [8, 10, 9, 9]
    typed = header("Content-Type")
    assert typed(Seen(None)) is None and repr(typed) == "sds.web.header('Content-Type')"
    ct = _native.RoutePlan("draft-10", [("k", limit, typed, 1)], None, False, lambda raw: raw)
    assert ct.admit({"CONTENT_TYPE": "text/plain"}, NOW).verdict == 0
    assert limit.peek("text/plain", now_ms=NOW).remaining == 9
    for bad in ("", "X Api", "Ключ", 7):
        with pytest.raises(sds.InvalidArgument, match="header name must be a non-empty str of token characters"):
            header(bad)  # type: ignore[arg-type]
    with pytest.raises(sds.InvalidArgument, match="header default must be a str, bytes or None"):
        header("X-Key", default=7)  # type: ignore[arg-type]


def test_the_request_views_read_peer_and_headers_by_the_routes_rules() -> None:
    from sds.asgi import AsgiRequest
    from sds.wsgi import WsgiRequest

    scope = {"headers": [(b"x-hop", b"a"), (b"host", b"h"), (b"x-hop", b"caf\xe9")], "client": ("203.0.113.4", 1)}
    asgi = AsgiRequest(scope)
    assert (asgi.peer, asgi.header("X-Hop"), asgi.header_values("x-hop")) == ("203.0.113.4", "a", ["a", "café"])
    assert asgi.header("absent") is None and AsgiRequest({"headers": [], "client": None}).peer is None
    environ = types.MappingProxyType({"REMOTE_ADDR": "", "HTTP_X_HOP": "a, b", "CONTENT_TYPE": "text/plain"})
    wsgi = WsgiRequest(environ)  # type: ignore[arg-type]
    assert (wsgi.peer, wsgi.header("x-hop"), wsgi.header_values("X-Hop")) == (None, "a, b", ["a, b"])
    assert wsgi.header("Content-Type") == "text/plain" and wsgi.header_values("absent") == []
