"""A throwaway redis-server for the tests and the benchmarks (py/bench puts
this directory on its path): the distribution's binary (`make servers`
installs it) on a free loopback port, with its own temporary directory and
no persistence, stopped when the block ends, also when it ends by an
error, Ctrl-C or SIGTERM. A server can be stopped and started again on the
same port (an outage)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Iterator, Optional

START_TIMEOUT_S = 10
PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    # Linux: the server gets SIGTERM if this process dies without cleaning up
    # (SIGKILL), so no run leaves a server behind.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process on `port`, its files in `directory`."""

    def __init__(self, directory: str) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server not found: run `make servers`")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = os.path.join(self.directory, "redis.log")
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.directory,
                   "--save", "", "--appendonly", "no", "--logfile", log]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                text = open(log).read() if os.path.exists(log) else ""
                raise RuntimeError(f"redis-server did not start on port {self.port}:\n{text}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stops the server (its data is gone: no persistence)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


@contextlib.contextmanager
def redis_server() -> Iterator[RedisServer]:
    """Starts redis-server and yields it; stops it when the block ends."""
    # SIGTERM ends the run through the `finally` below, as Ctrl-C does (only
    # the main thread can set a handler).
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143)) if main else None
    try:
        with tempfile.TemporaryDirectory(prefix="sds-redis-") as tmp:
            server = RedisServer(tmp)
            try:
                server.start()
                yield server
            finally:
                server.stop()
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
