"""A throwaway redis-server for the benchmarks: the distribution's binary
(`make servers` installs it) on a free loopback port, with its own
temporary directory and no persistence, stopped when the block ends, also
when it ends by an error, Ctrl-C or SIGTERM."""

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
import time
from typing import Iterator

START_TIMEOUT_S = 10
PR_SET_PDEATHSIG = 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    # Linux: the server gets SIGTERM if this process dies without cleaning up
    # (SIGKILL), so no benchmark run leaves a server behind.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server() -> Iterator[int]:
    """Starts redis-server and yields its port."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server not found: run `make servers`")
    # SIGTERM ends the run through the `finally` below, as Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="sds-bench-redis-") as tmp:
        port = _free_port()
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp,
                   "--save", "", "--appendonly", "no", "--logfile", os.path.join(tmp, "redis.log")]
        server = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _answers_ping(port):
                if server.poll() is not None or time.monotonic() > deadline:
                    log = os.path.join(tmp, "redis.log")
                    text = open(log).read() if os.path.exists(log) else ""
                    raise SystemExit(f"redis-server did not start on port {port}:\n{text}")
                time.sleep(0.02)
            yield port
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            signal.signal(signal.SIGTERM, previous)
