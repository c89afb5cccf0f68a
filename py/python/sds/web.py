"""``sds.web``: what the ASGI and WSGI middleware (``sds.asgi``,
``sds.wsgi``) decide for a request, written once for both.

A request's path selects a ``Route``: its ``Policy``s (per-key limits: a
``KeyedLimit`` and a key function) and its SDS point. Every policy decides
for the request's key in order; the first refusal answers 429 (with
``Retry-After`` when a wait can cure it). Then the point is entered: a
downgrade answers the route's fallback or 503. An admitted request runs
the app with the ``RateLimit`` headers added to its response; when the
response ends (or the app raises, or the client goes away) the in-flight
policies get their units back and the point's entry exits, as an error if
the app raised an ``Exception`` or answered 5xx.

The order of the policies' decisions, their header values and the
client-address key are the crate sds-http's (``_native.RoutePlan``,
``_native.ClientAddress``), the same in every binding; one native call
decides a request.
"""

from __future__ import annotations

from typing import (Any, Callable, Dict, Generic, Iterable, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar,
                    Union)

from . import _native
from .client import Client, Point
from .errors import InvalidArgument
from .keyed import Key, KeyedLimit

__all__ = [
    "Request",
    "Policy",
    "Route",
    "Response",
    "ServerError",
    "client_address",
    "header",
    "KeyFunction",
    "RouteKey",
    "Gate",
    "Admitted",
]

HEADER_STYLES = ("draft-10", "draft-6", "x-ratelimit")
"""The values of the middleware's ``headers`` argument."""


class Request:
    """What a key function, a cost function, a route matcher and a fallback
    see of a request, the same in ASGI and WSGI. ``raw`` is the framework's
    own: the ASGI ``scope`` or the WSGI ``environ``."""

    __slots__ = ()

    @property
    def method(self) -> str:
        raise NotImplementedError

    @property
    def path(self) -> str:
        raise NotImplementedError

    @property
    def peer(self) -> Optional[str]:
        """The socket peer's address (no port); ``None`` if the server gives
        none (a Unix socket)."""
        raise NotImplementedError

    @property
    def raw(self) -> Any:
        raise NotImplementedError

    def header(self, name: str) -> Optional[str]:
        """The first value of header ``name`` (any case), ``None`` if
        absent."""
        raise NotImplementedError

    def header_values(self, name: str) -> List[str]:
        """Every value of header ``name`` (any case), in order."""
        raise NotImplementedError


class _RawRequest(Request):
    """A scope or environ read by the one native rule for its peer and
    headers (``request.rs``, which the route's native keys use too)."""

    __slots__ = ("_raw",)
    # What tells the style apart: ASGI's, or WSGI's (the defaults).
    _asgi = False
    _method_name = "REQUEST_METHOD"
    _path_name = "PATH_INFO"

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    @property
    def method(self) -> str:
        return str(self._raw[self._method_name])

    @property
    def path(self) -> str:
        return str(self._raw.get(self._path_name, ""))

    @property
    def peer(self) -> Optional[str]:
        return _native.request_peer(self._raw, self._asgi)

    @property
    def raw(self) -> Any:
        return self._raw

    def header(self, name: str) -> Optional[str]:
        first = _native.request_header_values(self._raw, self._asgi, name, True)
        return first[0] if first else None

    def header_values(self, name: str) -> List[str]:
        return _native.request_header_values(self._raw, self._asgi, name)


KeyFunction = Callable[[Request], Optional[Key]]
"""A request's key for a policy: ``str`` or ``bytes``; ``None`` exempts the
request from that policy."""


