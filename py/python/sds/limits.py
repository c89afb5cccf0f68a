"""The storage ``sds://`` of Python's ``limits`` (and so of flask-limiter and
slowapi): counts in sds key tables, private to the process or in files that
every worker of the host shares, so a limit holds for the host with no
server and no round trip.

>>> import sds.limits  # registers the scheme
>>> from limits import parse, storage, strategies
>>> limiter = strategies.FixedWindowRateLimiter(storage.storage_from_string("sds://"))
>>> limiter.hit(parse("2/minute"), "alice")
True

``sds://NAME``: shared tables, ``NAME`` by the naming rule of
``sds.Client.shared`` (a bare name is a file under ``/dev/shm``, a path is
used as given: ``sds:///run/app/limits``); ``sds://`` alone: tables of this
process only. Options in the query string or as keyword arguments
(``storage_options`` of flask-limiter): ``capacity`` (keys per table,
default 65536; every process must give the same) and ``mode`` (of the
files, octal: ``0o600`` default, ``0o660`` for the group).

``limits`` gives a storage the window per call, and the sliding window's
limit too, so the storage keeps one table per rule, made on first use, each
its own file beside ``NAME``:

- ``NAME.fixed-<W>``: the fixed window of ``W`` ms (``expiry × 1000``),
  counted from a key's first hit (``limits``' own storages set the expiry
  there). Its counts stop at ``2^21 − 1`` (windows up to 6 days; ``2^15 −
  1`` for a year), where ``hit`` refuses; a limit that high raises
  ``ValueError`` when a key reaches it.
- ``NAME.sliding-<W>-<L>``: the sliding window counter of ``W`` ms and
  limit ``L`` (at most ``2^21 − 1``).

A cost is counted in whole units: a fractional cost (slowapi's ``cost``
callable may return one) takes the next whole number, so a window never
admits more than its limit (``MemoryStorage`` counts the fraction: a cost
of 0.5 on a limit of 2 admits 4 there, 2 here).

The moving window needs every hit's time, which no fixed memory per key
holds: ``MovingWindowRateLimiter`` refuses this storage at construction
(``NotImplementedError`` naming the strategies that work).
"""

from __future__ import annotations

import math
import numbers
import os
import re
import threading
import urllib.parse
from typing import Callable, Dict, Iterator, List, Optional, Tuple, Type, Union

from limits.limits import GRANULARITIES
from limits.storage import SlidingWindowCounterSupport, Storage

from . import _native
from .errors import SdsError
from .keyed import KeyCount, KeyedLimit

__all__ = ["SdsStorage", "MovingWindowUnsupported"]

DEFAULT_CAPACITY = 65536

class MovingWindowUnsupported(NotImplementedError):
    """``MovingWindowRateLimiter`` on ``sds://``: the moving window keeps
    every hit's time, which no fixed memory per key can."""


_MOVING_WINDOW = (
    "the sds:// storage serves limits' fixed window (FixedWindowRateLimiter, "
    "strategy 'fixed-window') and sliding window counter (SlidingWindowCounterRateLimiter, "
    "'sliding-window-counter'); the moving window keeps every hit's time, which a fixed "
    "memory per key cannot"
)



def _expiry_of(key: str) -> Optional[int]:
    """The window in s of a key ``limits`` made (``RateLimitItem.key_for``:
    ``.../amount/multiples/granularity``), else ``None``."""
    parts = key.rsplit("/", 3)
    if len(parts) < 4 or parts[3] not in GRANULARITIES or not parts[2].isdigit() or not parts[1].isdigit():
        return None
    return GRANULARITIES[parts[3]].GRANULARITY.seconds * int(parts[2])


def _amount_of(key: str) -> Optional[int]:
    parts = key.rsplit("/", 3)
    return int(parts[1]) if _expiry_of(key) is not None else None


def _units(amount: Union[int, float]) -> int:
    """A cost in whole units: a finite fraction rounded up (so never more
    admitted than the limit); anything else as given, NaN and infinities
    included (the table names what it refuses)."""
    if isinstance(amount, numbers.Real) and not isinstance(amount, int) and math.isfinite(amount):
        return math.ceil(amount)
    return amount  # type: ignore[return-value]


def _options(uri: str, given: Dict[str, Union[float, str, bool]]) -> Tuple[Optional[str], int, int]:
    """(name or None for private tables, capacity, mode) from the URI's
    query and the keyword options (which win)."""
    parsed = urllib.parse.urlsplit(uri)
    name = urllib.parse.unquote(parsed.netloc + parsed.path) or None
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query, keep_blank_values=True).items()}
    options: Dict[str, Union[float, str, bool]] = {**query, **given}
    unknown = set(options) - {"capacity", "mode"}
    if unknown:
        raise ValueError(f"sds:// knows the options capacity and mode, not {', '.join(sorted(unknown))}")
    capacity = int(options.get("capacity", DEFAULT_CAPACITY))
    mode = options.get("mode", 0o600)
    if isinstance(mode, str):
        mode = int(mode, 8)
    if name is None and "mode" in options:
        raise ValueError("sds:// alone is private to this process: mode is for a shared NAME")
    return name, capacity, int(mode)


