"""What the background services (``AdminAgent``, ``ClusterSync``) share on
the Python side: a context manager that closes the service, a ``__repr__``
that tells whether it runs, and the ``atexit`` hook that stops (joins)
every service of the process before the interpreter finalizes. Mixed in
before the native base, which provides ``running`` and ``close``."""

from __future__ import annotations

import atexit
from types import TracebackType
from typing import TYPE_CHECKING, ClassVar, Optional, Type, TypeVar

from . import _native

_Self = TypeVar("_Self", bound="Background")


class Background:
    __slots__ = ()

    _REPR_NAME: ClassVar[str]
    """The public name in ``repr``, e.g. ``"sds.AdminAgent"``."""

    if TYPE_CHECKING:

        @property
        def running(self) -> bool: ...

        def close(self) -> None: ...

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{self._REPR_NAME} {'running' if self.running else 'closed'}>"


atexit.register(_native._stop_services)
