"""Compare two selections of runs condition by condition, for every metric they share.

"15 against 14", "checksums on against off", "this year's machine against last year's": selection A is
the baseline, selection B the candidate. Runs are matched by *condition*: the values of every factor
except the ones that define the selections and the repetition factors (``rep``…). For each metric and
condition both sides' runs give a spread, the ratio of medians B / A with its interval, and the verdict
of :mod:`kansoku.analysis.noise` (better / worse / within noise / too few runs). The direction comes from
the metric catalogue (``parsers.catalogue()``): a metric with no better direction (CPU %idle, disk KB/s)
gets "changed", never better or worse; a metric the catalogue does not know (a transcribed published value)
gets "higher" / "lower". Rows lead with the primary metric (TPS, or the first one asked for), then the other
metrics in the order asked (catalogue order otherwise), each condition by condition.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable

from kansoku import parsers
from kansoku.analysis import noise
from kansoku.errors import KansokuError
from kansoku.store.selection import RunValue, factor_values, metric_values, run_environments

REPETITION_FACTORS = ("rep", "repetition", "repeat", "iteration", "trial")


class SelectionError(KansokuError):
    """A selection names a factor or value the store does not have (exit 2: bad input)."""

    exit_code = 2


class MetricChoiceError(KansokuError):
    """``--metric`` that several hosts of a run answer without a role, or a role a run lacks (exit 3, as in
    a spec: docs/spec.md, "Hosts and roles")."""

    exit_code = 3


def parse_selection(text: str) -> dict[str, list[str]]:
    """``"version=15,study=scaleup"`` → {"version": ["15"], "study": ["scaleup"]}; ``a=x|y`` lists values;
    an empty string selects every run."""
    out: dict[str, list[str]] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise SelectionError(f"selection {text!r}: expected factor=value[,factor=value…], got {part!r}")
        out.setdefault(key.strip(), []).extend(v.strip() for v in value.split("|") if v.strip())
    return out


def check_selection(selection: dict[str, list[str]], known: dict[str, set[str]], label: str) -> None:
    problems = []
    for factor, values in selection.items():
        if factor not in known:
            hint = difflib.get_close_matches(factor, list(known), n=1)
            problems.append(f"{label}: no factor {factor!r} in the database"
                            + (f" (did you mean {hint[0]!r}?)" if hint else ""))
            continue
        for v in values:
            if v not in known[factor]:
                hint = difflib.get_close_matches(v, sorted(known[factor]), n=1)
                problems.append(f"{label}: factor {factor!r} has no value {v!r}"
                                + (f" (did you mean {hint[0]!r}?)" if hint else
                                   f" (values: {', '.join(sorted(known[factor])[:8])})"))
    if problems:
        raise SelectionError("; ".join(problems))


@dataclass(frozen=True)
class Comparison:
    metric: str
    unit: str | None
    condition: tuple[tuple[str, str], ...]
    baseline: noise.Spread
    candidate: noise.Spread
    verdict: noise.Verdict
    direction: str  # "higher_is_better", "lower_is_better", "neither", "unknown" (not in the catalogue)
    baseline_runs: tuple[str, ...]
    candidate_runs: tuple[str, ...]
    transcribed: bool

    @property
    def effect(self) -> float:
        """|log(ratio)|: the size of the change, symmetric for gains and losses."""
        r = self.verdict.ratio
        return abs(math.log(r)) if r and r > 0 else 0.0

    @property
    def label(self) -> str:
        """better / worse / changed (no better direction) / within_noise / too_few_runs / no_ratio, or
        higher / lower for a metric of unknown direction."""
        k = self.verdict.kind
        if self.direction == "unknown" and k in ("better", "worse"):
            return "higher" if (self.verdict.ratio or 0) > 1 else "lower"
        return k


@dataclass
class CompareResult:
    comparisons: list[Comparison]
    method: noise.Method
    only_baseline: int = 0  # (metric, condition) pairs present on one side only
    only_candidate: int = 0
    environment: list["EnvDifference"] = field(default_factory=list)  # what differs between the sides' machines

    def regressions(self, threshold_pct: float) -> list[Comparison]:
        """Worse beyond noise by at least ``threshold_pct`` percent (a CI job's failure)."""
        return [c for c in self.comparisons if c.label == "worse"
                and abs((c.verdict.ratio or 1) - 1) * 100 >= threshold_pct]


def _condition(factors: dict[str, str], ignore: set[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in factors.items() if k not in ignore))


DIRECTIONS = {"higher": "higher_is_better", "lower": "lower_is_better", "neither": "neither"}
PRIMARY_METRIC = "tps"  # a study's primary metric when the caller names none


def metric_order(metrics: Iterable[str], asked: list[str] | None = None) -> list[str]:
    """The order of a comparison's metrics: the primary one first (the first asked for, else TPS), then the
    others as asked, else in catalogue (name) order."""
    present = set(metrics)
    order = [m for m in (asked or []) if m in present]
    order += sorted(present - set(order))
    primary = asked[0] if asked else PRIMARY_METRIC
    if primary in order:
        order.remove(primary)
        order.insert(0, primary)
    return order


def _natural(cond: tuple[tuple[str, str], ...]) -> tuple:
    """clients=2 before clients=16: numeric factor values compare as numbers."""
    def one(v: str) -> tuple:
        try:
            return (0, float(v), "")
        except ValueError:
            return (1, 0.0, v)
    return tuple((k, one(v)) for k, v in cond)


def compare(baseline: Iterable[RunValue], candidate: Iterable[RunValue], selection_factors: Iterable[str],
            method: noise.Method | None = None, repetition_factors: Iterable[str] = REPETITION_FACTORS,
            metrics: list[str] | None = None) -> CompareResult:
    """``metrics``: the metrics as asked, in order (the first is the primary one); None, every metric."""
    method = method or noise.Method()
    ignore = set(selection_factors) | set(repetition_factors)
    defs = parsers.metrics()

    def group(values: Iterable[RunValue]) -> dict[tuple, list[RunValue]]:
        out: dict[tuple, list[RunValue]] = defaultdict(list)
        for rv in values:
            out[(rv.metric, _condition(rv.factors, ignore))].append(rv)
        return out

    a, b = group(baseline), group(candidate)
    comps = []
    for key in sorted(set(a) & set(b)):
        metric, cond = key
        ra, rb = a[key], b[key]
        md = defs.get(metric.split("[", 1)[0])
        direction = "unknown" if md is None else DIRECTIONS[md.direction]
        va, vb = [r.value for r in ra], [r.value for r in rb]
        verdict = noise.compare(vb, va, md.higher_is_better if md else True, method)
        comps.append(Comparison(
            metric, ra[0].unit, cond, noise.spread(va), noise.spread(vb), verdict, direction,
            tuple(r.run_id for r in ra), tuple(r.run_id for r in rb),
            any(r.origin == "transcribed" for r in ra + rb)))
    rank = {m: i for i, m in enumerate(metric_order({c.metric for c in comps}, metrics))}
    comps.sort(key=lambda c: (rank[c.metric], _natural(c.condition)))
    return CompareResult(comps, method,
                         only_baseline=len(set(a) - set(b)), only_candidate=len(set(b) - set(a)))


# -- one computation, several outputs ------------------------------------------------------------------
# tools/compare (terminal, --json, --csv) and the compare page of a report (report/build.py) both call
# select_and_compare and write records / csv_rows, so that the terminal and the site cannot disagree.

def select_and_compare(store_a, sel_a: dict[str, list[str]], sel_b: dict[str, list[str]],
                       metrics: list[str] | None = None, method: noise.Method | None = None,
                       store_b=None, scope=None) -> CompareResult:
    """Selections A (baseline) and B, each read from its store (B from ``store_a`` unless ``store_b``),
    compared condition by condition, within ``scope`` (a report's, spec.model.Scope) where given. A selection
    naming an unknown factor or value is a SelectionError."""
    store_b = store_b if store_b is not None else store_a
    problems = []
    for sel, st, label in ((sel_a, store_a, "A"), (sel_b, store_b, "B")):
        try:
            check_selection(sel, factor_values(st), label)
        except SelectionError as exc:
            problems.append(str(exc))
    if problems:
        raise SelectionError("; ".join(problems))
    bases = sorted({m.split("[", 1)[0] for m in metrics}) if metrics else None
    values_a = metric_values(store_a, sel_a, bases, scope)
    values_b = metric_values(store_b, sel_b, bases, scope)
    values_a, values_b = by_host(values_a, values_b, metrics, store_a, store_b)
    result = compare(values_a, values_b, set(sel_a) | set(sel_b), method, metrics=metrics)
    result.environment = environment_differences(store_a, sorted({v.run_id for v in values_a}),
                                                 store_b, sorted({v.run_id for v in values_b}))
    return result


def by_host(values_a: list[RunValue], values_b: list[RunValue], metrics: list[str] | None,
            store_a, store_b) -> tuple[list[RunValue], list[RunValue]]:
    """Per-host values named for comparison. When no run of either side has a metric from several hosts,
    the names stay plain (``cpu_idle_pct``: single-host campaigns compare as before). Otherwise each host's
    value is ``cpu_idle_pct[server]``, ``cpu_idle_pct[client]`` (``[role:host]`` when two hosts of a run share
    a role), never an average of hosts. ``--metric`` may name a role; a plain name that several hosts of a
    run answer (and no default_role of the campaign picks one) is an error naming the hosts; a role a run
    lacks is an error naming the run and the role."""

    def hosts_of(values):
        per: dict[tuple[str, str], set] = defaultdict(set)
        for v in values:
            if v.role is not None:
                per[(v.run_id, v.metric)].add((v.host, v.role))
        return per

    per_a, per_b = hosts_of(values_a), hosts_of(values_b)
    multi = any(len(h) > 1 for h in list(per_a.values()) + list(per_b.values()))
    wanted = metrics or []
    plain_wanted = {m for m in wanted if "[" not in m}
    role_wanted = {m.split("[", 1)[0]: m[m.index("[") + 1:].rstrip("]") for m in wanted if "[" in m}

    def rename(values, per, store):
        out = []
        for v in values:
            if v.role is None:
                out.append(v)
                continue
            hosts = per[(v.run_id, v.metric)]
            same_role = sum(1 for _, r in hosts if r == v.role)
            name = f"{v.metric}[{v.role}]" if same_role == 1 else f"{v.metric}[{v.role}:{v.host}]"
            if v.metric in role_wanted:
                if v.role == role_wanted[v.metric]:
                    out.append(dataclasses.replace(v, metric=f"{v.metric}[{role_wanted[v.metric]}]"))
                continue
            if v.metric in plain_wanted or not multi:
                if len(hosts) == 1:
                    out.append(v)
                elif v.default_role and sum(1 for _, r in hosts if r == v.default_role) == 1:
                    if v.role == v.default_role:
                        out.append(v)
                elif v.metric in plain_wanted:
                    text = ", ".join(f"{h} ({r})" for h, r in sorted(hosts, key=str))
                    roles = " or ".join(sorted({f"{v.metric}[{r}]" for _, r in hosts}))
                    raise MetricChoiceError(
                        f"--metric {v.metric}: run {v.run_id!r} has it from {len(hosts)} hosts, {text}; "
                        f"compare never averages hosts: name one, {roles}")
                continue
            out.append(dataclasses.replace(v, metric=name))
        for base, role in role_wanted.items():  # a role a run lacks
            have = {v.run_id for v in values if v.metric == base and v.role == role}
            for run_id in sorted({v.run_id for v in values if v.metric == base} - have):
                raise MetricChoiceError(f"--metric {base}[{role}]: run {run_id!r} has no host with role {role!r} "
                                        f"(its hosts: {', '.join(f'{h} ({r})' for h, r in sorted(per[(run_id, base)], key=str))})")
        return out

    return rename(values_a, per_a, store_a), rename(values_b, per_b, store_b)


# -- environment differences (as pg_perfbench's report diff shows them beside the results) ----------------

# Not environment: the collector's own connection, where the server listened, bookkeeping of the capture.
ENV_IGNORED = {"machine.hostname", "server.conninfo", "server.non_default", "server.capture_error",
               "server.application_name", "server.version"}


@dataclass(frozen=True)
class EnvDifference:
    role: str | None      # the host's role ('server', 'client', ...); None: the run's own host
    key: str              # 'machine.kernel', 'machine.cpu_model', 'server.shared_buffers', 'versions.postgres'
    a: tuple[str, ...]    # the values the baseline's runs recorded (sorted, distinct)
    b: tuple[str, ...]


def _flatten(prefix: str, d: Any, out: dict[str, str]) -> None:
    if isinstance(d, dict):
        for k, v in d.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(d, list):
        out[prefix] = ", ".join(map(str, d))
    elif d is not None:
        out[prefix] = str(d)


def _env_values(store, run_ids: list[str]) -> dict[tuple[str | None, str], set[str]]:
    out: dict[tuple[str | None, str], set[str]] = defaultdict(set)
    for run_id, env in run_environments(store, run_ids).items():
        parts = [(env.get("role"), {k: env.get(k) for k in ("machine", "versions", "server")})]
        parts += [(role, doc) for role, doc in (env.get("hosts") or {}).items()]
        for role, doc in parts:
            flat: dict[str, str] = {}
            _flatten("", doc, flat)
            for k, v in flat.items():
                if k not in ENV_IGNORED:
                    out[(role, k)].add(v)
    return out


def environment_differences(store_a, runs_a: list[str], store_b, runs_b: list[str]) -> list[EnvDifference]:
    """What the two sides' runs recorded differently about their environment: every [machine], [versions]
    and [server] key of run.toml / host.toml (per host role) whose values differ (a key one side lacks
    shows '—')."""
    ea, eb = _env_values(store_a, runs_a), _env_values(store_b, runs_b)
    out = []
    for key in sorted(set(ea) | set(eb), key=lambda k: (str(k[0] or ""), k[1])):
        a, b = ea.get(key, set()), eb.get(key, set())
        if a != b:
            out.append(EnvDifference(key[0], key[1], tuple(sorted(a)) or ("—",), tuple(sorted(b)) or ("—",)))
    return out


def environment_records(result: CompareResult) -> list[dict[str, Any]]:
    return [{"role": d.role, "key": d.key, "a": list(d.a), "b": list(d.b)} for d in result.environment]


def num_text(v: float | None) -> str:
    """A median or a bound as the terminal and the compare page print it: thousands separators and one
    decimal from 100 up, four significant digits below."""
    if v is None or not math.isfinite(v):
        return "—"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    return f"{v:.4g}"


def change_pct(ratio: float | None) -> float | None:
    """B / A as a change in percent (+5.0 for a ratio of 1.05)."""
    return None if ratio is None else (ratio - 1) * 100


def condition_text(c: Comparison, common: frozenset = frozenset()) -> str:
    """``clients=8 workload=read``: the condition's factors but those shared by every row."""
    return " ".join(f"{k}={v}" for k, v in c.condition if (k, v) not in common) or "(all)"


def common_condition(result: CompareResult) -> frozenset:
    """Factor values shared by every compared condition: said once above the table, not on every row."""
    conds = [set(c.condition) for c in result.comparisons]
    return frozenset(set.intersection(*conds)) if len(conds) > 1 else frozenset()


def _side(s: noise.Spread, runs: tuple[str, ...]) -> dict[str, Any]:
    return {"median": s.median, "min": s.minimum, "max": s.maximum, "n": s.n, "values": list(s.values),
            "runs": list(runs)}


def record(c: Comparison) -> dict[str, Any]:
    """One comparison as ``tools/compare --json`` prints it (and as the compare page carries it)."""
    v = c.verdict
    return {
        "metric": c.metric, "unit": c.unit, "condition": dict(c.condition),
        "baseline": _side(c.baseline, c.baseline_runs), "candidate": _side(c.candidate, c.candidate_runs),
        "ratio": v.ratio, "ratio_interval": [v.ratio_low, v.ratio_high], "p_value": v.p_value,
        "verdict": c.label, "direction": c.direction, "transcribed": c.transcribed,
    }


def records(result: CompareResult) -> list[dict[str, Any]]:
    return [record(c) for c in result.comparisons]


CSV_HEADER = ["metric", "unit", "condition", "a_median", "a_min", "a_max", "a_n", "b_median", "b_min", "b_max",
              "b_n", "ratio", "ratio_low", "ratio_high", "p_value", "verdict"]


def sig_text(x: float | None, significant: int) -> str:
    """``x`` with ``significant`` significant digits as a plain decimal (no exponent, no trailing zeros):
    6.587677725121718 -> '6.58768' (6), 1234567.0 -> '1234570'."""
    if x is None or not math.isfinite(x):
        return ""
    if x == 0:
        return "0"
    d = Decimal(f"{x:.{significant - 1}e}")
    return f"{d.normalize():f}" if d != d.to_integral_value() else str(int(d))


# digits of the compare CSV, one rule for every row: values (medians, min, max) with 6 significant digits
# (more than any tool prints them), ratios with 5 (0.001 % of a change), p with 3
CSV_DIGITS = {"value": 6, "ratio": 5, "p": 3}


def csv_rows(result: CompareResult) -> list[list[str]]:
    """``tools/compare --csv`` (header first): numbers rounded to meaningful digits (``CSV_DIGITS``); the
    full floats are in ``--json``."""
    def r(x: float | None) -> str:
        return sig_text(x, CSV_DIGITS["value"])

    def q(x: float | None) -> str:
        return sig_text(x, CSV_DIGITS["ratio"])

    out = [list(CSV_HEADER)]
    for c in result.comparisons:
        v = c.verdict
        out.append([c.metric, c.unit or "", condition_text(c), r(c.baseline.median), r(c.baseline.minimum),
                    r(c.baseline.maximum), str(c.baseline.n), r(c.candidate.median), r(c.candidate.minimum),
                    r(c.candidate.maximum), str(c.candidate.n), q(v.ratio), q(v.ratio_low), q(v.ratio_high),
                    sig_text(v.p_value, CSV_DIGITS["p"]), c.label])
    return out
