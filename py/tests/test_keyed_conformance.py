"""Every scenario of conformance/keyed, run through ``sds.KeyedLimit``: on
private tables (the rule as a dict, and as JSON text), and on shared files
in a temp dir (a fresh file per table). The format is conformance/README.md's
"Keyed scenarios"; a step fails on the first difference, naming the file,
the step and both values."""

from __future__ import annotations

import json
import re
import pathlib
from typing import Any, Callable, Dict, List, Optional, Union

import pytest

import sds

from conftest import REPO

FILES = sorted((REPO / "conformance" / "keyed").glob("*.json"))
Make = Callable[[Dict[str, Any], int], sds.KeyedLimit]


def test_the_scenarios_are_found() -> None:
    assert len(FILES) >= 20, "keyed scenarios are missing"


def integer(v: Union[int, str]) -> int:
    """A JSON number or a decimal string (for values above 2^53)."""
    return int(v)


def key_of(step: Dict[str, Any]) -> Union[str, bytes]:
    """``key`` as the str it is (its UTF-8 is the key), ``keyHex`` as bytes."""
    if "key" in step:
        key: str = step["key"]
        return key
    return bytes.fromhex(step["keyHex"])


def decision(d: sds.KeyDecision) -> Dict[str, Any]:
    retry: Any = "never" if d.retry_after_ms is None else d.retry_after_ms
    return {
        "admitted": d.admitted,
        "limit": d.limit,
        "remaining": d.remaining,
        "resetMs": d.reset_ms,
        "retryAfterMs": retry,
        "windowMs": d.window_ms,
    }


def counts(c: sds.KeyCount) -> Dict[str, Any]:
    return {"count": c.count, "previous": c.previous, "resetMs": c.reset_ms}


def stats(s: sds.KeyStats) -> Dict[str, Any]:
    """The core's names (camelCase) of every field."""
    return {re.sub(r"_(.)", lambda m: m.group(1).upper(), name): value for name, value in s._asdict().items()}


def check(where: str, step: Dict[str, Any], call: Callable[[], Any]) -> None:
    """The call's answer against ``expect`` (a subset of an object's
    fields, else the whole value), or its error code against ``error``."""
    try:
        got = call()
    except sds.SdsError as err:
        assert err.code == step.get("error"), f"{where}: expected {step.get('expect', step.get('error'))}, got error {err.code}: {err}"
        return
    assert "error" not in step, f"{where}: expected error {step['error']}, got {got}"
    want = step["expect"]
    if isinstance(want, dict):
        for name, value in want.items():
            assert name in got, f"{where}: no field {name} in {got}"
            assert got[name] == value, f"{where}: {name}: expected {value}, got {got[name]} ({got})"
    else:
        assert got == want, f"{where}: expected {want}, got {got}"


def decide(where: str, table: sds.KeyedLimit, step: Dict[str, Any]) -> None:
    key, at = key_of(step), integer(step["at"])
    cost, repeat = integer(step.get("cost", 1)), integer(step.get("repeat", 1))
    answers: List[sds.KeyDecision] = []
    error: Optional[sds.SdsError] = None
    for _ in range(repeat):
        try:
            answers.append(table.decide(key, cost, now_ms=at))
        except sds.SdsError as err:
            error = err
            break
    if "tally" in step and error is None:
        admitted = sum(1 for d in answers if d.admitted)
        tally = {"admitted": admitted, "refused": len(answers) - admitted}
        assert tally == step["tally"], f"{where}: tally: expected {step['tally']}, got {tally}"

    def last() -> Dict[str, Any]:
        if error is not None:
            raise error
        return decision(answers[-1])

    check(where, step, last)


def rule_step(where: str, make: Make, step: Dict[str, Any], capacity: int) -> None:
    try:
        make(step["rule"], capacity)
    except sds.SdsError as err:
        got: Optional[tuple[Optional[str], str]] = (err.code, str(err))
    else:
        got = None
    want = (step["error"], step["message"]) if "error" in step else None
    assert got == want, f"{where}: expected {want}, got {got}"


def run(path: pathlib.Path, make: Make) -> int:
    scenario = json.loads(path.read_text(encoding="utf-8"))
    capacity = integer(scenario["capacity"])
    table = make(scenario["rule"], capacity)
    for i, step in enumerate(scenario["steps"]):
        where = f"{path.name} step {i} ({json.dumps(step)})"
        op = step["op"]
        at = lambda: integer(step["at"])  # noqa: E731
        units = integer(step.get("units", 1))
        if op == "decide":
            decide(where, table, step)
        elif op == "peek":
            check(where, step, lambda: decision(table.peek(key_of(step), now_ms=at())))
        elif op == "release":
            check(where, step, lambda: table.release(key_of(step), units))
        elif op == "reset":
            check(where, step, lambda: table.reset(key_of(step)))
        elif op == "reset_all":
            check(where, step, table.reset_all)
        elif op == "increment":
            check(where, step, lambda: counts(table.increment(key_of(step), units, now_ms=at())))
        elif op == "decrement":
            check(where, step, lambda: counts(table.decrement(key_of(step), units, now_ms=at())))
        elif op == "count":
            check(where, step, lambda: counts(table.count(key_of(step), now_ms=at())))
        elif op == "stats":
            check(where, step, lambda: stats(table.stats()))
        elif op == "rule":
            rule_step(where, make, step, capacity)
        else:
            pytest.fail(f"{where}: unknown op {op!r}")
    return len(scenario["steps"])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_on_a_private_table(path: pathlib.Path) -> None:
    assert run(path, lambda rule, capacity: sds.KeyedLimit(rule, capacity)) > 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_with_the_rule_as_json_text(path: pathlib.Path) -> None:
    """The rule's JSON text goes through sds_settings::key_rule_json, as C
    gives it: the same verdicts and messages as the mapping."""
    assert run(path, lambda rule, capacity: sds.KeyedLimit(json.dumps(rule), capacity)) > 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_on_a_shared_file(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    files: List[pathlib.Path] = []

    def make(rule: Dict[str, Any], capacity: int) -> sds.KeyedLimit:
        files.append(tmp_path / f"t{len(files)}")
        return sds.KeyedLimit.shared(files[-1], rule, capacity)

    assert run(path, make) > 0
    assert files and files[0].stat().st_size > 0, "the scenario's table was no file"
