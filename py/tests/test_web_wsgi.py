"""``sds.wsgi.SdsMiddleware`` in process: Flask through its test client
(``app.wsgi_app`` wrapped), Django's WSGI application with minimal
settings through Werkzeug's WSGI test client (Django's own test client
bypasses WSGI middleware), and plain WSGI apps for the response's end."""

from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import textwrap
import types
from typing import Any, Callable, Dict, Iterator, List, Tuple

import http_sfv
import pytest
from flask import Flask
from werkzeug.test import Client as WsgiClient

import sds
from sds.web import Policy, Response, Route, client_address, header
from sds.wsgi import SdsMiddleware


def window(limit: int) -> sds.KeyedLimit:
    # From the first hit: a window aligned to the minute would reset when a
    # test crossed a minute's end (the middleware reads the real clock).
    return sds.KeyedLimit({"kind": "fixedWindow", "limit": limit, "periodMs": 60_000, "windowFromFirstHit": True}, 64)


def sfv_list(value: str) -> List[Tuple[Any, Dict[str, Any]]]:
    parsed = http_sfv.List()
    parsed.parse(value.encode())
    return [(item.value, dict(item.params)) for item in parsed]


def flask_app() -> Flask:
    app = Flask(__name__)

    @app.route("/")
    def index() -> str:
        return "ok"

    @app.route("/boom")
    def boom() -> str:
        raise RuntimeError("boom")

    return app


