"""Shared fixtures. The tests import the *installed* `sds` (make test-py
installs it with `pip install ./py` into a fresh venv), never the source tree."""

from __future__ import annotations

import logging
import pathlib
from typing import Callable, Iterator, List

import pytest

import sds
from fake_admin import FakeConsole, fake_console

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "conformance" / "scenarios"


@pytest.fixture
def client() -> sds.Client:
    return sds.Client(capacity=64)


@pytest.fixture
def fake() -> Iterator[FakeConsole]:
    """The strict fake console (``fake_admin.py``) for the test."""
    with fake_console() as console:
        yield console


@pytest.fixture
def admin_log(caplog: pytest.LogCaptureFixture) -> Callable[..., List[str]]:
    """The console agent's log (the logger "sds.admin", from INFO up) as
    `lines(level, text="")`: the lines of `level` that contain `text`."""
    caplog.set_level(logging.INFO, logger="sds.admin")

    def lines(level: int, text: str = "") -> List[str]:
        records = [r for r in caplog.records if r.name == "sds.admin" and r.levelno == level]
        return [r.getMessage() for r in records if text in r.getMessage()]

    return lines


def pytest_configure(config: pytest.Config) -> None:
    # Every test exits what it enters: an entry collected without exit warns
    # (ResourceWarning), which fails the test that leaked it. Inside a
    # deallocation the warning-made-error is unraisable, so pytest's report of
    # it is made an error too.
    config.addinivalue_line("filterwarnings", "error::ResourceWarning")
    config.addinivalue_line("filterwarnings", "error::pytest.PytestUnraisableExceptionWarning")
