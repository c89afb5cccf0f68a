"""Cluster points (``Client.connect_cluster``) against a real redis-server
started per test on a free loopback port (``redis_server.py``), some only
speaking TLS with a PKI made per test (``tools/test-pki.sh``)."""

from __future__ import annotations

import gc
import os
import pathlib
import signal
import socket
import statistics
import subprocess
import sys
import textwrap
import time
from typing import Iterator, List, Tuple

import pytest

import sds
from helpers import named_threads, wait_for
from redis_server import RedisServer, Tls, redis_server

# Short periods so a test waits little for the thread's syncs.
SYNC = 0.02


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


def cluster_threads() -> int:
    return named_threads("sds-cluster")


def admit(client: sds.Client, point: str, tries: int, now_ms: int) -> int:
    admitted = 0
    for _ in range(tries):
        entry = client.enter(point, now_ms=now_ms)
        admitted += not entry.downgraded
        entry.exit()
    return admitted


def a_then_b(a: sds.Client, sync_a: sds.ClusterSync, b: sds.Client, sync_b: sds.ClusterSync,
             first: int, then: int) -> Tuple[int, int, int]:
    """At one `now`, on "pay": `first` requests on A, a sync of A then of
    B, `then` requests on B, a sync of B: `now` and the requests admitted
    on A and on B."""
    now = sds.now_ms()
    admitted_a = admit(a, "pay", first, now)
    sync_a.sync_now()
    sync_b.sync_now()
    admitted_b = admit(b, "pay", then, now)
    sync_b.sync_now()
    return now, admitted_a, admitted_b


def client_with(point_thresholds: dict[str, int]) -> sds.Client:
    client = sds.Client(64)
    for point, threshold in point_thresholds.items():
        client.set_strategy(point, sds.Strategy(visit_threshold=threshold))
    return client


def test_two_clients_share_a_cluster_point_and_a_local_point_stays_per_client(redis: RedisServer) -> None:
    T = 10
    a, b = client_with({"pay": T, "local": T}), client_with({"pay": T, "local": T})
    with a.connect_cluster(redis.url, ["pay"], sync_interval=SYNC) as sync_a, b.connect_cluster(
        redis.url, points=["pay"], sync_interval=SYNC
    ) as sync_b:
        now = sds.now_ms()
        admitted_a = admit(a, "pay", 6, now)
        # The threads alone carry the counts: a sync of A after its visits,
        # then one of B after that.
        pushed = sync_a.status().syncs
        wait_for("a sync of A", lambda: sync_a.status().syncs >= pushed + 2)
        read = sync_b.status().syncs
        wait_for("a sync of B", lambda: sync_b.status().syncs >= read + 2)
        admitted_b = admit(b, "pay", T, now)
        # Syncs finished between the two bursts: the bound is T itself.
        print(f"T={T}, bound={T}, admitted: A {admitted_a} + B {admitted_b} = {admitted_a + admitted_b}")
        assert (admitted_a, admitted_b) == (6, 4)
        assert (admit(a, "local", T, now), admit(b, "local", T, now)) == (T, T)


def test_sync_now_makes_one_clients_admissions_count_against_the_other(redis: RedisServer) -> None:
    T = 7
    a, b = client_with({"pay": T}), client_with({"pay": T})
    # A long period: only sync_now moves counts during the test.
    with a.connect_cluster(redis.url, ["pay"], sync_interval=60) as sync_a, b.connect_cluster(
        [redis.url], ["pay"], sync_interval=60
    ) as sync_b:
        now, *admitted = a_then_b(a, sync_a, b, sync_b, 5, T)
        assert admitted == [5, 2]
        sync_a.sync_now()
        assert admit(a, "pay", T, now) == 0


