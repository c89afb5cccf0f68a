# Stubs of the extension module sds._native (py/src/*.rs). `make test-py`
# checks them against the built module with mypy's stubtest.
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import (Any, Callable, Coroutine, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar,
                    Union, final)

from typing_extensions import Self, disjoint_base

from .keyed import KeyCount, KeyDecision, KeyStats
from .stats import Stats

__all__ = [
    "Agent",
    "Cluster",
    "_stop_services",
    "Entry",
    "_register_errors",
    "Guarded",
    "check_policy_name",
    "ClientAddress",
    "Admission",
    "HeaderKey",
    "request_header_values",
    "request_peer",
    "RoutePlan",
    "WsgiResponse",
    "WsgiGate",
    "Keys",
    "_register_key_results",
    "table_path",
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

_MetricSample = Tuple[Tuple[str, ...], float]
"""A sample: its labels' values (in the family's label order) and value."""
_MetricFamily = Tuple[str, str, str, Tuple[str, ...], List[_MetricSample]]
"""A family: name (a counter's without `_total`), kind (`"counter"` or
`"gauge"`), help, label names, samples."""
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
    @property
    def slow_call_rate_threshold(self) -> int: ...
    @property
    def slow_call_rate_start(self) -> int: ...
    @property
    def warm_up_period_sec(self) -> int: ...
    @property
    def cold_factor(self) -> int: ...
    @property
    def max_queueing_time_ms(self) -> int: ...
    @property
    def adaptive_concurrency(self) -> int: ...
    @property
    def adaptive_min_limit(self) -> int: ...
    @property
    def adaptive_max_limit(self) -> int: ...
    @property
    def adaptive_initial_limit(self) -> int: ...
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
    def wait_ms(self) -> int:
        """The ms to wait before running the request: a paced point
        (`maxQueueingTimeMs`) spaces its requests evenly at its rate. 0 for
        every other entry (and for a downgraded one). `with` and `async with`
        wait it before their body; a caller of `enter` waits it itself."""
    @property
    def exited(self) -> bool: ...
    def error(self, exc: Optional[BaseException]) -> None: ...
    def exit(self, now_ms: Optional[int] = None) -> None: ...
    def __enter__(self: _E) -> _E:
        """Waits `wait_ms` (`time.sleep`) before the body runs."""
    def __exit__(
        self,
        _exc_type: Optional[Type[BaseException]] = None,
        exc: Optional[BaseException] = None,
        _traceback: Optional[TracebackType] = None,
    ) -> bool: ...
    def __aenter__(self: _E) -> Coroutine[Any, Any, _E]:
        """`async with`: waits `wait_ms` with `asyncio.sleep`."""
    def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]] = None,
        exc: Optional[BaseException] = None,
        traceback: Optional[TracebackType] = None,
    ) -> Coroutine[Any, Any, bool]: ...

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
    def metrics(self, now_ms: Optional[int] = None) -> List[_MetricFamily]:
        """Every metric family as `(name, kind, help, label_names, samples)`,
        each sample `(label_values, value)`: this table's points, its console
        agent and cluster sync if this client started them, and the
        process's keyed limits (a shared table's counts are the host's)."""
    def prometheus_text(self, openmetrics: bool = False, now_ms: Optional[int] = None) -> str:
        """Those metrics as Prometheus text (0.0.4), or OpenMetrics 1.0 text
        (ending in `# EOF`)."""
    @staticmethod
    def metrics_content_type(openmetrics: bool = False) -> str:
        """The HTTP `Content-Type` of `prometheus_text(openmetrics)`."""

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

def _register_key_results(decision: type, count: type, stats: type) -> None:
    """Registers the classes of `Keys`' answers (named tuples of the fields
    in the core's order)."""

def table_path(name_or_path: str | PathLike[str]) -> str:
    """The file a shared table of `name_or_path` lives in: a bare name is a
    file under /dev/shm, a path is itself."""

_K = TypeVar("_K", bound="Keys")

