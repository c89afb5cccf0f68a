"""The ``guard`` decorator. A plain function becomes a native ``Guarded``
callable; an ``async def`` gets a wrapper that keeps its entry across
``await``; a generator (plain or async) gets a generator whose entry spans
the iteration.

Only an ``Exception`` counts as the point's exception: cancellations and
exits (``asyncio.CancelledError``, ``KeyboardInterrupt``, ``SystemExit``,
``GeneratorExit``) are ``BaseException`` only and never count, whatever
``errors`` says.

A paced point's entry (``Entry.wait_ms`` > 0) is waited for before the
protected code runs: ``time.sleep`` for plain functions and generators,
``await asyncio.sleep`` for ``async def`` and async generators (the loop
runs meanwhile). A cancellation during the wait exits the entry, uncounted."""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from typing import Any, AsyncGenerator, Callable, Generator, Optional, Tuple, Type, TypeVar, Union, cast

from . import _native
from ._native import Entry
from .errors import Downgraded, InvalidArgument

F = TypeVar("F", bound=Callable[..., Any])
ErrorTypes = Tuple[Type[BaseException], ...]
# What ``errors`` and ``ignore`` take: one exception class or a tuple of them.
ErrorSpec = Union[Type[BaseException], ErrorTypes]


def _types(name: str, types: object) -> ErrorTypes:
    """``types`` as a tuple of exception classes; anything else raises
    ``sds.InvalidArgument`` naming the argument."""
    spec = types if isinstance(types, tuple) else (types,)
    wrong = [t for t in spec if not (isinstance(t, type) and issubclass(t, BaseException))]
    if wrong:
        bad = wrong[0]
        what = f"the class {bad.__name__}" if isinstance(bad, type) else type(bad).__name__
        if isinstance(types, tuple):
            what = f"a tuple holding {what if isinstance(bad, type) else repr(bad)}"
        raise InvalidArgument(
            f"guard: {name} must be an exception class or a tuple of exception classes, not {what}"
        )
    return cast(ErrorTypes, spec)


def guard_options(
    fallback: object, errors: object, ignore: object
) -> Tuple[Optional[Callable[..., Any]], ErrorTypes, ErrorTypes]:
    """``guard``'s arguments, checked before anything is created."""
    if fallback is not None and not callable(fallback):
        raise InvalidArgument(
            f"guard: fallback must be callable or None, not {type(fallback).__name__}"
        )
    return fallback, _types("errors", errors), _types("ignore", ignore)


def make_guard(
    handle: _native.PointHandle,
    fallback: Optional[Callable[..., Any]],
    errors: ErrorTypes,
    ignore: ErrorTypes,
) -> Callable[[F], F]:
    """A decorator protecting functions with ``handle``'s point (the name is
    looked up once, at decoration). The arguments come from
    ``guard_options``."""
    enter = handle.enter
    point = handle.name

    def failed(entry: Entry, exc: BaseException) -> None:
        """Counts ``exc`` as the point's exception when it is one (an
        ``Exception`` of ``errors``, not of ``ignore``); only a call that
        raised pays for it."""
        if isinstance(exc, Exception) and isinstance(exc, errors) and not isinstance(exc, ignore):
            entry.error(exc)

    def downgraded(entry: Entry, args: Any, kwargs: Any) -> Any:
        entry.exit()
        if fallback is None:
            raise Downgraded(point, entry.reason)
        return fallback(*args, **kwargs)

    def downgraded_call(entry: Entry, args: Any, kwargs: Any) -> Any:
        """A downgraded call (not a generator): without a fallback, the
        console's return value when the client's agent has one."""
        if fallback is None:
            value = handle._return_value()
            if value is not None:
                entry.exit()
                return value
        return downgraded(entry, args, kwargs)

    def decorate(fn: F) -> F:
        if inspect.isasyncgenfunction(fn):
            return cast(F, functools.wraps(fn)(_async_generator(fn, enter, failed, downgraded)))
        if inspect.isgeneratorfunction(fn):
            return cast(F, functools.wraps(fn)(_generator(fn, enter, failed, downgraded)))
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                entry = enter()
                if entry.downgraded:
                    result = downgraded_call(entry, args, kwargs)
                    return await result if inspect.isawaitable(result) else result
                try:
                    if entry.wait_ms:
                        await asyncio.sleep(entry.wait_ms / 1000)
                    return await fn(*args, **kwargs)
                except BaseException as exc:
                    failed(entry, exc)
                    raise
                finally:
                    entry.exit()

            return cast(F, guarded_async)

        # Plain functions: the whole call runs natively (no Entry object, no
        # Python frame of ours); update_wrapper gives it fn's name and doc.
        guarded = _native.Guarded(handle, fn, fallback, errors, ignore)
        return cast(F, functools.update_wrapper(guarded, fn))

    return decorate


Failed = Callable[[Entry, BaseException], None]
Downgrade = Callable[[Entry, Any, Any], Any]


def _generator(fn: Callable[..., Any], enter: Callable[[], Entry], failed: Failed, downgraded: Downgrade) -> Any:
    """A generator function whose entry spans the iteration: entered at the
    first ``next()``, exited when the generator returns, raises or is
    closed (``close()``, or collected unfinished). A downgraded call yields
    from what the fallback returns (an iterable)."""

    def guarded_generator(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        entry = enter()
        if entry.downgraded:
            return (yield from downgraded(entry, args, kwargs))
        try:
            if entry.wait_ms:
                time.sleep(entry.wait_ms / 1000)
            # `yield from` forwards send(), throw() and close() to fn's generator.
            return (yield from fn(*args, **kwargs))
        except BaseException as exc:
            failed(entry, exc)
            raise
        finally:
            entry.exit()

    return guarded_generator


def _async_generator(
    fn: Callable[..., Any], enter: Callable[[], Entry], failed: Failed, downgraded: Downgrade
) -> Any:
    """An async generator function whose entry spans the iteration, as
    ``_generator``'s does. A downgraded call yields what the fallback
    returns (an async iterable or an iterable)."""

    async def guarded_async_generator(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, Any]:
        entry = enter()
        if entry.downgraded:
            result = downgraded(entry, args, kwargs)
            if hasattr(result, "__aiter__"):
                async for item in result:
                    yield item
            else:
                for item in result:
                    yield item
            return
        try:
            if entry.wait_ms:
                await asyncio.sleep(entry.wait_ms / 1000)
            inner = fn(*args, **kwargs)
            # No `yield from` for async generators: asend(), athrow() and
            # aclose() are forwarded by hand.
            try:
                item = await inner.__anext__()
            except StopAsyncIteration:
                return
            while True:
                try:
                    sent = yield item
                except GeneratorExit:
                    await inner.aclose()
                    raise
                except BaseException as thrown:
                    step = inner.athrow(thrown)
                else:
                    step = inner.asend(sent)
                try:
                    item = await step
                except StopAsyncIteration:
                    return
        except BaseException as exc:
            failed(entry, exc)
            raise
        finally:
            entry.exit()

    return guarded_async_generator
