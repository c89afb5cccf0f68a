"""The exceptions of sds: one base class, one subclass per core error code.

A class's code is derived from its name (``TableFull`` -> ``SDS_TABLE_FULL``)
and checked against the core's table at import, so the numbers and
descriptions come from ``sds_core::ErrorCode`` and nothing here can drift.
"""

from __future__ import annotations

import re
from typing import Dict, Optional, Type

from . import _native

__all__ = [
    "SdsError",
    "InvalidStrategy",
    "UnknownField",
    "InvalidJson",
    "InvalidWindow",
    "EmptyName",
    "NameTooLong",
    "TableFull",
    "InvalidCapacity",
    "InvalidEntry",
    "InvalidArgument",
    "LayoutMismatch",
    "Closed",
    "Unavailable",
    "Downgraded",
]

_BY_CODE: Dict[str, Type["SdsError"]] = {}


def _code_of(class_name: str) -> str:
    return "SDS_" + re.sub(r"(?<!^)(?=[A-Z])", "_", class_name).upper()


class SdsError(Exception):
    """Base of every sds error. ``code`` is the core's stable name
    (``"SDS_TABLE_FULL"``), ``number`` its stable number, ``field`` the
    strategy field at fault when there is one."""

    code: Optional[str] = None
    number: Optional[int] = None
    description: Optional[str] = None
    field: Optional[str] = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        code = _code_of(cls.__name__)
        if code not in _native.ERROR_CODES:
            raise RuntimeError(f"{cls.__name__}: the core has no error code {code}")
        cls.code = code
        cls.number, cls.description = _native.ERROR_CODES[code]
        _BY_CODE[code] = cls


class InvalidStrategy(SdsError, ValueError):
    """A strategy value its rule rejects; ``field`` names the field."""


class UnknownField(InvalidStrategy):
    """A strategy key or keyword that is no SDS field; ``field`` is the key."""


class InvalidJson(InvalidStrategy):
    """Strategy text that is not one flat JSON object."""


class InvalidWindow(SdsError, ValueError):
    """``SlidingWindow`` parameters that cannot form a window."""


class EmptyName(SdsError, ValueError):
    """A point name of zero characters."""


class NameTooLong(SdsError, ValueError):
    """A point name longer than ``MAX_NAME_LEN`` UTF-8 bytes."""


class TableFull(SdsError):
    """No free slot for a new point name: raise the client's capacity."""


class InvalidCapacity(SdsError, ValueError):
    """A capacity below 1 or above ``MAX_CAPACITY``."""


class InvalidEntry(SdsError, ValueError):
    """An entry that does not belong to this client."""


class InvalidArgument(SdsError, TypeError, ValueError):
    """An argument of the wrong type or range (a point that is no ``str``, a
    negative ``now_ms``...)."""


class LayoutMismatch(SdsError, ValueError):
    """A shared table file laid out by another build, version or capacity;
    the message names the first field that differs, this process's value
    and the file's."""


class Closed(SdsError, ValueError):
    """A call on an object after its ``close()`` (a cluster sync), like
    ``ValueError`` on a closed file."""


class Unavailable(SdsError, ConnectionError):
    """A server the call needs could not be reached or failed (Redis for a
    cluster's ``sync_now``); nothing was wrong with the arguments."""


class Downgraded(SdsError):
    """Raised by a guarded call that was downgraded and has no fallback."""

    def __init__(self, point: str, reason: Optional[str]) -> None:
        super().__init__(f"{point} downgraded: {reason}")
        self.point = point
        self.reason = reason


_native._register_errors(_BY_CODE, Downgraded)
