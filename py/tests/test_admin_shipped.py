"""The console agent against what the console as it ships does (SDS-ADMIN.md,
"What the shipped console does (measured)"), reproduced by the strict fake:
a null version, null strategies, a delay the core refuses, a set larger than
the console's share of the table, and, in real upload cycles, zero-visit
points, a name the console cannot store and a console frozen across an
upload."""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Dict, List

import pytest

import sds
from fake_admin import FakeConsole, visit_threshold
from helpers import wait_for

CYCLE_MS = 10_000


Log = Callable[..., List[str]]


def test_a_null_version_applies_the_set_and_an_edit_is_in_force_within_one_pull_interval(
    fake: FakeConsole, admin_log: Log
) -> None:
    fake.null_version_app([{"point": "orders", "visitThreshold": 3}])
    client = sds.Client(64)
    with fake.connect(client) as agent:
        wait_for("the set", lambda: visit_threshold(client, "orders") == 3 and agent.status().version == -1)
        status = agent.status()
        assert (status.last_pull_ok, status.last_error) == (True, "")

        # The console's version stays null through the edit.
        fake.null_version_app([{"point": "orders", "visitThreshold": 7}])
        # One interval (0.1 s), plus what this loaded machine adds.
        took = wait_for("the edit", lambda: visit_threshold(client, "orders") == 7, within=1.0)
        assert took < 1.0
        # Pulls go on (with -1: any number differs from null); the same set
        # is not applied again.
        time.sleep(0.5)
        assert agent.status().version == -1
    versions = [p["request"]["version"] for p in fake.requests()["pulls"]]
    assert versions[0] == 0 and set(versions[1:]) == {-1} and len(versions) >= 6, versions
    applied = admin_log(logging.INFO, "SDS strategies version null")
    assert applied == ["SDS strategies version null: 1 in force, 0 removed, 0 waiting, 0 warnings"] * 2


def test_null_strategies_are_the_empty_set(fake: FakeConsole) -> None:
    fake.app([{"point": "orders", "visitThreshold": 3, "returnValueStr": "busy"}])
    client = sds.Client(64)
    with fake.connect(client) as agent:
        wait_for("version 1", lambda: agent.status().version == 1)
        assert visit_threshold(client, "orders") == 3
        assert agent.return_value("orders") == "busy"

        # The last strategy deleted: the console answers "strategies": null.
        assert fake.app([]) == 2
        wait_for("version 2", lambda: agent.status().version == 2)
        assert client.strategy("orders") is None
        assert agent.return_value("orders") is None
        status = agent.status()
        assert (status.last_pull_ok, status.last_error, status.pull_failures) == (True, "", 0)


def test_a_delay_the_core_refuses_is_dropped_and_the_rest_of_the_strategy_applies(
    fake: FakeConsole, admin_log: Log
) -> None:
    with pytest.raises(sds.InvalidStrategy) as refused:
        sds.Strategy.from_json('{"delayTime": 5000}')
    warning = f'SDS strategy of point "slow" applied without its delay: {refused.value}'
    fake.app([{"point": "slow", "visitThreshold": 2, "delayTime": 5000, "returnValueStr": "later"}])
    client = sds.Client(64)
    with fake.connect(client) as agent:
        wait_for("version 1", lambda: agent.status().version == 1)
        assert client.strategy("slow") == sds.Strategy(visit_threshold=2)
        assert agent.return_value("slow") == "later"
        # Its threshold is in force: the third visit is downgraded.
        downgraded = []
        for _ in range(3):
            with client.enter("slow") as entry:
                downgraded.append(entry.downgraded)
        assert downgraded == [False, False, True]
        status = agent.status()
        assert (status.last_pull_ok, status.last_error) == (True, warning)
    assert admin_log(logging.WARNING, "") == [warning]


def test_a_set_larger_than_the_consoles_share_of_the_table_waits_for_room(fake: FakeConsole) -> None:
    fake.app([{"point": f"c{i}", "visitThreshold": 5} for i in range(20)])
    # 16 slots: the console may create points while the table holds 8.
    client = sds.Client(16)
    with fake.connect(client) as agent:
        wait_for("version 1", lambda: agent.status().version == 1)
        status = agent.status()
        assert (status.strategies_waiting, status.points_left_out) == (12, 0)
        assert [f"c{i}" for i in range(20) if client.strategy(f"c{i}") is not None] == [f"c{i}" for i in range(8)]
        # The application creates a waiting point: its strategy applies at
        # the next pull.
        with client.enter("c12"):
            pass
        wait_for("c12 applied", lambda: agent.status().strategies_waiting == 11)
        assert visit_threshold(client, "c12") == 5


