# Stubs of the extension module sds._native (py/src/*.rs). `make test-py`
# checks them against the built module with mypy's stubtest.
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Type, TypeVar, final

from typing_extensions import disjoint_base

from .stats import Stats

__all__ = [
    "Agent",
    "Cluster",
    "_stop_services",
    "Entry",
    "_register_errors",
    "Guarded",
    "Strategy",
    "PointHandle",
    "Table",
    "SlidingWindow",
    "now_ms",
    "__version__",
    "ERROR_CODES",
    "REASONS",
    "MAX_CAPACITY",
    "MAX_NAME_LEN",
    "CLOCK",
    "AGENT_STATUS_FIELDS",
    "CLUSTER_STATUS_FIELDS",
]

__version__: str
ERROR_CODES: Dict[str, Tuple[int, str]]
REASONS: Tuple[str, ...]
MAX_CAPACITY: int
MAX_NAME_LEN: int
CLOCK: str
AGENT_STATUS_FIELDS: Tuple[str, ...]
CLUSTER_STATUS_FIELDS: Tuple[str, ...]

_C = TypeVar("_C", bound=Callable[[str, str, int], object])
_E = TypeVar("_E", bound="Entry")

def now_ms() -> int:
    """The wall-clock time in ms that calls without `now_ms` use."""

def _register_errors(classes: Dict[str, type], downgraded: type) -> None: ...
def _stop_services() -> None:
    """Stops every background service of this process (joining their threads)
    and lets no other start or log: `sds` registers it with `atexit`, so no
    service thread is left when the interpreter finalizes."""

@final
class Strategy:
    """A point's thresholds; every field not given keeps the SDS default.

    Keywords are snake_case (`visit_threshold=10`); any negative value turns
    a rule off. Each field is a read-only property: `s.visit_threshold`.
    """

    def __new__(cls, **fields: Optional[int]) -> Strategy: ...
    @staticmethod
    def from_json(text: str) -> Strategy:
        """Parses SDS strategy JSON (`'{"visitThreshold": 10}'`)."""
    @staticmethod
    def from_dict(d: Dict[str, Any]) -> Strategy:
        """From a dict keyed by SDS JSON names."""
    def to_dict(self) -> Dict[str, int]:
        """Every field under its SDS JSON name."""
    @staticmethod
    def fields() -> List[str]:
        """The snake_case field names, in SDS's order."""
    def __reduce__(self) -> Tuple[Callable[[Dict[str, int]], Strategy], Tuple[Dict[str, int]]]: ...
    @property
    def visit_threshold(self) -> int: ...
    @property
    def concurrent_threshold(self) -> int: ...
    @property
    def exception_threshold(self) -> int: ...
    @property
    def exception_rate_threshold(self) -> int: ...
    @property
    def exception_rate_start(self) -> int: ...
    @property
    def timeout_threshold(self) -> int: ...
    @property
    def timeout_count_threshold(self) -> int: ...
    @property
    def token_bucket_generated_tokens_in_second(self) -> int: ...
    @property
    def token_bucket_size(self) -> int: ...
    @property
    def delay_time(self) -> int: ...
    @property
    def retry_interval(self) -> int: ...
    @property
    def downgrade_rate(self) -> int: ...
    @property
    def pressure_test_downgrade(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Entry:
    """A request between `enter` and `exit`; a context manager that marks an
    `Exception` raised in its body and always exits. Collected without
    `exit`, it exits then as failed (unless downgraded) and warns
    (`ResourceWarning`). An exit without `now_ms` is at the wall clock, or at
    the start when `enter` was given `now_ms`. It belongs to the process
    that entered it: in a fork child the parent's entries exit as nothing
    (no permit returned, nothing counted, no warning)."""

    @property
    def downgraded(self) -> bool: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def start_ms(self) -> int: ...
    @property
    def exited(self) -> bool: ...
    def error(self, exc: Optional[BaseException]) -> None: ...
    def exit(self, now_ms: Optional[int] = None) -> None: ...
    def __enter__(self: _E) -> _E: ...
    def __exit__(
        self,
        _exc_type: Optional[Type[BaseException]] = None,
        exc: Optional[BaseException] = None,
        _traceback: Optional[TracebackType] = None,
    ) -> bool: ...

@disjoint_base
class Table:
    """A table of points with a fixed capacity (the base of `sds.Client`)."""

    def __new__(
        cls,
        capacity: int = 1024,
        *,
        shared: Optional[str | PathLike[str]] = None,
        mode: Optional[int] = 0o600,
    ) -> Table: ...
    @property
    def capacity(self) -> int: ...
    @property
    def shared_path(self) -> Optional[Path]: ...
    def __len__(self) -> int: ...
    def enter(
        self, point: str, *, now_ms: Optional[int] = None, pressure_test: bool = False
    ) -> Entry: ...
    def set_strategy(self, point: str, strategy: Strategy | Dict[str, Any] | str) -> None: ...
    def remove_strategy(self, point: str) -> None: ...
    def strategy(self, point: str) -> Optional[Strategy]: ...
    def stats(self, point: str, now_ms: Optional[int] = None) -> Stats: ...
    def on_downgrade(self, callback: _C) -> _C: ...

@final
class Guarded:
    """A plain function protected by a point (what `guard` returns for it)."""

    def __new__(
        cls,
        handle: PointHandle,
        func: Callable[..., Any],
        fallback: Optional[Callable[..., Any]],
        errors: Tuple[Type[BaseException], ...],
        ignore: Tuple[Type[BaseException], ...],
    ) -> Guarded: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, instance: Any, owner: Any = None, /) -> Any: ...

