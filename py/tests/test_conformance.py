"""Every scenario of conformance/scenarios, run through the Python API."""

from __future__ import annotations

import json
import pathlib
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

import sds

from conftest import SCENARIOS

FILES = sorted(SCENARIOS.glob("*.json"))


def test_the_scenarios_are_found() -> None:
    assert len(FILES) >= 3, f"no scenarios under {SCENARIOS}"


def test_the_shaping_scenarios_check_waits() -> None:
    """The pacing and warm-up scenarios are here, and some of their steps
    carry ``waitMs`` (checked by both runners below)."""
    shaping = [f for f in FILES if f.stem.startswith("shaping-")]
    assert len(shaping) >= 15, [f.stem for f in shaping]
    waits = sum(
        1 for f in shaping for s in json.loads(f.read_text())["steps"] if "waitMs" in s
    )
    assert waits >= 20, f"only {waits} steps with waitMs"


def word(entry: sds.Entry) -> str:
    return entry.reason or "pass"


def check_waits(want: Any, got: List[int], where: str) -> None:
    """An enter step's optional ``waitMs``: one number (``repeat`` 1) or one
    wait per entry, in order (conformance/README.md)."""
    if want is None:
        return
    if isinstance(want, list):
        ok = want == got
    else:
        assert isinstance(want, int) and not isinstance(want, bool), f"{where}: waitMs must be a number or a list, got {want!r}"
        ok = got == [want]
    assert ok, f"{where}: waitMs: expected {want}, got {got}"


def set_strategy(client: sds.Client, point: str, strategy: Optional[Dict[str, Any]]) -> Optional[str]:
    try:
        if strategy is None:
            client.remove_strategy(point)
        else:
            client.set_strategy(point, strategy)
    except sds.SdsError as err:
        return err.code
    return None


def subset(expected: Any, actual: Any, path: str) -> None:
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert key in actual, f"{path}.{key}: no such stat"
            subset(value, actual[key], f"{path}.{key}")
    else:
        assert expected == actual, f"{path}: expected {expected}, got {actual}"


def enter_step(enter: Callable[[], sds.Entry], step: Dict[str, Any],
               open_entries: Dict[str, List[sds.Entry]]) -> Tuple[Counter[str], List[int]]:
    """An enter step's `repeat` calls of `enter`: how many got each word,
    and their waits. With an id the entries stay open for its exit step;
    without, each exits at once, at the step's time."""
    words: Counter[str] = Counter()
    waits: List[int] = []
    for _ in range(step.get("repeat", 1)):
        entry = enter()
        words[word(entry)] += 1
        waits.append(entry.wait_ms)
        if "id" in step:
            open_entries.setdefault(step["id"], []).append(entry)
        else:
            entry.exit(now_ms=step["at"])
    return words, waits


def exit_step(step: Dict[str, Any], open_entries: Dict[str, List[sds.Entry]]) -> None:
    """Exits the entries of the step's id at its time, failed for an
    outcome "error"."""
    for entry in open_entries.pop(step["id"]):
        if step.get("outcome", "ok") == "error":
            entry.error(RuntimeError("the scenario's error outcome"))
        entry.exit(now_ms=step["at"])


