"""The middleware under real servers with 4 worker processes on shared
tables (``SDS_WEB_DIR``): ``uvicorn --workers 4`` (Starlette, ASGI) and
gunicorn with 4 sync workers (Flask, WSGI).

- A point's concurrency limit (2) holds for the host: while two slow
  requests run, every other worker downgrades the point's requests too.
- A per-key limit (10 a minute) holds for the host: exactly 10 of 30
  requests for one key are admitted, whichever workers answer.
- An in-flight unit held by a worker killed with SIGKILL mid-request comes
  back: the next request for that key, in a surviving worker, is admitted.

This module is also the apps the servers load (``starlette_app()``,
``flask_app()``); each worker opens the shared tables itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import sds
from helpers import WorkerServer, wait_for
from sds.web import Policy, Route, header

WORKERS = 4
CONCURRENCY = 2
PER_KEY = 10
SLOW_S = 3.0
HELD = {"kind": "inFlight", "limit": 1}
TESTS = Path(__file__).resolve().parent


def routes() -> Tuple[sds.Client, Dict[str, Route]]:
    """The shared tables and the routes every worker serves."""
    where = Path(os.environ["SDS_WEB_DIR"])
    client = sds.Client.shared(where / "points", capacity=16)
    client.set_strategy("work", sds.Strategy(concurrent_threshold=CONCURRENCY))
    # From the first hit: a window aligned to the minute resets if the test
    # crosses a minute's end.
    per_key = {"kind": "fixedWindow", "limit": PER_KEY, "periodMs": 60_000, "windowFromFirstHit": True}
    keys = sds.KeyedLimit.shared(where / "keys", per_key, capacity=64)
    held = Route(policies=[Policy("held", sds.KeyedLimit.shared(where / "held", HELD, capacity=64),
                                  key=header("X-Api-Key"))])
    work = Route(point="work")
    return client, {"/slow": work, "/fast": work, "/slow-held": held, "/held": held,
                    "/keyed": Route(policies=[Policy("per-key", keys, key=header("X-Api-Key"))])}


def mark_holder() -> None:
    """Writes this worker's pid where the kill test finds it."""
    (Path(os.environ["SDS_WEB_DIR"]) / "holder").write_text(str(os.getpid()))


def starlette_app() -> Any:
    import asyncio

    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route as StarletteRoute

    from sds.asgi import SdsMiddleware

    async def slow(request: Any) -> Any:
        await asyncio.sleep(SLOW_S)
        return PlainTextResponse("slow")

    async def slow_held(request: Any) -> Any:
        mark_holder()
        await asyncio.sleep(30)
        return PlainTextResponse("late")

    async def answer(request: Any) -> Any:
        return PlainTextResponse("ok")

    app = Starlette(routes=[StarletteRoute("/slow", slow), StarletteRoute("/slow-held", slow_held),
                            StarletteRoute("/{rest:path}", answer)])
    client, table = routes()
    guarded = SdsMiddleware(app, client=client, routes=table)

    async def worker(scope: Any, receive: Any, send: Any) -> None:
        async def named(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), (b"x-worker", str(os.getpid()).encode())]
            await send(message)

        await guarded(scope, receive, named)

    return worker


def flask_app() -> Any:
    from flask import Flask

    from sds.wsgi import SdsMiddleware

    app = Flask(__name__)

    @app.route("/slow")
    def slow() -> str:
        time.sleep(SLOW_S)
        return "slow"

    @app.route("/slow-held")
    def slow_held() -> str:
        mark_holder()
        time.sleep(30)
        return "late"

    @app.route("/<path:rest>")
    def answer(rest: str) -> str:
        return "ok"

    client, table = routes()
    guarded = SdsMiddleware(app.wsgi_app, client=client, routes=table)

    def worker(environ: Dict[str, Any], start_response: Any) -> Any:
        def named(status: str, headers: List[Tuple[str, str]], *exc: Any) -> Any:
            return start_response(status, [*headers, ("X-Worker", str(os.getpid()))], *exc)

        return guarded(environ, named)

    return worker


class Server(WorkerServer):
    """A server process (``command`` with {port}) started in ``tmp``, its
    shared tables there (``SDS_WEB_DIR``)."""

    def __init__(self, tmp: Path, command: List[str]) -> None:
        super().__init__(tmp, command, {"SDS_WEB_DIR": str(tmp)}, WORKERS)


