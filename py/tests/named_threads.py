"""Counting this process's threads by the name the Rust side gives them."""

from __future__ import annotations

import pathlib


def named_threads(name: str) -> int:
    """This process's threads named ``name``. A thread that ends during the
    count (its task gone from /proc) is not counted. A thread just joined
    may still be listed for a moment: wait for a count to drop, do not
    assert it at once."""
    count = 0
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            count += (task / "comm").read_text().strip() == name
        except (FileNotFoundError, ProcessLookupError):
            pass
    return count