class SdsStorage(Storage, SlidingWindowCounterSupport):
    """``limits``' storage on sds key tables (see the module's doc).
    ``clock_ms``, for tests: the time in ms each call decides at (else the
    wall clock, read in the core: a mocked ``time.time()`` (hiro,
    freezegun) does not reach it; ``clock_ms=lambda: int(time.time() * 1000)``,
    also as a ``storage_options`` entry, makes it follow one).
    ``storage``: the tables open here by their suffix (``"fixed-60000"``),
    as ``limits``' own storages name their backend (flask-limiter's ``flask
    limiter config`` prints it)."""

    STORAGE_SCHEME = ["sds"]

    def __init__(
        self,
        uri: str = "sds://",
        wrap_exceptions: bool = False,
        clock_ms: Optional[Callable[[], int]] = None,
        **options: Union[float, str, bool],
    ) -> None:
        self.name, self.capacity, self.mode = _options(uri, options)
        self._clock = clock_ms
        self._fixed: Dict[int, KeyedLimit] = {}
        # The least count cap of the fixed tables open: a count under it
        # needs no check.
        self._least_cap = 1 << 64
        self._sliding: Dict[Tuple[int, int], KeyedLimit] = {}
        self._opening = threading.Lock()
        super().__init__(uri, wrap_exceptions=wrap_exceptions)

    @property
    def storage(self) -> Dict[str, KeyedLimit]:
        tables = {f"fixed-{int(e * 1000)}": t for e, t in list(self._fixed.items())}
        tables.update((f"sliding-{int(e * 1000)}-{l}", t) for (e, l), t in list(self._sliding.items()))
        return tables

    @property
    def base_exceptions(self) -> Union[Type[Exception], Tuple[Type[Exception], ...]]:
        return (SdsError, OSError)

    # -- the tables ------------------------------------------------------

    def _now(self) -> int:
        return self._clock() if self._clock is not None else _native.now_ms()

    def _open(self, suffix: str, rule: Dict[str, Union[str, int, bool]]) -> KeyedLimit:
        if self.name is None:
            return KeyedLimit(rule, self.capacity)
        return KeyedLimit.shared(f"{self.name}.{suffix}", rule, self.capacity, self.mode)

    def _fixed_table(self, expiry: int) -> KeyedLimit:
        table = self._fixed.get(expiry)
        if table is None:
            with self._opening:
                table = self._fixed.get(expiry)
                if table is None:
                    period = int(expiry * 1000)
                    # The table only counts (limits compares the count with
                    # each item's own amount): the core's widest limit.
                    limit = KeyedLimit.counting_limit(period)
                    if limit is None:
                        raise ValueError(f"sds:// cannot count in a window of {expiry} s")
                    rule: Dict[str, Union[str, int, bool]] = {
                        "kind": "fixedWindow", "limit": limit,
                        "periodMs": period, "windowFromFirstHit": True,
                    }
                    table = self._open(f"fixed-{period}", rule)
                    self._least_cap = min(self._least_cap, table.count_cap or 0)
                    self._fixed[expiry] = table
        return table

    def _sliding_table(self, expiry: int, limit: int) -> KeyedLimit:
        table = self._sliding.get((expiry, limit))
        if table is None:
            with self._opening:
                table = self._sliding.get((expiry, limit))
                if table is None:
                    period = int(expiry * 1000)
                    rule: Dict[str, Union[str, int, bool]] = {
                        "kind": "slidingWindow", "limit": limit, "periodMs": period,
                    }
                    table = self._open(f"sliding-{period}-{limit}", rule)
                    self._sliding[(expiry, limit)] = table
        return table

    def _on_disk(self) -> Iterator[Tuple[str, Tuple[int, ...]]]:
        """The tables of ``NAME`` in its directory: (kind, (W in s, [L]))."""
        if self.name is None:
            return
        try:
            # The tables' files are named as the core names them (a bare name under /dev/shm).
            directory, base = os.path.split(_native.table_path(self.name))
        except SdsError:
            return
        pattern = re.compile(re.escape(base) + r"\.(fixed)-(\d+)|" + re.escape(base) + r"\.(sliding)-(\d+)-(\d+)")
        try:
            names = os.listdir(directory or ".")
        except OSError:
            return
        for file in names:
            match = pattern.fullmatch(file)
            if match is None:
                continue
            if match[1]:
                period = int(match[2])
                if period % 1000 == 0:
                    yield "fixed", (period // 1000,)
            elif int(match[4]) % 1000 == 0:
                yield "sliding", (int(match[4]) // 1000, int(match[5]))

    def _fixed_tables(self) -> List[KeyedLimit]:
        """Every fixed table of this storage: opened here or on disk."""
        for kind, (expiry, *_) in list(self._on_disk()):
            if kind == "fixed":
                self._fixed_table(expiry)
        return list(self._fixed.values())

    def _sliding_tables(self, expiry: Optional[int] = None) -> List[KeyedLimit]:
        for kind, (period, *limit) in list(self._on_disk()):
            if kind == "sliding" and expiry in (None, period):
                self._sliding_table(period, limit[0])
        return [t for (e, _), t in list(self._sliding.items()) if expiry in (None, e)]

    def _tables_of(self, key: str) -> List[KeyedLimit]:
        """The fixed table a key of ``limits`` lives in; every fixed table
        for a key of another shape."""
        expiry = _expiry_of(key)
        return [self._fixed_table(expiry)] if expiry is not None else self._fixed_tables()

    def _live(self, key: str, now: int) -> Optional[Tuple[KeyedLimit, KeyCount]]:
        """The table in which ``key`` has a live window at ``now``, and its
        counts there; None when it has none."""
        for table in self._tables_of(key):
            count = table.count(key, now)
            if count.reset_ms:
                return table, count
        return None

    # -- Storage: the fixed window -----------------------------------------

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        # The path of every hit: as little Python as it takes.
        if amount.__class__ is not int:
            amount = _units(amount)
        table = self._fixed.get(expiry)
        if table is None:
            table = self._fixed_table(expiry)
        count = table.increment(key, amount, self._clock and self._clock()).count
        return count if count < self._least_cap else self._past_cap(table, key, expiry, count)

    @staticmethod
    def _past_cap(table: KeyedLimit, key: str, expiry: int, count: int) -> int:
        """A count at its table's cap is above any limit the table serves,
        so ``hit`` refuses; an item whose amount reaches the cap would be
        admitted forever: refused loudly instead."""
        cap = table.count_cap or 0
        amount = _amount_of(key)
        if count >= cap and amount is not None and amount >= cap:
            raise ValueError(f"sds:// counts {cap} hits per key in a window of {expiry} s at most: "
                             f"a limit of {amount} does not fit")
        return count

    def decr(self, key: str, amount: int = 1) -> int:
        """As ``MemoryStorage.decr``: at most ``amount`` off a live count,
        never below 0."""
        now = self._now()
        live = self._live(key, now)
        return int(live[0].decrement(key, _units(amount), now).count) if live else 0

    def get(self, key: str) -> int:
        live = self._live(key, self._now())
        return int(live[1].count) if live else 0

    def get_expiry(self, key: str) -> float:
        now = self._now()
        live = self._live(key, now)
        return (now + live[1].reset_ms if live else now) / 1000

    def clear(self, key: str) -> None:
        for table in self._tables_of(key):
            table.reset(key)

    def check(self) -> bool:
        """Healthy while every table's file is still there (a deleted file
        would split the workers that opened it from those that open anew)."""
        if self.name is None:
            return True
        tables = [*self._fixed.values(), *self._sliding.values()]
        return all(t.path is not None and os.path.exists(t.path) for t in tables)

    def reset(self) -> Optional[int]:
        """Forgets every key of every table; the keys forgotten."""
        tables = [*self._fixed_tables(), *self._sliding_tables()]
        return sum(int(t.reset_all()) for t in tables)

    # -- the sliding window counter ----------------------------------------

    def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        if amount.__class__ is not int:
            amount = _units(amount)
        table = self._sliding.get((expiry, limit))
        if table is None:
            table = self._sliding_table(expiry, limit)
        return table.decide(key, amount, self._clock and self._clock()).admitted

    def _sliding_of(self, key: str, expiry: int) -> List[KeyedLimit]:
        amount = _amount_of(key)
        if amount is not None and _expiry_of(key) == expiry:
            return [self._sliding_table(expiry, amount)]
        return self._sliding_tables(expiry)

    def get_sliding_window(self, key: str, expiry: int) -> Tuple[int, float, int, float]:
        """(previous count, its weight's time left in s, current count,
        its time to live in s), as ``MemoryStorage`` counts: the current
        window lives until the end of the next."""
        now = self._now()
        period = int(expiry * 1000)
        left = (period - now % period) / 1000
        for table in self._sliding_of(key, expiry):
            count = table.count(key, now)
            if count.count or count.previous:
                previous = int(count.previous)
                return previous, left if previous else 0.0, int(count.count), left + expiry
        return 0, 0.0, 0, left + expiry

    def clear_sliding_window(self, key: str, expiry: int) -> None:
        for table in self._sliding_of(key, expiry):
            table.reset(key)

    # -- the moving window: refused ----------------------------------------

    @property
    def acquire_entry(self) -> Callable[..., bool]:
        """``MovingWindowRateLimiter`` looks for this method when it is made:
        raising here refuses it then, with the strategies that work."""
        raise MovingWindowUnsupported(_MOVING_WINDOW)

    @property
    def get_moving_window(self) -> Callable[..., Tuple[float, int]]:
        raise MovingWindowUnsupported(_MOVING_WINDOW)
