"""Ctrl-C held back for steps that must not be cut in half (a COMMIT, the swap of a built site)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def sigint_held() -> Iterator[list[int]]:
    """Hold Ctrl-C back for the duration of the block (a COMMIT, a directory swap: steps that must not be
    cut in half); the list says whether one arrived, for the caller to raise afterwards."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)
