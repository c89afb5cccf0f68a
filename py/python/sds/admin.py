"""``AdminAgent``: a client managed by the SDS console (``sds-admin``),
started with ``Client.connect_admin``. The protocol runs in the native
``sds-agent`` on a thread of its own; this module names its status fields
and makes it a context manager.

Log lines go to the logger ``"sds.admin"``: ``WARNING`` for a failure the
agent recovers from (a server down, a strategy refused or applied without
its delay, strategies waiting for room, a point name the console cannot
store), ``INFO`` for a change applied (a new strategy version, the reporter
role taken).

Every agent of the process is stopped (joined) by an ``atexit`` hook, so the
interpreter exits normally with agents running (waiting at most one request
timeout if a request is in flight). A fork child inherits no agent thread:
an inherited ``AdminAgent`` is not ``running`` there; call
``connect_admin`` in the child (e.g. in gunicorn's ``post_fork`` hook).
"""

from __future__ import annotations

import atexit
import math
from typing import NamedTuple

from . import _native
from ._background import Background
from .errors import InvalidArgument


class AgentStatus(NamedTuple):
    """A snapshot of an agent's state. Times are UTC epoch milliseconds of
    the agent's clock, 0 for never."""

    last_pull_ms: int
    """When the last pull finished (or failed)."""
    last_pull_ok: bool
    """Whether it succeeded (also when some strategies were refused)."""
    last_upload_ms: int
    """When the last upload finished (or failed)."""
    last_upload_ok: bool
    """Whether it succeeded."""
    version: int
    """The console's strategy version held: 0 until a set is applied, -1
    when the console's version is null (the shipped console on H2: every
    pull then brings the whole set, and a set that differs from the one in
    force is applied)."""
    is_reporter: bool
    """Whether this process uploads for the host (always on a private table;
    one process per shared table file)."""
    server: str
    """The server the next request goes to."""
    last_error: str
    """The last failure's text, ``""`` if none yet (a success keeps it)."""
    pull_failures: int
    """Pulls that failed since start."""
    upload_failures: int
    """Uploads that failed since start."""
    uploads: int
    """Uploads delivered since start."""
    strategies_waiting: int
    """Strategies of the set in force that wait for room: their points are
    not in the table, and the console may create points only while the
    table is at most half full. Tried again at each pull."""
    points_left_out: int
    """Points left out of every upload because the console cannot store
    their names (over 164 characters); the log names each once."""


class AdminAgent(Background, _native.Agent):
    """The console agent of a client: pulls its strategies, uploads its
    statistics. A context manager that closes it."""

    __slots__ = ()
    _REPR_NAME = "sds.AdminAgent"

    def status(self) -> AgentStatus:
        """The agent's state now; once closed, its last state. In a fork
        child of the process that started it: ``sds.InvalidArgument``."""
        return AgentStatus(*self._status())


def millis(name: str, seconds: float) -> int:
    """``seconds`` (an int or a float) as whole milliseconds; the agent
    judges the value (0 ms is refused)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        raise InvalidArgument(f"{name} must be a finite number of seconds, not {seconds!r}")
    return max(0, round(seconds * 1000))


atexit.register(_native._stop_agents)
