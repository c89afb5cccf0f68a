"""Real servers with 4 worker processes, each limiting through its own
``storage_uri="sds://<tmp>/limits"``: 100 requests a minute per key hold
for the host, and a worker killed with SIGKILL mid-run changes nothing.

- gunicorn (sync workers): Flask + flask-limiter;
- gunicorn with uvicorn workers (``-k uvicorn.workers.UvicornWorker``) and
  ``uvicorn --workers 4``: FastAPI + slowapi.

This module is also the apps the servers load (``flask_app()``,
``fastapi_app()``): each worker imports it, reading the storage URI from
``SDS_LIMITS_URI``.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest
from fastapi import Request  # FastAPI reads the route's annotations from the module

from helpers import WorkerServer

WORKERS = 4
LIMIT = 100
REQUESTS = 300
# Requests before the kill: the rest must find their count.
BEFORE_KILL = 60
TESTS = Path(__file__).resolve().parent


def flask_app() -> Any:
    """Flask + flask-limiter: ``GET /?key=K`` answers this worker's pid,
    ``LIMIT`` per minute per key; ``/health`` is not limited."""
    from flask import Flask, request
    from flask_limiter import Limiter

    import sds.limits  # noqa: F401  (the scheme)

    app = Flask(__name__)
    limiter = Limiter(lambda: request.args.get("key", "k"), app=app, storage_uri=os.environ["SDS_LIMITS_URI"])

    @app.route("/")
    @limiter.limit(f"{LIMIT} per minute")
    def index() -> str:
        return str(os.getpid())

    @app.route("/health")
    def health() -> str:
        return str(os.getpid())

    @app.after_request
    def worker(response: Any) -> Any:
        response.headers["X-Worker"] = str(os.getpid())
        return response

    return app


def fastapi_app() -> Any:
    """The same with FastAPI + slowapi."""
    from fastapi import FastAPI
    from fastapi.responses import PlainTextResponse
    from slowapi import Limiter, _rate_limit_exceeded_handler
    from slowapi.errors import RateLimitExceeded

    import sds.limits  # noqa: F401

    limiter = Limiter(key_func=lambda request: request.query_params.get("key", "k"),
                      storage_uri=os.environ["SDS_LIMITS_URI"])
    app = FastAPI()
    app.state.limiter = limiter
    app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)  # type: ignore[arg-type]

    @app.get("/", response_class=PlainTextResponse)
    @limiter.limit(f"{LIMIT}/minute")
    def index(request: Request) -> str:
        return str(os.getpid())

    @app.get("/health", response_class=PlainTextResponse)
    def health() -> str:
        return str(os.getpid())

    @app.middleware("http")
    async def worker(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        response.headers["X-Worker"] = str(os.getpid())
        return response

    return app


class Server(WorkerServer):
    """A server process (`command` with {port}) started in `tmp` on the
    limits storage of `tmp` (``SDS_LIMITS_URI``)."""

    def __init__(self, tmp: Path, command: List[str]) -> None:
        super().__init__(tmp, command, {"SDS_LIMITS_URI": f"sds://{tmp}/limits"}, WORKERS)

    def burst(self, n: int) -> List[Tuple[int, int]]:
        """(status, the answering worker's pid) of `n` limited requests, 8 at a time."""
        with ThreadPoolExecutor(8) as pool:
            return [(status, pid) for status, pid, _ in pool.map(lambda _: self.get("/?key=k"), range(n))]


GUNICORN = [sys.executable, "-m", "gunicorn", "-w", str(WORKERS), "-b", "127.0.0.1:{port}", "--chdir", str(TESTS),
            "--graceful-timeout", "2", "--timeout", "60"]
SERVERS = {
    "gunicorn-sync-flask": GUNICORN + ["test_limits_servers:flask_app()"],
    "gunicorn-uvicorn-workers-fastapi": GUNICORN + ["-k", "uvicorn.workers.UvicornWorker",
                                                    "test_limits_servers:fastapi_app()"],
    "uvicorn-workers-fastapi": [sys.executable, "-m", "uvicorn", "--workers", str(WORKERS), "--host", "127.0.0.1",
                                "--port", "{port}", "--app-dir", str(TESTS), "--factory", "--log-level", "warning",
                                "test_limits_servers:fastapi_app"],
}


@pytest.fixture(params=list(SERVERS))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    with Server(tmp_path, SERVERS[request.param]) as started:
        yield started


def test_a_limit_holds_for_the_host_across_workers_and_a_kill(server: Server) -> None:
    first = server.burst(BEFORE_KILL)
    assert all(status == 200 for status, _ in first), first
    victim = first[-1][1]
    os.kill(victim, signal.SIGKILL)
    # The server replaces it: wait until the new worker answers (it opens
    # the same tables when it serves its first limited request).
    before = {pid for _, pid in first}
    deadline = time.monotonic() + 20
    while not ({server.get("/health")[1] for _ in range(8)} - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert victim not in server.workers()
    rest = server.burst(REQUESTS - BEFORE_KILL)
    answers = first + rest
    assert {status for status, _ in answers} == {200, 429}
    admitted = [pid for status, pid in answers if status == 200]
    by_worker = {pid: (admitted.count(pid), [p for _, p in answers].count(pid)) for pid in sorted({p for _, p in answers})}
    print(f"{len(admitted)} of {REQUESTS} admitted (limit {LIMIT}); (admitted, answered) by worker: {by_worker}")
    # Each hit is one atomic increment of the shared count: not only within
    # [LIMIT, LIMIT + WORKERS] but exactly LIMIT.
    assert len(admitted) == LIMIT
    # Spread over the workers, the replacement's too.
    assert len({pid for _, pid in first}) >= 2 and len({pid for _, pid in rest}) >= 2
    assert {pid for _, pid in rest} - before, "the replacement answered no request"
