"""``KeyedLimit``: per-key limits (a user, an API key, an IP address) under
one rule, in a fixed number of cells: the core's key table, private to the
process or in a file every process of the host shares. Its calls are the
native methods themselves (``decide`` runs no Python code of ours); this
module names their answers.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, NamedTuple, Optional, Type, TypeVar, Union

from . import _native

K = TypeVar("K", bound="KeyedLimit")

Key = Union[str, bytes]
"""A key: text (its UTF-8 bytes) or any bytes, the empty key included."""

Rule = Union[Mapping[str, Any], str]
"""A rule: a mapping of its fields (camelCase or snake_case names), or a
JSON object's text."""


class KeyDecision(NamedTuple):
    """What a key's decision says: everything an HTTP answer needs, in ms
    (round up to seconds for headers)."""

    admitted: bool
    """The call may run; its cost was taken only if so."""
    limit: int
    """The quota: the burst of a rate, the limit of a window (the rule's or
    the named key's). ``RateLimit-Policy: q=limit``."""
    remaining: int
    """Units still available now, after this call. ``RateLimit: r=``."""
    reset_ms: int
    """ms until the key is back to a fresh key's state if no call comes;
    0 when it is fresh. ``RateLimit: t=``."""
    retry_after_ms: Optional[int]
    """When refused: ms until the same cost would be admitted if no other
    call comes (``Retry-After``); ``None`` if no wait admits it (a cost
    above the quota). 0 if admitted, and for a refused in-flight call (a
    release frees units, not time)."""
    window_ms: int
    """The policy's window: the window, or for a rate the time a whole
    burst takes to refill. ``RateLimit-Policy: w=``."""


class KeyCount(NamedTuple):
    """A window rule's counts of a key, as stores of ``limits`` or
    express-rate-limit answer with them."""

    # The field shadows tuple.count (the name every binding gives it).
    count: int  # type: ignore[assignment]
    """Units counted in the key's window (sliding: the current aligned
    window), after the call; it stops at the rule's count cap."""
    previous: int
    """Sliding: the previous aligned window's count; fixed: 0."""
    reset_ms: int
    """ms until the window ends: fixed, 0 when the key has no window;
    sliding, until the current aligned window ends."""


class KeyStats(NamedTuple):
    """A key table's counters (a shared table's: every process's keys), in
    the core's order: its names (``KeyTableStats::NAMES``) in snake_case,
    which ``sds`` checks at import."""

    capacity: int
    """How many keys fit (the capacity asked for, rounded up to buckets
    of 4)."""
    resident: int
    """Cells holding a key."""
    evictions: int
    """Keys whose cell was given to another key."""
    lossy_evictions: int
    """Of those, keys whose state was not a fresh key's: their next call
    starts fresh (the only way the table forgets a limit)."""
    admitted: int
    """Calls of ``decide`` admitted since the table was opened (a shared
    table's: by every process, since the first opened it); ``peek`` is not
    a decision."""
    refused: int
    """Calls of ``decide`` refused since then (a call that raises, such as
    on a full table, is neither)."""


_native._register_key_results(KeyDecision, KeyCount, KeyStats)


class KeyedLimit(_native.Keys):
    """Per-key limits under one rule, in a table of ``capacity`` keys
    (16 bytes each, allocated up front; rounded up to buckets of 4).

    ``rule`` is a mapping (or its JSON text): ``kind`` is ``"rate"``
    (``limit`` units per ``period_ms``, up to ``burst`` at once, default
    ``limit``), ``"fixedWindow"`` (``limit`` per window of ``period_ms``;
    flags ``window_from_first_hit`` and ``count_refused``),
    ``"slidingWindow"`` or ``"inFlight"`` (``limit`` units held at once,
    given back by ``release``); ``exceptions``, a list of ``[key, limit]``
    pairs (text keys), gives up to 8 named keys a limit of their own. Names
    are camelCase (``periodMs``) or snake_case (``period_ms``). A rule the
    core refuses raises ``sds.InvalidStrategy`` (``sds.UnknownField`` for
    a name that is no field) with its message; ``field`` names the field.

    Every call may run on any thread; ``now_ms`` defaults to the wall clock
    (``sds.now_ms()``).

    Every limit shows in every client's metrics (``Client.metrics``,
    ``sds.metrics``, ``sds.otel``) while it lives, under the label
    ``limit``: ``name=`` when given, else a shared table's file name, else
    ``private-N`` (``KeyedLimit.name`` says which). One label shows once:
    give limits names of their own."""

    __slots__ = ()

    @classmethod
    def shared(
        cls: Type[K],
        name_or_path: Union[str, "os.PathLike[str]"],
        rule: Rule,
        capacity: int = 65536,
        mode: int = 0o600,
        name: Optional[str] = None,
    ) -> K:
        """The key table in a file that every process of the host may open:
        all of them decide on the same keys (a key's limit holds host-wide).

        A bare name (no ``/``) is a file under ``/dev/shm``; a path is used
        as given. The file is created with ``mode`` (``0o600``, or ``0o660``
        for the group) if it does not exist; an existing one must be this
        user's, grant no more than ``mode``, and be laid out for exactly
        this ``capacity`` and rule (else ``sds.LayoutMismatch``, naming
        what differs). A process forked after this call (gunicorn
        ``--preload``, ``multiprocessing``) uses the table as it is; on an
        ``"inFlight"`` file it takes a process slot of its own, and the
        units of a process killed while holding them are given back.

        ``name`` labels it in the metrics, as for a private one; without
        it, the label is the file's name."""
        return cls(rule, capacity, shared=name_or_path, mode=mode, name=name)

    def __repr__(self) -> str:
        where = f", shared={str(self.path)!r}" if self.path is not None else ""
        return f"sds.KeyedLimit(kind={self.kind!r}, capacity={self.capacity}{where})"