def test_flask_429_with_retry_after_and_draft_10_headers() -> None:
    app = flask_app()
    limit = window(2)
    app.wsgi_app = SdsMiddleware(app.wsgi_app,  # type: ignore[method-assign]
                                 routes={"/": Route(policies=[Policy("per-key", limit, key=header("X-Api-Key"))])})
    http = app.test_client()
    answers = [http.get(buffered=True, path="/", headers={"X-Api-Key": "k1"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [sfv_list(a.headers["RateLimit"])[0][1]["r"] for a in answers] == [1, 0, 0]
    assert sfv_list(answers[0].headers["RateLimit-Policy"]) == [("per-key", {"q": 2, "w": 60})]
    reset = math.ceil(limit.peek("k1").reset_ms / 1000)
    assert int(answers[2].headers["Retry-After"]) in (reset, reset + 1)
    assert answers[2].headers["Content-Type"].startswith("text/plain")
    assert answers[2].get_data() == b"Too Many Requests\n"


def test_flask_downgrade_fallback_and_a_500_counted_as_the_points_error() -> None:
    app = flask_app()
    client = sds.Client(16)
    client.set_strategy("web", sds.Strategy(concurrent_threshold=1))
    app.wsgi_app = SdsMiddleware(app.wsgi_app, client=client, headers="x-ratelimit",  # type: ignore[method-assign]
                                 default=Route(point="web", policies=[Policy("ip", window(50))],
                                               fallback=Response("later", 503, [("Retry-After", "2")])))
    http = app.test_client()
    held = client.enter("web")
    # buffered: the client reads the whole body and closes it, as a server
    # does; the response ends then.
    busy = http.get(buffered=True, path="/")
    assert (busy.status_code, busy.get_data(), busy.headers["Retry-After"]) == (503, b"later", "2")
    assert busy.headers["X-RateLimit-Remaining"] == "49"
    held.exit()
    ok = http.get(buffered=True, path="/")
    assert ok.status_code == 200 and ok.headers["X-RateLimit-Limit"] == "50"
    # Flask turns the exception into a 500 (not testing mode): a 5xx.
    assert http.get(buffered=True, path="/boom").status_code == 500
    stats = client.stats("web")
    assert (stats["exception"], stats["downgrade"], stats["concurrent"]) == (1, 1, 0)


def test_ipv6_prefix_and_trusted_proxies_from_the_environ() -> None:
    app = flask_app()
    per_ip = window(5)
    key = client_address(ipv6_prefix=56, trusted_proxies=["::1", "127.0.0.1"])
    app.wsgi_app = SdsMiddleware(app.wsgi_app, default=Route(policies=[Policy("ip", per_ip, key=key)]))  # type: ignore[method-assign]
    http = app.test_client()
    http.get(buffered=True, path="/", environ_base={"REMOTE_ADDR": "2001:db8:1:2aa::1"})
    assert per_ip.count("2001:db8:1:200::/56").count == 1
    http.get(buffered=True, path="/", environ_base={"REMOTE_ADDR": "127.0.0.1"}, headers={"X-Forwarded-For": "198.51.100.3"})
    assert per_ip.count("198.51.100.3").count == 1
    http.get(buffered=True, path="/", environ_base={"REMOTE_ADDR": "192.0.2.1"}, headers={"X-Forwarded-For": "198.51.100.3"})
    assert per_ip.count("192.0.2.1").count == 1 and per_ip.count("198.51.100.3").count == 1


class Body:
    """A response body that records whether the server closed it."""

    def __init__(self, chunks: List[bytes], fail_at: int = -1) -> None:
        self.chunks, self.fail_at, self.closed = chunks, fail_at, False

    def __iter__(self) -> Iterator[bytes]:
        for i, chunk in enumerate(self.chunks):
            if i == self.fail_at:
                raise RuntimeError("broken stream")
            yield chunk

    def close(self) -> None:
        self.closed = True


def test_in_flight_units_are_held_until_the_server_closes_the_body() -> None:
    flight = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 16)
    client = sds.Client(16)
    bodies: List[Body] = []

    def streaming(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Body:
        start_response("200 OK", [("Content-Type", "text/plain")])
        bodies.append(Body([b"a", b"b"], fail_at=1 if environ["PATH_INFO"] == "/broken" else -1))
        return bodies[-1]

    app = SdsMiddleware(streaming, client=client, default=Route(point="s", policies=[Policy("flight", flight)]))
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": "203.0.113.1"}
    started: List[str] = []
    body = app(dict(environ), lambda status, headers, exc=None: started.append(status))
    assert next(iter(body)) == b"a"
    # Still streaming: the client's one unit is held.
    refused = b"".join(app(dict(environ), lambda status, headers, exc=None: started.append(status)))
    assert started == ["200 OK", "429 Too Many Requests"] and refused == b"Too Many Requests\n"
    # The client went away mid-body: the server closes the iterable.
    body.close()  # type: ignore[attr-defined]
    assert bodies[0].closed and flight.peek("203.0.113.1").remaining == 1
    assert client.stats("s")["concurrent"] == 0
    # A body that breaks while streaming: released, the point's error.
    broken = app(dict(environ, PATH_INFO="/broken"), lambda *a: None)
    with pytest.raises(RuntimeError, match="broken stream"):
        list(broken)
    broken.close()  # type: ignore[attr-defined]
    assert flight.peek("203.0.113.1").remaining == 1
    assert client.stats("s")["exception"] == 1


def test_an_app_raising_before_its_body_releases_at_once() -> None:
    flight = sds.KeyedLimit({"kind": "inFlight", "limit": 2}, 16)

    def failing(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
        raise ValueError("no body")

    app = SdsMiddleware(failing, default=Route(point="f", policies=[Policy("flight", flight, cost=2)]))
    with pytest.raises(ValueError):
        app({"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": "203.0.113.2"}, lambda *a: None)
    assert flight.peek("203.0.113.2").remaining == 2
    assert app.client is not None and app.client.stats("f")["exception"] == 1


def test_a_body_the_server_never_closes_gives_its_units_back_when_collected() -> None:
    flight = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 16)
    client = sds.Client(16)

    def streaming(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
        start_response("200 OK", [])
        return [b"a"]

    app = SdsMiddleware(streaming, client=client, default=Route(point="n", policies=[Policy("flight", flight)]))
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": "203.0.113.3"}
    body = app(dict(environ), lambda *a: None)
    assert list(body) == [b"a"] and flight.peek("203.0.113.3").remaining == 0
    # A server breaking PEP 3333: the iterable is dropped, never closed.
    with pytest.warns(ResourceWarning, match="point 'n' was never exited"):
        del body
        gc.collect()
    assert flight.peek("203.0.113.3").remaining == 1
    assert client.stats("n")["concurrent"] == 0

    def generating(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
        # The body's frame keeps start_response (the middleware's response
        # object), which keeps the body: a cycle only the collector frees.
        start_response("200 OK", [])
        yield b"a"
        start_response("200 OK", [], sys.exc_info())

    app = SdsMiddleware(generating, client=client, default=Route(point="n", policies=[Policy("flight", flight)]))
    body = app(dict(environ), lambda *a: None)
    assert next(iter(body)) == b"a" and flight.peek("203.0.113.3").remaining == 0
    with pytest.warns(ResourceWarning, match="point 'n' was never exited"):
        del body
        gc.collect()
    assert flight.peek("203.0.113.3").remaining == 1


@pytest.fixture(scope="module")
def django_app() -> Any:
    """Django's WSGI application with the minimal settings (one view)."""
    import django
    from django.conf import settings
    from django.http import HttpResponse
    from django.urls import path

    urls = types.ModuleType("sds_web_test_urls")
    urls.urlpatterns = [path("hello", lambda request: HttpResponse("hello"))]  # type: ignore[attr-defined]
    sys.modules[urls.__name__] = urls
    if not settings.configured:
        settings.configure(DEBUG=False, SECRET_KEY="test", ROOT_URLCONF=urls.__name__, ALLOWED_HOSTS=["*"],
                           MIDDLEWARE=[], INSTALLED_APPS=[])
        django.setup()
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()


def test_django_wrapped_application_limits_and_answers_headers(django_app: Any) -> None:
    limit = window(1)
    client = sds.Client(16)
    application = SdsMiddleware(django_app, client=client, headers="draft-6",
                                routes={"/hello": Route(point="hello", policies=[Policy("per-ip", limit)])})
    http = WsgiClient(application)
    first = http.get(buffered=True, path="/hello", environ_base={"REMOTE_ADDR": "2001:db8:aa:bb::1"})
    assert first.status_code == 200 and first.get_data() == b"hello"
    assert (first.headers["RateLimit-Limit"], first.headers["RateLimit-Remaining"]) == ("1", "0")
    second = http.get(buffered=True, path="/hello", environ_base={"REMOTE_ADDR": "2001:db8:aa:bb::2"})
    assert second.status_code == 429 and int(second.headers["Retry-After"]) >= 1
    assert http.get(buffered=True, path="/hello", environ_base={"REMOTE_ADDR": "2001:db8:aa:cc::1"}).status_code == 200
    # Django answers 404 for an unknown path: untouched, not limited.
    missing = http.get(buffered=True, path="/nope", environ_base={"REMOTE_ADDR": "2001:db8:aa:bb::1"})
    assert missing.status_code == 404 and "RateLimit-Limit" not in missing.headers
    assert client.stats("hello")["visit"] == 2


def test_a_key_function_that_raises_gives_back_the_units_held_before_it() -> None:
    flight = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 16)

    def broken_key(request: Any) -> str:
        raise LookupError("no session")

    def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
        raise AssertionError("not reached")

    guarded = SdsMiddleware(app, default=Route(policies=[Policy("flight", flight), Policy("user", window(5), key=broken_key)]))
    with pytest.raises(LookupError):
        guarded({"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": "203.0.113.3"}, lambda *a: None)
    assert flight.peek("203.0.113.3").remaining == 1


def test_a_full_in_flight_table_answers_503_with_nothing_taken() -> None:
    """Every cell of an in-flight table holds units (the core never evicts
    a holder): the service is full, not the client over its limit nor the
    point downgraded, so 503 without the route's fallback (sds-http's
    order, Node's and Java's too), and the policies before it keep their
    hit, as after a refusal."""
    rate, conns = window(100), sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 4)
    bodies: List[Body] = []

    def streaming(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Body:
        start_response("200 OK", [("Content-Type", "text/plain")])
        bodies.append(Body([b"a"], fail_at=-1))
        return bodies[-1]

    policies = [Policy("rate", rate), Policy("conns", conns)]
    plain = SdsMiddleware(streaming, default=Route(policies=policies))
    with_fallback = SdsMiddleware(streaming, default=Route(policies=policies, fallback=Response("busy", 200)))
    statuses: List[str] = []
    running = []
    for k in range(64):
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": f"203.0.113.{k}"}
        body = plain(environ, lambda status, headers, exc=None: statuses.append(status))
        if statuses[-1] != "200 OK":
            break
        running.append(body)
    assert statuses[-1] == "503 Service Unavailable" and b"".join(body) == b"Service Unavailable\n"
    assert len(running) >= 4
    full = f"203.0.113.{len(running)}"
    assert rate.peek(full).remaining == 99 and conns.peek(full).remaining == 1
    answer = b"".join(with_fallback({"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": full},
                                    lambda status, headers, exc=None: statuses.append(status)))
    assert (statuses[-1], answer) == ("503 Service Unavailable", b"Service Unavailable\n")
    for body in running:
        body.close()  # type: ignore[attr-defined]
    assert conns.peek("203.0.113.0").remaining == 1
    assert b"".join(plain({"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": full},
                          lambda status, headers, exc=None: statuses.append(status))) == b"a"
    assert statuses[-1] == "200 OK"


def test_routes_by_exact_path_prefix_and_function_and_untouched_requests() -> None:
    # The native request path's lookups: exact paths and the default without
    # a call, else the gate's plan (a prefix, then a function of the request).
    seen: List[str] = []

    def plain(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        seen.append(environ.get("PATH_INFO", "?"))
        return [b"ok"]

    def fields(app: Any, environ: Dict[str, Any]) -> Dict[str, str]:
        started: List[List[Tuple[str, str]]] = []
        body = app(dict({"REQUEST_METHOD": "GET", "REMOTE_ADDR": "203.0.113.9"}, **environ),
                   lambda status, headers, exc=None: started.append(headers))
        assert b"".join(body) == b"ok"
        getattr(body, "close", lambda: None)()
        return dict(started[0])

    exact, prefix, matched, other = window(5), window(5), window(5), window(5)
    routes = {"/a": Route(policies=[Policy("exact", exact)]),
              "/api/*": Route(policies=[Policy("prefix", prefix)]),
              (lambda r: r.header("X-Tenant") is not None): Route(policies=[Policy("tenant", matched)])}
    app = SdsMiddleware(plain, routes=routes)
    assert sfv_list(fields(app, {"PATH_INFO": "/a"})["RateLimit"])[0][0] == "exact"
    assert sfv_list(fields(app, {"PATH_INFO": "/api/v1/x"})["RateLimit"])[0][0] == "prefix"
    assert sfv_list(fields(app, {"PATH_INFO": "/b", "HTTP_X_TENANT": "t"})["RateLimit"])[0][0] == "tenant"
    assert "RateLimit" not in fields(app, {"PATH_INFO": "/b"})
    # Exact paths and a default only; an environ without PATH_INFO has the
    # path "", which the default takes.
    app = SdsMiddleware(plain, routes={"/a": Route(policies=[Policy("exact", exact)])},
                        default=Route(policies=[Policy("other", other)]))
    assert sfv_list(fields(app, {"PATH_INFO": "/a"})["RateLimit"])[0][0] == "exact"
    assert sfv_list(fields(app, {})["RateLimit"])[0][0] == "other"
    assert (exact.peek("203.0.113.9").remaining, other.peek("203.0.113.9").remaining) == (3, 4)
    assert seen == ["/a", "/api/v1/x", "/b", "/b", "/a", "?"]
    # The app is an attribute the native path reads at each request.
    replaced: List[str] = []

    def other_app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
        replaced.append(environ["PATH_INFO"])
        return plain(environ, start_response)

    app.app = other_app
    assert app.app is other_app
    fields(app, {"PATH_INFO": "/c"})
    assert replaced == ["/c"]


def test_a_subclass_that_skips_init_is_refused_with_a_message() -> None:
    class Broken(SdsMiddleware):
        def __init__(self) -> None:
            pass

    with pytest.raises(ValueError, match="its __init__ did not run"):
        Broken()({"PATH_INFO": "/"}, lambda *a: None)


def test_a_route_function_may_replace_the_app_while_a_request_finds_its_route() -> None:
    calls: List[str] = []

    def app_named(name: str) -> Callable[[Dict[str, Any], Callable[..., Any]], List[bytes]]:
        def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
            calls.append(name)
            start_response("200 OK", [])
            return [b""]
        return app

    def switching(request: Any) -> bool:
        # Python code run while the native path finds the route.
        middleware.app = app_named("second")
        return False

    middleware = SdsMiddleware(app_named("first"), routes={switching: Route(policies=[Policy("p", window(5))])})
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "REMOTE_ADDR": "203.0.113.3"}
    for _ in range(2):
        b"".join(middleware(dict(environ), lambda *a: None))
    # The request under way keeps the app it read; the next one gets the new.
    assert calls == ["first", "second"]


def test_mypy_takes_routes_as_a_dict_of_paths_or_of_functions(tmp_path: Any) -> None:
    # Mapping is invariant in its keys: a routes parameter typed only as
    # Mapping[RouteKey, Route] refused the README's `routes` variable.
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""
        from typing import Any
        import sds.asgi, sds.wsgi
        from sds.web import Request, Route

        def wsgi_app(environ: Any, start_response: Any) -> Any: ...
        async def asgi_app(scope: Any, receive: Any, send: Any) -> None: ...
        def is_admin(request: Request) -> bool: return False

        paths = {"/orders": Route(point="orders"), "/search/*": Route()}
        functions = {is_admin: Route(point="admin")}
        sds.wsgi.SdsMiddleware(wsgi_app, routes=paths)
        sds.asgi.SdsMiddleware(asgi_app, routes=functions)
        sds.wsgi.SdsMiddleware(wsgi_app, routes={1: Route()})
    """))
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, str(program)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    errors = [line for line in checked.stdout.splitlines() if ": error: " in line]
    wrong = program.read_text().splitlines().index("sds.wsgi.SdsMiddleware(wsgi_app, routes={1: Route()})") + 1
    assert len(errors) == 1 and f":{wrong}: error: " in errors[0] and '"int"' in errors[0], checked.stdout
