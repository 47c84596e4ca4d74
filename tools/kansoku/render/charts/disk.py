"""Disk baseline charts: fio bandwidth per pattern and device with the ratio to a baseline device
(FY2013 図 4.1), pg_test_fsync ops/sec per wal_sync_method (Windows study 表 5.3); docs/charts.md.

Data: ``fio_pattern_bw`` (fio.py: one row per run and direction, bandwidth in KiB/s summed over
the jobs of the run's best report, the device from the run's ``device`` factor or the disk fio
reported) and ``pg_test_fsync_results`` (pg_test_fsync.py). Repetitions are aggregated like the
tables (the item's ``aggregate``, median by default) per (device, pattern, block size).
"""

from __future__ import annotations

import statistics

import plotly.graph_objects as go

from kansoku.analysis.tables import check_factor, factor_sort_key, factor_value_label, fmt_number
from kansoku.analysis.figures import compact, kind
from kansoku.spec.model import Item, Report
from kansoku.store.db import Store
from kansoku.render.charts import _common as c

PATTERNS = ["seq_read", "seq_write", "rand_read", "rand_write", "seq_trim", "rand_trim", "seq_mixed", "rand_mixed"]
PATTERN_LABELS = {
    "seq_read": ("シーケンシャル読み込み", "Sequential read"), "seq_write": ("シーケンシャル書き込み", "Sequential write"),
    "rand_read": ("ランダム読み込み", "Random read"), "rand_write": ("ランダム書き込み", "Random write"),
    "seq_trim": ("シーケンシャル trim", "Sequential trim"), "rand_trim": ("ランダム trim", "Random trim"),
    "seq_mixed": ("シーケンシャル混合", "Sequential mixed"), "rand_mixed": ("ランダム混合", "Random mixed"),
}
UNITS = {"MiB/s": 1 / 1024, "KiB/s": 1.0, "MB/s": 1024 / 1e6, "GiB/s": 1 / 1024 ** 2}
FIO_HAS_DATA = "SELECT DISTINCT run_id FROM fio_pattern_bw"
FSYNC_HAS_DATA = "SELECT DISTINCT run_id FROM pg_test_fsync_results"


def _agg(item: Item, values: list[float], what: str) -> float:
    if item.aggregate == "single" and len(values) != 1:
        raise item.error(f"aggregate = 'single' but {len(values)} runs measured {what}; narrow `where`")
    return {"median": statistics.median, "mean": statistics.fmean, "min": min, "max": max,
            "single": lambda v: v[0]}[item.aggregate](values)


def _selected(store: Store, item: Item, has_data: str) -> list[str]:
    have = {r[0] for r in store.query(has_data)}
    runs = [r for r in c.where_runs(store, item) if r in have]
    if not runs:
        raise item.error(f"no runs with data for chart {item.chart!r} match where {item.where}")
    return runs


def fio_groups(store: Store, item: Item) -> tuple[dict, list[str]]:
    """{(device, pattern_direction, bs): (aggregate bw KiB/s, aggregate IOPS, [run ids])}, and all run ids."""
    runs = _selected(store, item, FIO_HAS_DATA)
    rows = store.query(
        "SELECT run_id, coalesce(device, '?'), pattern_direction, coalesce(bs, '?'), bw_kib_s, iops "
        "FROM fio_pattern_bw WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND pattern_direction IS NOT NULL",
        [runs])
    acc: dict[tuple, list] = {}
    for run_id, dev, pat, bs, bw, iops in rows:
        acc.setdefault((dev, pat, bs), []).append((run_id, bw, iops))
    out = {}
    for key, vals in acc.items():
        what = f"{key[1]} on {key[0]} (bs {key[2]})"
        out[key] = (_agg(item, [v[1] for v in vals], what), _agg(item, [v[2] for v in vals], what),
                    sorted(v[0] for v in vals))
    return out, sorted({r for r, *_ in rows})


