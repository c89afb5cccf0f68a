"""The ``guard`` decorator: one entry per call, kept across ``await``."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional, Tuple, Type, TypeVar, cast

from ._native import Entry
from .errors import Downgraded

F = TypeVar("F", bound=Callable[..., Any])
ErrorTypes = Tuple[Type[BaseException], ...]


def make_guard(
    enter: Callable[[], Entry],
    point: str,
    fallback: Optional[Callable[..., Any]],
    errors: ErrorTypes,
    ignore: ErrorTypes,
) -> Callable[[F], F]:
    """A decorator that enters through ``enter`` (a point handle's bound
    ``enter``, so the name is looked up once, at decoration)."""

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

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            entry = enter()
            if entry.downgraded:
                return downgraded(entry, args, kwargs)
            try:
                return fn(*args, **kwargs)
            except BaseException as exc:
                if counts(exc):
                    entry.error(exc)
                raise
            finally:
                entry.exit()

        return cast(F, guarded)

    return decorate
