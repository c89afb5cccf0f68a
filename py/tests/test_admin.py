"""The console agent (``Client.connect_admin``) against the strict fake
console (``fake_admin.py``), on HTTP or on HTTPS with a PKI made per test.
What the console as it ships does: ``test_admin_shipped.py``."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pathlib
import subprocess
import sys
import textwrap
import time
import warnings
from typing import Any, Callable, Dict, List, Tuple

import pytest

import sds
from fake_admin import IDENTITY, FakeConsole, fake_console, visit_threshold
from helpers import named_threads, wait_for
from redis_server import Tls, free_port

Log = Callable[..., List[str]]


def agent_threads() -> int:
    return named_threads("sds-agent")


def refusal(servers: str = "http://127.0.0.1:9", app_group: str = "g", app_name: str = "a", **settings: Any) -> str:
    """Why an agent of these settings does not start: the message of the
    `sds.InvalidArgument` raised, after the agent's prefix."""
    with pytest.raises(sds.InvalidArgument) as raised:
        sds.Client(8).connect_admin(servers, app_group, app_name, **settings)
    message = str(raised.value)
    assert message.startswith("cannot start the SDS agent: "), message
    return message.removeprefix("cannot start the SDS agent: ")


def changed(client: sds.Client, agent: sds.AdminAgent, threshold: int, version: int) -> bool:
    """The set is in force on "orders" and the status holds its version
    (the agent records the version a moment after the table changes)."""
    return visit_threshold(client, "orders") == threshold and agent.status().version == version


def test_a_strategy_change_is_in_force_within_one_pull_interval_and_a_removed_point_loses_it(
    fake: FakeConsole,
) -> None:
    fake.app([{"point": "orders", "visitThreshold": 5}, {"point": "users", "visitThreshold": 9}])
    client = sds.Client(64)
    client.set_strategy("local", sds.Strategy(visit_threshold=1))
    with fake.connect(client) as agent:
        wait_for("the first set", lambda: agent.status().version == 1)
        assert visit_threshold(client, "orders") == 5
        assert visit_threshold(client, "users") == 9
        # The console owns the table's strategies.
        assert client.strategy("local") is None

        assert fake.app([{"point": "orders", "visitThreshold": 7}]) == 2
        # One interval (0.1 s), plus what this loaded machine adds.
        took = wait_for("the change", lambda: changed(client, agent, 7, 2), within=1.0)
        assert took < 1.0
        assert client.strategy("users") is None
        status = agent.status()
        assert (status.version, status.last_pull_ok, status.pull_failures) == (2, True, 0)
        assert status.server == fake.url
        assert status.last_error == ""

    first = fake.requests()["pulls"][0]["request"]
    assert first == {
        "appGroupName": "g",
        "appName": "a",
        "ip": "10.1.2.3",
        "hostname": "test-host",
        "version": 0,
        "pointList": ["local"],
    }


def test_an_invalid_strategy_is_refused_the_old_one_kept_and_logged(fake: FakeConsole, admin_log: Log) -> None:
    fake.app([{"point": "orders", "visitThreshold": 5}])
    client = sds.Client(64)
    with fake.connect(client) as agent:
        wait_for("the first set", lambda: agent.status().version == 1)
        fake.app([{"point": "orders", "visitThreshold": "10"}, {"point": "users", "visitThreshold": 3}])
        wait_for("the second set", lambda: agent.status().version == 2)
        assert visit_threshold(client, "orders") == 5
        assert visit_threshold(client, "users") == 3
        assert 'point "orders"' in agent.status().last_error
    warnings = admin_log(logging.WARNING)
    assert len(warnings) == 1
    assert warnings[0].startswith('SDS strategy refused: point "orders": ')
    assert "visitThreshold" in warnings[0]
    assert admin_log(logging.INFO, "version 2"), admin_log(logging.INFO)


