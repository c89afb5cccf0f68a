"""The shape of ``stats()``, as the core's table names and nests it
(``Stats::fields``, ``CycleStats::fields`` under ``Stats::LAST_CYCLE``);
``tests/test_api.py`` checks these keys against what ``stats()`` returns."""

from typing import TypedDict


class CycleStats(TypedDict):
    """The last whole 10 s cycle, as SDS uploads it."""

    visitNum: int
    exceptionNum: int
    timeoutNum: int
    downgradeNum: int
    concurrentNum: int


class Stats(TypedDict):
    """The sliding 10 s sums, the permits held now, the adaptive limit and
    its inputs, and the last cycle."""

    visit: int
    exception: int
    timeout: int
    downgrade: int
    concurrent: int
    adaptiveLimit: int
    """The adaptive in-flight limit (0 without ``adaptive_concurrency``)."""
    adaptiveMinRttUs: int
    """The reference RTT in µs: VEGAS's no-load RTT, GRADIENT2's long RTT,
    GRADIENT's and KNEE's measured min RTT; 0 for AIMD."""
    adaptiveRttUs: int
    """The recent RTT in µs: the last sample's (GRADIENT, KNEE: the last
    window's p50)."""
    adaptiveLongRttUs: int
    """GRADIENT2's long RTT in µs; GRADIENT's min RTT plus its 25 % buffer;
    KNEE's min RTT / (1 - h), h its headroom of 4 % or more (the latency
    it settles at); 0 otherwise."""
    lastCycle: CycleStats
