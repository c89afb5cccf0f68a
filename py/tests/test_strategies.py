"""conformance/strategies.json: each input, as JSON text and as a dict made
from that text by Python's JSON reader, gets the one verdict, code and
message the core gives it; then the keyword form's own rules."""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Dict, List

import pytest

import sds

from conftest import REPO

CASES: List[Dict[str, Any]] = json.loads((REPO / "conformance" / "strategies.json").read_text())["cases"]
DEFAULTS = sds.Strategy().to_dict()


def forms(case: Dict[str, Any]) -> Dict[str, Callable[[], sds.Strategy]]:
    """Every way the binding takes the case's input, by name."""
    text = case["json"]
    out: Dict[str, Callable[[], sds.Strategy]] = {}
    if "text" in case.get("forms", ["text", "native"]):
        out["from_json"] = lambda: sds.Strategy.from_json(text)
        out["set_strategy(text)"] = lambda: set_and_read(text)
    if "native" in case.get("forms", ["text", "native"]):
        out["from_dict"] = lambda: sds.Strategy.from_dict(json.loads(text))
        out["set_strategy(dict)"] = lambda: set_and_read(json.loads(text))
    return out


def set_and_read(strategy: Any) -> sds.Strategy:
    client = sds.Client(capacity=1)
    client.set_strategy("p", strategy)
    got = client.strategy("p")
    assert got is not None
    return got


def test_the_cases_are_found() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_strategy_case(case: Dict[str, Any]) -> None:
    for form, make in forms(case).items():
        where = f"{case['name']} ({form})"
        if "error" in case:
            with pytest.raises(sds.SdsError) as info:
                make()
            assert (info.value.code, str(info.value)) == (case["error"], case["message"]), where
        else:
            assert make().to_dict() == {**DEFAULTS, **case["expect"]}, where


def test_a_rejected_strategy_keeps_the_one_before() -> None:
    client = sds.Client(capacity=1)
    client.set_strategy("p", {"visitThreshold": 5})
    for bad in ({"visitThreshold": 2**64}, '{"visitThreshold": 1, "visitThreshold": 2}', {"nope": 1}):
        with pytest.raises(sds.InvalidStrategy):
            client.set_strategy("p", bad)
    assert client.strategy("p") == sds.Strategy(visit_threshold=5)


KEYWORDS = [
    # (keywords, expected fields or (error class, key, message))
    (dict(visit_threshold=2**60), {"visitThreshold": 2**60}),
    (dict(visit_threshold=10.0), {"visitThreshold": 10}),
    (dict(visit_threshold=None, downgrade_rate=None), {}),
    (dict(visit_threshold=1.5), (sds.InvalidStrategy, "visitThreshold", "invalid strategy: visitThreshold must be an integer")),
    (dict(visit_threshold=math.nan), (sds.InvalidStrategy, "visitThreshold", "invalid strategy: visitThreshold must be an integer")),
    (dict(visit_threshold=True), (sds.InvalidStrategy, "visitThreshold", "invalid strategy: visitThreshold must be an integer")),
    (dict(visit_threshold="10"), (sds.InvalidStrategy, "visitThreshold", "invalid strategy: visitThreshold must be an integer")),
    (dict(visit_threshold=[1]), (sds.InvalidStrategy, "visitThreshold", "invalid strategy: visitThreshold must be an integer")),
    (dict(visit_threshold=2**63), (sds.InvalidStrategy, "visitThreshold", "invalid strategy: visitThreshold is out of the 64-bit integer range")),
    (dict(visit_threshold=-(2**200)), (sds.InvalidStrategy, "visitThreshold", "invalid strategy: visitThreshold is out of the 64-bit integer range")),
    (dict(delay_time=math.inf), (sds.InvalidStrategy, "delayTime", "invalid strategy: delayTime is out of the 64-bit integer range")),
    (dict(visitThreshold=1), (sds.UnknownField, "visitThreshold", 'unknown strategy field "visitThreshold"')),
    (dict(point="p"), {}),
    (dict(point=5), (sds.InvalidStrategy, "point", 'invalid strategy: "point" must be a string or null')),
    (dict(delay_time=9_999), (sds.InvalidStrategy, "delayTime", "invalid strategy: delayTime must be >= 10000 ms (or negative: no delay)")),
]


@pytest.mark.parametrize("kwargs,expect", KEYWORDS, ids=[repr(k) for k, _ in KEYWORDS])
def test_keywords_follow_the_same_rules(kwargs: Dict[str, Any], expect: Any) -> None:
    if isinstance(expect, dict):
        assert sds.Strategy(**kwargs).to_dict() == {**DEFAULTS, **expect}
        return
    error, key, message = expect
    with pytest.raises(error) as info:
        sds.Strategy(**kwargs)
    assert (type(info.value), info.value.field, str(info.value)) == (error, key, message)


def test_fields_are_typed_properties() -> None:
    s = sds.Strategy(visit_threshold=3, delay_time=20_000)
    properties = {f for f in dir(sds.Strategy) if isinstance(getattr(sds.Strategy, f), property)}
    assert properties == set(sds.Strategy.fields())
    for name, (json_name, value) in zip(sds.Strategy.fields(), s.to_dict().items()):
        assert isinstance(getattr(sds.Strategy, name), property), name
        assert getattr(s, name) == value, name
        assert json_name in (getattr(sds.Strategy, name).__doc__ or "")
    assert (s.visit_threshold, s.delay_time, s.concurrent_threshold) == (3, 20_000, -1)
    with pytest.raises(AttributeError):
        s.visit_threshold = 4  # type: ignore[misc]
    with pytest.raises(AttributeError):
        s.visit_threshhold  # type: ignore[attr-defined]
