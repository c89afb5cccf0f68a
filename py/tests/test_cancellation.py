"""Cancellations and exits are no service errors: only an `Exception`
counts, in the context manager and in every form of `guard`."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Iterator, List, Type

import pytest

import sds

NOT_ERRORS: List[Type[BaseException]] = [asyncio.CancelledError, KeyboardInterrupt, SystemExit, GeneratorExit]


def counts(client: sds.Client) -> Any:
    stats = client.stats("p")
    return (stats["visit"], stats["exception"], stats["concurrent"])


@pytest.mark.parametrize("kind", NOT_ERRORS, ids=lambda k: k.__name__)
def test_the_context_manager_does_not_count_a_cancellation(client: sds.Client, kind: Type[BaseException]) -> None:
    with pytest.raises(kind):
        with client.enter("p"):
            raise kind()
    assert counts(client) == (1, 0, 0)
    with pytest.raises(ValueError):
        with client.enter("p"):
            raise ValueError("a service error")
    assert counts(client) == (2, 1, 0)


@pytest.mark.parametrize("kind", NOT_ERRORS, ids=lambda k: k.__name__)
def test_guard_does_not_count_a_cancellation_even_if_errors_names_it(
    client: sds.Client, kind: Type[BaseException]
) -> None:
    @client.guard("p", errors=BaseException)
    def plain() -> None:
        raise kind()

    @client.guard("p", errors=BaseException)
    async def coroutine() -> None:
        raise kind()

    @client.guard("p", errors=(BaseException,))
    def generator() -> Iterator[int]:
        yield 1
        raise kind()

    with pytest.raises(kind):
        plain()
    with pytest.raises(kind):
        asyncio.run(coroutine())
    with pytest.raises(kind):
        list(generator())
    assert counts(client) == (3, 0, 0)


def five_time_outs(client: sds.Client, work: Callable[[], Any]) -> None:
    """Five `asyncio.wait_for` time-outs of `work()`, which would sleep 10 s."""

    async def main() -> None:
        for _ in range(5):
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(work(), timeout=0.001)

    asyncio.run(main())


def test_wait_for_time_outs_do_not_trip_an_exception_threshold(client: sds.Client) -> None:
    client.set_strategy("p", {"exceptionThreshold": 5})

    async def with_block() -> None:
        with client.enter("p"):
            await asyncio.sleep(10)

    @client.guard("p")
    async def guarded() -> None:
        await asyncio.sleep(10)

    five_time_outs(client, with_block)
    five_time_outs(client, guarded)
    assert counts(client) == (10, 0, 0)
    entry = client.enter("p")
    assert (entry.downgraded, entry.reason) == (False, None)
    entry.exit()


def test_five_real_errors_do_trip_it(client: sds.Client) -> None:
    client.set_strategy("p", {"exceptionThreshold": 5})
    for _ in range(5):
        with pytest.raises(ValueError):
            with client.enter("p"):
                raise ValueError("a service error")
    entry = client.enter("p")
    assert entry.reason == "EXCEPTION"
    entry.exit()