@disjoint_base
class Keys:
    """Per-key limits under one rule in a fixed number of cells (the base of
    `sds.KeyedLimit`)."""

    def __new__(
        cls: Type[_K],
        rule: Union[Mapping[str, Any], str],
        capacity: int = 65536,
        *,
        shared: Optional[str | PathLike[str]] = None,
        mode: Optional[int] = 0o600,
        name: Optional[str] = None,
    ) -> _K: ...
    def decide(self, key: str | bytes, cost: int = 1, now_ms: Optional[int] = None) -> KeyDecision:
        """Decides a call of `cost` units for `key` at `now_ms` (the wall
        clock if `None`), taking them if admitted."""
    def peek(self, key: str | bytes, now_ms: Optional[int] = None) -> KeyDecision:
        """The decision a cost of 0 would get: nothing taken."""
    def release(self, key: str | bytes, units: int = 1) -> bool:
        """In flight: gives back `units` a call took; whether the key held any."""
    def reset(self, key: str | bytes) -> bool:
        """Forgets `key`; whether it was held."""
    def reset_all(self) -> int:
        """Forgets every key; how many were held."""
    def increment(self, key: str | bytes, units: int = 1, now_ms: Optional[int] = None) -> KeyCount:
        """Window rules: counts `units` whatever the limit."""
    def decrement(self, key: str | bytes, units: int = 1, now_ms: Optional[int] = None) -> KeyCount:
        """Window rules: takes up to `units` off a live window's count."""
    def count(self, key: str | bytes, now_ms: Optional[int] = None) -> KeyCount:
        """Window rules: the key's counts, nothing taken."""
    def stats(self) -> KeyStats:
        """The table's counters (a shared table's: every process's keys), in
        the order of the core's table (`KeyTableStats::fields`)."""
    @property
    def capacity(self) -> int:
        """How many keys fit (the capacity asked for, rounded up to buckets
        of 4)."""
    @property
    def path(self) -> Optional[Path]:
        """The file of a shared table, `None` for a private one."""
    @property
    def name(self) -> str:
        """Its `limit` label in the metrics: the `name` given, else a shared
        table's file name, else `private-N`."""
    @property
    def kind(self) -> str:
        """The rule's kind: `"rate"`, `"fixedWindow"`, `"slidingWindow"` or
        `"inFlight"`."""
    @property
    def count_cap(self) -> Optional[int]:
        """Where `increment` stops a key's count (until its window ends);
        `None` for a rate or in flight."""
    @staticmethod
    def counting_limit(period_ms: int) -> Optional[int]:
        """The `limit` of a `fixedWindow` with `windowFromFirstHit` of
        `period_ms` that only counts for a store (`sds.limits`): as wide as
        the window allows (counts then stop at `2 * limit + 1`); `None` for
        a window too long to count in."""

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

# sds-http (py/src/http.rs): what sds.web takes from the crate sds-http.

def check_policy_name(name: str) -> None:
    """Checks that `name` can name a policy in a header: 1 to 64 printable
    ASCII characters (else `sds.InvalidArgument`)."""

@final
class RoutePlan:
    """A route bound to its middleware: its policies (sds-http's
    `RoutePolicies`, their key and cost functions) and its point. One call
    per request decides it in sds-http's order: every key and cost first,
    then the policies (only peeking after a refusal), then the point."""

    def __new__(
        cls,
        style: str,
        policies: Sequence[Tuple[str, Keys, Any, Any]],
        point: Optional[PointHandle],
        asgi: bool,
        request_type: Callable[[Any], Any],
    ) -> RoutePlan: ...
    @property
    def style(self) -> str: ...
    @property
    def policies(self) -> Tuple[str, ...]: ...
    def admit(self, raw: Any, now_ms: Optional[int] = None) -> Admission:
        """Decides the request `raw` (an ASGI scope or a WSGI environ) at
        `now_ms` (the wall clock if `None`): every key and cost function
        first, then the policies, then the point. Returns an `Admission`:
        its `verdict` says what the request met."""

@final
class Admission:
    """What `RoutePlan.admit` decided for a request: `verdict` 0 admitted, 1
    limited (429), 2 a full in-flight table (503, no headers, no fallback),
    3 the point downgraded it (the fallback or 503); `headers`, the
    rate-limit fields its response carries; `wait_ms`, what an admitted
    request waits before the app runs (its point's pacing). An admitted
    request's `finish` gives back what it holds; collected unfinished, it
    gives back its units and its entry exits as abandoned."""

    @property
    def verdict(self) -> int: ...
    @property
    def headers(self) -> List[Tuple[Any, Any]]: ...
    @property
    def wait_ms(self) -> int: ...
    def finish(self, error: Optional[BaseException] = None, status: int = 0) -> None:
        """The response ended with `status` (0: none was sent), or the app
        raised `error`: in-flight units go back and the point's entry exits,
        failed by an `Exception` or a 5xx (a cancellation or exit is no
        failure). Later calls do nothing."""

def request_peer(raw: Any, asgi: bool) -> Optional[str]:
    """The peer's address of an ASGI scope (`asgi`) or a WSGI environ; `None`
    when the server gives none."""