SERVERS = {
    "uvicorn-workers-starlette": [sys.executable, "-m", "uvicorn", "--workers", str(WORKERS), "--host", "127.0.0.1",
                                  "--port", "{port}", "--app-dir", str(TESTS), "--factory", "--log-level",
                                  "warning", "test_web_servers:starlette_app"],
    "gunicorn-sync-flask": [sys.executable, "-m", "gunicorn", "-w", str(WORKERS), "-b", "127.0.0.1:{port}",
                            "--chdir", str(TESTS), "--graceful-timeout", "2", "--timeout", "60",
                            "test_web_servers:flask_app()"],
}


@pytest.fixture(scope="module", params=list(SERVERS))
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp(request.param), SERVERS[request.param]) as started:
        yield started


def test_a_points_concurrency_limit_holds_across_workers(server: Server) -> None:
    points = sds.Client.shared(server.dir / "points", capacity=16)
    slow: List[Tuple[int, int, Any]] = []
    threads = [threading.Thread(target=lambda: slow.append(server.get("/slow"))) for _ in range(CONCURRENCY)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 5
    while points.stats("work")["concurrent"] < CONCURRENCY:
        assert time.monotonic() < deadline, "the slow requests never ran"
        time.sleep(0.01)
    # Two requests hold the point's two permits, in one or two workers:
    # every worker refuses the rest (sync workers queue, so only the free
    # ones answer; with four workers at least two are free).
    with ThreadPoolExecutor(4) as pool:
        fast = list(pool.map(lambda _: server.get("/fast"), range(24)))
    assert points.stats("work")["concurrent"] == CONCURRENCY, "the slow ones ended too soon"
    assert {status for status, _, _ in fast} == {503}, fast
    assert len({pid for _, pid, _ in fast}) >= 2, "one worker answered them all"
    for thread in threads:
        thread.join()
    assert [status for status, _, _ in slow] == [200] * CONCURRENCY
    # The permits come back when each response has ended, which the
    # server may finish just after the client read it.
    wait_for("the permits back", lambda: points.stats("work")["concurrent"] == 0, within=5)
    assert server.get("/fast")[0] == 200


def test_a_per_key_limit_holds_across_workers(server: Server) -> None:
    key = {"X-Api-Key": f"key-{server.port}"}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: server.get("/keyed", key), range(3 * PER_KEY)))
    statuses = [status for status, _, _ in answers]
    assert statuses.count(200) == PER_KEY and statuses.count(429) == 2 * PER_KEY, statuses
    assert len({pid for _, pid, _ in answers}) >= 2
    for status, _, headers in answers:
        assert headers["RateLimit-Policy"] == f'"per-key";q={PER_KEY};w=60'
        if status == 429:
            assert 1 <= int(headers["Retry-After"]) <= 60
    # A key nobody used is whole, in every worker.
    assert server.get("/keyed", {"X-Api-Key": "other"})[0] == 200


def test_a_worker_killed_holding_an_in_flight_unit_gives_it_back(server: Server) -> None:
    # Last in the module: uvicorn does not replace the killed worker.
    key = {"X-Api-Key": f"held-{server.port}"}
    holder = server.dir / "holder"
    limit = sds.KeyedLimit.shared(server.dir / "held", HELD, capacity=64)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(server.get, "/slow-held", key)
        wait_for("the held request running", lambda: holder.exists() and holder.read_text() != "", within=10)
        assert limit.peek(key["X-Api-Key"]).remaining == 0
        assert server.get("/held", key)[0] == 429
        os.kill(int(holder.read_text()), signal.SIGKILL)
        with pytest.raises(OSError):
            pending.result(15)
    # A surviving worker's refused request finds the dead holder's unit,
    # gives it back and is admitted (the ledger's sweep, at most once per
    # sweep interval).
    wait_for("the dead worker's unit back", lambda: server.get("/held", key)[0] == 200, within=15)
    # Its unit back too once its response has ended (just after the client read it).
    wait_for("the last request's unit back", lambda: limit.peek(key["X-Api-Key"]).remaining == 1, within=5)