class client_address(_native.ClientAddress):
    """The key function of the client's address: the peer's, or behind
    ``trusted_proxies`` (addresses or CIDR networks) the first untrusted
    address of ``X-Forwarded-For`` read from the right; masked to
    ``ipv4_prefix`` / ``ipv6_prefix`` bits (one IPv6 host usually owns a
    /64). Keys are canonical text: ``203.0.113.7``, ``2001:db8:1:2::/64``.
    A peer that is no IP address (a Unix socket, a test client's name) is
    its own key, as given; no peer at all is the key ``""``. The
    middleware reads it natively, without a Python call per request."""

    __slots__ = ()

    def __new__(cls, ipv4_prefix: int = 32, ipv6_prefix: int = 64,
                trusted_proxies: Iterable[str] = ()) -> "client_address":
        return super().__new__(cls, ipv4_prefix, ipv6_prefix, list(trusted_proxies))

    def __repr__(self) -> str:
        return f"sds.web.client_address({super().__repr__()})"


def header(name: str, default: Optional[Key] = None) -> KeyFunction:
    """The key function of header ``name``'s first value (an API key, a
    tenant). A request without it gets ``default``: ``None`` exempts it
    from the policy, a key puts all such requests under one key. The
    middleware reads it natively, without a Python call per request."""
    return _native.HeaderKey(name, default)


class Policy:
    """A per-key limit of a route: ``limit`` decides for the key that
    ``key`` gives each request (the client's address by default) at a
    ``cost`` (an ``int``, or a function of the request). ``name`` names it
    in the ``RateLimit`` headers (1 to 64 printable ASCII characters).

    An ``"inFlight"`` limit holds its units while the request runs and
    gets them back when the response ends."""

    __slots__ = ("name", "limit", "key", "cost", "in_flight")

    def __init__(self, name: str, limit: KeyedLimit, key: Optional[KeyFunction] = None,
                 cost: Union[int, Callable[[Request], int]] = 1) -> None:
        if not isinstance(name, str):
            raise InvalidArgument(f"policy name must be a str, not {name!r}")
        _native.check_policy_name(name)
        if not isinstance(limit, _native.Keys):
            raise InvalidArgument(f"policy {name!r}: limit must be an sds.KeyedLimit, not {limit!r}")
        if key is not None and not callable(key):
            raise InvalidArgument(f"policy {name!r}: key must be callable, not {key!r}")
        if not callable(cost) and (isinstance(cost, bool) or not isinstance(cost, int) or cost < 1):
            raise InvalidArgument(f"policy {name!r}: cost must be an int >= 1 or callable, not {cost!r}")
        self.name = name
        self.limit = limit
        self.key: KeyFunction = key if key is not None else client_address()
        self.cost = cost
        self.in_flight = limit.kind == "inFlight"

    def __repr__(self) -> str:
        return f"sds.web.Policy({self.name!r}, {self.limit!r})"


class Response:
    """A response the middleware sends itself: a fallback, a refusal."""

    __slots__ = ("status", "body", "headers")

    def __init__(self, body: Union[bytes, str] = b"", status: int = 200,
                 headers: Sequence[Tuple[str, str]] = (),
                 content_type: str = "text/plain; charset=utf-8") -> None:
        self.status = status
        self.body = body.encode() if isinstance(body, str) else bytes(body)
        fields = list(headers)
        if not any(name.lower() == "content-type" for name, _ in fields):
            fields.append(("Content-Type", content_type))
        self.headers: List[Tuple[str, str]] = fields

    def with_headers(self, extra: Sequence[Tuple[str, str]]) -> "Response":
        """This response with ``extra`` fields added."""
        copy = Response(self.body, self.status, self.headers)
        copy.headers.extend(extra)
        return copy

    def __repr__(self) -> str:
        return f"sds.web.Response(status={self.status}, body={self.body[:40]!r})"


Fallback = Union[Response, Callable[[Request], Response]]


