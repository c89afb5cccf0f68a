"""The services' settings and statuses through the Python API: every case
of conformance/settings.json, the one conversion of Python values to
settings (py/src/settings.rs), and the status types against the crates'
field names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from typing import Any, Dict, List

import pytest

import sds
from sds import _native

from conftest import SCENARIOS

SETTINGS = json.loads((SCENARIOS.parent / "settings.json").read_text())
CASES: List[Dict[str, Any]] = SETTINGS["cases"]

# Cases the Python API cannot express, by name, with the reason: none. The
# arguments connect_admin and connect_cluster require (servers, app_group,
# app_name; urls, points) are given as None when a case leaves them out,
# which the crates take as absent.
NOT_EXPRESSIBLE: Dict[str, str] = {}

REQUIRED = {"agent": ("servers", "app_group", "app_name"), "cluster": ("urls", "points")}


def expected_message(case: Dict[str, Any]) -> str:
    """The case's error with each {name} as Python spells it: as is."""
    return re.sub(r"\{(\w+)\}", r"\1", case["error"])


def start(case: Dict[str, Any]) -> sds.AdminAgent | sds.ClusterSync:
    """Starts the case's service with its settings as keyword arguments."""
    service = case["service"]
    kwargs: Dict[str, Any] = {name: None for name in REQUIRED[service]}
    kwargs.update(dict(case["settings"]))
    assert len(kwargs) == len(REQUIRED[service]) + sum(k not in REQUIRED[service] for k, _ in case["settings"])
    client = sds.Client(16)
    if service == "agent":
        return client.connect_admin(**kwargs)
    assert service == "cluster", service
    return client.connect_cluster(**kwargs)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['service']}: {c['name']}" for c in CASES])
def test_settings_case(case: Dict[str, Any]) -> None:
    if case["name"] in NOT_EXPRESSIBLE:
        pytest.skip(NOT_EXPRESSIBLE[case["name"]])
    if "error" in case:
        with pytest.raises(sds.InvalidArgument) as raised:
            start(case)
        assert str(raised.value) == expected_message(case)
        assert raised.value.code == "SDS_INVALID_ARGUMENT"
    else:
        service = start(case)
        assert service.running
        service.close()
        assert not service.running


def test_every_settings_case_is_run() -> None:
    services = {c["service"] for c in CASES}
    assert services == {"agent", "cluster"} and len(CASES) >= 41, (services, len(CASES))
    assert set(NOT_EXPRESSIBLE) <= {c["name"] for c in CASES}


def test_the_status_types_have_the_crates_fields() -> None:
    # A field added in Rust and not here (or renamed, or moved) fails here.
    assert sds.AgentStatus._fields == _native.AGENT_STATUS_FIELDS
    assert sds.ClusterStatus._fields == _native.CLUSTER_STATUS_FIELDS


def test_a_status_is_built_from_the_native_fields() -> None:
    with sds.Client(8).connect_admin("http://127.0.0.1:1", "g", "a", ip="10.0.0.1", hostname="h") as agent:
        status = agent.status()
        assert isinstance(status, sds.AgentStatus)
        assert status.server == "http://127.0.0.1:1" and status.version == 0
    with sds.Client(8).connect_cluster("redis://127.0.0.1:1", "p", timeout=0.2) as sync:
        status = sync.status()
        assert isinstance(status, sds.ClusterStatus)
        assert (status.points, status.syncs) == (1, 0)


def refused(**settings: Any) -> str:
    with pytest.raises(sds.InvalidArgument) as raised:
        sds.Client(8).connect_admin("http://127.0.0.1:1", "g", "a", **settings)
    return str(raised.value).removeprefix("cannot start the SDS agent: ")


class BytesPath:
    """An os.PathLike whose os.fspath is bytes."""

    def __init__(self, path: bytes) -> None:
        self.path = path

    def __fspath__(self) -> bytes:
        return self.path


def test_each_python_value_reaches_the_crate_by_its_kind() -> None:
    ms = "a whole number of milliseconds from 0 to 18446744073709551615"
    # An int beyond 128 bits is refused by its type: no setting takes one.
    assert refused(timeout_ms=2**128) == f"timeout_ms must be {ms}, not a value of type int"
    assert refused(timeout_ms=2**64) == f"timeout_ms must be {ms}, not 18446744073709551616"
    assert refused(timeout_ms=True) == f"timeout_ms must be {ms}, not true"
    assert refused(ip=("10.0.0.1",)) == "ip must be text or null, not a list"
    assert refused(ip={"a": 1}) == "ip must be text or null, not a value of type dict"
    assert refused(hostname="h\ud800") == "hostname must be valid Unicode text: lone surrogate \\ud800 at index 1"
    # Paths: a PathLike's os.fspath, bytes only when UTF-8.
    assert refused(tls_ca_file=BytesPath(b"/x/\xff.pem")) == (
        "tls_ca_file: os.fspath of the BytesPath gives bytes that are not UTF-8; give the path as a str"
    )
    https_only = "is given but no server is an https:// URL (the CA file only verifies HTTPS servers)"
    assert refused(tls_ca_file=BytesPath("/x/é.pem".encode())) == f"tls_ca_file {https_only}"
    assert refused(tls_ca_file=b"/x/ca.pem") == "tls_ca_file must be a path (text) or null, not a value of type bytes"


def test_seconds_and_milliseconds_and_camel_case_reach_the_crate() -> None:
    # Given twice: the crate says so, naming both spellings as given.
    twice: Dict[str, Any] = {"timeout": 1, "timeout_ms": 5}
    assert refused(**twice) == '"timeout" and "timeout_ms" are one setting: give it once'
    camel: Dict[str, Any] = {"pullIntervalMs": 0}
    assert refused(**camel) == "the pull interval must be above 0 ms"
    # A huge number of seconds is "never": the crate saturates it. A tuple
    # is a list.
    with sds.Client(8).connect_cluster("redis://127.0.0.1:1", ("a", "b"), max_backoff=1e300, sync_ms=10) as sync:
        assert sync.status().points == 2


def test_mypy_catches_a_misspelled_or_mistyped_setting(tmp_path: Any) -> None:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""
        import pathlib
        import sds
        client = sds.Client(8)
        client.connect_admin("http://h:1", "g", "a", pull_interval=0.5, timeout_ms=100, tls_ca_file=pathlib.Path("c"))
        client.connect_cluster("redis://h", ["p"], sync_interval=0.1, key_prefix=None, max_backoff_ms=10)
        client.connect_admin("http://h:1", "g", "a", pull_intervall=0.5)
        client.connect_cluster("redis://h", ["p"], redis_cluster="yes")
    """))
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, str(program)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    errors = [line for line in checked.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 2, checked.stdout
    assert ':7: error: Unexpected keyword argument "pull_intervall"' in errors[0], errors
    assert ":8: error: " in errors[1] and '"redis_cluster"' in errors[1], errors
