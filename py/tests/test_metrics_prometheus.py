"""Issue 26, "Prove it": a real Prometheus server scrapes a real gunicorn
with 4 workers on one shared table, each scrape answered by whichever
worker takes it; one worker is SIGKILLed midway. Prometheus' latest
``sds_point_requests_total`` and ``sds_point_downgrades_total`` are exactly
the requests the test drove and the ones it saw downgraded, and no series
ever went back (no counter reset from the killed worker: the counts are the
table's, not a process's)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

import sds
from helpers import stop_server, wait_for, worker_pids
from redis_server import free_port

WORKERS = 4
CAPACITY = 16
THRESHOLD = 15

APP = textwrap.dedent(
    """
    import os

    import sds

    client = sds.Client.shared(os.environ["SDS_TEST_TABLE"], int(os.environ["SDS_TEST_CAPACITY"]))


    def app(environ, start_response):
        if environ["PATH_INFO"] == "/metrics":
            status, body = "200 OK", client.prometheus_text().encode()
            kind = client.metrics_content_type()
        else:
            with client.enter("work") as entry:
                status = "429 Too Many Requests" if entry.downgraded else "200 OK"
            body, kind = str(os.getpid()).encode(), "text/plain"
        start_response(status, [("Content-Type", kind), ("Content-Length", str(len(body)))])
        return [body]
    """
)

PROMETHEUS_CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sds
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


def get(url: str) -> Tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as err:
        return int(err.code), err.read().decode()


class Gunicorn:
    def __init__(self, tmp: Path) -> None:
        (tmp / "metrics_app.py").write_text(APP)
        self.table = tmp / "work.sds"
        self.port = free_port()
        self.log = open(tmp / "gunicorn.log", "w")
        self.log_path = tmp / "gunicorn.log"
        env = dict(os.environ, SDS_TEST_TABLE=str(self.table), SDS_TEST_CAPACITY=str(CAPACITY))
        command = [sys.executable, "-m", "gunicorn", "-w", str(WORKERS), "-b", f"127.0.0.1:{self.port}"]
        command += ["--chdir", str(tmp), "--worker-tmp-dir", str(tmp), "--graceful-timeout", "2", "--timeout", "60"]
        self.process = subprocess.Popen(
            command + ["metrics_app:app"], env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=self.log
        )

    def workers(self) -> List[int]:
        return worker_pids(self.process)

    def wait_ready(self) -> None:
        def ready() -> bool:
            assert self.process.poll() is None, self.log_path.read_text()
            try:
                return len(self.workers()) == WORKERS and get(self.url("/metrics"))[0] == 200
            except OSError:
                return False

        wait_for("gunicorn's 4 workers", ready, within=30)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        stop_server(self.process, self.log)


class Prometheus:
    def __init__(self, tmp: Path, target_port: int) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.skip("prometheus not found: run `make servers`")
        config = tmp / "prometheus.yml"
        config.write_text(PROMETHEUS_CONFIG.format(port=target_port))
        self.port = free_port()
        self.log = open(tmp / "prometheus.log", "w")
        self.log_path = tmp / "prometheus.log"
        command = [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'tsdb'}"]
        command += [f"--web.listen-address=127.0.0.1:{self.port}"]
        self.process = subprocess.Popen(command, cwd=tmp, stdout=subprocess.DEVNULL, stderr=self.log)

    def wait_ready(self) -> None:
        def ready() -> bool:
            assert self.process.poll() is None, self.log_path.read_text()
            try:
                return get(f"http://127.0.0.1:{self.port}/-/ready")[0] == 200
            except OSError:
                return False

        wait_for("Prometheus ready", ready, within=30)

    def query(self, promql: str) -> List[Dict[str, Any]]:
        """The result of an instant query at the server's now."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        status, body = get(url)
        answer = json.loads(body)
        assert status == 200 and answer["status"] == "success", body
        return list(answer["data"]["result"])

    def stop(self) -> None:
        stop_server(self.process, self.log)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Tuple[Gunicorn, Prometheus]]:
    gunicorn = Gunicorn(tmp_path)
    prometheus = None
    try:
        # The test's own attachment sets the strategy before any request.
        sds.Client.shared(gunicorn.table, CAPACITY).set_strategy("work", sds.Strategy(visit_threshold=THRESHOLD))
        prometheus = Prometheus(tmp_path, gunicorn.port)
        gunicorn.wait_ready()
        prometheus.wait_ready()
        yield gunicorn, prometheus
    finally:
        if prometheus is not None:
            prometheus.stop()
        gunicorn.stop()


