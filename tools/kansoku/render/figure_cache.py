"""Drawn figures kept between builds: a figure whose chart data did not change is not drawn again.

A figure is drawn (``render.charts.draw``: plotly's figure objects, validated, turned back into JSON) in
every language on every build, and most of a rebuild's figures are the ones of the last build (the item
cache, ``report/cache.py``, hands back the same ``ChartData``). The drawing of one figure in every language
is kept under ``<generated>/build-cache/figures/`` (kansoku/pickle_entries.py), its key the sha256 of

- the code version (every source file of the package and the words: a change of a drawing recomputes
  every figure) and the version of plotly, which validates and serialises the figures,
- the languages drawn, and
- the chart data itself (its kind, options, numbers and every label, pickled as it is once unpickled: equal
  data, equal key, whether computed by this build or taken from the item cache).

So a cached drawing is the drawing a fresh build makes of the same data, byte for byte
(``tests/test_build_incremental.py`` compares a rebuild with a build from scratch). Entries no figure of a
build used are removed at its end. Nothing here knows the store or a spec: the key is the data drawn.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass
from typing import Callable, Sequence

from kansoku.model import ChartData
from kansoku.pickle_entries import PickleEntries
from kansoku.resources import code_version

_plotly_version: str | None = None


def plotly_version() -> str:
    global _plotly_version
    if _plotly_version is None:
        import plotly  # plotly only when a figure is drawn

        _plotly_version = plotly.__version__
    return _plotly_version


@dataclass
class FigureCache(PickleEntries):
    """Drawings kept in ``directory`` (None: draw everything, keep nothing). ``drawn``/``reused`` count the
    figures of this build drawn / taken from the cache."""

    drawn: int = 0
    reused: int = 0

    def key(self, chart: ChartData, langs: Sequence[str]) -> str | None:
        try:
            data = pickle.dumps(chart, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return None  # something in the data pickle cannot hold: drawn every time
        # equal data, equal bytes only once unpickled: a one-letter string read from the store is an object of
        # its own, the same string unpickled is Python's single copy (pickled once, then referred to), so the
        # data a build computed and the same data the next build took from the item cache gave two keys
        data = pickle.dumps(pickle.loads(data), protocol=pickle.HIGHEST_PROTOCOL)
        h = hashlib.sha256()
        for part in (code_version(), plotly_version(), "\x1f".join(langs)):
            h.update(part.encode() + b"\0")
        h.update(data)
        return h.hexdigest()

    def draw(self, chart: ChartData, langs: Sequence[str], draw: Callable[[ChartData, str], dict]) -> dict[str, dict]:
        """``chart`` drawn in every language of ``langs`` (language -> plotly figure), from the cache when an
        entry holds this very data."""
        key = self.key(chart, langs) if self.directory is not None else None
        if key is not None:
            value = self.load(key)
            if isinstance(value, dict) and list(value) == list(langs):
                self.reused += 1
                return value
        value = {lang: draw(chart, lang) for lang in langs}
        self.drawn += 1
        if key is not None:
            self.save(key, value)
        return value