def visit(client: sds.Client, names: List[str], cycle: int) -> None:
    """One visit of each of `names`, all within `cycle`."""
    for name in names:
        with client.enter(name):
            pass
    if sds.now_ms() // CYCLE_MS * CYCLE_MS != cycle:
        pytest.fail(f"the visits crossed the end of cycle {cycle}")


def sleep_until(epoch_ms: int) -> None:
    time.sleep(max(0, epoch_ms - sds.now_ms()) / 1000)


def zeros(point: str) -> Dict[str, Any]:
    counts = ("visitNum", "exceptionNum", "timeoutNum", "downgradeNum", "concurrentNum")
    return {"point": point, **{count: 0 for count in counts}}


def test_two_upload_cycles_zero_visits_kept_a_long_name_left_out_a_frozen_console_stores_once(
    fake: FakeConsole, admin_log: Log
) -> None:
    """Real cycles (10 s, uploaded at second 5 of the next), so all three
    cases share two uploads: cycle 1 with every point visited, cycle 2 with
    "idle" and the 164-character name unvisited and the console frozen
    across its upload."""
    fake.app([])
    longest, too_long = "m" * 164, "x" * 165
    left_out = (
        f'SDS statistics leave out point "{too_long}": the console stores names of at most 164 '
        "characters (its forms manage letters, digits and '-')"
    )
    client = sds.Client(64)
    # One pull (at start): a pull failing on the frozen console would
    # replace last_error.
    with fake.connect(client, pull_interval=600, timeout=0.5) as agent:
        wait_for("the first pull", lambda: agent.status().last_pull_ok)
        if sds.now_ms() % CYCLE_MS > CYCLE_MS - 1_000:
            sleep_until(sds.now_ms() // CYCLE_MS * CYCLE_MS + CYCLE_MS + 100)
        first = sds.now_ms() // CYCLE_MS * CYCLE_MS
        visit(client, ["orders-create", "orders-create", "idle", longest, too_long], first)
        # Each upload's statisticsCycleTime is the start of the cycle after
        # the one it reports.
        second, third = first + CYCLE_MS, first + 2 * CYCLE_MS
        sleep_until(second + 100)
        visit(client, ["orders-create", too_long], second)

        # (An upload before `second` may have sent the points with zeros for
        # the cycle before `first`: the console stores nothing of it.)
        wait_for("upload 1", lambda: agent.status().last_upload_ms >= second + 5_000, within=7.0)
        status = agent.status()
        assert (status.last_upload_ok, status.upload_failures) == (True, 0)
        assert (status.points_left_out, status.last_error) == (1, left_out)
        uploads = status.uploads
        assert len(fake.uploads_of(second)) == 1
        assert fake.stored_rows(second) == sorted([("orders-create", 2), ("idle", 1), (longest, 1)])
        assert fake.point_list() == sorted(["orders-create", "idle", longest])

        sleep_until(third + 4_000)
        fake.freeze()
        try:
            wait_for("the upload timed out", lambda: agent.status().upload_failures == 1, within=3.0)
            # Frozen well past a retry's time: a second send would queue too.
            time.sleep(1.5)
        finally:
            fake.thaw()
        wait_for("the queued upload processed", lambda: fake.stored_rows(third) != [])
        time.sleep(0.5)
        status = agent.status()

    # The frozen console stored the cycle once: one request, one row per
    # visited point.
    assert fake.stored_rows(third) == [("orders-create", 1)]
    [upload] = fake.uploads_of(third)
    assert upload["pointInfoMap"]["idle"] == zeros("idle")
    assert upload["pointInfoMap"][longest] == zeros(longest)
    assert sorted(upload["pointInfoMap"]) == sorted(["orders-create", "idle", longest])
    # Zero-visit points were uploaded, so the console keeps listing them.
    assert fake.point_list() == sorted(["orders-create", "idle", longest])
    assert (status.uploads, status.upload_failures, status.last_upload_ok) == (uploads, 1, False)
    assert status.points_left_out == 1
    assert status.last_error.startswith(f"SDS statistics upload failed: {fake.url}/sds/heartbeat/add: ")
    assert status.last_error.endswith("(the console may have received it: not sent again)")
    assert admin_log(logging.WARNING, "leave out point") == [left_out]