def run(scenario: Dict[str, Any]) -> None:
    client = sds.Client(capacity=16)
    default_point = scenario.get("point", "p")
    if "strategy" in scenario:
        assert set_strategy(client, default_point, scenario["strategy"]) is None
    open_entries: Dict[str, List[sds.Entry]] = {}
    for i, step in enumerate(scenario["steps"]):
        where = f"step {i} ({json.dumps(step)})"
        at = step["at"]
        point = step.get("point", default_point)
        op = step["op"]
        if op == "enter":
            pressure = step.get("pressure_test", False)
            tally, waits = enter_step(lambda: client.enter(point, now_ms=at, pressure_test=pressure), step, open_entries)
            got: Any = next(iter(tally)) if step.get("repeat", 1) == 1 else dict(tally)
            assert got == step["expect"], f"{where}: expected {step['expect']}, got {got}"
            check_waits(step.get("waitMs"), waits, where)
        elif op == "exit":
            exit_step(step, open_entries)
        elif op == "set_strategy":
            got_error = set_strategy(client, point, step["strategy"])
            assert got_error == step.get("error"), f"{where}: expected error {step.get('error')}, got {got_error}"
        elif op == "stats":
            subset(step["expect"], client.stats(point, now_ms=at), f"{where}: stats")
        else:
            raise AssertionError(f"{where}: unknown op {op!r}")


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario(path: pathlib.Path) -> None:
    run(json.loads(path.read_text()))


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario_through_a_point_handle(path: pathlib.Path) -> None:
    """The same decisions when the default point is entered through a handle
    and its strategies are given as JSON text."""
    scenario = json.loads(path.read_text())
    client = sds.Client(capacity=16)
    default_point = scenario.get("point", "p")
    if "strategy" in scenario:
        client.set_strategy(default_point, json.dumps(scenario["strategy"]))
    handles = {default_point: client.point(default_point)}
    open_entries: Dict[str, List[sds.Entry]] = {}
    for i, step in enumerate(scenario["steps"]):
        point = step.get("point", default_point)
        handle = handles.setdefault(point, client.point(point))
        at = step["at"]
        if step["op"] == "enter":
            pressure = step.get("pressure_test", False)
            words, waits = enter_step(lambda: handle.enter(now_ms=at, pressure_test=pressure), step, open_entries)
            expect = step["expect"]
            assert dict(words) == (expect if isinstance(expect, dict) else {expect: 1})
            check_waits(step.get("waitMs"), waits, f"step {i}")
        elif step["op"] == "exit":
            exit_step(step, open_entries)
        elif step["op"] == "set_strategy":
            if step["strategy"] is None:
                client.remove_strategy(point)
                continue
            try:
                client.set_strategy(point, json.dumps(step["strategy"]))
            except sds.SdsError as err:
                assert err.code == step.get("error")
            else:
                assert step.get("error") is None
        elif step["op"] == "stats":
            subset(step["expect"], handle.stats(now_ms=at), "stats")


# conformance/windows.json: the standalone window through sds.SlidingWindow,
# every step of every case.
WINDOWS = SCENARIOS.parent / "windows.json"
WINDOW_CASES: List[Dict[str, Any]] = json.loads(WINDOWS.read_text())["cases"]
WINDOW_READS = {"sum", "bucket", "last_whole_cycle"}


def window_int(value: Any, what: str) -> int:
    """A number up to 2**53 or decimal text (the format's rule for integers)."""
    if isinstance(value, str) and value.isdigit():
        return int(value)
    assert (
        isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53
    ), f"{what}: {value!r} is no integer of the format"
    return value


def run_window_case(case: Dict[str, Any]) -> int:
    """Runs the case's steps; returns how many ran."""
    shape = case["window"]
    w = sds.SlidingWindow(
        bucket_ms=window_int(shape["bucket_ms"], "bucket_ms"),
        buckets=window_int(shape["buckets"], "buckets"),
        ring=window_int(shape["ring"], "ring"),
    )
    for i, step in enumerate(case["steps"]):
        where = f"{WINDOWS}: {case['name']}: step {i} ({json.dumps(step)})"
        op = step["op"]
        at = window_int(step["at"], "at")
        expect = step.get("expect")

        def check(key: str, got: int, want: Any) -> None:
            want = window_int(want, key)
            assert got == want, f"{where}: {key}: expected {want}, got {got}"

        if op == "add":
            bucket, total = w.add(window_int(step["n"], "n"), now_ms=at)
            check("bucket", bucket, expect["bucket"])
            check("total", total, expect["total"])
        elif op == "add_at":
            now = window_int(step["now"], "now")
            check("bucket", w.add_at(at, window_int(step["n"], "n"), now_ms=now), expect["bucket"])
            check("total", w.sum(now), expect["total"])
        elif op in WINDOW_READS:
            check(op, getattr(w, op)(now_ms=at), expect)
        elif op == "set":
            w.set(window_int(step["value"], "value"), now_ms=at)
        elif op == "fetch_max":
            check(op, w.fetch_max(window_int(step["value"], "value"), now_ms=at), expect)
        else:
            assert op == "clear_next_cycle", f"{where}: unknown op {op!r}"
            w.clear_next_cycle(now_ms=at)
    return len(case["steps"])


@pytest.mark.parametrize("case", WINDOW_CASES, ids=[c["name"] for c in WINDOW_CASES])
def test_window_case(case: Dict[str, Any]) -> None:
    run_window_case(case)


def test_every_window_step_runs_here() -> None:
    ran = sum(run_window_case(c) for c in WINDOW_CASES)
    total = sum(len(c["steps"]) for c in WINDOW_CASES)
    assert len(WINDOW_CASES) >= 10 and ran == total >= 125, f"{ran} of {total} window steps ran"