def test_status_reports_the_syncs(redis: RedisServer) -> None:
    client = sds.Client(64)
    before = sds.now_ms()
    with client.connect_cluster(redis.url, ["pay", "search"], sync_interval=SYNC) as sync:
        wait_for("two syncs", lambda: sync.status().syncs >= 2)
        status = sync.status()
        assert isinstance(status, sds.ClusterStatus)
        assert status.connected and status.syncing
        assert before <= status.last_sync_ms <= sds.now_ms()
        assert 0 <= status.lag_ms < 5_000
        assert status.rtt_us > 0
        assert status.failures == 0
        assert status.round_trips >= status.syncs
        # Each sync reads the 11 seconds of each point (HMGET).
        assert status.commands >= 2 * 11 * status.syncs
        assert status.last_error is None
        assert (status.points, status.points_failing) == (2, 0)
        assert status._fields == (
            "connected", "syncing", "last_sync_ms", "lag_ms", "rtt_us", "syncs", "failures",
            "round_trips", "commands", "last_error", "points", "points_failing",
        )
        assert repr(sync) == "<sds.ClusterSync running>"
    assert repr(sync) == "<sds.ClusterSync closed>"


def enter_exit_seconds(client: sds.Client, point: str, calls: int) -> List[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        client.enter(point).exit()
        times.append(time.perf_counter() - start)
    return times


def test_redis_stopped_mid_run_delays_nothing_is_reported_and_no_count_is_lost(redis: RedisServer) -> None:
    client = client_with({"pay": 1_000_000})
    with client.connect_cluster(redis.url, ["pay"], sync_interval=SYNC, timeout=0.5) as sync:
        wait_for("a sync", lambda: sync.status().connected)
        up = enter_exit_seconds(client, "pay", 2_000)

        redis.stop()
        wait_for("disconnected", lambda: not sync.status().connected)
        status = sync.status()
        assert status.last_error, status
        assert status.failures > 0
        wait_for("the lag to grow", lambda: sync.status().lag_ms > 100)
        down = enter_exit_seconds(client, "pay", 2_000)
        print(f"enter + exit: median {statistics.median(up) * 1e6:.1f} us with Redis up, "
              f"{statistics.median(down) * 1e6:.1f} us with Redis down; max down {max(down) * 1e6:.0f} us")
        # The syncer's failed connections never touch enter/exit: no call
        # waits anywhere near a round trip's timeout (0.5 s).
        assert max(down) < 0.05
        assert statistics.median(down) < 3 * statistics.median(up) + 20e-6

        redis.start()
        # The backoff doubles from sync_interval while Redis is down.
        wait_for("reconnected", lambda: sync.status().connected, within=10)
        assert sync.status().last_error is None
        now = sds.now_ms()
        visits = client.stats("pay", now_ms=now)["visit"]
        assert visits >= 4_000
        sync.sync_now()

    # Redis restarted empty; every visit still in the window was pushed again:
    # a new instance sees all of them.
    other = client_with({"pay": visits + 5})
    with other.connect_cluster(redis.url, ["pay"], sync_interval=60) as sync_other:
        sync_other.sync_now()
        assert admit(other, "pay", 10, now) == 5


def test_a_server_that_never_answers_delays_neither_enter_nor_close(redis: RedisServer) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}"
        client = client_with({"pay": 1_000_000})
        sync = client.connect_cluster(url, ["pay"], sync_interval=SYNC, timeout=1.0)
        times = enter_exit_seconds(client, "pay", 20_000)
        assert max(times) < 0.05, max(times)
        assert sync.status().connected is False
        started = time.monotonic()
        sync.close()
        # At most one round trip's timeout.
        assert time.monotonic() - started < 2.5
        wait_for("the sync thread gone", lambda: cluster_threads() == 0)