def drive(gunicorn: Gunicorn, n: int) -> Tuple[int, List[int]]:
    """`n` requests of /work: how many were downgraded, and the pid of the
    worker that served each."""
    downgraded, pids = 0, []
    for _ in range(n):
        status, pid = get(gunicorn.url("/work"))
        assert status in (200, 429), (status, pid)
        downgraded += status == 429
        pids.append(int(pid))
    return downgraded, pids


def value(results: List[Dict[str, Any]]) -> float:
    assert len(results) == 1, results
    return float(results[0]["value"][1])


def test_prometheus_scraping_any_worker_sees_the_host_s_exact_counts_through_a_killed_worker(
    servers: Tuple[Gunicorn, Prometheus],
) -> None:
    gunicorn, prometheus = servers
    requests = 'sds_point_requests_total{job="sds",point="work",table="work.sds"}'
    visits = 'sds_point_downgrades_total{job="sds",point="work",table="work.sds",reason="VISIT"}'
    started = time.monotonic()

    def scraped(n: int) -> Callable[[], bool]:
        def check() -> bool:
            latest = prometheus.query(requests)
            return latest != [] and value(latest) == n

        return check

    refused, pids = drive(gunicorn, 2 * THRESHOLD)
    wait_for("a scrape of the first requests", scraped(2 * THRESHOLD), within=15)
    killed = pids[-1]
    os.kill(killed, signal.SIGKILL)
    # Then batches, each scraped before the next (gunicorn replaces the
    # killed worker meanwhile): the run has scrapes of every stage.
    total = 2 * THRESHOLD
    stages = [2 * THRESHOLD]
    for batch in (THRESHOLD // 3, THRESHOLD // 3, 2 * THRESHOLD - 2 * (THRESHOLD // 3)):
        if len(stages) == 3:
            wait_for("the killed worker's replacement", lambda: len(gunicorn.workers()) == WORKERS, within=30)
        downgraded, served = drive(gunicorn, batch)
        refused, total, pids = refused + downgraded, total + batch, pids + served
        wait_for(f"a scrape of {total} requests", scraped(total), within=15)
        stages.append(total)
    assert total == 4 * THRESHOLD
    assert killed not in pids[2 * THRESHOLD :] and len(set(pids)) >= 2
    # Within 10 s, the visits above the threshold were downgraded.
    assert 0 < refused < total
    run = f"{int(time.monotonic() - started) + 5}s"
    assert value(prometheus.query(visits)) == refused
    assert value(prometheus.query('sum(sds_point_downgrades_total{job="sds",point="work"})')) == refused
    for reason in sds.REASONS:
        if reason != "VISIT":
            assert value(prometheus.query(visits.replace("VISIT", reason))) == 0
    # No reset, whichever worker answered each scrape: every scraped value
    # is at least the one before.
    assert value(prometheus.query(f"resets({requests}[{run}])")) == 0
    assert value(prometheus.query(f"resets({visits}[{run}])")) == 0
    raw = prometheus.query(f"{requests}[{run}]")
    assert len(raw) == 1
    series = [float(v) for _, v in raw[0]["values"]]
    assert series == sorted(series) and set(stages) <= set(series) and series[-1] == total, series
    # increase() over the run is the driven requests, not a restart's spike
    # (extrapolation to the range's ends adds at most a fraction).
    increase = value(prometheus.query(f"increase({requests}[{run}])"))
    assert increase <= total * 1.5, increase
    assert value(prometheus.query(f"max_over_time({requests}[{run}])")) == total
