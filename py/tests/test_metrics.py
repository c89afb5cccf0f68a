"""Metrics (issue 26): ``Client.metrics()`` and ``Client.prometheus_text()``
count exactly what the points, keyed limits and services did (times
injected), a shared table's counts are the host's, and ``sds.metrics``
(prometheus_client) and ``sds.otel`` (OpenTelemetry) give the same values.
The real Prometheus server scraping gunicorn workers:
``test_metrics_prometheus.py``."""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_prometheus

import sds
import sds.limits
from fake_admin import FakeConsole
from helpers import wait_for
from redis_server import free_port
from sds.metrics import SdsCollector

# Long past: the entries' seconds have all left the points' windows when
# the metrics are read at the wall clock, so every gauge of a cycle is 0
# whenever the test runs.
T = 1_700_000_000_000

Values = Dict[str, Dict[Tuple[str, ...], float]]


def values(client: sds.Client, now_ms: Any = None) -> Values:
    """Family name -> label values -> value."""
    return {name: dict(samples) for name, _, _, _, samples in client.metrics(now_ms=now_ms)}


def families(client: sds.Client) -> Dict[str, Tuple[str, str, Tuple[str, ...]]]:
    """Family name -> (kind, help, label names)."""
    return {name: (kind, doc, labels) for name, kind, doc, labels, _ in client.metrics()}


