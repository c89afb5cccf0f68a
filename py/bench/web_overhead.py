"""What sds.asgi / sds.wsgi's middleware adds to a request, per framework:
an empty handler with and without it (one per-key policy keyed by the
client's address, one SDS point with a concurrency strategy), requests
made in process with no network:

- Starlette and FastAPI: the ASGI app awaited in a loop with a fixed scope
  (what a server does after parsing, minus the socket);
- Flask: its WSGI callable in a loop, the body joined and closed;
- Flask through its test client (Werkzeug builds an environ and a response
  object per request), for comparison;
- a bare WSGI app (one ``start_response``, a list body): the middleware's
  own cost in µs (its share of so small an app means nothing);
- Starlette with a hand-written minimal middleware (one decision, one
  entry, fixed headers): the floor of what any Python middleware of this
  kind adds.

Prints µs per request and the overhead in %; the goal is at most 10 % of
the framework's own cost. Times are this thread's CPU time (the machine
may be shared: time spent descheduled is not the framework's), the best
of 5 runs, the runs of the plain and the guarded app interleaved.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import sds
from sds.web import Policy, Route

RUNS = 5


def guarded_route() -> Tuple[sds.Client, Route]:
    client = sds.Client(16)
    client.set_strategy("bench", sds.Strategy(concurrent_threshold=1000))
    # Never refuses: the steady state of an admitted request.
    limit = sds.KeyedLimit({"kind": "rate", "limit": 10**9, "periodMs": 10**6}, 1024)
    return client, Route(point="bench", policies=[Policy("per-ip", limit)])


def best_us(plain: Callable[[int], float], guarded: Callable[[int], float], n: int) -> Tuple[float, float]:
    plain(n // 10)  # warm up
    guarded(n // 10)
    runs = [(plain(n), guarded(n)) for _ in range(RUNS)]
    return min(p for p, _ in runs) / n * 1e6, min(g for _, g in runs) / n * 1e6


def asgi_loop(app: Any) -> Callable[[int], float]:
    scope: Dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": "/", "raw_path": b"/", "root_path": "", "query_string": b"", "headers": [(b"host", b"bench")],
        "client": ("203.0.113.7", 50000), "server": ("127.0.0.1", 8000),
    }

    async def receive() -> Dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    statuses: List[int] = []

    async def send(message: Dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def loop(n: int) -> float:
        start = time.thread_time()
        for _ in range(n):
            await app(dict(scope), receive, send)
        return time.thread_time() - start

    def run(n: int) -> float:
        statuses.clear()
        elapsed = asyncio.run(loop(n))
        assert set(statuses) == {200}, set(statuses)
        return elapsed

    return run


def wsgi_loop(app: Any) -> Callable[[int], float]:
    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": "/", "SCRIPT_NAME": "", "QUERY_STRING": "", "SERVER_NAME": "bench",
        "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "203.0.113.7", "HTTP_HOST": "bench",
        "wsgi.url_scheme": "http", "wsgi.input": None, "wsgi.errors": sys.stderr, "wsgi.multithread": False,
        "wsgi.multiprocess": False, "wsgi.run_once": False, "wsgi.version": (1, 0),
    }
    statuses: List[str] = []

    def start_response(status: str, headers: List[Tuple[str, str]], exc_info: Any = None) -> Any:
        statuses.append(status)
        return None

    def run(n: int) -> float:
        import io
        statuses.clear()
        start = time.thread_time()
        for _ in range(n):
            env = dict(environ)
            env["wsgi.input"] = io.BytesIO()
            body = app(env, start_response)
            b"".join(body)
            close = getattr(body, "close", None)
            if close is not None:
                close()
        elapsed = time.thread_time() - start
        assert set(statuses) == {"200 OK"}, set(statuses)
        return elapsed

    return run


def flask_test_client(app: Any) -> Callable[[int], float]:
    http = app.test_client()

    def run(n: int) -> float:
        start = time.thread_time()
        for _ in range(n):
            assert http.get("/", buffered=True, environ_base={"REMOTE_ADDR": "203.0.113.7"}).status_code == 200
        return time.thread_time() - start

    return run


def floor_middleware(app: Any) -> Any:
    """The least an ASGI middleware of this kind does, written by hand for
    this one case: one decision, one entry, the ``send`` wrapper adding
    fixed headers. What it adds is the floor of what ours can add."""
    client, route = guarded_route()
    point, limit = client.point("bench"), route.policies[0].limit
    fields = [(b"ratelimit-policy", b'"per-ip";q=1;w=1'), (b"ratelimit", b'"per-ip";r=1;t=1')]

    async def guarded(scope: Dict[str, Any], receive: Any, send: Any) -> None:
        limit.decide(scope["client"][0], 1)
        entry = point.enter()

        async def send_with_headers(message: Dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *fields]
            await send(message)

        try:
            await app(scope, receive, send_with_headers)
        finally:
            entry.exit()

    return guarded


def starlette_app() -> Any:
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route as StarletteRoute

    async def empty(request: Any) -> Any:
        return PlainTextResponse("")

    return Starlette(routes=[StarletteRoute("/", empty)])


def fastapi_app() -> Any:
    from fastapi import FastAPI
    from fastapi.responses import PlainTextResponse

    app = FastAPI()

    @app.get("/", response_class=PlainTextResponse)
    async def empty() -> str:
        return ""

    return app


def bare_wsgi_app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
    """The least a WSGI app does: what the middleware adds, in µs."""
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def flask_app() -> Any:
    from flask import Flask

    app = Flask("bench")

    @app.route("/")
    def empty() -> str:
        return ""

    return app


def main() -> None:
    from sds.asgi import SdsMiddleware as AsgiMiddleware
    from sds.wsgi import SdsMiddleware as WsgiMiddleware

    def asgi(make: Callable[[], Any]) -> Tuple[Any, Any]:
        client, route = guarded_route()
        return make(), AsgiMiddleware(make(), client=client, default=route)

    def wsgi_raw() -> Tuple[Any, Any]:
        client, route = guarded_route()
        return flask_app().wsgi_app, WsgiMiddleware(flask_app().wsgi_app, client=client, default=route)

    def wsgi_bare() -> Tuple[Any, Any]:
        client, route = guarded_route()
        return bare_wsgi_app, WsgiMiddleware(bare_wsgi_app, client=client, default=route)

    def flask_client() -> Tuple[Any, Any]:
        client, route = guarded_route()
        plain, wrapped = flask_app(), flask_app()
        wrapped.wsgi_app = WsgiMiddleware(wrapped.wsgi_app, client=client, default=route)
        return plain, wrapped

    cases: List[Tuple[str, Callable[[], Tuple[Any, Any]], Any, int]] = [
        ("Starlette (ASGI call loop)", lambda: asgi(starlette_app), asgi_loop, 20_000),
        ("Starlette, hand-written floor", lambda: (starlette_app(), floor_middleware(starlette_app())),
         asgi_loop, 20_000),
        ("FastAPI (ASGI call loop)", lambda: asgi(fastapi_app), asgi_loop, 10_000),
        ("Flask (WSGI call loop)", wsgi_raw, wsgi_loop, 20_000),
        ("bare WSGI app (call loop)", wsgi_bare, wsgi_loop, 50_000),
        ("Flask (test client)", flask_client, flask_test_client, 5_000),
    ]
    print(f"{'framework':30} {'plain µs':>9} {'with sds µs':>12} {'added µs':>9} {'overhead':>9}")
    for name, build, driver, n in cases:
        try:
            plain, wrapped = build()
        except ImportError as missing:
            print(f"{name:30} skipped: {missing.name} is not installed (py/requirements-dev.txt has it)")
            continue
        base, guarded = best_us(driver(plain), driver(wrapped), n)
        added = guarded - base
        print(f"{name:30} {base:9.2f} {guarded:12.2f} {added:9.2f} {added / base * 100:8.1f}%")


if __name__ == "__main__":
    main()
