"""``sds.wsgi.SdsMiddleware``: per-key limits and SDS points for a WSGI
app (Flask, Django, any PEP 3333 app). What it decides is ``sds.web``'s;
this module reads the environ and sends the answers.

Flask: ``app.wsgi_app = SdsMiddleware(app.wsgi_app, routes=...)``.
Django (``wsgi.py``): ``application = SdsMiddleware(get_wsgi_application(), routes=...)``.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, Optional, Tuple, Type

from . import _native
from .web import _Middleware, _Plan, _RawRequest

__all__ = ["SdsMiddleware", "WsgiRequest"]

Environ = Dict[str, Any]
ExcInfo = Tuple[Type[BaseException], BaseException, Optional[TracebackType]]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


class WsgiRequest(_RawRequest):
    """A WSGI environ as ``sds.web`` reads it. A WSGI server joins repeated
    headers with ", ": ``header_values`` gives one value."""

    __slots__ = ()

    @property
    def environ(self) -> Environ:
        return self._raw  # type: ignore[no-any-return]


class SdsMiddleware(_Middleware[WSGIApp], _native.WsgiGate):
    """Guards ``app``'s requests by route (see ``sds.web``); the arguments
    are those of ``sds.asgi.SdsMiddleware``. The response ends when the
    server closes the app's iterable (PEP 3333 has it do so, also when the
    client went away): then in-flight units go back and the point's entry
    exits.

    A server's call is native (``_native.WsgiGate.__call__``): it finds the
    route, decides, and runs the app of a request admitted with no wait in
    a native response that adds the fields when the app starts it and
    finishes the request when the server closes it (or the app or its body
    raises; a server that never closes it: when it is collected). A refused
    or paced request comes back to ``_answer``."""

    _request_type = WsgiRequest

    def _compiled(self) -> None:
        self._route(self._exact, self._default, None if self._exact_only else self.gate.plan)

    def _answer(self, plan: _Plan, admitted: _native.Admission, environ: Environ,
                start_response: StartResponse) -> Iterable[bytes]:
        """A refused request's response, or a paced one's after its wait."""
        if admitted.verdict:
            refusal = plan.refusal(admitted, environ)
            fields = [*refusal.headers, ("Content-Length", str(len(refusal.body)))]
            start_response(f"{refusal.status} {_REASONS.get(refusal.status, 'Status')}", fields)
            return [refusal.body]
        response = _native.WsgiResponse(admitted, start_response)
        # A paced point: the worker waits before the app runs.
        try:
            time.sleep(admitted.wait_ms / 1000)
        except BaseException as error:
            admitted.finish(error)
            raise
        return response.run(self.app, environ)


_REASONS = {200: "OK", 429: "Too Many Requests", 503: "Service Unavailable"}
