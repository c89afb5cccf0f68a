"""A real gunicorn with 4 workers serving ``shared_wsgi_app.py``, whose view
is guarded by a point on one shared table: limits hold for the host, not
per worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator, List

import pytest

import sds
from helpers import stop_server, worker_pids
from redis_server import free_port

WORKERS = 4
CAPACITY = 64
TESTS = Path(__file__).resolve().parent


class Server:
    def __init__(self, tmp: Path, preload: bool) -> None:
        self.table = str(tmp / "table.sds")
        self.dir = tmp
        self.port = free_port()
        self.log = open(tmp / "log", "w")
        env = dict(os.environ, SDS_TEST_TABLE=self.table, SDS_TEST_CAPACITY=str(CAPACITY), SDS_TEST_DIR=str(tmp))
        command = [sys.executable, "-m", "gunicorn", "-w", str(WORKERS), "-b", f"127.0.0.1:{self.port}"]
        command += ["--chdir", str(TESTS), "--worker-tmp-dir", str(tmp), "--graceful-timeout", "2"]
        command += ["--timeout", "60"] + (["--preload"] if preload else [])
        self.process = subprocess.Popen(
            command + ["shared_wsgi_app:app"], env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=self.log
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process.poll() is None, (self.dir / "log").read_text()
            try:
                if len(self.workers()) == WORKERS:
                    self.get("")
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError("gunicorn did not start in 30 s")

    def get(self, query: str) -> int:
        url = f"http://127.0.0.1:{self.port}/?{query}"
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as err:
            return int(err.code)

    def workers(self) -> List[int]:
        return worker_pids(self.process)

    def stop(self) -> None:
        stop_server(self.process, self.log)


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[object]:
    started: List[Server] = []

    def start(preload: bool, strategy: sds.Strategy) -> Server:
        server = Server(tmp_path, preload)
        # The test's own attachment sets the strategy before any request.
        sds.Client.shared(server.table, CAPACITY).set_strategy("view", strategy)
        started.append(server)
        server.wait_ready()
        return server

    yield start
    for server in started:
        server.stop()


def _inflight(server: Server) -> List[int]:
    return [int(x) for x in (server.dir / "inflight").read_text().split()]


@pytest.mark.parametrize("preload", [True, False], ids=["preload", "no-preload"])
def test_visit_threshold_holds_for_all_workers(server_factory, preload: bool) -> None:  # type: ignore[no-untyped-def]
    t = 20
    server = server_factory(preload, sds.Strategy(visit_threshold=t))
    # wait_ready's request was one visit: 3T more, all at one time just after
    # it, so the 10 s window holds them all however slow the machine is.
    at = sds.now_ms()
    statuses = [server.get(f"at={at}") for _ in range(3 * t)]
    admitted = statuses.count(200) + 1
    assert statuses.count(200) + statuses.count(429) == 3 * t
    assert t <= admitted <= t + WORKERS, statuses


def test_concurrent_threshold_holds_for_all_workers(server_factory) -> None:  # type: ignore[no-untyped-def]
    server = server_factory(False, sds.Strategy(concurrent_threshold=2))
    with ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(lambda _: server.get("sleep=0.3"), range(24)))
    assert statuses.count(200) >= 2 and statuses.count(429) >= 1, statuses
    now, high = _inflight(server)
    assert now == 0
    assert high == 2
    assert sds.Client.shared(server.table, CAPACITY).stats("view")["concurrent"] == 0


def test_a_killed_worker_permit_comes_back(server_factory) -> None:  # type: ignore[no-untyped-def]
    server = server_factory(False, sds.Strategy(concurrent_threshold=2))
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(server.get, "sleep=30")
        deadline = time.monotonic() + 10
        while not (server.dir / "holder").exists() or not (server.dir / "holder").read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        client = sds.Client.shared(server.table, CAPACITY)
        assert client.stats("view")["concurrent"] == 1
        os.kill(int((server.dir / "holder").read_text()), signal.SIGKILL)
        with pytest.raises(OSError):
            pending.result(15)
    # gunicorn replaces the worker, whose attach gives the permit back (a
    # refused request would too): bounded wait, the new worker loads the app
    # after it is forked. (Once, in a fresh clone's whole suite, no worker
    # came back within 15 s: the log says why if it happens again.)
    deadline = time.monotonic() + 30
    while len(server.workers()) < WORKERS and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(server.workers()) == WORKERS, (server.dir / "log").read_text()[-4000:]
    while client.stats("view")["concurrent"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.stats("view")["concurrent"] == 0
    assert server.get("") == 200
