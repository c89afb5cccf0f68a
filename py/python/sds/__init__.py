"""sds: the SDS (Service Degrade System) engine, native.

>>> import sds
>>> client = sds.Client()
>>> client.set_strategy("orders", sds.Strategy(visit_threshold=100))
>>> @client.guard("orders", fallback=lambda order: "busy")
... def place(order): ...
"""

from ._native import Entry, SlidingWindow, Strategy, __version__, now_ms
from ._native import MAX_CAPACITY, MAX_NAME_LEN, REASONS
from .admin import AdminAgent, AgentSettings, AgentStatus
from .client import Client, Point
from .cluster import ClusterSettings, ClusterStatus, ClusterSync, ExactDecision
from .keyed import KeyCount, KeyDecision, KeyedLimit, KeyStats
from .stats import CycleStats, Stats
from . import errors
# Every exception class; errors.__all__ is their one list.
from .errors import *  # noqa: F403

__all__ = [
    "__version__",
    "Client",
    "Point",
    "AdminAgent",
    "AgentSettings",
    "AgentStatus",
    "ClusterSync",
    "ClusterSettings",
    "ClusterStatus",
    "ExactDecision",
    "KeyedLimit",
    "KeyDecision",
    "KeyCount",
    "KeyStats",
    "Entry",
    "Strategy",
    "SlidingWindow",
    "Stats",
    "CycleStats",
    "now_ms",
    "MAX_CAPACITY",
    "MAX_NAME_LEN",
    "REASONS",
]
__all__ += errors.__all__