def test_close_and_sync_now_keep_their_bound_with_redis_paused(redis: RedisServer) -> None:
    points = [f"p{i}" for i in range(20)]
    client = client_with({p: 1_000_000 for p in points})
    sync = client.connect_cluster(redis.url, points, sync_interval=0.05, timeout=1.0)
    wait_for("a first sync", lambda: sync.status().syncs > 0)
    assert redis.process is not None
    os.kill(redis.process.pid, signal.SIGSTOP)
    try:
        noticed = wait_for("a timed-out sync", lambda: not sync.status().connected, within=3.0)
        assert "timed out" in (sync.status().last_error or ""), sync.status()
        started = time.monotonic()
        with pytest.raises(sds.Unavailable, match="timed out"):
            sync.sync_now()
        sync_now_s = time.monotonic() - started
        time.sleep(0.3)  # the thread's round trip waits on the paused server
        started = time.monotonic()
        sync.close()
        close_s = time.monotonic() - started
        print(f"Redis paused: disconnected after {noticed:.3f} s, sync_now {sync_now_s:.3f} s, close {close_s:.4f} s")
        assert noticed < 1.5, noticed
        assert sync_now_s < 1.2, sync_now_s
        assert close_s < 0.5, close_s
        wait_for("the sync thread gone", lambda: cluster_threads() == 0)
    finally:
        os.kill(redis.process.pid, signal.SIGCONT)


@pytest.mark.parametrize(
    "urls, points, options, message",
    [
        ([], ["pay"], {}, "invalid cluster configuration: urls: at least one Redis URL is needed"),
        ("http://127.0.0.1:6379", ["pay"], {}, "invalid cluster configuration: urls[0] is not a Redis URL: "),
        ("redis://127.0.0.1:1", ["pay"], {"sync_interval": 0},
         "invalid cluster configuration: sync_ms and timeout_ms must be at least 1"),
        ("redis://127.0.0.1:1", ["pay"], {"timeout": 0.0001},
         "invalid cluster configuration: sync_ms and timeout_ms must be at least 1"),
        ("redis://127.0.0.1:1", ["x" * 257], {}, "invalid cluster configuration: point name \"xxx"),
        ("redis://127.0.0.1:1", [""], {}, 'invalid cluster configuration: point name "" must be 1 to 256 bytes'),
        ("redis://127.0.0.1:1", ["pay"], {"key_prefix": "a{b"}, "invalid cluster configuration: key_prefix"),
        ("redis://127.0.0.1:1", ["pay", "a", "pay"], {},
         'invalid cluster configuration: points[2] "pay" is listed twice (also points[0])'),
    ],
)
def test_a_bad_config_raises_invalid_argument_with_the_crates_message(
    urls: object, points: List[str], options: dict[str, object], message: str
) -> None:
    client = sds.Client(64)
    with pytest.raises(sds.InvalidArgument) as raised:
        client.connect_cluster(urls, points, **options)  # type: ignore[arg-type]
    assert str(raised.value).startswith(message), str(raised.value)
    assert raised.value.code == "SDS_INVALID_ARGUMENT"
    wait_for("the sync thread gone", lambda: cluster_threads() == 0)
    # Nothing was started: a good config starts.
    client.connect_cluster("redis://127.0.0.1:1", ["pay"]).close()


@pytest.mark.parametrize(
    "urls, points, options, message",
    [
        (b"redis://127.0.0.1:1", ["pay"], {}, "urls must be text or a list of text, not a value of type bytes"),
        ("redis://127.0.0.1:1", 5, {}, "points must be text or a list of text, not 5"),
        ("redis://127.0.0.1:1", ("pay", 5), {}, "points[1] must be text, not 5"),
        ("redis://127.0.0.1:1", iter(["pay"]), {}, "points must be text or a list of text, not a value of type list_iterator"),
        ("redis://127.0.0.1:1", ["pay"], {"redis_cluster": 1}, "redis_cluster must be true or false, not 1"),
        ("redis://127.0.0.1:1", ["pay"], {"sync_interval": "1"},
         'sync_interval must be a finite number of seconds, at least 0, not the text "1"'),
        ("redis://127.0.0.1:1", ["pay"], {"key_prefix": 5}, "key_prefix must be text or null, not 5"),
        ("rediss://127.0.0.1:1", ["pay"], {"tls_ca_file": 5}, "tls_ca_file must be a path (text) or null, not 5"),
        ("rediss://127.0.0.1:1", ["pay"], {"tls_cert_file": b"/tmp/c.pem", "tls_key_file": "/tmp/k.pem"},
         "tls_cert_file must be a path (text) or null, not a value of type bytes"),
        ("rediss://127.0.0.1:1", ["pay"], {"tls_cert_file": "/tmp/c.pem", "tls_key_file": ["/tmp/k.pem"]},
         "tls_key_file must be a path (text) or null, not a list"),
    ],
)
def test_wrong_types_raise_invalid_argument_with_the_crates_message(
    urls: object, points: object, options: dict[str, object], message: str
) -> None:
    with pytest.raises(sds.InvalidArgument) as raised:
        sds.Client(64).connect_cluster(urls, points, **options)  # type: ignore[arg-type]
    assert str(raised.value) == f"invalid cluster configuration: {message}"
    assert isinstance(raised.value, TypeError)


