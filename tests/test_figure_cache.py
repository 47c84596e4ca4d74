"""The figure cache's key (render/figure_cache.py): equal chart data, one key, wherever the data came from."""

from __future__ import annotations

import pickle

from kansoku.model import ChartData
from kansoku.render.figure_cache import FigureCache
from kansoku.words import LANGS


def test_data_computed_and_the_same_data_from_the_item_cache_have_one_key(tmp_path):
    """A build computes a profile comparison whose rows are keyed "a" and "b" as read from the store (strings
    of their own); the next build takes the same data from the item cache (unpickled: Python's single copy of
    each one-letter string, shared with the options' "a" and "b"). Their pickles differed by those shared
    references, and the first rebuild after every computation drew the figure again."""
    a, b = (bytes([c]).decode() for c in b"ab")  # as the store hands them: not Python's cached one-letter "a", "b"
    computed = ChartData(kind="profile_diff", options={"a": "x", "b": "y"}, data={"rows": [{a: 1.5, b: 2.5}]},
                         words={lang: {"title": "t"} for lang in LANGS})
    from_cache = pickle.loads(pickle.dumps(computed))
    assert from_cache == computed
    assert pickle.dumps(from_cache) != pickle.dumps(computed)  # (what made two keys)
    cache = FigureCache(tmp_path)
    assert cache.key(computed, LANGS) == cache.key(from_cache, LANGS) is not None
