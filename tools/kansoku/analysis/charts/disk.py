"""Disk baseline charts' data: fio bandwidth per pattern and device with the ratio to a baseline device
(FY2013 図 4.1), pg_test_fsync ops/sec per wal_sync_method (Windows study 表 5.3); docs/charts.md.
Drawn by render/charts/disk.py.

Data: ``fio_pattern_bw`` (fio parser: one row per run and direction, bandwidth in KiB/s summed over
the jobs of the run's best report, the device from the run's ``device`` factor or the disk fio
reported) and ``pg_test_fsync_results`` (pg_test_fsync parser). Repetitions are aggregated in SQL like
the tables (the item's ``aggregate``, median by default) per (device, pattern, block size).
"""

from __future__ import annotations

from kansoku import words
from kansoku.analysis.charts import _select as c
from kansoku.analysis.tables import check_factor, factor_sort_key, factor_value_label, fmt_number
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store

PATTERNS = ["seq_read", "seq_write", "rand_read", "rand_write", "seq_trim", "rand_trim", "seq_mixed", "rand_mixed"]
UNITS = {"MiB/s": 1 / 1024, "KiB/s": 1.0, "MB/s": 1024 / 1e6, "GiB/s": 1 / 1024 ** 2}
FIO_HAS_DATA = "SELECT DISTINCT run_id FROM fio_pattern_bw"
FSYNC_HAS_DATA = "SELECT DISTINCT run_id FROM pg_test_fsync_results"
SQL_AGG = {"median": "median", "mean": "avg", "min": "min", "max": "max", "single": "min"}


def _check_single(item: Item, n: int, what: str) -> None:
    if item.aggregate == "single" and n != 1:
        raise item.error(f"aggregate = 'single' but {n} runs measured {what}; narrow `where`")


def _selected(store: Store, item: Item, has_data: str) -> list[str]:
    have = c.runs_with_data(store, has_data)
    runs = [r for r in c.where_runs(store, item) if r in have]
    if not runs:
        raise item.error(f"no runs with data for chart {item.chart!r} match where {item.where}")
    return runs


def fio_groups(store: Store, item: Item) -> tuple[dict, list[str]]:
    """{(device, pattern_direction, bs): (aggregate bw KiB/s, aggregate IOPS, [run ids], (min bw, max bw),
    (min IOPS, max IOPS))}, and all run ids. The runs' range draws each bar's error bar."""
    runs = _selected(store, item, FIO_HAS_DATA)
    agg = SQL_AGG[item.aggregate]
    rows = store.query(
        f"SELECT coalesce(device, '?') AS dev, pattern_direction, coalesce(bs, '?') AS b, {agg}(bw_kib_s), "
        f"{agg}(iops), list(run_id ORDER BY run_id), min(bw_kib_s), max(bw_kib_s), min(iops), max(iops) "
        "FROM fio_pattern_bw WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND pattern_direction IS NOT NULL "
        "GROUP BY ALL", [runs])
    out = {}
    for dev, pat, bs, bw, iops, rids, bw_lo, bw_hi, iops_lo, iops_hi in rows:
        _check_single(item, len(rids), f"{pat} on {dev} (bs {bs})")
        out[(dev, pat, bs)] = (bw, iops, list(rids), (bw_lo, bw_hi), (iops_lo, iops_hi))
    return out, sorted({r for v in out.values() for r in v[2]})