def request_header_values(raw: Any, asgi: bool, name: str, first: bool = False) -> List[str]:
    """The values of header `name` (any case) in an ASGI scope (`asgi`) or a
    WSGI environ, in order; only the first when `first`."""

@final
class HeaderKey:
    """The key function of one request header's first value (an API key, a
    tenant); a request without the header gets `default` (`None`: the
    policy does not apply to it). Called with an `sds.web.Request`, it asks
    the request; a route reads the ASGI scope's or WSGI environ's header
    itself, without a Python call."""

    def __new__(cls, name: str, default: Optional[Union[str, bytes]] = None) -> HeaderKey: ...
    def __call__(self, request: Any) -> Optional[Union[str, bytes]]:
        """The key of `request` (an `sds.web.Request`): the header's first
        value, else the default."""

@disjoint_base
class WsgiGate:
    """The request path of `sds.wsgi.SdsMiddleware`, which derives from it: a
    server's call goes straight to native code (a Python `__call__` was a
    frame and a dozen lookups per request). `app` is set as an attribute;
    `_route` gives it the compiled routes, from the middleware's `__init__`."""

    def __new__(cls, *_args: Any, **_kwargs: Any) -> Self:
        """Takes the middleware's arguments, which `__init__` reads."""
    @property
    def app(self) -> Callable[[Any, Any], Iterable[bytes]]:
        """The WSGI app it guards."""
    @app.setter
    def app(self, app: Callable[[Any, Any], Iterable[bytes]]) -> None: ...
    def _route(self, exact: Dict[str, Any], default: Optional[Any], plan: Optional[Callable[[str, Any], Any]]) -> None:
        """Serves requests on these routes: `exact` maps paths to plans,
        `default` (or `None`) takes the others, unless `plan` (a function of
        the path and the environ) is given to find the plan."""
    def __call__(self, environ: Any, start_response: Callable[..., Any]) -> Iterable[bytes]:
        """A WSGI request: a request admitted with no wait runs the app at once
        in a `WsgiResponse`, which is returned; a refused or paced one goes
        to `self._answer(plan, admission, environ, start_response)`; one no
        route takes goes to the app untouched."""

@final
class WsgiResponse:
    """The app's response for one admitted request: the app calls it as its
    `start_response`; the server iterates and closes it as the app's
    iterable. Its admission finishes when the server closes it, when the app
    raises before returning a body, or when the body raises an `Exception`
    while iterated. A server that never closes it leaves the admission to
    its collection (units back, the entry exits as abandoned)."""

    def __new__(cls, admission: Admission, start_response: Callable[..., Any]) -> WsgiResponse: ...
    def run(self, app: Callable[[Any, Any], Iterable[bytes]], environ: Any) -> WsgiResponse:
        """Runs `app(environ, self)` and keeps the iterable it returns; returns
        `self`. An app that raises finishes the admission with its error."""
    def __call__(self, status: str, headers: List[Tuple[str, str]], exc_info: Any = None) -> Any:
        """The app's `start_response(status, headers, exc_info=None)`: the
        server's, with the rate-limit fields added."""
    def __iter__(self) -> WsgiResponse: ...
    def __next__(self) -> bytes:
        """The body's next chunk. Only an `Exception` is the body's failure
        (a `GeneratorExit` or `KeyboardInterrupt` is not; `close` follows)."""
    def close(self) -> None:
        """The server is done with the response: closes the app's iterable (if
        it has `close`) and finishes the admission with the started status."""

@disjoint_base
class ClientAddress:
    """How a request's client key is found: its peer's address, or behind
    trusted proxies the first untrusted address of `X-Forwarded-For` from
    the right, masked to a prefix (`203.0.113.7`, `2001:db8:1:2::/64`). A
    peer that is no IP address is its own key. Called with an
    `sds.web.Request`, it is that request's key function."""

    def __new__(
        cls, ipv4_prefix: int = 32, ipv6_prefix: int = 64, trusted_proxies: List[str] = ...
    ) -> Self: ...
    @property
    def trusts_proxies(self) -> bool:
        """Whether any proxy is trusted: without one, `X-Forwarded-For` is
        never read (a middleware need not even look it up)."""
    def key(self, peer: str, forwarded_for: List[str] = ...) -> str:
        """The key of a request from `peer` (the socket's address) with the
        values of its `X-Forwarded-For` headers; `sds.InvalidArgument` if
        `peer` is not an IP address."""
    def __call__(self, request: Any) -> str:
        """The key of `request` (an `sds.web.Request`): its peer's, a peer that
        is no IP address as given, no peer at all `""`."""