def test_none_is_the_default() -> None:
    with sds.Client(64).connect_cluster("redis://127.0.0.1:1", ["pay"], key_prefix=None, timeout=None) as sync:
        assert sync.running


def test_a_table_without_room_raises_table_full() -> None:
    client = sds.Client(1)
    client.point("taken")
    with pytest.raises(sds.TableFull):
        client.connect_cluster("redis://127.0.0.1:1", ["pay"])


def test_close_is_idempotent_leaves_no_thread_keeps_the_last_status_and_refuses_calls(redis: RedisServer) -> None:
    client = sds.Client(64)
    sync = client.connect_cluster(redis.url, ["pay"], sync_interval=SYNC)
    assert sync.running
    wait_for("the thread named", lambda: cluster_threads() == 1)
    with pytest.raises(sds.InvalidArgument, match="already has a cluster sync running"):
        client.connect_cluster(redis.url, ["other"])
    wait_for("a sync", lambda: sync.status().syncs > 0)
    sync.close()
    sync.close()
    assert not sync.running
    wait_for("the sync thread gone", lambda: cluster_threads() == 0)
    # status() gives the last state; it stays as it was at the join.
    last = sync.status()
    assert last.connected and last.syncs > 0 and last.points == 1
    time.sleep(3 * SYNC)
    assert sync.status() == last
    for call in (sync.sync_now, lambda: sync.enter_exact("pay")):
        with pytest.raises(sds.Closed, match="^this cluster sync is closed$") as err:
            call()
        assert isinstance(err.value, ValueError) and err.value.code == "SDS_CLOSED"
    # The client may start another one.
    with client.connect_cluster(redis.url, ["pay"]) as again:
        assert again.running
        wait_for("the thread named", lambda: cluster_threads() == 1)
    wait_for("the sync thread gone", lambda: cluster_threads() == 0)


def test_a_client_collected_with_its_sync_running_stops_it(redis: RedisServer) -> None:
    client = sds.Client(64)
    client.connect_cluster(redis.url, ["pay"], sync_interval=SYNC)
    # The thread names itself once it runs.
    wait_for("the thread named", lambda: cluster_threads() == 1)
    del client
    gc.collect()
    wait_for("the sync thread gone", lambda: cluster_threads() == 0)


def test_sync_now_raises_unavailable_a_connection_error_while_redis_is_unreachable() -> None:
    with sds.Client(64).connect_cluster("redis://127.0.0.1:1", ["pay"], timeout=0.5) as sync:
        with pytest.raises(sds.Unavailable, match="^redis: ") as err:
            sync.sync_now()
    assert isinstance(err.value, ConnectionError)
    assert (err.value.code, err.value.number) == ("SDS_UNAVAILABLE", 16)


def run_child(script: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=timeout
    )


def test_a_process_ending_with_a_sync_running_exits_normally_and_promptly(redis: RedisServer) -> None:
    started = time.monotonic()
    child = run_child(f"""
        import sds
        client = sds.Client(64)
        sync = client.connect_cluster({redis.url!r}, ["pay"], sync_interval=0.01)
        while sync.status().syncs < 3:
            pass
        client.enter("pay").exit()
        print("synced")
    """)
    took = time.monotonic() - started
    assert (child.returncode, child.stdout, child.stderr) == (0, "synced\n", "")
    assert took < 10, took