@pytest.mark.parametrize(
    "mode, error",
    [
        ("unknown_app", "the console answered: app g/a does not exist"),
        ("http_500", "HTTP status 500"),
        ("hang", "/sds/heartbeat/pullstrategy: "),
    ],
)
def test_a_failing_console_is_visible_in_status_and_the_strategies_stay(
    fake: FakeConsole, admin_log: Log, mode: str, error: str
) -> None:
    fake.app([{"point": "orders", "visitThreshold": 5}])
    client = sds.Client(64)
    with fake.connect(client, timeout=0.2) as agent:
        wait_for("the first set", lambda: agent.status().version == 1)
        fake.mode(pull=mode)
        wait_for("a failed pull", lambda: agent.status().pull_failures > 0)
        status = agent.status()
        assert status.last_pull_ok is False
        assert error in status.last_error
        assert status.version == 1
        assert visit_threshold(client, "orders") == 5
        fake.mode(pull="ok")
        wait_for("a pull again", lambda: agent.status().last_pull_ok)
    assert admin_log(logging.WARNING, error)


def test_a_second_server_that_works_takes_over(fake: FakeConsole) -> None:
    hanging = FakeConsole()
    try:
        hanging.mode(pull="hang", add="hang")
        fake.app([{"point": "orders", "visitThreshold": 5}])
        client = sds.Client(64)
        servers = f"{hanging.url},{fake.url}"
        with client.connect_admin(servers, "g", "a", pull_interval=0.1, timeout=0.2, **IDENTITY) as agent:
            wait_for("the set from the working server", lambda: changed(client, agent, 5, 1))
            status = agent.status()
            assert status.version == 1
            assert status.server == fake.url
    finally:
        hanging.mode(pull="ok", add="ok")
        hanging.close()


def test_guard_without_fallback_returns_the_consoles_return_value(fake: FakeConsole) -> None:
    fake.app(
        [
            {"point": "pay", "visitThreshold": 0, "returnValueStr": '{"busy": true}'},
            {"point": "plain", "visitThreshold": 0},
        ]
    )
    client = sds.Client(64)

    @client.guard("pay")
    def pay() -> str:
        return "paid"

    @client.guard("pay")
    async def pay_async() -> str:
        return "paid"

    @client.guard("pay", fallback=lambda: "fallback")
    def pay_with_fallback() -> str:
        return "paid"

    @client.guard("plain")
    def plain() -> str:
        return "done"

    with fake.connect(client) as agent:
        wait_for("the set", lambda: agent.status().version == 1)
        assert agent.return_value("pay") == '{"busy": true}'
        assert agent.return_value("plain") is None
        assert pay() == '{"busy": true}'
        assert asyncio.run(pay_async()) == '{"busy": true}'
        assert pay_with_fallback() == "fallback"
        with pytest.raises(sds.Downgraded):
            plain()
    # Closed: the strategies stay, the client has no agent any more.
    with pytest.raises(sds.Downgraded):
        pay()


def test_the_upload_equals_the_clients_last_cycle(fake: FakeConsole) -> None:
    fake.app([{"point": "up", "visitThreshold": 1000}])
    client = sds.Client(64)
    with client.connect_admin(fake.url, "g", "a", **IDENTITY) as agent:
        cycle = sds.now_ms() // 10_000 * 10_000
        # Traffic inside one cycle: 6 visits, 2 errors, a peak of 3 in flight.
        held = [client.enter("up") for _ in range(3)]
        for entry in held:
            entry.exit()
        for i in range(3):
            with pytest.raises(ZeroDivisionError), client.enter("up"):
                if i < 2:
                    1 / 0
                raise ZeroDivisionError
        if sds.now_ms() // 10_000 * 10_000 != cycle:
            pytest.skip("the traffic crossed a cycle boundary")
        # Reported at second 5 of the next cycle (at most ~15 s away).
        wait_for("the upload", lambda: agent.status().uploads >= 1 and any(
            u["request"]["statisticsCycleTime"] == cycle + 10_000 for u in fake.requests()["uploads"]
        ), within=20.0)
        upload = next(
            u["request"] for u in fake.requests()["uploads"] if u["request"]["statisticsCycleTime"] == cycle + 10_000
        )
        assert agent.status().is_reporter
    expected = dict(client.stats("up", now_ms=cycle + 10_000 + 5_000)["lastCycle"])
    assert expected["visitNum"] == 6 and expected["concurrentNum"] == 3
    assert upload["pointInfoMap"] == {"up": {"point": "up", **expected}}
    assert (upload["ip"], upload["hostname"]) == ("10.1.2.3", "test-host")