def unique(prefix: str) -> str:
    """A limit name no other test's limit (alive until collected) has."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_every_request_is_counted_once_per_point_and_every_downgrade_by_its_reason() -> None:
    client = sds.Client(16)
    client.set_strategy("visits", sds.Strategy(visit_threshold=3))
    client.set_strategy("permits", sds.Strategy(concurrent_threshold=2))
    client.set_strategy("slow", sds.Strategy(timeout_threshold=100))
    client.set_strategy("drill", sds.Strategy(pressure_test_downgrade=1))
    for _ in range(10):
        client.enter("visits", now_ms=T).exit()
    held = [client.enter("permits", now_ms=T + 1000) for _ in range(3)]
    assert [e.downgraded for e in held] == [False, False, True]
    client.enter("slow", now_ms=T).exit(now_ms=T + 500)
    client.enter("slow", now_ms=T).exit(now_ms=T + 50)
    with pytest.raises(ValueError):
        with client.enter("slow", now_ms=T):
            raise ValueError
    with client.enter("drill", now_ms=T, pressure_test=True) as drilled:
        assert drilled.reason == "PRESSURE_TEST"

    # While two permits are held, at their second.
    during = values(client, T + 1500)
    assert during["sds_point_in_flight"][("private", "permits")] == 2
    for entry in held:
        entry.exit(now_ms=T + 2000)
    v = values(client, T + 15_000)
    assert v["sds_point_requests"] == {
        ("private", "visits"): 10,
        ("private", "permits"): 3,
        ("private", "slow"): 3,
        ("private", "drill"): 1,
    }
    downgrades = {labels: n for labels, n in v["sds_point_downgrades"].items() if n}
    assert downgrades == {
        ("private", "visits", "VISIT"): 7,
        ("private", "permits", "CONCURRENT"): 1,
        ("private", "drill", "PRESSURE_TEST"): 1,
    }
    # Every reason of every point has its series, from its first request.
    assert len(v["sds_point_downgrades"]) == 4 * len(sds.REASONS)
    assert {labels[2] for labels in v["sds_point_downgrades"]} == set(sds.REASONS)
    assert v["sds_point_exceptions"][("private", "slow")] == 1
    assert v["sds_point_timeouts"][("private", "slow")] == 1
    assert v["sds_point_in_flight"][("private", "permits")] == 0
    # The last whole 10 s cycle (T + 0 .. T + 10 s) held two permits at once.
    assert v["sds_point_in_flight_max"][("private", "permits")] == 2
    assert v["sds_table_points"] == {("private",): 4}
    assert v["sds_table_points_capacity"] == {("private",): client.capacity}


def test_the_families_are_the_crate_s_with_their_kinds_help_and_labels() -> None:
    f = families(sds.Client(4))
    assert f["sds_point_requests"][0] == "counter"
    assert f["sds_point_downgrades"][2] == ("table", "point", "reason")
    assert f["sds_keyed_decisions"][2] == ("limit", "outcome")
    assert f["sds_agent_up"][0] == "gauge"
    assert all(name.startswith("sds_") and not name.endswith("_total") for name in f)
    assert all(doc.endswith(".") for _, doc, _ in f.values())
    # Families with nothing to show (no agent, no sync) are listed empty.
    v = values(sds.Client(4))
    assert v["sds_agent_up"] == {} and v["sds_cluster_up"] == {}
    assert v["sds_point_requests"] == {}
    assert v["sds_table_points"] == {("private",): 0}


def test_a_shared_table_shows_the_host_s_counts_in_every_client_and_process(tmp_path: Path) -> None:
    path = tmp_path / "orders.sds"
    a = sds.Client.shared(path, 32)
    b = sds.Client.shared(path, 32)
    a.set_strategy("pay", sds.Strategy(visit_threshold=4))
    for _ in range(3):
        a.enter("pay", now_ms=T).exit()
    for _ in range(3):
        b.enter("pay", now_ms=T).exit()
    script = textwrap.dedent(
        f"""
        import sds
        client = sds.Client.shared({str(path)!r}, 32)
        for _ in range(5):
            client.enter("pay", now_ms={T}).exit()
        print(client.prometheus_text(), end="")
        """
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    for client in (a, b):
        v = values(client)
        assert v["sds_point_requests"] == {("orders.sds", "pay"): 11}
        assert v["sds_point_downgrades"][("orders.sds", "pay", "VISIT")] == 7
        assert v["sds_table_points"] == {("orders.sds",): 1}
    # The child saw the same host-wide counts, named the same.
    assert 'sds_point_requests_total{table="orders.sds",point="pay"} 11\n' in child.stdout
    assert 'sds_point_downgrades_total{table="orders.sds",point="pay",reason="VISIT"} 7\n' in child.stdout
    assert sample_values(child.stdout)["sds_point_requests"] == sample_values(a.prometheus_text())["sds_point_requests"]


def test_keyed_limits_count_their_decisions_under_their_label(tmp_path: Path) -> None:
    gc.collect()
    name = unique("login")
    login = sds.KeyedLimit({"kind": "rate", "limit": 2, "period_ms": 60_000}, 64, name=name)
    assert login.name == name
    for _ in range(5):
        login.decide("alice", now_ms=T)
    login.decide("bob", now_ms=T)
    unnamed = sds.KeyedLimit({"kind": "inFlight", "limit": 1}, 8)
    assert unnamed.name.startswith("private-")
    assert unnamed.decide("k").admitted and not unnamed.decide("k").admitted
    shared = sds.KeyedLimit.shared(tmp_path / "api.keys", {"kind": "fixedWindow", "limit": 1, "period_ms": 1000})
    named_shared = sds.KeyedLimit.shared(
        tmp_path / "web.keys", {"kind": "fixedWindow", "limit": 1, "period_ms": 1000}, name=unique("web")
    )
    assert shared.name == "api.keys" and named_shared.name.startswith("web-")
    shared.decide("x", now_ms=T)

    v = values(sds.Client(4))
    decisions = v["sds_keyed_decisions"]
    assert decisions[(name, "admitted")] == 3 and decisions[(name, "refused")] == 3
    assert decisions[(unnamed.name, "admitted")] == 1 and decisions[(unnamed.name, "refused")] == 1
    assert decisions[("api.keys", "admitted")] == 1 and decisions[("api.keys", "refused")] == 0
    assert decisions[(named_shared.name, "admitted")] == 0
    assert v["sds_keyed_keys"][(name,)] == 2
    assert v["sds_keyed_keys_capacity"][(name,)] == login.capacity == login.stats().capacity
    assert v["sds_keyed_evictions"][(name,)] == 0 and v["sds_keyed_lossy_evictions"][(name,)] == 0

    # A limit collected leaves the metrics by itself.
    del login
    gc.collect()
    v = values(sds.Client(4))
    assert (name, "admitted") not in v["sds_keyed_decisions"]
    assert (unnamed.name, "admitted") in v["sds_keyed_decisions"]


def test_a_shared_keyed_limit_counts_every_process_s_decisions(tmp_path: Path) -> None:
    path = tmp_path / "shared.keys"
    rule = {"kind": "rate", "limit": 3, "period_ms": 60_000}
    limit = sds.KeyedLimit.shared(path, rule, 64)
    for _ in range(2):
        limit.decide("k", now_ms=T)
    script = textwrap.dedent(
        f"""
        import sds
        limit = sds.KeyedLimit.shared({str(path)!r}, {rule!r}, 64)
        for _ in range(4):
            limit.decide("k", now_ms={T})
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    decisions = values(sds.Client(4))["sds_keyed_decisions"]
    assert decisions[("shared.keys", "admitted")] == 3
    assert decisions[("shared.keys", "refused")] == 3


