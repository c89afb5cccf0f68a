"""The decorator on plain and async functions."""

from __future__ import annotations

import asyncio
import sys
from typing import List

import pytest

import sds


def test_sync_guard_passes_and_falls_back(client: sds.Client) -> None:
    client.set_strategy("p", {"concurrentThreshold": 1})
    calls: List[int] = []

    @client.guard("p", fallback=lambda n: -n)
    def work(n: int) -> int:
        calls.append(n)
        if n == 1:
            return inner(2)  # re-entered while holding the only permit
        return n

    @client.guard("p", fallback=lambda n: -n)
    def inner(n: int) -> int:
        return n

    assert work(1) == -2
    assert work(3) == 3
    assert calls == [1, 3]
    assert work.__name__ == "work"
    stats = client.stats("p")
    assert (stats["visit"], stats["downgrade"], stats["concurrent"]) == (3, 1, 0)


def test_without_fallback_a_downgrade_raises(client: sds.Client) -> None:
    client.set_strategy("p", {"visitThreshold": 0})

    @client.guard("p")
    def work() -> str:
        return "ran"

    with pytest.raises(sds.Downgraded) as info:
        work()
    assert (info.value.point, info.value.reason) == ("p", "VISIT")
    assert info.value.code == "SDS_DOWNGRADED" and isinstance(info.value, sds.SdsError)
    assert client.stats("p")["exception"] == 0


def test_errors_and_ignore_choose_what_counts(client: sds.Client) -> None:
    @client.guard("p", errors=(ValueError,), ignore=(UnicodeError,))
    def work(exc: BaseException) -> None:
        raise exc

    for exc in (ValueError("counted"), KeyError("not in errors"), UnicodeError("ignored")):
        with pytest.raises(type(exc)):
            work(exc)
    stats = client.stats("p")
    assert (stats["visit"], stats["exception"], stats["concurrent"]) == (3, 1, 0)


def test_async_guard_keeps_the_entry_across_await(client: sds.Client) -> None:
    client.set_strategy("p", {"concurrentThreshold": 1})

    async def fallback(n: int) -> int:
        await asyncio.sleep(0)
        return -n

    @client.guard("p", fallback=fallback)
    async def work(n: int) -> int:
        await asyncio.sleep(0)
        assert client.stats("p")["concurrent"] == 1
        await asyncio.sleep(0)
        return n

    async def main() -> List[int]:
        return list(await asyncio.gather(work(1), work(2), work(3)))

    assert asyncio.run(main()) == [1, -2, -3]
    assert asyncio.iscoroutinefunction(work)
    assert client.stats("p")["concurrent"] == 0


def test_async_guard_counts_exceptions_not_cancellation(client: sds.Client) -> None:
    @client.guard("p")
    async def fails() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("boom")

    @client.guard("p")
    async def hangs() -> None:
        await asyncio.sleep(3600)

    async def main() -> None:
        with pytest.raises(RuntimeError):
            await fails()
        task = asyncio.ensure_future(hangs())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    stats = client.stats("p")
    assert (stats["visit"], stats["exception"], stats["concurrent"]) == (2, 1, 0)


def test_gather_of_100_never_holds_more_than_10_permits(client: sds.Client) -> None:
    client.set_strategy("p", sds.Strategy(concurrent_threshold=10))
    in_body = 0
    peak = 0

    @client.guard("p", fallback=lambda release: "downgraded")
    async def work(release: asyncio.Event) -> str:
        nonlocal in_body, peak
        in_body += 1
        peak = max(peak, in_body)
        assert client.stats("p")["concurrent"] <= 10
        await release.wait()
        in_body -= 1
        return "passed"

    async def main() -> List[str]:
        release = asyncio.Event()
        tasks = [asyncio.ensure_future(work(release)) for _ in range(100)]
        await asyncio.sleep(0)  # every task has entered; the passed ones wait
        assert client.stats("p")["concurrent"] == 10
        release.set()
        return list(await asyncio.gather(*tasks))

    results = asyncio.run(main())
    assert results.count("passed") == 10 and results.count("downgraded") == 90
    assert peak == 10
    stats = client.stats("p")
    assert (stats["visit"], stats["downgrade"], stats["concurrent"]) == (100, 90, 0)


