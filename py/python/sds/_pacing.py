"""How the async sugar waits for a paced entry (``Entry.wait_ms``): with
``asyncio.sleep``, so the loop serves other tasks meanwhile. The core never
sleeps; it only says how long. ``Entry.__aenter__`` and ``__aexit__`` call
these (the sync ``with`` and ``guard`` wait with ``time.sleep``, natively)."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Optional, Type

from ._native import Entry


async def enter_async(entry: Entry) -> Entry:
    """Waits ``entry.wait_ms``, then gives the entry. Cancelled (or
    interrupted) while waiting, the entry exits (nothing ran, so nothing
    failed) and the cancellation goes on."""
    wait = entry.wait_ms
    if wait:
        try:
            await asyncio.sleep(wait / 1000)
        except BaseException:
            entry.exit()
            raise
    return entry


async def exit_async(
    entry: Entry,
    exc_type: Optional[Type[BaseException]],
    exc: Optional[BaseException],
    traceback: Optional[TracebackType],
) -> bool:
    """``Entry.__exit__`` for ``async with``: marks an ``Exception`` of the
    body and exits; never suppresses it."""
    return entry.__exit__(exc_type, exc, traceback)

