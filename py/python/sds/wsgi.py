"""``sds.wsgi.SdsMiddleware``: per-key limits and SDS points for a WSGI
app (Flask, Django, any PEP 3333 app). What it decides is ``sds.web``'s;
this module reads the environ and sends the answers.

Flask: ``app.wsgi_app = SdsMiddleware(app.wsgi_app, routes=...)``.
Django (``wsgi.py``): ``application = SdsMiddleware(get_wsgi_application(), routes=...)``.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Type

from . import _native
from .client import Client
from .web import Gate, Request, Route, RouteKey

__all__ = ["SdsMiddleware", "WsgiRequest"]

Environ = Dict[str, Any]
ExcInfo = Tuple[Type[BaseException], BaseException, Optional[TracebackType]]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


class WsgiRequest(Request):
    """A WSGI environ as ``sds.web`` reads it."""

    __slots__ = ("environ",)

    def __init__(self, environ: Environ) -> None:
        self.environ = environ

    @property
    def method(self) -> str:
        return str(self.environ["REQUEST_METHOD"])

    @property
    def path(self) -> str:
        return str(self.environ.get("PATH_INFO", ""))

    @property
    def peer(self) -> Optional[str]:
        return _native.request_peer(self.environ, False)

    @property
    def raw(self) -> Environ:
        return self.environ

    def header(self, name: str) -> Optional[str]:
        first = _native.request_header_values(self.environ, False, name, True)
        return first[0] if first else None

    def header_values(self, name: str) -> List[str]:
        # A WSGI server joins repeated headers with ", ": one value.
        return _native.request_header_values(self.environ, False, name)


class SdsMiddleware:
    """Guards ``app``'s requests by route (see ``sds.web``); the arguments
    are those of ``sds.asgi.SdsMiddleware``. The response ends when the
    server closes the app's iterable (PEP 3333 has it do so, also when the
    client went away): then in-flight units go back and the point's entry
    exits."""

    def __init__(self, app: WSGIApp, client: Optional[Client] = None,
                 routes: Optional[Mapping[RouteKey, Route]] = None, default: Optional[Route] = None,
                 headers: str = "draft-10") -> None:
        self.app = app
        self.gate = Gate(client, routes, default, headers, False, WsgiRequest)
        self._exact = self.gate.exact
        self._exact_only = self.gate.exact_only
        self._default = self.gate.default

    @property
    def client(self) -> Optional[Client]:
        return self.gate.client

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        plan = self._exact.get(path, self._default) if self._exact_only else self.gate.plan(path, environ)
        if plan is None:
            return self.app(environ, start_response)
        admitted = plan.admit(environ)
        if admitted.verdict:
            refusal = plan.refusal(admitted, environ)
            fields = [*refusal.headers, ("Content-Length", str(len(refusal.body)))]
            start_response(f"{refusal.status} {_REASONS.get(refusal.status, 'Status')}", fields)
            return [refusal.body]
        response = _native.WsgiResponse(admitted, start_response)
        if admitted.wait_ms:
            # A paced point: the worker waits before the app runs.
            try:
                time.sleep(admitted.wait_ms / 1000)
            except BaseException as error:
                admitted.finish(error)
                raise
        # The response adds the fields when the app starts it, and finishes
        # the request when the server closes it (or the app or its body
        # raises; a server that never closes it: when it is collected).
        return response.run(self.app, environ)


_REASONS = {200: "OK", 429: "Too Many Requests", 503: "Service Unavailable"}
