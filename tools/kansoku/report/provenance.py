"""Provenance: the runs behind a table or figure, grouped by their factors, and what is known of each run
(status, origin, citation, kept raw files)."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from kansoku.analysis import tables as analysis
from kansoku.model import FactorValue, Provenance, ProvenanceGroup, ProvenanceRun, RunInfo, SourceFile
from kansoku.spec.model import LANGS, Item
from kansoku.store.db import Store, blob_file


def run_anchor(run_id: str) -> str:
    """A short, stable, HTML-safe id for a run (run ids hold '/', '=' and whatever a directory name holds)."""
    return "run-" + hashlib.sha1(run_id.encode("utf-8")).hexdigest()[:12]


# The columns of a run's row and of its files' rows that the report's record of a run (RunInfo) reads: a run's
# fingerprint covers each of them (report/cache.py RUN_FINGERPRINTS_SQL; tests/test_build_incremental.py)
RUN_COLUMNS = ("origin", "status", "start_time", "citation", "hostname")
SOURCE_COLUMNS = ("file_name", "size_bytes", "sha256", "tool", "format", "tool_version", "checked_against",
                  "records_checked")


def runs_provenance(store: Store, run_ids: list[str]) -> dict[str, RunInfo]:
    if not run_ids:
        return {}
    out: dict[str, RunInfo] = {}
    # raw files are published from the store's content-addressed copies (data/blobs), never from where the
    # runs were ingested: a published file always has the bytes its sha256 names
    blobs = os.fspath(store.blobs)
    # a value many runs share (a factor, a status, a tool) held once: the records kept between builds
    # (report/runs.py records_rows) are then written and read back once a value, not once a run
    one: dict[str, str] = {}

    def shared(value):
        return one.setdefault(value, value) if value else value
    for run_id, origin, status, start, citation, hostname, toml_sha in store.query(
        f"SELECT run_id, {', '.join(c + '::VARCHAR' if c == 'start_time' else c for c in RUN_COLUMNS)}, "
            "run_toml_sha256 FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id", [run_ids]):
        out[run_id] = info = RunInfo(run_id, shared(origin), shared(status), start, shared(citation),
                                     shared(hostname), run_anchor(run_id))
        if toml_sha:  # the run's own description, kept with the run
            info.run_toml, info.run_toml_sha256 = blob_file(blobs, toml_sha), toml_sha
    for run_id, factor, value in store.query(
        "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
            "ORDER BY run_id, factor", [run_ids]):
        if run_id in out:
            out[run_id].factors[shared(factor)] = shared(value)
    for run_id, name, size, sha, tool, fmt, ver, against, records in store.query(
        f"SELECT run_id, {', '.join(SOURCE_COLUMNS)} FROM sources WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
            "ORDER BY run_id, file_name", [run_ids]):
        if run_id in out:
            out[run_id].sources.append(SourceFile(
                shared(name), size, sha, shared(tool), shared(fmt), shared(ver), human_size(size),
                blob_file(blobs, sha) if sha else None, checked_against=shared(against), records_checked=records))
    return out


def human_size(n: int | None) -> str:
    if n is None:
        return "—"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def figure_representatives(store: Store, item: Item) -> set[str]:
    """Representative runs of a line/bar figure's points (the run closest to each aggregate)."""
    if not item.x:
        return set()
    try:
        groups = analysis.aggregate(store, item, item.metrics[0], [item.x] + ([item.series] if item.series else []))
    except Exception:  # a chart kind with its own grouping: no representative runs to show
        return set()
    return {g.representative_run_id for g in groups if g.representative_run_id}


def item_provenance(store: Store, report: Any, run_ids: list[str], reps: set[str]) -> Provenance:
    """The runs behind a table or figure, grouped by their factors (all but ``rep``).

    Factors with the same value for every run are listed once (``common``); each group lists its
    repetitions, the representative one marked. Labels are the report's factor names and value labels.
    """
    if not run_ids:
        return Provenance()
    rows = store.query(
        "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [run_ids])
    factors: dict[str, dict[str, str]] = {r: {} for r in run_ids}
    for run_id, f, v in rows:
        factors[run_id][f] = v
    names = sorted({f for fs in factors.values() for f in fs})
    rep_factor = "rep"
    common, varying = [], []
    for f in names:
        vals = {fs.get(f) for fs in factors.values()}
        if f == rep_factor:
            continue
        (common if len(vals) == 1 and None not in vals else varying).append(f)
    # varying factors in the report's usual order: those with a declared order first
    varying.sort(key=lambda f: (f not in report.factor_names, f))

    def lab(f: str, v: str | None) -> dict[str, str]:
        if v is None:
            return {lang: "—" for lang in LANGS}
        return {lang: analysis.factor_value_label(report, f, v, lang) for lang in LANGS}

    def fname(f: str) -> dict[str, str]:
        return {lang: analysis.factor_name(report, f, lang) for lang in LANGS}

    groups: dict[tuple, tuple[ProvenanceGroup, tuple]] = {}
    for run_id in run_ids:
        fs = factors[run_id]
        key = tuple(fs.get(f) for f in varying)
        got = groups.get(key)
        if got is None:  # (labelled once a group: a campaign's tables have thousands of runs in a few groups)
            got = groups[key] = (ProvenanceGroup([lab(f, fs.get(f)) for f in varying], []), key)
        got[0].runs.append(ProvenanceRun(run_id, run_anchor(run_id), fs.get(rep_factor) or "·", run_id in reps))
    sort_keys = [analysis.factor_sort_key(report, f) for f in varying]
    ordered = sorted(groups.values(), key=lambda gk: tuple(k(v or "") for k, v in zip(sort_keys, gk[1])))
    rep_order = analysis.factor_sort_key(None, rep_factor)
    for g, _ in ordered:
        g.runs.sort(key=lambda r: rep_order(r.rep))
    return Provenance(
        common=[FactorValue(fname(f), lab(f, factors[run_ids[0]].get(f))) for f in common],
        factors=[fname(f) for f in varying],
        groups=[g for g, _ in ordered],
        runs=len(run_ids),
    )