def test_a_fork_child_inherits_no_sync_and_connects_its_own(redis: RedisServer) -> None:
    child = run_child(f"""
        import os, sds

        def admitted(tries):
            now = sds.now_ms()
            count = 0
            for _ in range(tries):
                entry = client.enter("pay", now_ms=now)
                count += not entry.downgraded
                entry.exit()
            return count

        client = sds.Client(64)
        client.set_strategy("pay", sds.Strategy(visit_threshold=3))
        sync = client.connect_cluster({redis.url!r}, ["pay"], sync_interval=60)
        pid = os.fork()
        if pid == 0:
            try:
                assert not sync.running
                try:
                    sync.status()
                    raise SystemExit("status in the child")
                except sds.InvalidArgument as e:
                    assert "a fork child inherits no cluster sync" in str(e), e
                sync.close()
                own = client.connect_cluster({redis.url!r}, ["pay"], sync_interval=60)
                assert admitted(1) == 1
                own.sync_now()
                own.close()
            except BaseException as e:
                print("child:", repr(e), flush=True)
                os._exit(1)
            os._exit(0)
        _, code = os.waitpid(pid, 0)
        assert code == 0, code
        assert sync.running
        sync.sync_now()
        print(admitted(3))
    """)
    # The child's one visit, pushed by its own sync, counts here.
    assert child.returncode == 0, child.stdout + child.stderr
    assert child.stdout == "2\n"


def test_exact_mode_admits_exactly_the_threshold_across_two_clients(redis: RedisServer) -> None:
    T = 5
    a, b = client_with({"ex": T}), client_with({"ex": T})
    with a.connect_cluster(redis.url, ["ex"], sync_interval=SYNC) as sync_a, b.connect_cluster(
        redis.url, ["ex"], sync_interval=SYNC
    ) as sync_b:
        decisions = []
        now = sds.now_ms()
        for _ in range(6):
            decisions.append(sync_a.enter_exact("ex", now_ms=now))
            decisions.append(sync_b.enter_exact("ex"))
        admitted = sum(d.admitted for d in decisions)
        print(f"exact mode: T={T}, admitted {admitted} of {len(decisions)}")
        assert admitted == T
        assert all(d.exact for d in decisions)
        assert isinstance(decisions[0], sds.ExactDecision)
        assert decisions[0] == (True, None, True)
        assert decisions[-1] == (False, "VISIT", True)
        with pytest.raises(sds.InvalidArgument, match="is not a cluster point of this cluster"):
            sync_a.enter_exact("local")


def test_exact_mode_without_redis_decides_locally() -> None:
    client = client_with({"ex": 2})
    with client.connect_cluster("redis://127.0.0.1:1", ["ex"], timeout=0.5) as sync:
        now = sds.now_ms()
        decisions = [sync.enter_exact("ex", now_ms=now) for _ in range(3)]
    assert decisions == [(True, None, False), (True, None, False), (False, "VISIT", False)]


def test_the_interpreter_exits_with_a_sync_blocked_on_a_silent_server() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        started = time.monotonic()
        child = run_child(f"""
            import sds
            sync = sds.Client(64).connect_cluster("redis://127.0.0.1:{silent.getsockname()[1]}", ["pay"],
                                                  timeout=1.0)
            print(sync.running)
        """)
        took = time.monotonic() - started
    assert (child.returncode, child.stdout, child.stderr) == (0, "True\n", "")
    # The atexit hook waits at most one round trip's timeout.
    assert took < 5, took



@pytest.fixture
def tls(tmp_path: pathlib.Path) -> Tls:
    return Tls.generate(str(tmp_path / "pki"))


def redis_count(redis: RedisServer, point: str, now_ms: int, field: str = "v") -> int:
    """A field of a point's count in Redis for the second of `now_ms` (`v`
    visits, `d` downgraded); 0 when absent."""
    return int(redis.cli("HGET", f"{{sds:{point}}}:{now_ms // 1000}", field) or 0)