def test_point_handle_guard(client: sds.Client) -> None:
    handle = client.point("h")

    @handle.guard(fallback=lambda: "fallback")
    def work() -> str:
        return "ran"

    assert work() == "ran"
    client.set_strategy("h", {"visitThreshold": 0})
    assert work() == "fallback"


def test_guarded_functions_look_like_the_function(client: sds.Client) -> None:
    def work(a: int, b: int = 2) -> int:
        """Adds."""
        return a + b

    guarded = client.guard("p")(work)
    assert (guarded.__name__, guarded.__doc__, guarded.__wrapped__) == ("work", "Adds.", work)
    assert guarded(1, b=5) == 6
    import inspect

    assert str(inspect.signature(guarded)) == str(inspect.signature(work))


def test_guarded_methods_receive_self(client: sds.Client) -> None:
    class Service:
        def __init__(self) -> None:
            self.calls = 0

        @client.guard("svc", fallback=lambda self, n: -n)
        def handle(self, n: int) -> int:
            self.calls += 1
            return n

    service = Service()
    assert service.handle(3) == 3 and service.calls == 1
    assert Service.handle(service, 4) == 4
    client.set_strategy("svc", {"visitThreshold": 0})
    assert service.handle(5) == -5 and service.calls == 2


def test_a_single_error_type_is_accepted(client: sds.Client) -> None:
    @client.guard("p", errors=KeyError, ignore=())
    def work(exc: BaseException) -> None:
        raise exc

    for exc in (KeyError("a"), ValueError("b")):
        with pytest.raises(type(exc)):
            work(exc)
    assert client.stats("p")["exception"] == 1


def test_a_raising_fallback_propagates_and_the_entry_is_settled(client: sds.Client) -> None:
    client.set_strategy("p", {"visitThreshold": 0, "concurrentThreshold": 5})

    def fallback() -> None:
        raise LookupError("no cache either")

    @client.guard("p", fallback=fallback)
    def work() -> None:
        raise AssertionError("not reached")

    with pytest.raises(LookupError):
        work()
    stats = client.stats("p")
    assert (stats["concurrent"], stats["exception"], stats["downgrade"]) == (0, 0, 1)


def test_downgraded_raised_inside_is_not_an_exception(client: sds.Client) -> None:
    @client.guard("p")
    def work() -> None:
        raise sds.Downgraded("inner", "VISIT")

    with pytest.raises(sds.Downgraded):
        work()
    assert client.stats("p")["exception"] == 0


def test_a_failing_listener_leaves_the_fallback_to_the_caller(
    client: sds.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sugar contract: a listener's error goes to sys.unraisablehook,
    the decision stands and the fallback gets the call's own arguments."""
    unraisable: List[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(u.exc_value))

    @client.on_downgrade
    def bad(point: str, reason: str, time_ms: int) -> None:
        raise RuntimeError("listener bug")

    client.set_strategy("p", {"visitThreshold": 0})

    @client.guard("p", fallback=lambda *args, **kwargs: ("fallback", args, kwargs))
    def work(a: int, b: int = 0) -> object:
        return "ran"

    @client.guard("p", fallback=lambda *args, **kwargs: ("fallback", args, kwargs))
    async def work_async(a: int, b: int = 0) -> object:
        return "ran"

    @client.guard("p")
    def no_fallback() -> str:
        return "ran"

    assert work(1, b=2) == ("fallback", (1,), {"b": 2})
    assert asyncio.run(work_async(1, b=2)) == ("fallback", (1,), {"b": 2})
    with pytest.raises(sds.Downgraded) as info:
        no_fallback()
    assert (info.value.point, info.value.reason) == ("p", "VISIT")
    assert [str(e) for e in unraisable] == ["listener bug"] * 3
    assert client.stats("p", now_ms=sds.now_ms())["exception"] == 0
