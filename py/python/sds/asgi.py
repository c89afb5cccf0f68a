"""``sds.asgi.SdsMiddleware``: per-key limits and SDS points for an ASGI
app (Starlette, FastAPI, any ASGI 3 app). What it decides is ``sds.web``'s;
this module reads the ASGI scope and sends the answers.

>>> app = SdsMiddleware(app, routes={"/orders": Route(point="orders", policies=[...])})

Starlette and FastAPI: ``app.add_middleware(SdsMiddleware, routes=...)``
works too (the keyword arguments are the same).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, MutableMapping

from .web import Response, _Middleware, _RawRequest

__all__ = ["SdsMiddleware", "AsgiRequest"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class AsgiRequest(_RawRequest):
    """An HTTP scope as ``sds.web`` reads it."""

    __slots__ = ()
    _asgi = True
    _method_name = "method"
    _path_name = "path"

    @property
    def scope(self) -> Scope:
        return self._raw  # type: ignore[no-any-return]


class SdsMiddleware(_Middleware[ASGIApp]):
    """Guards ``app``'s HTTP requests by route (see ``sds.web``): ``routes``
    maps paths (``"/orders"``), path prefixes (``"/api/*"``) or functions
    of an ``sds.web.Request`` to ``sds.web.Route``s; other requests take
    ``default`` (``None``: they pass untouched). Points live in ``client``
    (an ``sds.Client``, private or shared; a private one is made when a
    route has a point and none is given). ``headers`` is the style of the
    rate-limit header fields: ``"draft-10"`` (``RateLimit``,
    ``RateLimit-Policy``), ``"draft-6"`` (``RateLimit-Limit`` ...) or
    ``"x-ratelimit"`` (``X-RateLimit-*``). Lifespan and WebSocket scopes
    pass untouched."""

    _request_type = AsgiRequest

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        plan = self._exact.get(path, self._default) if self._exact_only else self.gate.plan(path, scope)
        if plan is None:
            return await self.app(scope, receive, send)
        admitted = plan.admit(scope)
        if admitted.verdict:
            return await _send_response(plan.refusal(admitted, scope), send)
        # Run here rather than in a helper: one coroutine less per request.
        status = 0
        extra = admitted.headers

        def send_with_headers(message: Message) -> Awaitable[None]:
            # A plain function giving send's awaitable: no coroutine of its own.
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if extra:
                    message["headers"] = [*message.get("headers", ()), *extra]
            return send(message)

        try:
            if admitted.wait_ms:
                # A paced point: wait without blocking the loop.
                await asyncio.sleep(admitted.wait_ms / 1000)
            await self.app(scope, receive, send_with_headers)
        except BaseException as error:
            admitted.finish(error, status)
            raise
        admitted.finish(None, status)


async def _send_response(response: Response, send: Send) -> None:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in response.headers]
    headers.append((b"content-length", str(len(response.body)).encode()))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body})