def test_close_joins_the_thread_and_is_idempotent(fake: FakeConsole) -> None:
    fake.app([])
    before = agent_threads()
    client = sds.Client(64)
    agent = client.connect_admin(fake.url, "g", "a", **IDENTITY)
    # The thread names itself once it runs.
    wait_for("the agent's thread", lambda: agent_threads() == before + 1)
    assert agent.running
    with pytest.raises(sds.InvalidArgument, match="already has a console agent running"):
        client.connect_admin(fake.url, "g", "a", **IDENTITY)
    agent.close()
    assert not agent.running
    wait_for("the agent thread gone", lambda: agent_threads() == before)
    agent.close()
    assert repr(agent) == "<sds.AdminAgent closed>"
    # A closed agent's status is still readable; a new agent may start.
    assert agent.status().last_pull_ok
    client.connect_admin(fake.url, "g", "a", **IDENTITY).close()
    wait_for("the agent thread gone", lambda: agent_threads() == before)


def test_a_collected_client_stops_its_agent(fake: FakeConsole) -> None:
    before = agent_threads()
    client = sds.Client(64)
    client.connect_admin(fake.url, "g", "a", **IDENTITY)
    wait_for("the agent's thread", lambda: agent_threads() == before + 1)
    del client
    wait_for("the agent thread gone", lambda: agent_threads() == before)


@pytest.mark.parametrize("mode", ["ok", "hang"])
def test_a_process_that_ends_with_an_agent_running_exits_normally_and_promptly(fake: FakeConsole, mode: str) -> None:
    fake.app([{"point": "orders", "visitThreshold": 5}])
    fake.mode(pull=mode)
    code = textwrap.dedent(
        f"""
        import logging, time, sds
        logging.basicConfig(level=logging.INFO)
        client = sds.Client(64)
        agent = client.connect_admin({fake.url!r}, "g", "a", ip="10.1.2.3", hostname="h", timeout=0.5)
        time.sleep(0.3)
        print("ending")
        """
    )
    start = time.monotonic()
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    took = time.monotonic() - start
    assert child.returncode == 0, child.stderr
    assert child.stdout == "ending\n"
    assert "Traceback" not in child.stderr and "Fatal" not in child.stderr
    # Startup, 0.3 s, and at most one request timeout (0.5 s) to stop.
    assert took < 5.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"servers": "ftp://h:8887"}, 'server "ftp://h:8887" is not an http:// or https:// URL'),
        ({"servers": " , "}, "no server given"),
        ({"app_group": " "}, "the app group is blank"),
        ({"app_name": ""}, "the app name is blank"),
        ({"ip": "1234567890.1234567"}, 'ip "1234567890.1234567" is longer than 16 characters'),
        ({"pull_interval": 0}, "the pull interval must be above 0 ms"),
        ({"timeout": 0.0001}, "the timeout must be above 0 ms"),
        # Arguments of the wrong type: the agent's message too.
        ({"servers": 8887}, "servers must be text, not 8887"),
        ({"hostname": b"h"}, "hostname must be text or null, not a value of type bytes"),
        ({"pull_interval": "5"}, 'pull_interval must be a finite number of seconds, at least 0, not the text "5"'),
        ({"timeout": float("nan")}, "timeout must be a finite number of seconds, at least 0, not NaN"),
        ({"timeout_ms": 2.5}, "timeout_ms must be a whole number of milliseconds from 0 to 18446744073709551615, not 2.5"),
        ({"pull_intervall": 1}, 'unknown setting "pull_intervall"; the settings are: servers, app_group, app_name, ip, '
         "hostname, pull_interval_ms, timeout_ms, tls_ca_file, tls_cert_file, tls_key_file (or their camelCase spellings)"),
    ],
)
def test_a_config_the_agent_refuses_is_an_invalid_argument_with_its_reason(kwargs: Dict[str, Any], message: str) -> None:
    assert refusal(**kwargs) == message


def test_a_shared_table_client_is_the_reporter_when_alone(fake: FakeConsole, tmp_path: pathlib.Path) -> None:
    fake.app([{"point": "orders", "visitThreshold": 5}])
    client = sds.Client.shared(tmp_path / "table", 64)
    with fake.connect(client) as agent:
        wait_for("the set and the role", lambda: agent.status().version == 1 and agent.status().is_reporter)
        assert visit_threshold(client, "orders") == 5
        # Another process's client on the same file sees the strategy.
        other = sds.Client.shared(tmp_path / "table", 64)
        assert visit_threshold(other, "orders") == 5


