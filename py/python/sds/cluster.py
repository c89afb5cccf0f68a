"""``ClusterSync``: cluster points, whose thresholds hold for every instance
of a service together, started with ``Client.connect_cluster``. The sync
runs in the native ``sds-cluster`` on a thread of its own (one round trip to
Redis per ``sync_interval``); this module names its settings, its status
fields and an exact decision's, and makes it a context manager.

Every cluster sync of the process is stopped (joined) by an ``atexit``
hook, so the interpreter exits normally with syncs running (waiting at most
one round trip's timeout). A fork child inherits no syncer thread: an
inherited ``ClusterSync`` is not ``running`` there; call ``connect_cluster``
in the child (e.g. in gunicorn's ``post_fork`` hook).
"""

from __future__ import annotations

from typing import NamedTuple, Optional, TypedDict

from . import _native
from ._background import Background
from .admin import StrPath


class ClusterSettings(TypedDict, total=False):
    """The keyword arguments of ``Client.connect_cluster``; ``None`` (or
    leaving one out) is the crate's default. Times in seconds, or in
    milliseconds under the ``_ms`` name (one of the two)."""

    redis_cluster: Optional[bool]
    """``urls`` are seed nodes of a Redis Cluster (default ``False``)."""
    sync_interval: Optional[float]
    """Seconds between syncs (default 0.1)."""
    sync_ms: Optional[int]
    timeout: Optional[float]
    """Seconds a connection or a round trip may take (default 1)."""
    timeout_ms: Optional[int]
    max_backoff: Optional[float]
    """The longest wait between two connection attempts while Redis is
    down, seconds: the wait starts at the sync interval and doubles up to
    this (default 5)."""
    max_backoff_ms: Optional[int]
    key_prefix: Optional[str]
    """Keys are ``{key_prefix:point}:<second>`` (default ``"sds"``)."""
    tls_ca_file: Optional[StrPath]
    """A PEM file of the CA(s) of the servers' certificates (it replaces the
    system's roots)."""
    tls_cert_file: Optional[StrPath]
    """A PEM client certificate for mutual TLS, with ``tls_key_file``."""
    tls_key_file: Optional[StrPath]
    """The PEM private key of ``tls_cert_file``."""


class ClusterStatus(NamedTuple):
    """A snapshot of a cluster sync. Times are UTC epoch milliseconds. The
    fields are the crate's (``sds_cluster::Status``), by name."""

    connected: bool
    """The last sync reached Redis (for at least one point)."""
    syncing: bool
    """This process holds the host's syncer role (always on a private
    table; one process per shared table file)."""
    last_sync_ms: int
    """When the last sync reached Redis; 0 for never."""
    lag_ms: int
    """The age of the other instances' counts: now - ``last_sync_ms``."""
    rtt_us: int
    """The last successful round trip, microseconds."""
    syncs: int
    """Successful syncs since start."""
    failures: int
    """Failed connection attempts and round trips since start."""
    round_trips: int
    """Round trips sent to Redis since start."""
    commands: int
    """Redis commands sent since start."""
    last_error: Optional[str]
    """The last failure's text; ``None`` once a sync succeeds again."""
    points: int
    """The cluster points synced."""
    points_failing: int
    """Points whose last sync failed while others' succeeded (a Redis
    Cluster master down)."""


class ExactDecision(NamedTuple):
    """An exact-mode decision (``ClusterSync.enter_exact``)."""

    admitted: bool
    """The request may go on (no ``exit`` follows)."""
    reason: Optional[str]
    """Why it was refused (one of ``sds.REASONS``); ``None`` if admitted."""
    exact: bool
    """Redis decided; ``False``: Redis was unreachable and the decision is
    the table's local one."""


class ClusterSync(Background, _native.Cluster):
    """The sync of a client's cluster points with Redis. A context manager
    that closes it."""

    __slots__ = ()
    _REPR_NAME = "sds.ClusterSync"

    def status(self) -> ClusterStatus:
        """The syncer's state now; once closed, its last state (as of the
        join). In a fork child of the process that started it:
        ``sds.InvalidArgument``."""
        return ClusterStatus(**self._status())

    def enter_exact(self, point: str, now_ms: Optional[int] = None) -> ExactDecision:
        """Exact mode: decides one request on the cluster point ``point`` in
        Redis (one Lua script checks ``visit_threshold`` over the cluster's
        10 s window and the token bucket over its current second, and counts
        the request, atomically), blocking for one round trip. While Redis
        cannot be reached: the table's local decision (``exact`` false). No
        ``exit`` follows; concurrency, exceptions, timeouts and delays are
        not applied. ``point`` must be one of the cluster's points, else
        ``sds.InvalidArgument``."""
        return ExactDecision(*self._enter_exact(point, now_ms))