@c.kind("fio_bandwidth", runs=lambda store, item: fio_groups(store, item)[1])
def fio_bandwidth(store: Store, report: Report, item: Item) -> ChartData:
    """Grouped bars: bandwidth (or IOPS) per access pattern, one bar per device; with ``baseline`` the
    other devices' bars are labelled with their ratio to the baseline device (×28.5)."""
    c.check_options(item, {"baseline", "unit", "value", "ratio_digits", "value_digits"})
    unit = c.opt_choice(item, "unit", "MiB/s", tuple(UNITS))
    value = c.opt_choice(item, "value", "bw", ("bw", "iops"))
    rdig = c.opt_int(item, "ratio_digits", 1, low=0)
    vdig = c.opt_int(item, "value_digits", 0, low=0)
    groups, _ = fio_groups(store, item)
    devices = sorted({k[0] for k in groups}, key=factor_sort_key(report, "device"))
    base = item.options.get("baseline")
    if base is not None and str(base) not in devices:
        raise item.error(f"option baseline = {base!r}: no fio runs on that device among {devices}")
    block_sizes = sorted({k[2] for k in groups})
    pats = sorted({(k[1], k[2]) for k in groups},
                  key=lambda p: (PATTERNS.index(p[0]) if p[0] in PATTERNS else 99, p[0], p[1]))

    def pat_label(p: tuple[str, str], lang: str) -> str:
        key = f"fio_pattern_{p[0]}"
        lab = words.t(lang, key) if words.has(key, lang) else p[0]
        return f"{lab} ({p[1]})" if len(block_sizes) > 1 else lab

    scale = UNITS[unit] if value == "bw" else 1.0
    bars = []
    w: dict[str, dict] = {lang: {"names": [], "x": [], "hover": []} for lang in LANGS}
    for dev in devices:
        ys, texts, hover, shown_pats, los, his, ns = [], [], [], [], [], [], []
        ratio_texts: list[str | None] = []
        for p in pats:
            g = groups.get((dev, p[0], p[1]))
            if g is None:
                continue
            v = (g[0] if value == "bw" else g[1])
            shown_pats.append(p)
            ys.append(v * scale)
            lo, hi = g[3] if value == "bw" else g[4]
            los.append(lo * scale)
            his.append(hi * scale)
            ns.append(len(g[2]))
            shown = fmt_number(v * scale, vdig)
            rng = (f" [{fmt_number(lo * scale, vdig)}–{fmt_number(hi * scale, vdig)}]" if len(g[2]) > 1 else "")
            hover.append(f"{shown} {unit if value == 'bw' else 'IOPS'}{rng}, n={len(g[2])}")
            if base is not None and dev != str(base) and (str(base), p[0], p[1]) in groups:
                bg = groups[(str(base), p[0], p[1])]
                bv = bg[0] if value == "bw" else bg[1]
                ratio = v / bv if bv else None
                rt = f"×{fmt_number(ratio, rdig)}" if ratio is not None else "—"
                texts.append(rt)
                ratio_texts.append(rt)
            else:
                texts.append(shown)
                ratio_texts.append(None)
        bars.append({"device": dev, "y": ys, "text": texts, "lo": los, "hi": his, "n": ns})
        for lang in LANGS:
            name = factor_value_label(report, "device", dev, lang)
            if base is not None and dev == str(base):
                name += words.t(lang, "chart_baseline_suffix")
            w[lang]["names"].append(name)
            w[lang]["x"].append([pat_label(p, lang) for p in shown_pats])
            w[lang]["hover"].append([h + (_ratio_text(lang, rt, base) if rt is not None else "")
                                     for h, rt in zip(hover, ratio_texts)])
    for lang in LANGS:
        w[lang]["y_title"] = (words.t(lang, "chart_bandwidth_axis", unit) if value == "bw"
                              else words.t(lang, "chart_iops_axis"))
        w[lang]["x_title"] = words.t(lang, "chart_access_pattern")
    return c.chart(item, {"bars": bars}, w)


def _ratio_text(lang: str, ratio: str, base: object) -> str:
    """', base 比 ×2.0' / ', ×2.0 of base' (the word order differs between the languages)."""
    return words.t(lang, "chart_ratio_of_base").replace("{ratio}", ratio).replace("{base}", str(base))


SECTIONS = ("one_write", "two_writes", "open_sync_sizes", "fsync_other_descriptor", "non_sync_write")


