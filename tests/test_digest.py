"""kansoku/digest.py: a text hashed in pieces (keeping Python's lock) gives hashlib's digest of the whole."""

from __future__ import annotations

import hashlib

import pytest

from kansoku.digest import GIL_FREE_HASH, digest


@pytest.mark.parametrize("size", [0, 1, GIL_FREE_HASH - 2, GIL_FREE_HASH - 1, GIL_FREE_HASH, 3 * GIL_FREE_HASH + 5])
@pytest.mark.parametrize("name", ["sha256", "sha1"])
def test_a_text_hashed_in_pieces_is_hashlibs_digest_of_the_whole(size, name):
    text = ("観測 kansoku " * (size // 3 + 1))[:size]
    assert digest(text, name) == hashlib.new(name, text.encode()).hexdigest()


def test_every_piece_is_below_hashlibs_threshold(monkeypatch):
    fed = []

    class Spy:
        def __init__(self, real):
            self.real = real

        def update(self, data):
            fed.append(len(data))
            self.real.update(data)

        def hexdigest(self):
            return self.real.hexdigest()

    real_new = hashlib.new
    monkeypatch.setattr(hashlib, "new", lambda name: Spy(real_new(name)))
    digest("x" * (5 * GIL_FREE_HASH), "sha1")
    assert fed and max(fed) < GIL_FREE_HASH and sum(fed) == 5 * GIL_FREE_HASH
