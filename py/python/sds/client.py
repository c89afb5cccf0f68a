"""``Client`` and ``Point``: the native table and point handle plus the
``guard`` decorator. ``enter``, ``stats``, strategies and listeners are the
native methods themselves, so the hot path never runs Python code of ours."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Type, TypeVar

from . import _native
from .guard import make_guard

F = TypeVar("F", bound=Callable[..., Any])
ErrorTypes = Tuple[Type[BaseException], ...]


class Point(_native.PointHandle):
    """One point of a client, found once: ``enter`` skips the name lookup."""

    __slots__ = ()

    def guard(
        self,
        fallback: Optional[Callable[..., Any]] = None,
        errors: ErrorTypes = (Exception,),
        ignore: ErrorTypes = (),
    ) -> Callable[[F], F]:
        """Protects a function (plain or ``async def``) with this point.

        A downgraded call returns ``fallback(*args, **kwargs)`` (awaited when
        it is awaitable and the function is async), or raises
        ``sds.Downgraded`` without a fallback. An exception of ``errors`` and
        not of ``ignore`` counts as the point's exception; it is re-raised.
        """
        return make_guard(self, fallback, errors, ignore)


class Client(_native.Table):
    """Points, strategies and decisions in a table of ``capacity`` points."""

    __slots__ = ()

    def point(self, name: str) -> Point:
        """A handle on ``name`` (created if needed; ``sds.TableFull`` if no
        slot is left)."""
        return Point(self, name)

    def guard(
        self,
        point: str,
        fallback: Optional[Callable[..., Any]] = None,
        errors: ErrorTypes = (Exception,),
        ignore: ErrorTypes = (),
    ) -> Callable[[F], F]:
        """Protects a function with ``point``; see ``Point.guard``."""
        return self.point(point).guard(fallback=fallback, errors=errors, ignore=ignore)
