"""``sds.asgi.SdsMiddleware`` in process: Starlette and FastAPI apps called
through httpx's ``ASGITransport`` (which lets a test choose the client's
address) and Starlette's ``TestClient``. Headers are parsed back with
``http_sfv`` and compared with the limit's own state."""

from __future__ import annotations

import asyncio
import math
from typing import Any, Dict, List, Optional, Tuple

import http_sfv
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request as StarletteRequest
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route as StarletteRoute
from starlette.testclient import TestClient

import sds
from sds.asgi import SdsMiddleware
from sds.web import Policy, Response as SdsResponse, Route, client_address, header

# From the first hit: a window aligned to the minute would reset when a test
# crossed a minute's end (counts, remaining and 429s read the real clock).
MINUTE = {"kind": "fixedWindow", "limit": 2, "periodMs": 60_000, "windowFromFirstHit": True}


def window(limit: int = 2) -> sds.KeyedLimit:
    return sds.KeyedLimit(dict(MINUTE, limit=limit), 64)


def app_with(handlers: Optional[Dict[str, Any]] = None) -> Starlette:
    async def ok(request: StarletteRequest) -> Response:
        return PlainTextResponse("ok")

    routes = [StarletteRoute(path, handler) for path, handler in (handlers or {}).items()]
    routes.append(StarletteRoute("/{rest:path}", ok))
    return Starlette(routes=routes)


