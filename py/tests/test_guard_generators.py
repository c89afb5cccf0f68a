"""`guard` on generators and async generators: the entry spans the
iteration, from the first `next()` until the generator returns, raises or
is closed."""

from __future__ import annotations

import asyncio
import gc
import inspect
from typing import Any, AsyncIterator, Generator, Iterator, List

import pytest

import sds


def stats(client: sds.Client) -> Any:
    s = client.stats("p")
    return (s["visit"], s["exception"], s["downgrade"], s["concurrent"])


@pytest.fixture
def one(client: sds.Client) -> sds.Client:
    client.set_strategy("p", {"concurrentThreshold": 1})
    return client


def test_a_generator_holds_its_permit_while_it_runs(one: sds.Client) -> None:
    seen: List[Any] = []

    @one.guard("p", fallback=lambda n: iter(["fallback"]))
    def numbers(n: int) -> Iterator[Any]:
        for i in range(n):
            seen.append(one.stats("p")["concurrent"])
            yield i

    gen = numbers(2)
    assert stats(one) == (0, 0, 0, 0)  # not started: not entered
    assert next(gen) == 0
    assert list(numbers(5)) == ["fallback"]  # the permit is taken
    assert list(gen) == [1]
    assert seen == [1, 1]
    assert stats(one) == (2, 0, 1, 0)
    assert list(numbers(1)) == [0]
    assert inspect.isgeneratorfunction(numbers) and numbers.__name__ == "numbers"


def test_a_generator_error_counts_and_a_close_does_not(one: sds.Client) -> None:
    @one.guard("p")
    def fails() -> Iterator[int]:
        yield 1
        raise ValueError("broken")

    with pytest.raises(ValueError):
        list(fails())
    assert stats(one) == (1, 1, 0, 0)
    gen = fails()
    next(gen)
    gen.close()
    assert stats(one) == (2, 1, 0, 0)
    gen = fails()
    next(gen)
    del gen  # collected unfinished: closed, so exited
    gc.collect()
    assert stats(one) == (3, 1, 0, 0)


def test_send_throw_and_the_return_value_reach_the_generator(client: sds.Client) -> None:
    @client.guard("p")
    def echo() -> Generator[Any, Any, str]:
        got = yield "ready"
        try:
            yield got
        except KeyError:
            yield "caught"
        return "done"

    gen = echo()
    assert next(gen) == "ready"
    assert gen.send(42) == 42
    assert gen.throw(KeyError("k")) == "caught"
    with pytest.raises(StopIteration) as info:
        next(gen)
    assert info.value.value == "done"
    assert stats(client) == (1, 0, 0, 0)


def test_a_downgraded_generator_without_fallback_raises_at_first_next(client: sds.Client) -> None:
    client.set_strategy("p", {"visitThreshold": 0})

    @client.guard("p")
    def numbers() -> Iterator[int]:
        yield 1

    gen = numbers()
    with pytest.raises(sds.Downgraded):
        next(gen)
    assert stats(client) == (1, 0, 1, 0)


def test_an_async_generator_holds_its_permit_while_it_runs(one: sds.Client) -> None:
    async def fallback(n: int) -> AsyncIterator[str]:
        yield "fallback"

    @one.guard("p", fallback=fallback)
    async def numbers(n: int) -> AsyncIterator[int]:
        for i in range(n):
            assert one.stats("p")["concurrent"] == 1
            await asyncio.sleep(0)
            yield i

    async def main() -> List[Any]:
        first = numbers(2)
        got: List[Any] = [await first.__anext__()]
        got += [x async for x in numbers(3)]  # downgraded: the permit is taken
        got += [x async for x in first]
        return got

    assert asyncio.run(main()) == [0, "fallback", 1]
    assert stats(one) == (2, 0, 1, 0)
    assert inspect.isasyncgenfunction(numbers)


def test_an_async_generator_error_counts_and_close_and_cancel_do_not(one: sds.Client) -> None:
    @one.guard("p", fallback=lambda fail: ["busy"])
    async def ticks(fail: bool) -> AsyncIterator[int]:
        yield 1
        if fail:
            raise ValueError("broken")
        await asyncio.sleep(10)
        yield 2

    async def drain(fail: bool) -> List[int]:
        return [x async for x in ticks(fail)]

    async def main() -> None:
        with pytest.raises(ValueError):
            await drain(True)
        assert stats(one) == (1, 1, 0, 0)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(drain(False), timeout=0.01)
        assert stats(one) == (2, 1, 0, 0)
        gen = ticks(False)
        assert await gen.__anext__() == 1
        assert [x async for x in ticks(False)] == ["busy"]  # a sync fallback iterable
        await gen.aclose()
        assert stats(one) == (4, 1, 1, 0)

    asyncio.run(main())


def test_asend_and_athrow_reach_the_async_generator(client: sds.Client) -> None:
    @client.guard("p")
    async def echo() -> Any:
        got = yield "ready"
        try:
            yield got
        except KeyError:
            yield "caught"

    async def main() -> None:
        gen = echo()
        assert await gen.asend(None) == "ready"
        assert await gen.asend(42) == 42
        assert await gen.athrow(KeyError("k")) == "caught"
        with pytest.raises(StopAsyncIteration):
            await gen.__anext__()

    asyncio.run(main())
    assert stats(client) == (1, 0, 0, 0)


def test_an_async_generator_called_with_bad_arguments_exits_its_entry() -> None:
    import asyncio
    import warnings

    import sds

    client = sds.Client()

    @client.guard("agen-args")
    async def numbers(n: int) -> Any:
        yield n

    async def run() -> None:
        gen = numbers()  # type: ignore[call-arg]
        try:
            await gen.__anext__()
        except TypeError:
            pass
        else:
            raise AssertionError("a missing argument raises TypeError")

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        asyncio.run(run())
    stats = client.stats("agen-args")
    assert stats["concurrent"] == 0
    assert stats["exception"] == 1
