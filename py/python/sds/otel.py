"""sds-native's metrics as OpenTelemetry instruments.

>>> from opentelemetry import metrics
>>> import sds.otel
>>> sds.otel.instrument(client, metrics.get_meter("sds"))

Each family of ``Client.metrics()`` becomes an observable counter or gauge
of the same name (``sds_point_requests``: OpenTelemetry's Prometheus
exporter then writes ``sds_point_requests_total``, as
``Client.prometheus_text()`` does), its help the description, its labels
the attributes. A reader's collection reads the client once for all of
them. On a shared table the counts are the host's: export from any one
worker.

``opentelemetry-api`` is no dependency of ``sds``: this module imports it,
so install it (and an SDK) to use the module (``import sds`` never imports
it).
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Dict, Iterable, List, Set, Tuple, Union

from opentelemetry.metrics import CallbackOptions, Meter, ObservableCounter, ObservableGauge, Observation

from ._native import Table

__all__ = ["instrument"]

Instrument = Union[ObservableCounter, ObservableGauge]

# A collection older than this is read again even by an instrument that
# has not observed it yet (a reader that skipped some instruments).
_FRESH_S = 1.0


class _Snapshot:
    """The client's families, read once per reader's collection: the first
    instrument observed reads them, the others take the same reading; an
    instrument that already observed this reading (the next collection)
    reads them again."""

    def __init__(self, client: Table) -> None:
        self._client = client
        self._lock = threading.Lock()
        self._samples: Dict[str, List[Tuple[Dict[str, str], float]]] = {}
        self._seen: Set[str] = set()
        self._at = 0.0

    def families(self) -> List[Tuple[str, str, str]]:
        """Every family's ``(name, kind, help)``."""
        return [(name, kind, doc) for name, kind, doc, _, _ in self._client.metrics()]

    def observe(self, name: str) -> List[Observation]:
        with self._lock:
            stale = time.monotonic() - self._at > _FRESH_S
            if name in self._seen or stale:
                self._read()
            self._seen.add(name)
            return [Observation(value, attributes) for attributes, value in self._samples.get(name, [])]

    def _read(self) -> None:
        self._samples = {
            name: [(dict(zip(labels, values)), value) for values, value in samples]
            for name, _, _, labels, samples in self._client.metrics()
        }
        self._seen = set()
        self._at = time.monotonic()


def instrument(client: Table, meter: Meter) -> List[Instrument]:
    """Creates on ``meter`` an observable counter or gauge for each family of
    ``client``'s metrics (an ``sds.Client``); returns them, in the
    families' order."""
    if not isinstance(client, Table):
        raise TypeError(f"instrument needs an sds.Client, not {type(client).__name__}")
    snapshot = _Snapshot(client)
    created: List[Instrument] = []
    for name, kind, doc in snapshot.families():
        callbacks = [_callback(snapshot, name)]
        if kind == "counter":
            created.append(meter.create_observable_counter(name, callbacks=callbacks, description=doc))
        else:
            created.append(meter.create_observable_gauge(name, callbacks=callbacks, description=doc))
    return created


def _callback(snapshot: _Snapshot, name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
    def observe(_options: CallbackOptions) -> Iterable[Observation]:
        return snapshot.observe(name)

    return observe