def get(app: Any, path: str = "/", peer: str = "203.0.113.7", headers: Optional[Dict[str, str]] = None,
        ) -> httpx.Response:
    async def one() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=(peer, 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            return await http.get(path, headers=headers)

    return asyncio.run(one())


def sfv_list(value: str) -> List[Tuple[Any, Dict[str, Any]]]:
    parsed = http_sfv.List()
    parsed.parse(value.encode())
    return [(item.value, dict(item.params)) for item in parsed]


def test_a_refusal_is_429_with_retry_after_and_headers_equal_the_decision() -> None:
    limit = window(2)
    app = SdsMiddleware(app_with(), routes={"/orders": Route(policies=[Policy("per-key", limit, key=header("X-Key"))])})
    answers = [get(app, "/orders", headers={"X-Key": "alice"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    state = limit.peek("alice")
    for i, answer in enumerate(answers):
        assert sfv_list(answer.headers["RateLimit-Policy"]) == [("per-key", {"q": 2, "w": 60})]
        [(name, params)] = sfv_list(answer.headers["RateLimit"])
        assert name == "per-key" and params["r"] == max(0, 1 - i)
        # The same window: the peek after it is at most a second later.
        assert params["t"] in (math.ceil(state.reset_ms / 1000), math.ceil(state.reset_ms / 1000) + 1)
    assert "Retry-After" not in answers[1].headers
    retry = int(answers[2].headers["Retry-After"])
    # A fixed window admits again when it ends: Retry-After is its reset.
    assert retry == sfv_list(answers[2].headers["RateLimit"])[0][1]["t"]
    assert retry in (math.ceil(state.reset_ms / 1000), math.ceil(state.reset_ms / 1000) + 1)
    assert answers[2].text == "Too Many Requests\n"
    # Another key has its own quota.
    assert get(app, "/orders", headers={"X-Key": "bob"}).status_code == 200


def test_two_policies_are_listed_in_order_and_the_older_styles_speak_for_the_tightest() -> None:
    wide, narrow = window(10), window(3)
    policies = [Policy("wide", wide), Policy("narrow", narrow, cost=2)]
    app = SdsMiddleware(app_with(), default=Route(policies=policies))
    answer = get(app, "/x")
    assert [n for n, _ in sfv_list(answer.headers["RateLimit-Policy"])] == ["wide", "narrow"]
    assert [p["r"] for _, p in sfv_list(answer.headers["RateLimit"])] == [9, 1]
    # The cost of 2 no longer fits narrow: refused there, wide charged
    # (it decided first), narrow's state shown.
    refused = get(app, "/x")
    assert refused.status_code == 429
    assert [p["r"] for _, p in sfv_list(refused.headers["RateLimit"])] == [8, 1]
    for style, prefix in (("draft-6", "RateLimit-"), ("x-ratelimit", "X-RateLimit-")):
        tight = window(3)
        app = SdsMiddleware(app_with(), headers=style,
                            default=Route(policies=[Policy("wide", window(10)), Policy("tight", tight)]))
        answer = get(app, "/")
        assert (answer.headers[prefix + "Limit"], answer.headers[prefix + "Remaining"]) == ("3", "2")
        reset = math.ceil(tight.peek("203.0.113.7").reset_ms / 1000)
        assert int(answer.headers[prefix + "Reset"]) in (reset, reset + 1)
        assert "RateLimit" not in answer.headers


def test_ipv6_clients_share_their_64_and_ipv4_clients_their_address() -> None:
    limit = window(1)
    app = SdsMiddleware(app_with(), default=Route(policies=[Policy("per-ip", limit, key=client_address())]))
    assert get(app, peer="2001:db8:1:2::5").status_code == 200
    assert get(app, peer="2001:db8:1:2:ffff::9").status_code == 429
    assert get(app, peer="2001:db8:1:3::1").status_code == 200
    assert limit.count("2001:db8:1:2::/64").count == 1
    assert get(app, peer="::ffff:198.51.100.4").status_code == 200
    assert limit.count("198.51.100.4").count == 1
    wide = window(1)
    app = SdsMiddleware(app_with(), default=Route(policies=[Policy("per-48", wide, key=client_address(ipv6_prefix=48))]))
    assert get(app, peer="2001:db8:1:2::5").status_code == 200
    assert get(app, peer="2001:db8:1:3::5").status_code == 429


def test_forwarded_for_counts_only_from_trusted_proxies() -> None:
    forwarded = {"X-Forwarded-For": "198.51.100.1, 192.0.2.9"}
    trusting, untrusting = window(5), window(5)
    policies = [Policy("trusting", trusting, key=client_address(trusted_proxies=["10.0.0.0/8", "192.0.2.9"])),
                Policy("untrusting", untrusting, key=client_address())]
    app = SdsMiddleware(app_with(), default=Route(policies=policies))
    assert get(app, peer="10.0.0.5", headers=forwarded).status_code == 200
    assert trusting.count("198.51.100.1").count == 1
    assert untrusting.count("10.0.0.5").count == 1
    # From an untrusted peer, its header is not believed.
    get(app, peer="203.0.113.50", headers=forwarded)
    assert trusting.count("203.0.113.50").count == 1
    assert trusting.count("198.51.100.1").count == 1


def test_a_downgrade_answers_503_or_the_fallback_and_the_headers_stay() -> None:
    client = sds.Client(16)
    client.set_strategy("orders", sds.Strategy(concurrent_threshold=1))
    limit = window(10)
    routes = {"/plain": Route(point="orders", policies=[Policy("p", limit)]),
              "/fallback": Route(point="orders", fallback=SdsResponse("cached", 200, [("X-From", "fallback")])),
              "/computed": Route(point="orders", fallback=lambda r: SdsResponse(f"busy {r.method} {r.path}", 202))}
    app = SdsMiddleware(app_with(), client=client, routes=routes)
    held = client.enter("orders")  # the one permit, held by "another request"
    plain = get(app, "/plain")
    assert plain.status_code == 503 and plain.text == "Service Unavailable\n"
    assert sfv_list(plain.headers["RateLimit"])[0][1]["r"] == 9
    fallback = get(app, "/fallback")
    assert (fallback.status_code, fallback.text, fallback.headers["X-From"]) == (200, "cached", "fallback")
    computed = get(app, "/computed")
    assert (computed.status_code, computed.text) == (202, "busy GET /computed")
    held.exit()
    assert get(app, "/plain").status_code == 200
    assert client.stats("orders")["downgrade"] == 3


def test_the_point_concurrency_limit_holds_for_concurrent_requests() -> None:
    client = sds.Client(16)
    client.set_strategy("slow", sds.Strategy(concurrent_threshold=2))
    release = asyncio.Event()

    async def slow(request: StarletteRequest) -> Response:
        await release.wait()
        return PlainTextResponse("done")

    app = SdsMiddleware(app_with({"/slow": slow}), client=client, routes={"/slow": Route(point="slow")})

    async def run() -> List[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            tasks = [asyncio.create_task(http.get("/slow")) for _ in range(5)]
            while client.stats("slow")["downgrade"] < 3:
                await asyncio.sleep(0.005)
            assert client.stats("slow")["concurrent"] == 2
            release.set()
            return [r.status_code for r in await asyncio.gather(*tasks)]

    assert sorted(asyncio.run(run())) == [200, 200, 503, 503, 503]
    assert client.stats("slow")["concurrent"] == 0


def test_an_exception_or_a_5xx_is_the_points_error_and_in_flight_units_come_back() -> None:
    client = sds.Client(16)
    flight = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 64)

    async def boom(request: StarletteRequest) -> Response:
        raise RuntimeError("boom")

    async def five(request: StarletteRequest) -> Response:
        return PlainTextResponse("bad gateway", 502)

    route = Route(point="api", policies=[Policy("flight", flight, key=header("X-Key"))])
    app = SdsMiddleware(app_with({"/boom": boom, "/five": five}), client=client, default=route)
    key = {"X-Key": "k"}
    with pytest.raises(RuntimeError, match="boom"):
        get(app, "/boom", headers=key)
    assert flight.peek("k").remaining == 1
    assert get(app, "/five", headers=key).status_code == 502
    assert get(app, "/fine", headers=key).status_code == 200
    stats = client.stats("api")
    assert (stats["exception"], stats["visit"], stats["concurrent"]) == (2, 3, 0)
    assert flight.peek("k").remaining == 1


def test_in_flight_units_are_held_while_the_response_runs_and_freed_on_disconnect() -> None:
    flight = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 64)
    client = sds.Client(16)
    started = asyncio.Event()

    async def stream(request: StarletteRequest) -> Response:
        started.set()
        await asyncio.sleep(30)
        return PlainTextResponse("late")

    app = SdsMiddleware(app_with({"/stream": stream}), client=client,
                        default=Route(point="p", policies=[Policy("flight", flight)]))

    async def run() -> None:
        scope = {"type": "http", "method": "GET", "path": "/stream", "headers": [], "query_string": b"",
                 "client": ("203.0.113.9", 1), "server": ("test", 80), "scheme": "http", "root_path": "",
                 "http_version": "1.1", "raw_path": b"/stream", "asgi": {"version": "3.0"}}
        sent: List[Any] = []

        async def receive() -> Dict[str, Any]:
            await asyncio.sleep(60)
            return {"type": "http.disconnect"}

        async def send(message: Any) -> None:
            sent.append(message)

        task = asyncio.create_task(app(scope, receive, send))
        await started.wait()
        # Held: the same client is refused, with no Retry-After (no wait
        # frees an in-flight unit, a release does).
        second: List[Any] = []

        async def record(message: Any) -> None:
            second.append(message)

        await app(dict(scope, path="/other"), receive, record)
        assert second[0]["status"] == 429
        assert b"retry-after" not in dict(second[0]["headers"])
        # The client goes away: the server cancels the request.
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert flight.peek("203.0.113.9").remaining == 1
    stats = client.stats("p")
    # A cancellation is no error of the point; its permit is back.
    assert (stats["concurrent"], stats["exception"]) == (0, 0)


def test_routes_by_path_prefix_and_function_and_untouched_requests() -> None:
    exact, prefix, matched = window(5), window(5), window(5)
    routes = {"/a": Route(policies=[Policy("exact", exact)]),
              "/api/*": Route(policies=[Policy("prefix", prefix)]),
              (lambda r: r.header("X-Tenant") is not None): Route(policies=[Policy("tenant", matched)])}
    app = SdsMiddleware(app_with(), routes=routes)
    assert sfv_list(get(app, "/a").headers["RateLimit"])[0][0] == "exact"
    assert sfv_list(get(app, "/api/v1/x").headers["RateLimit"])[0][0] == "prefix"
    assert sfv_list(get(app, "/b", headers={"X-Tenant": "t"}).headers["RateLimit"])[0][0] == "tenant"
    untouched = get(app, "/b")
    assert untouched.status_code == 200 and "RateLimit" not in untouched.headers
    # A key function returning None exempts the request from that policy.
    app = SdsMiddleware(app_with(), default=Route(policies=[Policy("k", exact, key=header("X-Key"))]))
    assert "RateLimit" not in get(app, "/").headers


def test_fastapi_and_starlette_take_it_through_add_middleware() -> None:
    from fastapi import FastAPI

    limit = window(1)
    api = FastAPI()

    @api.get("/items")
    def items() -> Dict[str, int]:
        return {"n": 1}

    api.add_middleware(SdsMiddleware, routes={"/items": Route(policies=[Policy("per-ip", limit)])})
    with TestClient(api, client=("2001:db8::1", 1)) as http:
        assert http.get("/items").json() == {"n": 1}
        refused = http.get("/items")
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert limit.count("2001:db8::/64").count == 1


def test_bad_configuration_is_refused_when_the_middleware_is_built() -> None:
    limit = window(1)
    with pytest.raises(sds.InvalidArgument, match="printable ASCII"):
        Policy("naïve", limit)
    with pytest.raises(sds.InvalidArgument, match="headers must be one of"):
        SdsMiddleware(app_with(), headers="draft-7")
    with pytest.raises(sds.InvalidArgument, match="prefix lengths"):
        client_address(ipv6_prefix=129)
    with pytest.raises(sds.InvalidArgument, match="trusted proxy"):
        client_address(trusted_proxies=["proxy.local"])
    with pytest.raises(sds.InvalidArgument, match="must differ"):
        Route(policies=[Policy("a", limit), Policy("a", limit)])
    with pytest.raises(sds.InvalidArgument, match="cost"):
        Policy("a", limit, cost=0)


def test_after_a_refusal_later_policies_only_peek_and_a_full_in_flight_table_answers_503() -> None:
    """sds-http's order through Starlette: the policy after a refusing one
    takes nothing; an in-flight table with no cell left answers a plain 503
    (no fallback, no headers) and the policy before it keeps its hit."""
    tight, later = window(1), window(10)
    app = SdsMiddleware(app_with(), routes={"/": Route(policies=[Policy("tight", tight), Policy("later", later)])})
    assert [get(app).status_code for _ in range(2)] == [200, 429]
    assert later.peek("203.0.113.7").remaining == 9
    rate, conns = window(100), sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 4)
    for k in range(4):
        conns.decide(f"holder-{k}")  # every cell of the one bucket holds a unit
    full = SdsMiddleware(app_with(), routes={"/": Route(policies=[Policy("rate", rate), Policy("conns", conns)],
                                                           fallback=SdsResponse("cached", 200))})
    answer = get(full, peer="198.51.100.1")
    assert (answer.status_code, answer.text) == (503, "Service Unavailable\n")
    assert "RateLimit" not in answer.headers
    assert rate.peek("198.51.100.1").remaining == 99
