"""Shared fixtures. The tests import the *installed* `sds` (make test-py
installs it with `pip install ./py` into a fresh venv), never the source tree."""

from __future__ import annotations

import pathlib

import pytest

import sds

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "conformance" / "scenarios"


@pytest.fixture
def client() -> sds.Client:
    return sds.Client(capacity=64)