@c.kind("fsync_methods", runs=lambda store, item: _selected(store, item, FSYNC_HAS_DATA))
def fsync_methods(store: Store, report: Report, item: Item) -> ChartData:
    """Horizontal bars: pg_test_fsync ops/sec per method in wal_sync_method preference order, one bar per
    section (one / two 8kB writes) or, with ``series``, per condition; unsupported methods say n/a."""
    c.check_options(item, {"sections", "value_digits"})
    sections = c.opt_str_list(item, "sections") or ["one_write", "two_writes"]
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        raise item.error(f"option sections: unknown section(s) {bad}; known: {list(SECTIONS)}")
    vdig = c.opt_int(item, "value_digits", 0, low=0)
    runs = _selected(store, item, FSYNC_HAS_DATA)
    conds: list[tuple[str | None, list[str]]] = [(None, runs)]
    if item.series:
        check_factor(store, item, item.series, "series")
        fs = c.run_factors(store, runs)
        vals = sorted({fs[r].get(item.series) for r in runs if fs[r].get(item.series) is not None},
                      key=factor_sort_key(report, item.series))
        conds = [(v, [r for r in runs if fs[r].get(item.series) == v]) for v in vals]
    rows = store.query(
        "SELECT run_id, section, item_no, label, ops_per_sec, status FROM pg_test_fsync_results "
        "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND section IN (SELECT unnest(?::VARCHAR[]))",
        [runs, sections])
    if not rows:
        raise item.error(f"option sections {sections}: the selected pg_test_fsync runs have none of them")
    order: dict[str, tuple[int, int]] = {}
    for _, sec, no, label, _, _ in rows:
        order.setdefault(label, (sections.index(sec), no))
    labels = sorted(order, key=lambda x: order[x])
    agg = SQL_AGG[item.aggregate]
    bars = []
    w: dict[str, dict] = {lang: {"names": []} for lang in LANGS}
    for cv, cruns in conds:
        for sec in sections:
            # the aggregate over the condition's runs, per method, in SQL; methods a run could not use: n/a
            res = store.query(
                f"SELECT label, {agg}(ops_per_sec) FILTER (WHERE status = 'ok' AND ops_per_sec IS NOT NULL), "
                "count(*) FILTER (WHERE status = 'ok' AND ops_per_sec IS NOT NULL), "
                "bool_or(NOT (status = 'ok' AND ops_per_sec IS NOT NULL)) FROM pg_test_fsync_results "
                "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND section = ? GROUP BY label",
                [cruns, sec])
            vals = {lab: (v, n) for lab, v, n, _ in res if n}
            na = {lab for lab, _, n, bad_ in res if bad_}
            if not vals and not na:
                continue
            for lab, (_, n) in vals.items():
                _check_single(item, n, f"{lab} ({sec})")
            ys = [lab for lab in labels if lab in vals or lab in na]
            xs = [vals[lab][0] if lab in vals else 0.0 for lab in ys]
            bars.append({"y": ys, "x": xs,
                         "text": [fmt_number(x, vdig) if lab in vals else "n/a" for lab, x in zip(ys, xs)]})
            for lang in LANGS:
                name = words.t(lang, f"fsync_section_{sec}")
                if cv is not None:
                    name = f"{factor_value_label(report, item.series, cv, lang)}, {name}"
                w[lang]["names"].append(name)
    # a method no run could use is named in a line under the chart, not drawn as an empty row (a phone keeps its
    # plot area)
    usable = {y for b in bars for y, t in zip(b["y"], b["text"]) if t != "n/a"}
    unusable = [lab for lab in labels if lab not in usable]
    for b in bars:
        keep = [i for i, y in enumerate(b["y"]) if y in usable]
        for k in ("y", "x", "text"):
            b[k] = [b[k][i] for i in keep]
    labels = [lab for lab in labels if lab in usable]
    for lang in LANGS:
        w[lang]["x_title"] = words.t(lang, "chart_ops_per_second")
        w[lang]["y_title"] = words.t(lang, "chart_sync_method")
        w[lang]["unusable"] = words.t(lang, "chart_fsync_unusable", ", ".join(unusable)) if unusable else None
    return c.chart(item, {"bars": bars, "labels": labels}, w)
