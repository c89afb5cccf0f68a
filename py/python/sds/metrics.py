"""sds-native's metrics in a ``prometheus_client`` registry.

>>> from prometheus_client import REGISTRY
>>> from sds.metrics import SdsCollector
>>> REGISTRY.register(SdsCollector(client))

Every scrape reads the client's families at that moment
(``Client.metrics()``): its table's points, its console agent and cluster
sync if it started them, and every live ``KeyedLimit`` of the process. On a
shared table the counts are the host's: scrape any one worker.

``prometheus_client`` is no dependency of ``sds``: this module imports it,
so install it to use the module (``import sds`` never imports it).
``Client.prometheus_text()`` gives the same families as text without it.
"""

from __future__ import annotations

from typing import Iterator, Sequence, Union

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from ._native import Table

__all__ = ["SdsCollector"]

Family = Union[CounterMetricFamily, GaugeMetricFamily]


def _family(name: str, kind: str, doc: str, labels: Sequence[str]) -> Family:
    if kind == "counter":
        # prometheus_client adds `_total` to a counter's samples.
        return CounterMetricFamily(name, doc, labels=labels)
    return GaugeMetricFamily(name, doc, labels=labels)


class SdsCollector:
    """A ``prometheus_client`` collector of ``client``'s metrics (an
    ``sds.Client``): counters and gauges named, typed, described and
    labelled as ``Client.prometheus_text()`` writes them."""

    def __init__(self, client: Table) -> None:
        if not isinstance(client, Table):
            raise TypeError(f"SdsCollector needs an sds.Client, not {type(client).__name__}")
        self._client = client

    def collect(self) -> Iterator[Metric]:
        """The families with samples now."""
        for name, kind, doc, labels, samples in self._client.metrics():
            if not samples:
                continue
            family = _family(name, kind, doc, labels)
            for values, value in samples:
                family.add_metric(values, value)
            yield family

    def describe(self) -> Iterator[Metric]:
        """Every family this collector may give, without samples: what a
        registry checks for clashing names when it registers it."""
        for name, kind, doc, labels, _ in self._client.metrics():
            yield _family(name, kind, doc, labels)