class Route:
    """What guards the requests of a route: ``policies`` (per-key limits,
    decided in order) and an SDS ``point`` (its strategy: concurrency,
    circuit breaking, the console's), whose downgrade answers ``fallback``
    (a ``Response``, or a function of the request returning one) or 503."""

    __slots__ = ("point", "policies", "fallback")

    def __init__(self, point: Optional[str] = None, policies: Sequence[Policy] = (),
                 fallback: Optional[Fallback] = None) -> None:
        if point is not None and not isinstance(point, str):
            raise InvalidArgument(f"point must be a str or None, not {point!r}")
        policies = tuple(policies)
        for p in policies:
            if not isinstance(p, Policy):
                raise InvalidArgument(f"policies must be sds.web.Policy objects, not {p!r}")
        names = [p.name for p in policies]
        if len(set(names)) != len(names):
            raise InvalidArgument(f"policy names must differ within a route: {names}")
        if fallback is not None and not isinstance(fallback, Response) and not callable(fallback):
            raise InvalidArgument(f"fallback must be an sds.web.Response or callable, not {fallback!r}")
        self.point = point
        self.policies: Tuple[Policy, ...] = policies
        self.fallback = fallback

    def __repr__(self) -> str:
        return f"sds.web.Route(point={self.point!r}, policies={list(self.policies)!r})"


RouteKey = Union[str, Callable[[Request], bool]]
"""A key of the middleware's ``routes``: a path (``"/orders"``), a path
prefix ending in ``*`` (``"/api/*"``), or a function of the request."""

_Key = TypeVar("_Key", bound=RouteKey)
# The keys of a ``routes`` mapping: ``Mapping`` is invariant in its keys, so
# ``Mapping[RouteKey, Route]`` would refuse a ``dict[str, Route]`` (or a
# dict of functions) held in a variable.


