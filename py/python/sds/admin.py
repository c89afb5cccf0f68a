"""``AdminAgent``: a client managed by the SDS console (``sds-admin``),
started with ``Client.connect_admin``. The protocol runs in the native
``sds-agent`` on a thread of its own; this module names its settings and
its status fields and makes it a context manager.

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

import os
from typing import NamedTuple, Optional, TypedDict, Union

from . import _native
from ._background import Background

StrPath = Union[str, "os.PathLike[str]"]


class AgentSettings(TypedDict, total=False):
    """The keyword arguments of ``Client.connect_admin``; ``None`` (or
    leaving one out) is the agent's default. Times in seconds, or in
    milliseconds under the ``_ms`` name (one of the two)."""

    ip: Optional[str]
    """The host's address the console shows (default: the last non-loopback
    IPv4 address)."""
    hostname: Optional[str]
    """The host's name the console shows (default: the system's)."""
    pull_interval: Optional[float]
    """Seconds between the end of a pull and the next (default 5)."""
    pull_interval_ms: Optional[int]
    timeout: Optional[float]
    """Seconds one request may take (default 1)."""
    timeout_ms: Optional[int]
    tls_ca_file: Optional[StrPath]
    """A PEM file of the CA(s) ``https://`` servers are checked against,
    instead of the system's roots."""
    tls_cert_file: Optional[StrPath]
    """A PEM client certificate (chain) for mutual TLS, with ``tls_key_file``."""
    tls_key_file: Optional[StrPath]
    """The PEM private key of ``tls_cert_file``."""


class AgentStatus(NamedTuple):
    """A snapshot of an agent's state. Times are UTC epoch milliseconds of
    the agent's clock, 0 for never. The fields are the crate's
    (``sds_agent::Status``), by name."""

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
        return AgentStatus(**self._status())