def test_two_clients_share_a_limit_over_tls_and_exact_mode_decides_in_redis(tls: Tls) -> None:
    T = 10
    a, b = client_with({"pay": T}), client_with({"pay": T})
    with redis_server(tls) as redis:
        assert redis.url.startswith("rediss://")
        # Only sync_now moves counts; the CA as a str and as a Path.
        with a.connect_cluster(redis.url, ["pay"], sync_interval=60, timeout=2, tls_ca_file=tls.ca) as sync_a, \
                b.connect_cluster(redis.url, ["pay"], sync_interval=60, timeout=2,
                                  tls_ca_file=pathlib.Path(tls.ca)) as sync_b:
            now, *admitted = a_then_b(a, sync_a, b, sync_b, 6, T)
            assert admitted == [6, 4]
            assert (redis_count(redis, "pay", now), redis_count(redis, "pay", now, "d")) == (16, 6)
            status = sync_b.status()
            assert status.connected and status.last_error is None, status
            assert sync_a.enter_exact("pay", now_ms=now) == (False, "VISIT", True)


def test_a_server_of_another_ca_is_refused_and_the_local_limit_holds(tmp_path: pathlib.Path) -> None:
    server_pki = Tls.generate(str(tmp_path / "server"))
    other = Tls.generate(str(tmp_path / "other"))
    client = client_with({"pay": 10})
    with redis_server(server_pki) as redis, client.connect_cluster(
        redis.url, ["pay"], sync_interval=60, timeout=2, tls_ca_file=other.ca
    ) as sync:
        with pytest.raises(ConnectionError, match="UnknownIssuer"):
            sync.sync_now()
        status = sync.status()
        assert not status.connected and status.syncs == 0, status
        assert status.last_error is not None and "UnknownIssuer" in status.last_error, status
        now = sds.now_ms()
        assert admit(client, "pay", 12, now) == 10
        assert sync.enter_exact("pay", now_ms=now) == (False, "VISIT", False)
        assert redis_count(redis, "pay", now) == 0


def test_mutual_tls_syncs_with_the_client_certificate_and_not_without(tls: Tls) -> None:
    with redis_server(tls.requiring_client_certs()) as redis:
        a = client_with({"pay": 10})
        with a.connect_cluster(redis.url, ["pay"], sync_interval=60, timeout=2, tls_ca_file=tls.ca,
                               tls_cert_file=tls.client_cert, tls_key_file=pathlib.Path(tls.client_key)) as sync:
            now = sds.now_ms()
            assert admit(a, "pay", 3, now) == 3
            sync.sync_now()
            assert redis_count(redis, "pay", now) == 3
            assert sync.status().connected

        b = client_with({"pay": 10})
        with b.connect_cluster(redis.url, ["pay"], sync_interval=60, timeout=2, tls_ca_file=tls.ca) as sync:
            with pytest.raises(ConnectionError):
                sync.sync_now()
            status = sync.status()
            assert not status.connected and status.syncs == 0 and status.last_error, status
            assert admit(b, "pay", 10, sds.now_ms()) == 10


def test_bad_tls_files_raise_invalid_argument_with_the_crates_message(tls: Tls, tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing-ca.pem"
    client = sds.Client(64)
    cases: List[tuple[str, dict[str, object], str]] = [
        ("rediss://127.0.0.1:1", {"tls_ca_file": missing},
         f"invalid cluster configuration: tls_ca_file {missing}: No such file"),
        ("redis://127.0.0.1:1", {"tls_ca_file": tls.ca},
         "invalid cluster configuration: urls[0]: TLS files are given, so every URL must be rediss://"),
        ("rediss://127.0.0.1:1", {"tls_ca_file": tls.ca, "tls_cert_file": tls.client_cert},
         "invalid cluster configuration: tls_cert_file and tls_key_file go together (mutual TLS)"),
    ]
    for url, options, message in cases:
        with pytest.raises(sds.InvalidArgument) as raised:
            client.connect_cluster(url, ["pay"], **options)  # type: ignore[arg-type]
        assert str(raised.value).startswith(message), str(raised.value)
        assert raised.value.code == "SDS_INVALID_ARGUMENT"
    # Nothing was started: good files start.
    client.connect_cluster("rediss://127.0.0.1:1", ["pay"], tls_ca_file=tls.ca, tls_cert_file=tls.client_cert,
                           tls_key_file=tls.client_key).close()
