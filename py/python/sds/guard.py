"""The ``guard`` decorator. A plain function becomes a native ``Guarded``
callable; an ``async def`` gets a wrapper that keeps its entry across
``await``."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional, Tuple, Type, TypeVar, cast

from . import _native
from ._native import Entry
from .errors import Downgraded

F = TypeVar("F", bound=Callable[..., Any])
ErrorTypes = Tuple[Type[BaseException], ...]


def _types(types: Any) -> ErrorTypes:
    """A tuple of exception types from a tuple, a list or one type."""
    return (types,) if isinstance(types, type) else tuple(types)


def make_guard(
    handle: _native.PointHandle,
    fallback: Optional[Callable[..., Any]],
    errors: ErrorTypes,
    ignore: ErrorTypes,
) -> Callable[[F], F]:
    """A decorator protecting functions with ``handle``'s point (the name is
    looked up once, at decoration)."""
    enter = handle.enter
    point = handle.name
    errors = _types(errors)
    ignore = _types(ignore)

    def counts(exc: BaseException) -> bool:
        return isinstance(exc, errors) and not isinstance(exc, ignore)

    def downgraded(entry: Entry, args: Any, kwargs: Any) -> Any:
        entry.exit()
        if fallback is None:
            raise Downgraded(point, entry.reason)
        return fallback(*args, **kwargs)

    def decorate(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                entry = enter()
                if entry.downgraded:
                    result = downgraded(entry, args, kwargs)
                    return await result if inspect.isawaitable(result) else result
                try:
                    return await fn(*args, **kwargs)
                except BaseException as exc:
                    if counts(exc):
                        entry.error(exc)
                    raise
                finally:
                    entry.exit()

            return cast(F, guarded_async)

        # Plain functions: the whole call runs natively (no Entry object, no
        # Python frame of ours); update_wrapper gives it fn's name and doc.
        guarded = _native.Guarded(handle, fn, fallback, errors, ignore)
        return cast(F, functools.update_wrapper(guarded, fn))

    return decorate
