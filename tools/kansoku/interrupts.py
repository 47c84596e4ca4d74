"""Ctrl-C held back for steps that must not be cut in half (a COMMIT, the swap of a built site), and
witnessed where a library could swallow it (a transaction)."""

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


_witnesses: list[list[int]] = []  # the open sigint_witnessed blocks, innermost last


@contextmanager
def sigint_witnessed() -> Iterator[list[int]]:
    """Ctrl-C raises KeyboardInterrupt as usual, and is also noted in the list. DuckDB reads Python's pending
    signals during a statement and, depending on when the signal lands, does not always raise them again (a
    test saw a Ctrl-C vanish and the ingest commit): the note survives, and :func:`raise_if_witnessed` (between
    files, before COMMIT) stops the work there."""
    seen: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield seen  # not ours to watch: a worker thread, or Ctrl-C ignored or left to the system
        return

    def note(signum, frame):
        seen.append(signum)
        previous(signum, frame)  # Python's own handler: KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    _witnesses.append(seen)
    try:
        yield seen
    finally:
        _witnesses.remove(seen)
        signal.signal(signal.SIGINT, previous)


def raise_if_witnessed() -> None:
    """KeyboardInterrupt when a Ctrl-C arrived inside the open :func:`sigint_witnessed` blocks."""
    if any(_witnesses):
        raise KeyboardInterrupt