def test_a_fork_child_inherits_no_agent_and_connects_its_own(fake: FakeConsole) -> None:
    fake.app([{"point": "pay", "visitThreshold": 0, "returnValueStr": "busy"}])
    client = sds.Client(64)

    @client.guard("pay")
    def pay() -> str:
        return "paid"

    with fake.connect(client) as agent:
        wait_for("the set", lambda: agent.status().version == 1)
        read, write = os.pipe()
        with warnings.catch_warnings():
            # Python 3.12+ warns of forking a process with threads: the point.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: report, never return into pytest
            result = {}
            try:
                result["running"] = agent.running
                result["return_value"] = agent.return_value("pay")
                try:
                    agent.status()
                except sds.InvalidArgument as e:
                    result["status"] = str(e)
                try:
                    pay()
                except sds.Downgraded:
                    result["guard"] = "Downgraded"
                agent.close()  # a no-op here
                with fake.connect(client) as own:
                    wait_for("the child's pull", lambda: own.status().last_pull_ok)
                    wait_for("the child's agent thread", lambda: agent_threads() == 1)
                    result["own"] = [own.running, pay()]
                result["after"] = agent_threads()
            finally:
                os.write(write, json.dumps(result).encode())
                os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            result = json.loads(pipe.read())
        assert os.waitpid(pid, 0)[1] == 0
        assert result == {
            "running": False,
            "return_value": None,
            "status": f"this console agent belongs to process {os.getpid()}: a fork child inherits "
            "no console agent; call connect_admin in the child",
            "guard": "Downgraded",
            "own": [True, "busy"],
            "after": 0,
        }
        # The parent's agent is untouched.
        assert agent.running and agent.status().last_pull_ok and pay() == "busy"


@pytest.fixture
def tls(tmp_path: pathlib.Path) -> Tls:
    return Tls.generate(str(tmp_path / "pki"))


def test_over_https_with_the_ca_file_a_change_is_in_force_within_one_pull_interval(tls: Tls) -> None:
    with fake_console(tls) as fake:
        assert fake.url.startswith("https://127.0.0.1:")
        fake.app([{"point": "orders", "visitThreshold": 5}])
        client = sds.Client(64)
        with fake.connect(client, tls_ca_file=pathlib.Path(tls.ca)) as agent:
            wait_for("the first set", lambda: agent.status().version == 1)
            assert visit_threshold(client, "orders") == 5
            assert fake.app([{"point": "orders", "visitThreshold": 7}]) == 2
            # One interval (0.1 s), plus what this loaded machine adds.
            took = wait_for("the change", lambda: changed(client, agent, 7, 2), within=1.0)
            assert took < 1.0
            status = agent.status()
            assert (status.version, status.last_pull_ok, status.pull_failures) == (2, True, 0)
            assert (status.server, status.last_error) == (fake.url, "")
        assert fake.requests()["pulls"][0]["request"]["appName"] == "a"


def test_an_https_console_with_a_certificate_of_another_ca_fails_and_the_strategy_stays(
    tls: Tls, tmp_path: pathlib.Path, admin_log: Log
) -> None:
    theirs = Tls.generate(str(tmp_path / "theirs"))
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    client = sds.Client(64)
    with client.connect_admin(url, "g", "a", pull_interval=0.1, tls_ca_file=tls.ca, **IDENTITY) as agent:
        with fake_console(tls, port) as fake:
            fake.app([{"point": "orders", "visitThreshold": 5}])
            wait_for("the first set", lambda: agent.status().version == 1)
            assert visit_threshold(client, "orders") == 5
        # The same address now shows a certificate of another CA.
        with fake_console(theirs, port) as other:
            other.app([{"point": "orders", "visitThreshold": 50}])
            wait_for("a pull refused by the certificate check", lambda: "UnknownIssuer" in agent.status().last_error)
            status = agent.status()
            assert status.last_error.startswith(f"SDS strategy pull failed: {url}/sds/heartbeat/pullstrategy: ")
            assert (status.last_pull_ok, status.version) == (False, 1)
            assert visit_threshold(client, "orders") == 5
            # The refused console never saw a request.
            assert other.requests()["pulls"] == []
    assert admin_log(logging.WARNING, "UnknownIssuer")


