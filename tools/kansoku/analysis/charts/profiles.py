"""Profile charts' data (docs/charts.md): a flame graph per condition and the differential view of two
conditions. Drawn by render/charts/profiles.py.

Data: ``profile_stacks`` / ``profile_functions`` (parsers/profiles). A condition (a value of ``series``) is all its
runs: each run's stacks as shares of the run's samples, averaged over the runs (every repetition weighs the same,
however many samples it took). The differential view compares the per-run shares of each function between two
conditions with the tables' verdict (analysis/noise.py): higher or lower beyond run-to-run noise, or within noise.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

from kansoku import words
from kansoku.analysis import noise
from kansoku.analysis.charts import _select as c
from kansoku.model import ChartData
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store

PROFILES = ("cpu", "syscalls")


def _has_data(profile: str) -> str:
    return f"SELECT DISTINCT run_id FROM profile_stacks WHERE profile = '{profile}'"


def _conditions(store: Store, report: Report | None, item: Item, profile: str) -> list[tuple[c.Pick, dict[str, str]]]:
    """Every condition (all its runs) and its name per language."""
    ps = c.picks(store, report, item, item.series, "all", has_data=_has_data(profile))
    out = []
    for p in ps:
        names = {}
        if report is not None:
            for lang in LANGS:
                if item.series:
                    names[lang] = c.pick_name(report, item, item.series, c.Pick(p.key, [p.run_ids[0]], None, 1),
                                              p.run_ids[0], lang, {})
                else:
                    names[lang] = words.t(lang, "chart_profile_all_runs")
        out.append((p, names))
    return out


def _processes_sql(item: Item) -> tuple[str, list]:
    procs = c.opt_str_list(item, "process")
    if not procs:
        return "", []
    return " AND process IN (SELECT unnest(?::VARCHAR[]))", [procs]


def _stack_samples(store: Store, item: Item, runs: list[str], profile: str) -> list[tuple[str, str, int]]:
    """(run, stack, samples) of every stack the runs sampled (the item's processes only)."""
    extra, params = _processes_sql(item)
    rows = store.query(
        f"""SELECT run_id, stack, sum(samples) AS s FROM profile_stacks
            WHERE profile = ? AND run_id IN (SELECT unnest(?::VARCHAR[])){extra} GROUP BY run_id, stack
            ORDER BY run_id, stack""",
        [profile, runs, *params])
    return [(r, stack, int(s)) for r, stack, s in rows]


def _shares(rows: list[tuple[str, str, int]], runs: list[str]) -> dict[str, float]:
    """Mean share (%) of each stack over the runs: every repetition weighs the same."""
    totals: dict[str, int] = {}
    for r, _, s in rows:
        totals[r] = totals.get(r, 0) + s
    out: dict[str, float] = {}
    for r, stack, s in rows:
        out[stack] = out.get(stack, 0.0) + 100.0 * s / totals[r] / len(runs)
    return out


def folded(rows: list[tuple[str, str, int]]) -> list[list]:
    """The condition's stacks as flame-graph tools read them (``a;b;c 123``): each stack's samples summed over
    the runs, as stored; sorted by stack, as flamegraph.pl sorts them."""
    out: dict[str, int] = {}
    for _, stack, s in rows:
        out[stack] = out.get(stack, 0) + s
    return [[k, out[k]] for k in sorted(out)]


def function_totals(shares: dict[str, float]) -> dict[str, tuple[float, float]]:
    """function -> (self, total) share (%): self where it is the leaf, total in every stack it is in (once a
    stack, however often it recurses)."""
    out: dict[str, list[float]] = {}
    for stack, share in shares.items():
        frames = stack.split(";")
        out.setdefault(frames[-1], [0.0, 0.0])[0] += share
        for f in set(frames):
            out.setdefault(f, [0.0, 0.0])[1] += share
    return {f: (v[0], v[1]) for f, v in out.items()}


TOP_FUNCTIONS = 10  # rows of a flame graph's list of top functions (its view on a phone and its table)


def top_functions(shares: dict[str, float], n: int = TOP_FUNCTIONS) -> list[list]:
    """The ``n`` functions with the largest self share: [function, self, total]."""
    tot = function_totals(shares)
    best = sorted(tot, key=lambda f: (-tot[f][0], f))[:n]
    return [[f, round(tot[f][0], 4), round(tot[f][1], 4)] for f in best]


def _frame_shares(shares: dict[str, float], max_depth: int) -> tuple[dict[tuple[str, ...], float],
                                                                    dict[tuple[str, ...], float]]:
    """Per frame (its path from the root): total share (callees included) and self share."""
    total: dict[tuple[str, ...], float] = {(): 0.0}
    self_: dict[tuple[str, ...], float] = {}
    for stack, share in shares.items():
        frames = tuple(stack.split(";"))[:max_depth]
        total[()] += share
        for k in range(1, len(frames) + 1):
            total[frames[:k]] = total.get(frames[:k], 0.0) + share
        self_[frames] = self_.get(frames, 0.0) + share
    return total, self_


def flame_paths(tree: dict[str, list]) -> list[tuple[str, ...]]:
    """Each frame's path from the root (the root's is ())."""
    out: list[tuple[str, ...]] = []
    for label, parent in zip(tree["labels"], tree["parents"]):
        out.append(() if parent < 0 else out[parent] + (label,))
    return out


def flame_tree(shares: dict[str, float], min_pct: float, max_depth: int) -> dict[str, list]:
    """The flame graph's frames: ``labels``, ``parents`` (index, -1 for the root), ``depth`` (0 the root),
    ``starts`` (left edge, in % of the samples: callees side by side from their caller's left edge, in
    alphabetical order as in Brendan Gregg's flame graphs), ``values`` (width: the total share, callees
    included), ``self`` (the share where the frame is the leaf). Frames below ``min_pct`` are left out (their
    share stays in their caller's width), and frames deeper than ``max_depth``."""
    total, self_ = _frame_shares(shares, max_depth)
    keep = sorted((p for p, v in total.items() if p == () or v >= min_pct), key=lambda p: (len(p), p))
    index = {p: i for i, p in enumerate(keep)}
    start: dict[tuple[str, ...], float] = {(): 0.0}
    next_free: dict[tuple[str, ...], float] = {(): 0.0}
    for p in keep[1:]:  # sorted by depth, then alphabetically: a caller is placed before its callees
        parent = p[:-1]
        start[p] = next_free[parent]
        next_free[parent] += total[p]
        next_free[p] = start[p]
    return {"labels": [p[-1] if p else "" for p in keep],
            "parents": [index.get(p[:-1], -1) if p else -1 for p in keep],
            "depth": [len(p) for p in keep],
            "starts": [round(start[p], 4) for p in keep],
            "values": [round(total[p], 4) for p in keep],
            "self": [round(self_.get(p, 0.0), 4) for p in keep]}


def _runs(store: Store, item: Item) -> list[str]:
    profile = item.options.get("profile", "cpu")
    return sorted(r for p, _ in _conditions(store, None, item, profile if profile in PROFILES else "cpu")
                  for r in p.run_ids)



def _sides(store, report, item, profile: str) -> list[tuple[Any, Any]]:
    """The two conditions a difference compares: the values ``a`` and ``b`` of the item's series factor, each
    with its profiles (an error naming the values that have some otherwise)."""
    conds = {str(p.key): (p, names) for p, names in _conditions(store, report, item, profile)}
    sides = []
    for side in ("a", "b"):
        v = item.options.get(side)
        if v is None or str(v) not in conds:
            raise item.error(f"option {side} must be a value of {item.series} with profiles: {sorted(conds)}")
        sides.append(conds[str(v)])
    return sides


def _flame_options(item: Item, extra: set[str]) -> tuple[str, float, int]:
    c.check_options(item, {"profile", "process", "min_pct", "max_depth"} | extra)
    profile = c.opt_choice(item, "profile", "cpu", PROFILES)
    min_pct = float(c.opt(item, "min_pct", 0.5, (int, float), "a share in % (0 to 100)"))
    if not 0 <= min_pct <= 100:
        raise item.error(f"option min_pct must be a share in % (0 to 100), got {min_pct!r}")
    return profile, min_pct, c.opt_int(item, "max_depth", 60)


def _samples_of(store: Store, item: Item, p: c.Pick, profile: str) -> list[tuple[str, str, int]]:
    rows = _stack_samples(store, item, p.run_ids, profile)
    if not rows:
        raise item.error(f"no {profile} profile samples in runs {p.run_ids}"
                         + (f" for processes {c.opt_str_list(item, 'process')}" if "process" in item.options else ""))
    return rows


def _flame_words(lang: str, profile: str) -> dict[str, Any]:
    """The words of every flame graph: its frames' hover, the reader's tools (search, zoom), the legend."""
    return {"root": words.t(lang, "chart_profile_root_" + profile),
            "total": words.t(lang, "chart_profile_total_share"), "self": words.t(lang, "chart_profile_self_share"),
            "unknown": words.t(lang, "chart_flame_unknown"), "search": words.t(lang, "chart_flame_search"),
            "reset": words.t(lang, "chart_flame_reset"), "hint": words.t(lang, "chart_flame_hint"),
            "matched": words.t(lang, "chart_flame_matched"), "function": words.t(lang, "chart_profile_function"),
            "x_title": words.t(lang, "chart_flame_x_title"), "print_note": words.t(lang, "chart_flame_print_note", "{pct}")}


@c.kind("flamegraph", runs=_runs)
def flamegraph(store: Store, report: Report, item: Item) -> ChartData:
    """A flame graph per condition (root at the bottom, callees above, width = share of the samples), drawn
    with horizontal bars (the site's plotly bundle); on the site a click zooms into a frame and a search box
    highlights a function (static/js/kansoku.js). Options: ``profile`` (cpu, syscalls), ``process`` (only these
    processes, e.g. "postgres" in a system-wide profile), ``min_pct`` (frames below this share are left out,
    default 0.5), ``max_depth`` (default 60). Its download is each condition's folded stacks."""
    profile, min_pct, max_depth = _flame_options(item, {"run"})
    conds = _conditions(store, report, item, profile)
    trees, runs, stacks, top = [], [], [], []
    for p, _ in conds:
        rows = _samples_of(store, item, p, profile)
        shares = _shares(rows, p.run_ids)
        trees.append(flame_tree(shares, min_pct, max_depth))
        runs.append(len(p.run_ids))
        stacks.append(folded(rows))
        top.append(top_functions(shares))
    w = {}
    for lang in LANGS:
        w[lang] = {**_flame_words(lang, profile), "names": [names[lang] for _, names in conds],
                   "n_runs": [words.t(lang, "chart_profile_runs", n) for n in runs],
                   "download": [words.t(lang, "download_folded", names[lang]) for _, names in conds],
                   "top_title": words.t(lang, "chart_flame_top"),
                   "top_columns": [words.t(lang, "chart_profile_function"), words.t(lang, "chart_flame_self_pct"),
                                   words.t(lang, "chart_flame_total_pct")]}
    return c.chart(item, {"trees": trees, "runs": runs, "min_pct": min_pct, "folded": stacks, "top": top}, w)


def diff_tree(shares_a: dict[str, float], shares_b: dict[str, float], min_pct: float, max_depth: int,
              measure: str = "self", match: str = "stack") -> dict[str, list]:
    """The differential flame graph of A → B, as Brendan Gregg's difffolded.pl and flamegraph.pl draw it: the
    frames and widths of B, each frame with ``a_share`` and ``b_share``, its ``measure`` share (self: where the
    time went, as Gregg colours it; total: callees included) in A and B, and ``delta`` = B − A in percentage
    points. ``match``: "stack", the same frame is the same path from the root (Gregg's; 0 where A never had
    it); "function", the function's share wherever it is (for builds whose call chains differ, two versions)."""
    tree = flame_tree(shares_b, min_pct, max_depth)
    paths = flame_paths(tree)
    if match == "function":
        k = 0 if measure == "self" else 1
        fa, fb = function_totals(shares_a), function_totals(shares_b)
        tree["a_share"] = [round(fa.get(p[-1], (0.0, 0.0))[k], 4) if p else 100.0 for p in paths]
        tree["b_share"] = [round(fb.get(p[-1], (0.0, 0.0))[k], 4) if p else 100.0 for p in paths]
    else:
        total_a, self_a = _frame_shares(shares_a, max_depth)
        got = self_a if measure == "self" else total_a
        tree["a_share"] = [round(got.get(p, 0.0), 4) for p in paths]
        tree["b_share"] = tree["self"] if measure == "self" else tree["values"]
    tree["delta"] = [round(y - x, 4) for x, y in zip(tree["a_share"], tree["b_share"])]
    return tree


def folded_pair(rows_a: list[tuple[str, str, int]], rows_b: list[tuple[str, str, int]]) -> list[list]:
    """Both conditions' stacks as difffolded.pl writes them (``a;b;c 31 33``: samples in A, then in B; 0 where
    a condition never sampled the stack), which flamegraph.pl draws as a differential flame graph."""
    fa, fb = dict(map(tuple, folded(rows_a))), dict(map(tuple, folded(rows_b)))
    return [[k, fa.get(k, 0), fb.get(k, 0)] for k in sorted(set(fa) | set(fb))]


def top_changes(shares_a: dict[str, float], shares_b: dict[str, float], measure: str,
                n: int = TOP_FUNCTIONS) -> list[list]:
    """The ``n`` functions whose share changed most: [function, share in A, share in B, B − A]."""
    k = 0 if measure == "self" else 1
    ta, tb = function_totals(shares_a), function_totals(shares_b)
    rows = []
    for f in set(ta) | set(tb):
        a, b = ta.get(f, (0.0, 0.0))[k], tb.get(f, (0.0, 0.0))[k]
        rows.append([f, round(a, 4), round(b, 4), round(b - a, 4)])
    rows.sort(key=lambda r: (-abs(r[3]), r[0]))
    return rows[:n]


@c.kind("flamegraph_diff", runs=_runs)
def flamegraph_diff(store: Store, report: Report, item: Item) -> ChartData:
    """A differential flame graph from condition ``a`` to condition ``b`` (values of ``series``): the flame
    graph of b, each frame coloured by the change of its share, red where it grew and blue where it shrank,
    the more saturated the larger the change (Brendan Gregg's differential flame graphs). Options: ``a``,
    ``b`` (required), ``measure`` (self: the default, as Gregg's; total), ``profile``, ``process``,
    ``match`` (stack: a frame is its path from the root, as Gregg's; function: the function's share wherever
    it is), ``min_pct``, ``max_depth``. Its download is both conditions' folded stacks in difffolded.pl's format."""
    profile, min_pct, max_depth = _flame_options(item, {"a", "b", "measure", "match"})
    if not item.series:
        raise item.error("chart 'flamegraph_diff' needs series = the factor whose values a and b name")
    measure = c.opt_choice(item, "measure", "self", ("self", "total"))
    match = c.opt_choice(item, "match", "stack", ("stack", "function"))
    (pa, na), (pb, nb) = _sides(store, report, item, profile)
    rows_a, rows_b = _samples_of(store, item, pa, profile), _samples_of(store, item, pb, profile)
    shares_a, shares_b = _shares(rows_a, pa.run_ids), _shares(rows_b, pb.run_ids)
    tree = diff_tree(shares_a, shares_b, min_pct, max_depth, measure, match)
    w = {}
    for lang in LANGS:
        share = words.t(lang, f"chart_profile_{measure}_share")
        what = words.t(lang, "chart_flame_function_share", share) if match == "function" else share
        w[lang] = {**_flame_words(lang, profile), "a": na[lang], "b": nb[lang], "measure": what,
                   "n": words.t(lang, "chart_profile_diff_runs", len(pa.run_ids), b=len(pb.run_ids)),
                   "title": words.t(lang, "chart_flame_diff_title", na[lang], b=nb[lang]),
                   "grew": words.t(lang, "chart_flame_grew", share), "shrank": words.t(lang, "chart_flame_shrank", share),
                   "change": words.t(lang, "chart_flame_change"),
                   "download": words.t(lang, "download_folded_pair"),
                   "top_title": words.t(lang, "chart_flame_top_changes", share),
                   "top_columns": [words.t(lang, "chart_profile_function"), na[lang], nb[lang],
                                   words.t(lang, "chart_flame_change")]}
    return c.chart(item, {"tree": tree, "measure": measure, "min_pct": min_pct, "n_a": len(pa.run_ids),
                          "n_b": len(pb.run_ids), "folded": folded_pair(rows_a, rows_b),
                          "top": top_changes(shares_a, shares_b, measure)}, w)


def function_shares(store: Store, runs: list[str], profile: str, measure: str) -> dict[str, dict[str, float]]:
    """function -> run -> share (%) of the run's samples (self or total); a function a run never sampled is 0."""
    col = "self_pct" if measure == "self" else "total_pct"
    out: dict[str, dict[str, float]] = {}
    for r, f, v in store.query(f"SELECT run_id, function, {col} FROM profile_functions WHERE profile = ? "
                               "AND run_id IN (SELECT unnest(?::VARCHAR[]))", [profile, runs]):
        out.setdefault(f, {})[r] = float(v)
    return out


def diff_rows(store: Store, a_runs: list[str], b_runs: list[str], profile: str, measure: str,
              top: int) -> list[dict]:
    """Per function: the median share in A and in B, B − A in percentage points, and the verdict on the per-run
    shares (noise.compare, direction unknown: higher / lower / within noise / too few runs); the ``top``
    functions by the size of the change."""
    sa = function_shares(store, a_runs, profile, measure)
    sb = function_shares(store, b_runs, profile, measure)
    rows = []
    for f in set(sa) | set(sb):
        av = [sa.get(f, {}).get(r, 0.0) for r in a_runs]
        bv = [sb.get(f, {}).get(r, 0.0) for r in b_runs]
        v = noise.compare(bv, av, higher_is_better=True)
        kind = {"better": "higher", "worse": "lower"}.get(v.kind, v.kind)
        if v.kind == "no_ratio":  # absent from A: any share in B is new
            kind = "too_few_runs" if min(len(av), len(bv)) < v.method.min_runs else (
                "higher" if noise.rank_sum_p(bv, av) <= v.method.alpha + 1e-12 else "within_noise")
        rows.append({"function": f, "a": statistics.median(av), "b": statistics.median(bv),
                     "delta": statistics.median(bv) - statistics.median(av), "verdict": kind, "p": v.p_value})
    rows.sort(key=lambda r: (-abs(r["delta"]), r["function"]))
    return rows[:top]


@c.kind("profile_diff", runs=_runs)
def profile_diff(store: Store, report: Report, item: Item) -> ChartData:
    """Which functions grew: the change of each function's share of the samples from condition ``a`` to
    condition ``b`` (values of ``series``), in percentage points, the ``top`` largest changes (default 15),
    each bar coloured by its verdict. Options: ``a``, ``b`` (required), ``measure`` (self, total), ``profile``."""
    c.check_options(item, {"a", "b", "measure", "top", "profile"})
    if not item.series:
        raise item.error("chart 'profile_diff' needs series = the factor whose values a and b name")
    profile = c.opt_choice(item, "profile", "cpu", PROFILES)
    measure = c.opt_choice(item, "measure", "self", ("self", "total"))
    top = c.opt_int(item, "top", 15)
    (pa, na), (pb, nb) = _sides(store, report, item, profile)
    rows = diff_rows(store, pa.run_ids, pb.run_ids, profile, measure, top)
    w = {}
    for lang in LANGS:
        w[lang] = {"a": na[lang], "b": nb[lang],
                   "verdicts": [words.t(lang, f"verdict_{r['verdict']}") for r in rows],
                   "x_title": words.t(lang, f"chart_profile_diff_{measure}", na[lang], b=nb[lang]),
                   "y_title": words.t(lang, "chart_profile_function"),
                   "n": words.t(lang, "chart_profile_diff_runs", len(pa.run_ids), b=len(pb.run_ids)),
                   "csv_label": words.t(lang, "download_csv"),
                   "csv_function": words.t(lang, "csv_profile_diff_function"),
                   "csv_change": words.t(lang, f"chart_profile_diff_{measure}", na[lang], b=nb[lang]),
                   "csv_verdict": words.t(lang, "csv_profile_diff_verdict")}
    return c.chart(item, {"rows": rows, "n_a": len(pa.run_ids), "n_b": len(pb.run_ids)}, w)


PROFILE_CHARTS = ("flamegraph", "flamegraph_diff", "profile_diff")


def profile_of(item: Item) -> str | None:
    """The profile an item shows (cpu, syscalls), or None when it shows none: a ``rows = "functions"`` table,
    a flame graph or a differential view."""
    if (item.kind == "table" and item.rows == "functions") or (item.kind != "table" and item.chart in PROFILE_CHARTS):
        p = item.options.get("profile", "cpu")
        return p if p in PROFILES else "cpu"
    return None


def profiled_hosts(store: Store, runs: list[str], profile: str) -> list[tuple[str | None, str | None, dict[str, Any],
                                                                             int]]:
    """The hosts whose profile these runs hold: (host, role, machine inventory ({} when not captured), runs),
    from ``profile_hosts`` (each profile file's host and role) and ``run_hosts`` / ``machines``."""
    rows = store.query(
        """SELECT p.host, p.role, any_value(m.inventory)::VARCHAR, count(DISTINCT p.run_id)
           FROM profile_hosts p
           LEFT JOIN run_hosts h ON h.run_id = p.run_id AND h.role IS NOT DISTINCT FROM p.role
                AND (h.host IS NOT DISTINCT FROM p.host OR h.host IS NULL OR p.host IS NULL)
           LEFT JOIN machines m ON m.machine_id = h.machine_id
           WHERE p.profile = ? AND p.run_id IN (SELECT unnest(?::VARCHAR[]))
           GROUP BY p.host, p.role, m.machine_id ORDER BY p.role NULLS LAST, p.host NULLS LAST, m.machine_id""",
        [profile, runs])
    return [(host, role, json.loads(inv) if inv else {}, int(n)) for host, role, inv, n in rows]