@disjoint_base
class PointHandle:
    """One point of a table, found once (the base of `sds.Point`)."""

    def __new__(cls, table: Table, name: str) -> PointHandle: ...
    @property
    def name(self) -> str: ...
    def enter(self, *, now_ms: Optional[int] = None, pressure_test: bool = False) -> Entry: ...
    def stats(self, now_ms: Optional[int] = None) -> Stats: ...
    def _return_value(self) -> Optional[str]:
        """The console's return value for this point when an agent manages the
        client and has one (what a fallback-less `guard` returns)."""

@disjoint_base
class Agent:
    """The console agent of a client (the base of `sds.AdminAgent`)."""

    def __new__(cls, client: Table, settings: Iterable[Tuple[str, object]]) -> Agent:
        """Starts the console agent for `client`'s table from `settings`,
        `(key, value)` pairs (see `sds.Client.connect_admin`)."""
    def _status(self) -> Dict[str, Any]:
        """The agent's state: `sds_agent::Status`'s fields by name."""
    def return_value(self, point: str) -> Optional[str]:
        """The console's `returnValueStr` for `point`, or `None` (also once
        closed)."""
    @property
    def running(self) -> bool: ...
    def close(self) -> None:
        """Stops the agent and joins its thread; idempotent. The table keeps the
        strategies in force."""

@disjoint_base
class Cluster:
    """The cluster sync of a client (the base of `sds.ClusterSync`)."""

    def __new__(cls, client: Table, settings: Iterable[Tuple[str, object]]) -> Cluster:
        """Starts the cluster sync of `client`'s table from `settings`,
        `(key, value)` pairs (see `sds.Client.connect_cluster`)."""
    def _status(self) -> Dict[str, Any]:
        """The syncer's state: `sds_cluster::Status`'s fields by name; after
        `close`, the last one."""
    def sync_now(self) -> None:
        """One sync now on the calling thread (after the thread's sync in
        progress, if any); `sds.Unavailable` (a `ConnectionError`) when Redis fails."""
    def _enter_exact(self, point: str, now_ms: Optional[int] = None) -> Tuple[bool, Optional[str], bool]:
        """Exact mode: `(admitted, reason, exact)` of one request on the cluster
        point `point`, decided in Redis (one round trip), or locally when
        Redis cannot be reached (`exact` false)."""
    @property
    def running(self) -> bool: ...
    def close(self) -> None:
        """Stops the sync and joins its thread (within about one round trip's
        timeout); idempotent. The points stay cluster points; their remote
        counts leave the window within 10 s."""

@final
class SlidingWindow:
    """A lock-free sliding window of `buckets` buckets of `bucket_ms` each."""

    def __new__(
        cls, bucket_ms: int = 1000, buckets: int = 10, ring: Optional[int] = None
    ) -> SlidingWindow: ...
    def increment(self, now_ms: Optional[int] = None) -> Tuple[int, int]: ...
    def add(self, n: int, now_ms: Optional[int] = None) -> Tuple[int, int]: ...
    def add_at(self, at_ms: int, n: int, now_ms: Optional[int] = None) -> int: ...
    def set(self, value: int, now_ms: Optional[int] = None) -> None: ...
    def fetch_max(self, value: int, now_ms: Optional[int] = None) -> int: ...
    def clear_next_cycle(self, now_ms: Optional[int] = None) -> None: ...
    def sum(self, now_ms: Optional[int] = None) -> int: ...
    def bucket(self, now_ms: Optional[int] = None) -> int: ...
    def last_whole_cycle(self, now_ms: Optional[int] = None) -> int: ...
    @property
    def bucket_ms(self) -> int: ...
    @property
    def buckets(self) -> int: ...
    @property
    def ring(self) -> int: ...
