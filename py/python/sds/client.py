"""``Client`` and ``Point``: the native table and point handle plus the
``guard`` decorator. ``enter``, ``stats``, strategies and listeners are the
native methods themselves, so the hot path never runs Python code of ours."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple, Type, TypeVar, Union

from . import _native
from .admin import AdminAgent, AgentSettings
from .cluster import ClusterSettings, ClusterSync
from .guard import ErrorSpec, guard_options, make_guard

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    # Python 3.10 has no typing.Unpack; the annotations are never evaluated
    # (``from __future__ import annotations``), so only mypy reads this.
    from typing_extensions import Unpack

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound="Client")


class Point(_native.PointHandle):
    """One point of a client, found once: ``enter`` skips the name lookup."""

    __slots__ = ()

    def guard(
        self,
        fallback: Optional[Callable[..., Any]] = None,
        errors: ErrorSpec = (Exception,),
        ignore: ErrorSpec = (),
    ) -> Callable[[F], F]:
        """Protects a function with this point: a plain function, an
        ``async def``, a generator or an async generator.

        A downgraded call returns ``fallback(*args, **kwargs)`` (awaited when
        it is awaitable and the function is async). Without a fallback it
        returns the console's return value for the point (its
        ``returnValueStr``, a ``str`` as typed in the console) when the
        client is managed by the console (``Client.connect_admin``) and the
        point has one, else raises ``sds.Downgraded``; a generator always
        raises it. An ``Exception`` of ``errors``
        (an exception class or a tuple of them) and not of ``ignore`` counts
        as the point's exception; it is re-raised. Cancellations and exits
        (``asyncio.CancelledError``, ``KeyboardInterrupt``, ``SystemExit``,
        ``GeneratorExit``) never count.

        A generator's entry spans its iteration: it is entered at the first
        ``next()`` (or ``anext()``) and exited when the generator returns,
        raises or is closed; a downgraded generator yields from the iterable
        the fallback returns. Bad arguments raise ``sds.InvalidArgument``
        here, before the decorator exists.
        """
        return make_guard(self, *guard_options(fallback, errors, ignore))


class Client(_native.Table):
    """Points, strategies and decisions in a table of ``capacity`` points."""

    __slots__ = ()

    @classmethod
    def shared(
        cls: Type[C],
        name_or_path: Union[str, "os.PathLike[str]"],
        capacity: int = 1024,
        mode: int = 0o600,
    ) -> C:
        """A client on the table in a file that every process of the host
        may open: all of them share its points (visits, permits, strategies,
        delays); listeners stay per process.

        A bare name (no ``/``) is a file under ``/dev/shm``; a path is used
        as given. The file is created with ``mode`` (``0o600``, or ``0o660``
        for the group) if it does not exist; an existing one must be this
        user's, grant no more than ``mode``, and be laid out for exactly
        ``capacity`` points (else ``sds.LayoutMismatch``). A process forked
        after this call (gunicorn ``--preload``, ``multiprocessing``) may
        use the client: the child registers itself in the file on its first
        call."""
        return cls(capacity, shared=name_or_path, mode=mode)

    def point(self, name: str) -> Point:
        """A handle on ``name`` (created if needed; ``sds.TableFull`` if no
        slot is left)."""
        return Point(self, name)

    def guard(
        self,
        point: str,
        fallback: Optional[Callable[..., Any]] = None,
        errors: ErrorSpec = (Exception,),
        ignore: ErrorSpec = (),
    ) -> Callable[[F], F]:
        """Protects a function with ``point``; see ``Point.guard``. The
        arguments are checked before the point is created."""
        options = guard_options(fallback, errors, ignore)
        return make_guard(self.point(point), *options)

    def connect_admin(
        self,
        servers: str,
        app_group: str,
        app_name: str,
        **settings: Unpack[AgentSettings],
    ) -> AdminAgent:
        """Lets the SDS console (``sds-admin``) manage this client's table:
        an agent thread pulls the app's strategies at once and every
        ``pull_interval`` seconds and applies each set whole (points missing
        from it lose their strategy; an invalid one is refused and logged,
        the point keeps its old one), and uploads the last whole cycle's
        statistics at second 5 of each 10 s cycle when this process is the
        host's reporter. ``enter`` never waits on it.

        ``servers`` is a comma-separated list of ``http://`` or ``https://``
        base URLs (failed over in turn); the keyword arguments are
        ``sds.AgentSettings`` (times in seconds). ``https://`` servers'
        certificates are checked against the system's roots, or against
        ``tls_ca_file``; a certificate that does not verify fails the
        request like a console down (``status().last_error`` says why).

        A setting the agent refuses (an unknown keyword, a value of the
        wrong type, a file that cannot be read, a certificate without its
        key, TLS files without an ``https://`` server...) raises
        ``sds.InvalidArgument`` with the agent's message, as does a second
        agent while one runs. The agent runs until ``close()`` (or the
        ``with`` block ends), the client is collected, or the interpreter
        exits. In a fork child, call this again (the agent thread is not
        inherited)."""
        names = [("servers", servers), ("app_group", app_group), ("app_name", app_name)]
        return AdminAgent(self, [*names, *settings.items()])

    def connect_cluster(
        self,
        urls: Union[str, List[str], Tuple[str, ...]],
        points: Union[str, List[str], Tuple[str, ...]],
        **settings: Unpack[ClusterSettings],
    ) -> ClusterSync:
        """Makes ``points`` cluster points (created if absent): their
        thresholds hold for every instance that syncs them through the same
        Redis. Decisions stay local (``enter`` reads this table's counts plus
        the other instances' as of the last sync, and never waits on Redis);
        a thread pushes this table's counts and reads the others' every
        ``sync_interval`` seconds, in one round trip (one per master on a
        Redis Cluster). Other points stay local. Never waits for Redis: an
        unreachable server shows in ``status()``.

        ``urls`` is a ``redis://[user[:password]@]host[:port][/db]`` URL
        (``rediss://`` for TLS), or a list of seed nodes with
        ``redis_cluster=True``; ``points`` a name or a list of names; the
        keyword arguments are ``sds.ClusterSettings`` (times in seconds).

        A setting the cluster crate refuses raises ``sds.InvalidArgument``
        with its message (``sds.TableFull`` when a point finds no room), as
        does a second sync while the client's first one runs. The sync runs
        until ``close()`` (or the ``with`` block ends), the client is
        collected, or the interpreter exits. In a fork child, call this
        again (the thread is not inherited)."""
        names = [("urls", urls), ("points", points)]
        return ClusterSync(self, [*names, *settings.items()])
