"""The strict fake console, ``tools/fake-sds-admin.py``, as a subprocess of
this interpreter for the agent tests (``test_admin*.py``): HTTP, or HTTPS
with a PKI made per test (``tools/test-pki.sh``), mutual TLS included; it can
be frozen (SIGSTOP) and thawed (SIGCONT) like a console in a long GC."""

from __future__ import annotations

import contextlib
import json
import pathlib
import signal
import ssl
import subprocess
import sys
import urllib.request
from typing import Any, Dict, Iterator, List, Optional, Tuple

import sds
from redis_server import Tls

REPO = pathlib.Path(__file__).resolve().parents[2]
FAKE = REPO / "tools" / "fake-sds-admin.py"
IDENTITY = {"ip": "10.1.2.3", "hostname": "test-host"}


class FakeConsole:
    """The fake console as a subprocess; it exits when its stdin closes.
    With `tls` it speaks only HTTPS with that PKI's server certificate (the
    test's own control requests trust its CA), on `port` if given; with a
    `tls.mutual` PKI it also requires a client certificate of that CA (the
    control requests show the PKI's client certificate)."""

    def __init__(self, tls: Optional[Tls] = None, port: int = 0) -> None:
        command = [sys.executable, str(FAKE), "--port", str(port)]
        self.context: Optional[ssl.SSLContext] = None
        if tls is not None:
            command += ["--tls-cert", tls.server_cert, "--tls-key", tls.server_key]
            self.context = ssl.create_default_context(cafile=tls.ca)
            if tls.mutual:
                command += ["--tls-client-ca", tls.ca]
                self.context = tls.client_context()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        self.url = f"{'http' if tls is None else 'https'}://127.0.0.1:{self.port}"

    def control(self, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method="GET" if body is None else "POST")
        with urllib.request.urlopen(request, timeout=5, context=self.context) as response:
            return json.loads(response.read())

    def connect(self, client: sds.Client, **settings: Any) -> sds.AdminAgent:
        """`client`'s agent for the app g/a of this console, with the test
        host's `IDENTITY` and a pull every 0.1 s unless `settings` say
        otherwise."""
        return client.connect_admin(self.url, "g", "a", **{"pull_interval": 0.1, **IDENTITY, **settings})

    def app(self, strategies: List[Dict[str, Any]]) -> int:
        answer = self.control("/_fake/app", {"appGroupName": "g", "appName": "a", "strategies": strategies})
        return int(answer["version"])

    def null_version_app(self, strategies: List[Dict[str, Any]]) -> None:
        """Sets the app as the shipped console on H2 holds it: its version
        null, before and after this edit."""
        body = {"appGroupName": "g", "appName": "a", "strategies": strategies, "nullVersion": True}
        assert self.control("/_fake/app", body) == {"version": None}

    def mode(self, **modes: str) -> None:
        self.control("/_fake/mode", modes)

    def requests(self) -> Dict[str, Any]:
        return dict(self.control("/_fake/requests"))

    def uploads_of(self, cycle: int) -> List[Dict[str, Any]]:
        """The upload requests of `cycle` (their statisticsCycleTime)."""
        uploads = [u["request"] for u in self.requests()["uploads"]]
        return [u for u in uploads if u["statisticsCycleTime"] == cycle]

    def stored_rows(self, cycle: int) -> List[Tuple[str, int]]:
        """The console's heartbeat rows of `cycle`, as sorted (point,
        visitNum)."""
        rows = self.requests()["stored"]
        return sorted((r["point"], r["visitNum"]) for r in rows if r["statisticsCycleTime"] == cycle)

    def point_list(self) -> List[str]:
        return list(self.requests()["points"].get("g/a", []))

    def freeze(self) -> None:
        """Stops the process (a console in a long GC): the kernel still
        accepts connections and queues their requests. No control request
        answers until `thaw`."""
        self.proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Lets it run again: it processes every queued request."""
        self.proc.send_signal(signal.SIGCONT)

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.thaw()
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


@contextlib.contextmanager
def fake_console(tls: Optional[Tls] = None, port: int = 0) -> Iterator[FakeConsole]:
    """A fake console for the block, checked for protocol violations and
    stopped after it, also when the block fails."""
    console = FakeConsole(tls, port)
    try:
        yield console
        # Hang mode holds connections open; answer them so the fake can exit.
        console.mode(pull="ok", add="ok")
        assert console.requests()["violations"] == []
    finally:
        console.close()



def visit_threshold(client: sds.Client, point: str) -> Optional[int]:
    strategy = client.strategy(point)
    return None if strategy is None else strategy.visit_threshold