def test_the_limits_storage_tables_show_as_keyed_limits(tmp_path: Path) -> None:
    from limits import RateLimitItemPerMinute
    from limits.strategies import FixedWindowRateLimiter

    storage = sds.limits.SdsStorage(f"sds://{tmp_path}/app?capacity=64")
    limiter = FixedWindowRateLimiter(storage)
    item = RateLimitItemPerMinute(2)
    assert [limiter.hit(item, "user", "1") for _ in range(3)] == [True, True, False]
    keys = values(sds.Client(4))["sds_keyed_keys"]
    tables = {label[0]: n for label, n in keys.items() if label[0].startswith("app.")}
    assert tables and sum(tables.values()) == 1, keys
    assert all((tmp_path / label).exists() for label in tables)


def test_the_agent_s_state_shows_while_it_runs_and_its_last_state_once_closed(fake: FakeConsole) -> None:
    version = fake.app([{"point": "orders", "visitThreshold": 5}])
    client = sds.Client(16)
    with fake.connect(client) as agent:
        wait_for("the first set", lambda: agent.status().version == version)
        v = values(client)
        assert v["sds_agent_up"] == {("private",): 1}
        assert v["sds_agent_last_pull_success"] == {("private",): 1}
        assert v["sds_agent_strategy_version"] == {("private",): version}
        assert v["sds_agent_pull_failures"] == {("private",): 0}
        assert v["sds_agent_last_pull_timestamp_seconds"][("private",)] > 1.7e9
    v = values(client)
    assert v["sds_agent_up"] == {("private",): 0}
    assert v["sds_agent_strategy_version"] == {("private",): version}
    # Another client's collection shows no agent: it is its client's.
    assert values(sds.Client(4))["sds_agent_up"] == {}


def test_the_cluster_sync_s_state_shows_while_it_runs_and_once_closed() -> None:
    client = sds.Client(16)
    # Nothing listens there: the sync runs, never connected.
    with client.connect_cluster(f"redis://127.0.0.1:{free_port()}", ["pay", "search"], sync_interval=0.05) as sync:
        wait_for("a failed attempt", lambda: sync.status().failures > 0)
        v = values(client)
        assert v["sds_cluster_up"] == {("private",): 1}
        assert v["sds_cluster_connected"] == {("private",): 0}
        assert v["sds_cluster_points"] == {("private",): 2}
        assert v["sds_cluster_failures"][("private",)] >= 1
        assert v["sds_cluster_syncs"] == {("private",): 0}
    assert values(client)["sds_cluster_up"] == {("private",): 0}


def sample_values(text: str, openmetrics: bool = False) -> Dict[str, Dict[Tuple[Any, ...], float]]:
    """Family name -> (sample name, labels) -> value, as prometheus_client
    parses the text."""
    parse = parse_openmetrics if openmetrics else parse_prometheus
    out: Dict[str, Dict[Tuple[Any, ...], float]] = {}
    for family in parse(text):
        samples = out.setdefault(family.name, {})
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def busy_client() -> sds.Client:
    client = sds.Client(16)
    client.set_strategy("pay", sds.Strategy(visit_threshold=2))
    for _ in range(5):
        client.enter("pay", now_ms=T).exit()
    client.enter("search", now_ms=T).exit()
    return client