def test_bad_tls_settings_raise_invalid_argument_with_the_agents_reason(tls: Tls, tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing.pem"
    refusals = [
        ("https://127.0.0.1:1", missing, f"tls_ca_file {missing}: No such file"),
        ("https://127.0.0.1:1", tls.server_key, f"tls_ca_file {tls.server_key}: holds no PEM certificate"),
        (
            "http://127.0.0.1:1,http://127.0.0.1:2",
            tls.ca,
            "tls_ca_file is given but no server is an https:// URL (the CA file only verifies HTTPS servers)",
        ),
    ]
    for servers, ca_file, reason in refusals:
        assert refusal(servers, tls_ca_file=ca_file).startswith(reason)


@pytest.mark.parametrize(
    "ca_file, message",
    [
        (5, "tls_ca_file must be a path (text) or null, not 5"),
        (b"/tmp/ca.pem", "tls_ca_file must be a path (text) or null, not a value of type bytes"),
    ],
)
def test_a_ca_file_of_the_wrong_type_is_an_invalid_argument(ca_file: Any, message: str) -> None:
    assert refusal("https://127.0.0.1:1", tls_ca_file=ca_file) == message


def test_mutual_tls_pulls_the_set_with_the_client_certificate_and_fails_without(tls: Tls) -> None:
    with fake_console(tls.requiring_client_certs()) as fake:
        fake.app([{"point": "orders", "visitThreshold": 5}])
        without = sds.Client(64)
        with fake.connect(without, tls_ca_file=tls.ca) as agent:
            wait_for("a pull refused at the handshake", lambda: agent.status().pull_failures >= 1)
            status = agent.status()
            assert (status.last_pull_ok, status.version) == (False, 0)
            assert status.last_error.startswith(f"SDS strategy pull failed: {fake.url}/sds/heartbeat/pullstrategy: ")
            assert without.strategy("orders") is None
        # The console dropped it at the handshake: no request reached it.
        assert fake.requests()["pulls"] == []

        client = sds.Client(64)
        files = {"tls_cert_file": pathlib.Path(tls.client_cert), "tls_key_file": tls.client_key}
        with fake.connect(client, tls_ca_file=tls.ca, **files) as agent:
            wait_for("the set", lambda: changed(client, agent, 5, 1))
            status = agent.status()
            assert (status.last_pull_ok, status.pull_failures, status.last_error) == (True, 0, "")
        assert fake.requests()["pulls"][0]["request"]["version"] == 0


def test_bad_client_certificate_settings_raise_invalid_argument_with_the_agents_reason(tls: Tls) -> None:
    https = "https://127.0.0.1:1"
    together = "tls_cert_file and tls_key_file go together (mutual TLS)"
    refusals: List[Tuple[str, Dict[str, Any], str]] = [
        (https, {"tls_cert_file": tls.client_cert}, together),
        (https, {"tls_key_file": pathlib.Path(tls.client_key)}, together),
        (
            "http://127.0.0.1:1",
            {"tls_cert_file": tls.client_cert, "tls_key_file": tls.client_key},
            "tls_cert_file is given but no server is an https:// URL "
            "(the client certificate is only shown to HTTPS servers)",
        ),
        (
            https,
            {"tls_cert_file": tls.client_cert, "tls_key_file": tls.server_key},
            f"tls_cert_file {tls.client_cert} and tls_key_file {tls.server_key}: ",
        ),
        (
            https,
            {"tls_cert_file": tls.client_cert, "tls_key_file": tls.client_cert},
            f"tls_key_file {tls.client_cert}: holds no PEM private key",
        ),
    ]
    for servers, files, reason in refusals:
        ca_file = tls.ca if servers.startswith("https://") else None
        assert refusal(servers, tls_ca_file=ca_file, **files).startswith(reason)


@pytest.mark.parametrize(
    "files, message",
    [
        ({"tls_cert_file": 5}, "tls_cert_file must be a path (text) or null, not 5"),
        ({"tls_key_file": b"/tmp/key.pem"}, "tls_key_file must be a path (text) or null, not a value of type bytes"),
    ],
)
def test_a_certificate_or_key_file_of_the_wrong_type_is_an_invalid_argument(
    files: Dict[str, Any], message: str
) -> None:
    assert refusal("https://127.0.0.1:1", **files) == message
