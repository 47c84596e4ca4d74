"""The generated methods page of a report: how its values were aggregated, what the spread beside them
is, how its comparisons' verdicts were decided (method, level, minimum change, interval, runs per
condition) and how steady state was found. The comparison legends under tables point to it.

Every parameter is read from the code that applies it (``analysis/noise.py``, ``analysis/steady.py``), and
the runs per condition from the computed tables, so the page cannot disagree with the numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from kansoku import words
from kansoku.analysis import noise, steady
from kansoku.model import Chapter, MethodNote
from kansoku.spec.model import LANGS
from kansoku.store.db import Store


def _span(ns: set[int]) -> str:
    return "" if not ns else str(min(ns)) if min(ns) == max(ns) else f"{min(ns)}–{max(ns)}"


def method_notes(store: Store, chapters: list[Chapter], run_ids: list[str],
                 has_steady: Callable[[list[str]], bool] | None = None) -> list[MethodNote]:
    """The sections of the methods page (empty for a report without aggregated values). ``has_steady``: whether
    a steady state was found for any of the runs (``steady.any_steady``, which a build keeps by the runs'
    fingerprints: it computes every run's steady state)."""
    cells = [c for ch in chapters for t in ch.tables.values() for row in t.rows for c in row]
    runs = {len(c.run_values) for c in cells if c.kind == "value" and c.run_values}
    compared = [c.verdict for c in cells if c.verdict]
    if not runs and not compared:
        return []

    def note(id_: str, key: str, arg=None, **named) -> MethodNote:
        return MethodNote(id_, words.both(f"methods_title_{id_}"),
                          {lang: words.t(lang, key, arg, **named) for lang in LANGS})

    out = []
    if runs:
        out.append(note("aggregate", "methods_aggregate", _span(runs)))
        rep_cols = [(t, c) for ch in chapters for t in ch.tables.values() for c in t.columns
                    if c.aggregation == "representative"]
        if rep_cols:  # the columns that are not medians, named where the medians are explained
            for lang in LANGS:
                out[-1].text[lang] += (" " if lang == "en" else "") + words.t(
                    lang, "methods_columns_representative", words.t(lang, "list_separator").join(
                        f"{t.label[lang]} {c.text[lang]}" for t, c in rep_cols))
        out.append(note("spread", "methods_spread"))
    if compared:
        m = noise.Method()
        out.append(MethodNote("verdict", words.both("methods_title_verdict"),
                              {lang: noise.method_note(lang, m) for lang in LANGS}))
        out.append(note("interval", "methods_interval", level=f"{m.level * 100:g}", resamples=m.resamples))
        n_value = {v["n"][0] for v in compared if v.get("n")}
        n_base = {v["n"][1] for v in compared if v.get("n")}
        out.append(note("runs", "methods_runs", len(compared), value=_span(n_value) or "0",
                        baseline=_span(n_base) or "0"))
    if run_ids and (has_steady or (lambda ids: steady.any_steady(store, ids)))(run_ids):
        out.append(MethodNote("steady", words.both("methods_title_steady"),
                              {lang: steady.method_note(lang) for lang in LANGS}))
    return out


def citation_text(cit: dict, lang: str, *, with_table: bool = True) -> str:
    """The original report as a reader names it: title (year), table, section, page — never a file name."""
    rep = cit.get("report")
    title = words.pick(rep, lang)
    parts = [f"{title} ({cit['year']})" if cit.get("year") else title]
    if with_table:
        if cit.get("table"):
            parts.append(str(cit["table"]))
        if cit.get("section"):
            parts.append(f"§{cit['section']}")
        if cit.get("page"):
            parts.append(words.t(lang, "citation_page", cit["page"]))
    return ", ".join(p for p in parts if p)


def transcribed_note(store: Store, run_ids: list[str]) -> dict[str, str] | None:
    """The footer of a report whose numbers (some or all) are transcribed: which original reports they come
    from (None when every number was measured)."""
    if not run_ids:
        return None
    cits = [json.loads(r[0]) for r in store.query(
        "SELECT DISTINCT json_extract(run_toml, '$.published.citation')::VARCHAR FROM runs "
        "WHERE origin = 'transcribed' AND run_id IN (SELECT unnest(?::VARCHAR[])) "
        "AND json_extract(run_toml, '$.published.citation') IS NOT NULL",
        [run_ids]) if r[0]]
    if not cits:
        return None
    out = {}
    for lang in LANGS:
        names = sorted({citation_text(c, lang, with_table=False) for c in cits})
        out[lang] = words.t(lang, "footer_transcribed", words.t(lang, "list_separator").join(names))
    return out
