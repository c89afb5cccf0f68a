"""A throwaway redis-server for the tests and the benchmarks (py/bench puts
this directory on its path): the distribution's binary (`make servers`
installs it) on a free loopback port, with its own temporary directory and
no persistence, stopped when the block ends, also when it ends by an
error, Ctrl-C or SIGTERM. A server can be stopped and started again on the
same port (an outage). With a `Tls` (a throwaway PKI by `tools/test-pki.sh`)
it speaks only TLS, on a `rediss://` URL."""

from __future__ import annotations

import contextlib
import ctypes
import os
import pathlib
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from typing import Iterator, List, Optional

START_TIMEOUT_S = 10
PR_SET_PDEATHSIG = 1
TEST_PKI = pathlib.Path(__file__).resolve().parents[2] / "tools" / "test-pki.sh"


@dataclass(frozen=True)
class Tls:
    """The PEM files of a PKI of its own (`tools/test-pki.sh`): a CA, the
    server's certificate for 127.0.0.1 and a client certificate. `mutual`:
    the server asks clients for a certificate of that CA."""

    ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str
    mutual: bool = False

    @staticmethod
    def generate(directory: str) -> "Tls":
        """A fresh CA (a name of its own) and its certificates in `directory`."""
        subprocess.run(["bash", str(TEST_PKI), directory], check=True, capture_output=True)
        files = [os.path.join(directory, f"{name}.pem")
                 for name in ("ca", "server-cert", "server-key", "client-cert", "client-key")]
        return Tls(*files)

    def requiring_client_certs(self) -> "Tls":
        return replace(self, mutual=True)

    def client_context(self) -> ssl.SSLContext:
        """A context trusting the CA and showing the client certificate."""
        context = ssl.create_default_context(cafile=self.ca)
        context.load_cert_chain(self.client_cert, self.client_key)
        return context


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    # Linux: the server gets SIGTERM if this process dies without cleaning up
    # (SIGKILL), so no run leaves a server behind.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _answers_ping(port: int, tls: Optional[Tls]) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as plain:
            with contextlib.ExitStack() as stack:
                s = plain
                if tls is not None:
                    s = stack.enter_context(tls.client_context().wrap_socket(plain, server_hostname="127.0.0.1"))
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process on `port`, its files in `directory`; only
    TLS with `tls`."""

    def __init__(self, directory: str, tls: Optional[Tls] = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server not found: run `make servers`")
        self.binary = binary
        self.directory = directory
        self.tls = tls
        self.port = free_port()
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def url(self) -> str:
        scheme = "redis" if self.tls is None else "rediss"
        return f"{scheme}://127.0.0.1:{self.port}"

    def _listen_options(self) -> List[str]:
        if self.tls is None:
            return ["--port", str(self.port)]
        return ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", self.tls.server_cert,
                "--tls-key-file", self.tls.server_key, "--tls-ca-cert-file", self.tls.ca,
                "--tls-auth-clients", "yes" if self.tls.mutual else "no"]

    def cli(self, *command: str) -> str:
        """One command by redis-cli (over TLS with the client certificate
        when the server speaks TLS); its reply as text."""
        options = ["-p", str(self.port)]
        if self.tls is not None:
            options += ["--tls", "--cacert", self.tls.ca, "--cert", self.tls.client_cert, "--key", self.tls.client_key]
        done = subprocess.run(["redis-cli", *options, *command], check=True, capture_output=True, text=True,
                              timeout=START_TIMEOUT_S)
        return done.stdout.strip()

    def start(self) -> None:
        log = os.path.join(self.directory, "redis.log")
        command = [self.binary, *self._listen_options(), "--bind", "127.0.0.1", "--dir", self.directory,
                   "--save", "", "--appendonly", "no", "--logfile", log]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers_ping(self.port, self.tls):
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
def redis_server(tls: Optional[Tls] = None) -> Iterator[RedisServer]:
    """Starts redis-server (speaking only TLS with `tls`) and yields it;
    stops it when the block ends."""
    # SIGTERM ends the run through the `finally` below, as Ctrl-C does (only
    # the main thread can set a handler).
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143)) if main else None
    try:
        with tempfile.TemporaryDirectory(prefix="sds-redis-") as tmp:
            server = RedisServer(tmp, tls)
            try:
                server.start()
                yield server
            finally:
                server.stop()
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
