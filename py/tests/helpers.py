"""What the tests share: counting this process's threads by the name the
Rust side gives them, waiting for a condition, starting and stopping a
server the test started, and checking that every way of giving a strategy
refuses an invalid one alike."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Callable, Dict, List, Set, Tuple

import pytest

import sds
from redis_server import free_port


def named_threads(name: str) -> int:
    """This process's threads named ``name``. A thread that ends during the
    count (its task gone from /proc) is not counted. A thread just joined
    may still be listed for a moment: wait for a count to drop, do not
    assert it at once."""
    count = 0
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            count += (task / "comm").read_text().strip() == name
        except (FileNotFoundError, ProcessLookupError):
            pass
    return count


def wait_for(what: str, check: Callable[[], bool], within: float = 5.0) -> float:
    """Polls `check` (every 5 ms) until it holds; returns how long that
    took."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > within:
            raise AssertionError(f"not within {within} s: {what}")
        time.sleep(0.005)
    return time.monotonic() - start


def camel(snake: str) -> str:
    """An ``sds.Strategy`` keyword as its SDS JSON name."""
    return "".join(w.capitalize() if i else w for i, w in enumerate(snake.split("_")))


def refused_everywhere(kwargs: Dict[str, int], field: str, message: str, kept: Dict[str, int]) -> None:
    """``sds.Strategy(**kwargs)`` raises ``sds.InvalidStrategy`` naming
    ``field`` with the core's ``message``; so does ``set_strategy`` given
    the same fields as a dict of SDS names and as JSON text, on a client
    whose point keeps its strategy ``kept`` (SDS names)."""
    with pytest.raises(sds.InvalidStrategy) as info:
        sds.Strategy(**kwargs)
    assert (info.value.code, info.value.field, str(info.value)) == ("SDS_INVALID_STRATEGY", field, message)
    client = sds.Client(capacity=4)
    client.set_strategy("p", kept)
    names = {camel(k): v for k, v in kwargs.items()}
    for given in (names, json.dumps(names)):
        with pytest.raises(sds.InvalidStrategy) as again:
            client.set_strategy("p", given)
        assert (again.value.field, str(again.value)) == (field, message)
    assert client.strategy("p") == sds.Strategy.from_dict(kept)


def stop_server(process: "subprocess.Popen[Any]", log: IO[str], grace: float = 10) -> None:
    """Stops a server the test started (SIGTERM, then SIGKILL after `grace`
    seconds) and closes its log."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    log.close()


def worker_pids(process: "subprocess.Popen[Any]") -> List[int]:
    """The children of a server process: its workers."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(process.pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


class WorkerServer:
    """A server of `workers` processes (`command`, with {port}) started in
    `tmp` with `env` added to ours, its output in tmp/log. Its apps name
    the worker that answered in the header ``X-Worker`` and answer
    ``/health``. As a context manager: ready on entry, stopped on exit."""

    def __init__(self, tmp: pathlib.Path, command: List[str], env: Dict[str, str], workers: int) -> None:
        self.dir = tmp
        self.expected = workers
        self.port = free_port()
        self.log = open(tmp / "log", "w")
        self.process = subprocess.Popen([a.format(port=self.port) for a in command], env=dict(os.environ, **env),
                                        cwd=tmp, stdout=self.log, stderr=subprocess.STDOUT)

    def __enter__(self) -> "WorkerServer":
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def get(self, path: str, headers: Dict[str, str] = {}) -> Tuple[int, int, Any]:
        """(status, the answering worker's pid, the headers: any case)."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return int(response.status), int(response.headers["X-Worker"]), response.headers
        except urllib.error.HTTPError as err:
            return int(err.code), int(err.headers["X-Worker"]), err.headers

    def workers(self) -> List[int]:
        return worker_pids(self.process)

    def wait_ready(self) -> None:
        """Until every worker has answered (each loads the app itself)."""
        deadline = time.monotonic() + 40
        seen: Set[int] = set()
        while time.monotonic() < deadline:
            assert self.process.poll() is None, (self.dir / "log").read_text()
            try:
                with ThreadPoolExecutor(8) as pool:
                    seen |= {pid for _, pid, _ in pool.map(lambda _: self.get("/health"), range(16))}
                if len(seen & set(self.workers())) >= self.expected:
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"not ready in 40 s:\n{(self.dir / 'log').read_text()}")

    def stop(self) -> None:
        stop_server(self.process, self.log, grace=15)
