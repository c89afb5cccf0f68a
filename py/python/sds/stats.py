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
    """The sliding 10 s sums, the permits held now and the last cycle."""

    visit: int
    exception: int
    timeout: int
    downgrade: int
    concurrent: int
    lastCycle: CycleStats