@kind("fio_bandwidth")
def fio_bandwidth(store: Store, report: Report, item: Item, lang: str) -> dict:
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

    def pat_label(p: tuple[str, str]) -> str:
        lab = PATTERN_LABELS.get(p[0], (p[0], p[0]))[0 if lang == "ja" else 1]
        return f"{lab} ({p[1]})" if len(block_sizes) > 1 else lab

    scale = UNITS[unit] if value == "bw" else 1.0
    fig = go.Figure()
    for i, dev in enumerate(devices):
        xs, ys, texts, hover = [], [], [], []
        for p in pats:
            g = groups.get((dev, p[0], p[1]))
            if g is None:
                continue
            v = (g[0] if value == "bw" else g[1])
            xs.append(pat_label(p))
            ys.append(v * scale)
            shown = fmt_number(v * scale, vdig)
            line = f"{shown} {unit if value == 'bw' else 'IOPS'}, n={len(g[2])}"
            if base is not None and dev != str(base) and (str(base), p[0], p[1]) in groups:
                bg = groups[(str(base), p[0], p[1])]
                bv = bg[0] if value == "bw" else bg[1]
                ratio = v / bv if bv else None
                rt = f"×{fmt_number(ratio, rdig)}" if ratio is not None else "—"
                texts.append(rt)
                line += c.tr(lang, f", {base} 比 {rt}", f", {rt} of {base}")
            else:
                texts.append(shown)
            hover.append(line)
        name = factor_value_label(report, "device", dev, lang)
        if base is not None and dev == str(base):
            name += c.tr(lang, " (基準)", " (baseline)")
        fig.add_trace(go.Bar(x=xs, y=ys, name=name, marker=dict(color=c.color(i)), text=texts,
                             textposition="outside", cliponaxis=False, hovertext=hover, hoverinfo="text+name"))
    y_title = (c.tr(lang, f"帯域 ({unit})", f"Bandwidth ({unit})") if value == "bw"
               else c.tr(lang, "IOPS (回/秒)", "IOPS (I/O operations/s)"))
    lay = c.layout(item, lang, c.tr(lang, "アクセスパターン", "Access pattern"), y_title)
    lay["xaxis"] = dict(lay["xaxis"], type="category", showgrid=False)
    fig.update_layout(**lay, barmode="group", bargap=0.3, showlegend=True)  # name the device even if alone
    return compact(fig)


c.RUNS_OF["fio_bandwidth"] = lambda store, item: fio_groups(store, item)[1]

SECTION_LABELS = {
    "one_write": ("8kB 1 回書き込み", "one 8kB write"), "two_writes": ("8kB 2 回書き込み", "two 8kB writes"),
    "open_sync_sizes": ("open_sync 書き込みサイズ別", "open_sync write sizes"),
    "fsync_other_descriptor": ("別ディスクリプタでの fsync", "fsync on another descriptor"),
    "non_sync_write": ("同期なし書き込み", "non-synced write"),
}


@kind("fsync_methods")
def fsync_methods(store: Store, report: Report, item: Item, lang: str) -> dict:
    """Horizontal bars: pg_test_fsync ops/sec per method in wal_sync_method preference order, one bar per
    section (one / two 8kB writes) or, with ``series``, per condition; unsupported methods say n/a."""
    c.check_options(item, {"sections", "value_digits"})
    sections = c.opt_str_list(item, "sections") or ["one_write", "two_writes"]
    bad = [s for s in sections if s not in SECTION_LABELS]
    if bad:
        raise item.error(f"option sections: unknown section(s) {bad}; known: {list(SECTION_LABELS)}")
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
    fig = go.Figure()
    i = 0
    for cv, cruns in conds:
        for sec in sections:
            vals: dict[str, list[float]] = {}
            na: set[str] = set()
            for run_id, s, _, label, ops, status in rows:
                if s != sec or run_id not in cruns:
                    continue
                if status == "ok" and ops is not None:
                    vals.setdefault(label, []).append(ops)
                else:
                    na.add(label)
            if not vals and not na:
                continue
            ys = [lab for lab in labels if lab in vals or lab in na]
            xs = [_agg(item, vals[lab], f"{lab} ({sec})") if lab in vals else 0.0 for lab in ys]
            texts = [fmt_number(x, vdig) if lab in vals else "n/a" for lab, x in zip(ys, xs)]
            name = SECTION_LABELS[sec][0 if lang == "ja" else 1]
            if cv is not None:
                name = f"{factor_value_label(report, item.series, cv, lang)}, {name}"
            fig.add_trace(go.Bar(x=xs, y=ys, name=name, orientation="h", marker=dict(color=c.color(i)),
                                 text=texts, textposition="outside", cliponaxis=False,
                                 hovertemplate=f"{name}<br>%{{y}}: %{{text}} ops/s<extra></extra>"))
            i += 1
    lay = c.layout(item, lang, c.tr(lang, "1 秒あたりの操作数 (ops/s)", "Operations per second (ops/s)"),
                   c.tr(lang, "同期方式", "Sync method"))
    lay["yaxis"] = dict(lay["yaxis"], autorange="reversed", showgrid=False, type="category")
    lay.setdefault("height", max(320, 22 * len(labels) * max(1, i) + 140))
    fig.update_layout(**lay, barmode="group", bargap=0.25)
    return compact(fig)


c.RUNS_OF["fsync_methods"] = lambda store, item: _selected(store, item, FSYNC_HAS_DATA)