class ServerError(Exception):
    """What a point's entry is exited with when the app answered 5xx
    without raising: the outcome is an error."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


TOO_MANY = Response("Too Many Requests\n", 429)
UNAVAILABLE = Response("Service Unavailable\n", 503)


Admitted = _native.Admission
"""What a route decided for a request (``verdict``: 0 admitted, 1 limited,
2 a full in-flight table, 3 downgraded), the header fields its response
carries, the ms an admitted request waits before the app runs
(``wait_ms``: its point's pacing, 0 for most requests), and ``finish``,
which gives back what it holds when the response ends."""

# Admission.verdict's refusals.
_TABLE_FULL, _DOWNGRADED = 2, 3


class _Plan:
    """A route bound to the middleware's client, header style and request
    type. ``admit`` decides in sds-http's order (``_native.RoutePlan``):
    after a refusal the later policies only peek; a full in-flight table
    answers 503, not 429."""

    __slots__ = ("native", "admit", "fallback", "_request_type", "_raw")

    def __init__(self, route: Route, client: Optional[Client], style: str, raw: bool,
                 request_type: Callable[[Any], Request]) -> None:
        point: Optional[Point] = None
        if route.point is not None:
            assert client is not None
            point = client.point(route.point)
        self.fallback = route.fallback
        policies = [(p.name, p.limit, p.key, p.cost) for p in route.policies]
        self.native = _native.RoutePlan(style, policies, point, raw, request_type)
        # The native method itself: no Python frame per request.
        self.admit = self.native.admit
        self._request_type = request_type
        self._raw = raw

    def refusal(self, admission: _native.Admission, raw: Any) -> Response:
        """The response of a refused request (``admission.verdict`` > 0):
        429 with the headers, a plain 503 for a full in-flight table (the
        service is full, not the client over a limit nor the point
        downgraded: no fallback, no headers), or the route's fallback (503
        without one)."""
        verdict = admission.verdict
        if verdict == _TABLE_FULL:
            return UNAVAILABLE
        response = TOO_MANY
        if verdict == _DOWNGRADED and self.fallback is not None:
            fallback = self.fallback
            response = fallback if isinstance(fallback, Response) else fallback(self._request_type(raw))
        elif verdict == _DOWNGRADED:
            response = UNAVAILABLE
        headers = admission.headers
        if not headers:
            return response
        if self._raw:
            headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in headers]
        return response.with_headers(headers)


class Gate:
    """The middleware's configuration, compiled: which route a request
    takes and what it decides. ``raw``: requests are ASGI scopes and header
    fields lower-case ``bytes`` pairs, else WSGI environs and ``str``
    pairs; ``request_type`` makes the ``Request`` that key, cost and route
    functions and fallbacks see of a scope or environ."""

    __slots__ = ("client", "style", "exact", "default", "exact_only", "_prefixes", "_matchers", "_request_type")

    def __init__(self, client: Optional[Client], routes: Optional[Mapping[_Key, Route]],
                 default: Optional[Route], headers: str, raw: bool,
                 request_type: Callable[[Any], Request]) -> None:
        if headers not in HEADER_STYLES:
            raise InvalidArgument(f"headers must be one of {HEADER_STYLES}, not {headers!r}")
        routes = dict(routes or {})
        every = list(routes.values()) + ([default] if default is not None else [])
        for route in every:
            if not isinstance(route, Route):
                raise InvalidArgument(f"routes map to sds.web.Route objects, not {route!r}")
        if client is None and any(r.point is not None for r in every):
            client = Client()
        if client is not None and not isinstance(client, _native.Table):
            raise InvalidArgument(f"client must be an sds.Client, not {client!r}")
        self.client = client
        self.style = headers
        plans: Dict[int, _Plan] = {}

        def plan(route: Route) -> _Plan:
            # One plan per Route object, however many paths share it.
            if id(route) not in plans:
                plans[id(route)] = _Plan(route, client, headers, raw, request_type)
            return plans[id(route)]

        # Exact paths: what adapters look up first, without a call.
        self.exact: Dict[str, _Plan] = {}
        self._prefixes: List[Tuple[str, _Plan]] = []
        self._matchers: List[Tuple[Callable[[Request], bool], _Plan]] = []
        for where, route in routes.items():
            if isinstance(where, str):
                if where.endswith("*"):
                    self._prefixes.append((where[:-1], plan(route)))
                else:
                    self.exact[where] = plan(route)
            elif callable(where):
                self._matchers.append((where, plan(route)))
            else:
                raise InvalidArgument(f"a route's key must be a path or callable, not {where!r}")
        # The longest prefix wins.
        self._prefixes.sort(key=lambda item: -len(item[0]))
        self.default = plan(default) if default is not None else None
        # Only exact paths and the default: ``exact.get(path, default)`` is
        # the whole lookup, without a call of ``plan``.
        self.exact_only = not self._prefixes and not self._matchers
        self._request_type = request_type

    def plan(self, path: str, raw: Any) -> Optional[_Plan]:
        """The plan of a request to ``path``: an exact path, the longest
        prefix, the first matcher that accepts it, else the default
        (``None``: the request passes untouched)."""
        found = self.exact.get(path)
        if found is not None:
            return found
        for prefix, plan in self._prefixes:
            if path.startswith(prefix):
                return plan
        if self._matchers:
            request = self._request_type(raw)
            for matches, plan in self._matchers:
                if matches(request):
                    return plan
        return self.default


App = TypeVar("App")


class _Middleware(Generic[App]):
    """What the ASGI and the WSGI middleware share: the app, and the routes
    compiled into a ``Gate`` (the lookups a request makes, bound here so
    that the request path reads them without a call)."""

    _request_type: Type[_RawRequest]

    def __init__(self, app: App, client: Optional[Client] = None,
                 routes: Optional[Mapping[_Key, Route]] = None, default: Optional[Route] = None,
                 headers: str = "draft-10") -> None:
        self.app = app
        request_type = self._request_type
        self.gate = Gate(client, routes, default, headers, request_type._asgi, request_type)
        self._exact = self.gate.exact
        self._exact_only = self.gate.exact_only
        self._default = self.gate.default
        self._compiled()

    def _compiled(self) -> None:
        """Called once the routes are compiled (the WSGI middleware hands
        them to its native request path)."""

    @property
    def client(self) -> Optional[Client]:
        return self.gate.client
