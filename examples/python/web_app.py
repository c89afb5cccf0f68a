"""sds's own web middleware, on a WSGI app and an ASGI app.

Needs only sds and the standard library (Flask, Django, Starlette and
FastAPI take the same middleware; see py/README.md, "Our middleware").

1. WSGI, served for a moment by wsgiref on a loopback port: "/search" allows
   3 requests a minute per client address (an IPv6 client is its /64);
   the 4th answers 429 with Retry-After, every answer carries the
   RateLimit and RateLimit-Policy headers of draft-ietf-httpapi-ratelimit-headers-10.
2. ASGI, called in process: "/orders" runs under the SDS point "orders"
   (at most 2 at once); while 2 run, a third gets the route's fallback.
"""

from __future__ import annotations

import asyncio
import threading
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List
from wsgiref.simple_server import WSGIRequestHandler, make_server

import sds
import sds.asgi
import sds.wsgi
from sds.web import Policy, Response, Route, client_address


def wsgi_demo() -> None:
    def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"results\n"]

    per_client = sds.KeyedLimit({"kind": "fixedWindow", "limit": 3, "period_ms": 60_000,
                                  "window_from_first_hit": True})
    guarded = sds.wsgi.SdsMiddleware(app, routes={
        "/search": Route(policies=[Policy("search", per_client, key=client_address(ipv6_prefix=64))]),
    })

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    with make_server("127.0.0.1", 0, guarded, handler_class=Quiet) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_port}/search"
        print("WSGI: 5 requests to /search, 3 a minute per client")
        for _ in range(5):
            try:
                with urllib.request.urlopen(url) as answer:
                    status, headers = answer.status, answer.headers
            except urllib.error.HTTPError as refused:
                status, headers = refused.code, refused.headers
            retry = f"  Retry-After: {headers['Retry-After']}" if "Retry-After" in headers else ""
            print(f"  {status}  RateLimit: {headers['RateLimit']}{retry}")
        print(f"  RateLimit-Policy: {headers['RateLimit-Policy']}")
        server.shutdown()


async def asgi_demo() -> None:
    started = asyncio.Event()
    finish = asyncio.Event()

    async def app(scope: Dict[str, Any], receive: Any, send: Any) -> None:
        started.set()
        await finish.wait()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"order placed\n"})

    client = sds.Client()
    client.set_strategy("orders", sds.Strategy(concurrent_threshold=2))
    guarded = sds.asgi.SdsMiddleware(app, client=client, routes={
        "/orders": Route(point="orders", fallback=Response("queued, we will email you\n", 202)),
    })

    async def call(peer: str) -> str:
        scope = {"type": "http", "method": "POST", "path": "/orders", "headers": [], "client": (peer, 40000)}
        answer: List[Any] = []

        async def receive() -> Dict[str, Any]:
            return {"type": "http.request", "body": b""}

        async def send(message: Dict[str, Any]) -> None:
            answer.append(message)

        await guarded(scope, receive, send)
        return f"{answer[0]['status']} {answer[1]['body'].decode().strip()}"

    print("ASGI: 3 orders at once on the point 'orders' (at most 2 at once)")
    running = [asyncio.create_task(call(f"2001:db8::{n}")) for n in (1, 2)]
    while client.stats("orders")["concurrent"] < 2:
        await asyncio.sleep(0.001)
    print(f"  third while two run: {await call('2001:db8::3')}")
    finish.set()
    for done in await asyncio.gather(*running):
        print(f"  {done}")
    stats = client.stats("orders")
    print(f"  point 'orders': {stats['visit']} visits, {stats['downgrade']} downgraded, {stats['concurrent']} running")


if __name__ == "__main__":
    wsgi_demo()
    asyncio.run(asgi_demo())