def promtool(text: str) -> None:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool not found: run `make servers`")
    checked = subprocess.run([tool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0 and not checked.stdout + checked.stderr, checked.stdout + checked.stderr


def test_prometheus_client_renders_our_families_next_to_its_own_as_our_text_does() -> None:
    gc.collect()
    client = busy_client()
    registry = CollectorRegistry()
    registry.register(SdsCollector(client))
    Counter("app_orders", "Orders the app took.", registry=registry).inc(4)
    theirs = generate_latest(registry).decode()
    ours = client.prometheus_text()

    assert "app_orders_total 4.0" in theirs
    assert 'sds_point_requests_total{point="pay",table="private"} 5.0' in theirs
    assert 'sds_point_downgrades_total{point="pay",reason="VISIT",table="private"} 3.0' in theirs
    parsed = sample_values(theirs)
    del parsed["app_orders"], parsed["app_orders_created"]
    assert parsed == sample_values(ours)
    assert parsed["sds_point_requests"] == {
        ("sds_point_requests_total", (("point", "pay"), ("table", "private"))): 5,
        ("sds_point_requests_total", (("point", "search"), ("table", "private"))): 1,
    }
    # Same help and type, family by family.
    described = {f.name: (f.type, f.documentation) for f in parse_prometheus(ours)}
    assert described == {f.name: (f.type, f.documentation) for f in parse_prometheus(theirs) if f.name in described}
    promtool(theirs)
    promtool(ours)


def test_a_registry_refuses_a_metric_named_as_one_of_ours() -> None:
    registry = CollectorRegistry()
    registry.register(SdsCollector(sds.Client(4)))
    with pytest.raises(ValueError, match="sds_point_requests"):
        Counter("sds_point_requests", "A clash.", registry=registry)
    with pytest.raises(ValueError, match="sds_agent_up"):
        Counter("sds_agent_up", "A clash, though no agent runs yet.", registry=registry)
    with pytest.raises(TypeError):
        SdsCollector("not a client")  # type: ignore[arg-type]


def test_the_openmetrics_text_parses_and_ends_with_eof() -> None:
    gc.collect()
    client = busy_client()
    text = client.prometheus_text(openmetrics=True)
    assert text.endswith("\n# EOF\n")
    assert "# TYPE sds_point_requests counter\n" in text
    parsed = sample_values(text, openmetrics=True)
    assert parsed == sample_values(client.prometheus_text())
    assert client.metrics_content_type(True).startswith("application/openmetrics-text; version=1.0.0")
    assert client.metrics_content_type().startswith("text/plain; version=0.0.4")


def test_opentelemetry_reads_our_counters_and_gauges_once_per_collection() -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import Gauge, InMemoryMetricReader, Sum

    import sds.otel

    class Counted(sds.Client):
        reads = 0

        def metrics(self, now_ms: Any = None) -> Any:
            Counted.reads += 1
            return super().metrics(now_ms)

    client = Counted(16)
    client.set_strategy("pay", sds.Strategy(visit_threshold=2))
    for _ in range(5):
        client.enter("pay", now_ms=T).exit()
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    try:
        created = sds.otel.instrument(client, provider.get_meter("sds-test"))
        assert len(created) == len(client.metrics())

        def read() -> Dict[str, Any]:
            """The reader's collection, which read the client once."""
            before = Counted.reads
            data = reader.get_metrics_data()
            assert Counted.reads == before + 1
            assert data is not None
            return {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}

        def points(metric: Any) -> Dict[Tuple[Tuple[str, Any], ...], float]:
            return {tuple(sorted((p.attributes or {}).items())): p.value for p in metric.data.data_points}

        metrics = read()
        requests = metrics["sds_point_requests"]
        assert isinstance(requests.data, Sum) and requests.data.is_monotonic
        assert requests.description == families(client)["sds_point_requests"][1]
        assert points(requests) == {(("point", "pay"), ("table", "private")): 5}
        assert points(metrics["sds_point_downgrades"])[(("point", "pay"), ("reason", "VISIT"), ("table", "private"))] == 3
        assert isinstance(metrics["sds_table_points"].data, Gauge)
        assert points(metrics["sds_table_points"]) == {(("table", "private"),): 1}

        for _ in range(4):
            client.enter("pay", now_ms=T).exit()
        metrics = read()
        assert points(metrics["sds_point_requests"]) == {(("point", "pay"), ("table", "private")): 9}
        assert points(metrics["sds_point_downgrades"])[(("point", "pay"), ("reason", "VISIT"), ("table", "private"))] == 7
    finally:
        provider.shutdown()
    with pytest.raises(TypeError):
        sds.otel.instrument(object(), provider.get_meter("x"))  # type: ignore[arg-type]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(sds.InvalidArgument):
        sds.KeyedLimit({"kind": "rate", "limit": 1, "period_ms": 1000}, 8, name=3)  # type: ignore[arg-type]
    with pytest.raises(sds.InvalidArgument):
        sds.Client(4).metrics(now_ms=-1)
    with pytest.raises(TypeError):
        sds.Client(4).prometheus_text(openmetrics="yes")  # type: ignore[arg-type]


def test_import_sds_imports_neither_prometheus_client_nor_opentelemetry() -> None:
    script = "import sys, sds, sds.limits; print(sorted(m for m in sys.modules if m.startswith(('prometheus', 'opentelemetry'))))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
