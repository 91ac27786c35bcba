"""Ctrl-C that always works: SIGINT (and SIGTERM) raise KeyboardInterrupt while a command runs, even where SIGINT
was inherited as ignored (a job started with `&`, then `kill -INT`), so `aoi run` and `aoi eval` can save what they
did and say so."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interruptible() -> Iterator[None]:
    """Let SIGINT and SIGTERM raise KeyboardInterrupt inside the block; restore the previous handlers after it.

    Outside the main thread (where Python cannot install handlers) the block runs unchanged.

    Example:
        >>> with interruptible():
        ...     signal.getsignal(signal.SIGINT) is signal.default_int_handler
        True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.default_int_handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
