"""Hashes of text made without letting go of Python's lock.

hashlib lets other threads run while it hashes 2,048 bytes or more. The build makes its run pages in a thread
(app/build.py Ahead) beside the renderer: a hash that lets go of the lock costs its thread a wait for the lock
as long as the other thread's next stretch of Python, for a hash of a few microseconds
(docs/build-performance.md). Fed in smaller pieces, the lock is kept.
"""

from __future__ import annotations

import hashlib

GIL_FREE_HASH = 2048  # hashlib's threshold: an update of this many bytes or more lets go of the lock


def digest(text: str, name: str = "sha256") -> str:
    """The hex digest (hashlib's ``name``) of ``text`` (UTF-8), fed in pieces too small to let go of the lock."""
    data = text.encode()
    h = hashlib.new(name)
    for i in range(0, len(data), GIL_FREE_HASH - 1):
        h.update(data[i:i + GIL_FREE_HASH - 1])
    return h.hexdigest()
