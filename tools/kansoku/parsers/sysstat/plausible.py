"""What a sysstat, iostat or vmstat figure may be: one table of rules (``RULES``), from which come the check of
the rows a text parser holds (``check_rows``), the check of the rows a parser loaded with ``load_sql``
(``check_stored``, one SQL expression generated from the same table) and the screen that picks the records the
first may act on (``SafeBoxes``). A damaged file or a counter read across a restart prints figures no tool
prints (%usr 1.8e19, %util 13748294.72, 5.9e17 tps): each is refused with its file and line, or stored as
NULL with a warning, or stored as printed with a warning when real tools print it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from kansoku.errors import ParseError
from kansoku.parsers import bounds

# Percentages that may pass 100 legitimately.
PCT_UNBOUNDED = frozenset({"%commit", "%CPU", "%MEM", "%swpcad"})
_UTIL_WHY = "busy-time accounting of this device is not a share of the interval"
# PSI totals (sar -q CPU/IO/MEM) divide a stall time by an interval read from another clock; the kernel's own
# averages (%scpu-10, -60, -300) are shares the kernel caps at 100 and stay bounded by 100.
_PSI_WHY = "stall time over a short interval measured by another clock than the interval"
# Percentages real tools print above 100 (stored as printed with a warning); above the cap a counter read
# across a restart: metric -> (cap, why sysstat prints more than 100).
PCT_SOFT_CAP = {
    "%util": (10000.0, _UTIL_WHY), "util": (10000.0, _UTIL_WHY),
    **{m: (10000.0, _PSI_WHY) for m in ("%scpu", "%sio", "%fio", "%smem", "%fmem")},
}
# Every sysstat/procps figure is a count, a rate, a size or a share: never negative, except these
# (page-frame balance of sar -R, temperatures of sar -m TEMP).
SIGNED_METRICS = frozenset({"frmpg/s", "bufpg/s", "campg/s", "degC", "%temp", "cap/min"})
MAX_FIGURE = 1e15  # beyond any rate, size or count a machine prints: a counter wrap or restart
MAX_INTERVAL_S = 31 * 86400
EARLIEST_TS = bounds.EARLIEST  # the dates every format's table uses
LATEST_TS = bounds.LATEST
MAX_DROP_WARNINGS = 100

Action = Literal["refuse", "warn", "drop"]


@dataclass(frozen=True)
class Metrics:
    """Which metrics a rule applies to: those named (``names``; None: any), beginning with ``prefix``, but not
    those in ``unless``."""

    names: frozenset[str] | None = None
    prefix: str = ""
    unless: frozenset[str] = frozenset()

    def holds(self, metric: str) -> bool:
        return ((self.names is None or metric in self.names) and metric.startswith(self.prefix)
                and metric not in self.unless)

    def sql(self) -> str:
        parts = []
        if self.names is not None:
            parts.append(f"metric IN {_sql_set(self.names)}")
        if self.prefix:
            parts.append(f"starts_with(metric, {_sql_str(self.prefix)})")
        if self.unless:
            parts.append(f"metric NOT IN {_sql_set(self.unless)}")
        return " AND ".join(parts) or "true"


@dataclass(frozen=True)
class Rule:
    """A figure of a metric in ``metrics`` outside [``low``, ``high``] (None: no bound; ``finite``: NaN or an
    infinity instead) gets ``action``; the first rule of ``RULES`` that holds decides. A warning is given once
    per file, or once per metric (``once_per_metric``); a dropped value is stored as NULL."""

    kind: str
    action: Action
    metrics: Metrics
    low: float | None = None
    high: float | None = None
    finite: bool = False
    once_per_metric: bool = False

    def fires(self, v: float) -> bool:
        if self.finite:
            return not math.isfinite(v)
        return (self.low is not None and v < self.low) or (self.high is not None and v > self.high)

    def sql(self) -> str:
        if self.finite:
            test = "(isnan(value) OR isinf(value))"
        else:
            test = " OR ".join([f"value < {self.low!r}"] * (self.low is not None)
                               + [f"value > {self.high!r}"] * (self.high is not None))
        where = self.metrics.sql()
        return f"({test})" if where == "true" else f"{where} AND ({test})"


_ANY = Metrics()
_SHARES = Metrics(prefix="%", unless=PCT_UNBOUNDED)
RULES: tuple[Rule, ...] = (
    Rule("finite", "refuse", _ANY, finite=True),
    *(Rule("wrap", "drop", Metrics(frozenset({m})), high=cap) for m, (cap, _) in PCT_SOFT_CAP.items()),
    Rule("over-100", "warn", Metrics(frozenset(PCT_SOFT_CAP)), high=100.5, once_per_metric=True),
    Rule("share", "refuse", _SHARES, low=-0.5, high=105.0),
    Rule("jitter", "warn", _SHARES, high=100.5),  # accounting jitter: PSI %scpu 100.64 seen in real runs
    Rule("negative", "refuse", Metrics(unless=SIGNED_METRICS), low=0.0),
    Rule("wrap", "drop", _ANY, low=-MAX_FIGURE, high=MAX_FIGURE),
)


def _sql_str(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def _sql_set(names) -> str:
    return "(" + ", ".join(_sql_str(n) for n in sorted(names)) + ")"


# the index in RULES of the first rule a row's value breaks, NULL when none does
RULE_SQL = "CASE " + " ".join(f"WHEN {r.sql()} THEN {i}" for i, r in enumerate(RULES)) + " END"

_by_metric: dict[str, tuple[Rule, ...]] = {}


def rules_of(metric: str) -> tuple[Rule, ...]:
    """The rules that apply to ``metric``, in order."""
    got = _by_metric.get(metric)
    if got is None:
        got = _by_metric[metric] = tuple(r for r in RULES if r.metrics.holds(metric))
    return got


def broken(metric: str, v: float) -> Rule | None:
    """The first rule ``v`` breaks as a value of ``metric``, or None."""
    for r in rules_of(metric):
        if r.fires(v):
            return r
    return None


def safe_box(metric: str) -> tuple[float, float]:
    """The finite values of ``metric`` no rule acts on: [low, high]."""
    low, high = -math.inf, math.inf
    for r in rules_of(metric):
        if not r.finite:
            low = max(low, r.low if r.low is not None else -math.inf)
            high = min(high, r.high if r.high is not None else math.inf)
    return low, high


def _where(line: int | None, sample: int | None) -> str:
    return "" if line else f" (sample {sample})"


def refusal(path, rule: Rule, metric: str, v: float, line: int | None, sample: int | None,
            no_line: str | None = None) -> ParseError:
    where = _where(line, sample)
    if rule.kind == "finite":
        return ParseError(path, line, f"a finite number for {metric!r}{where}", str(v), no_line=no_line)
    if rule.kind == "share":
        return ParseError(path, line, f"a percentage between 0 and 100 for {metric!r}{where}", repr(v),
                          no_line=no_line)
    what = "rate" if metric.endswith("/s") else "value"
    return ParseError(path, line, f"a non-negative {what} for {metric!r}{where}", repr(v), no_line=no_line)


class Notes:
    """The warnings of one file's rows: each warning rule once (per metric where it says so), each dropped
    value up to ``MAX_DROP_WARNINGS``, then their count."""

    def __init__(self, sink):
        self.sink = sink
        self.seen: set = set()
        self.dropped = 0

    def add(self, rule: Rule, metric: str, v: float, line: int | None, sample: int | None,
            instance: str | None) -> None:
        if rule.action == "drop":
            self.dropped += 1
            if self.dropped <= MAX_DROP_WARNINGS:
                self.sink.warn(line, f"{metric} = {v:g}{_where(line, sample)} is not a plausible figure (a counter "
                                     "wrap or restart?): not stored")
            return
        key = (rule.kind, metric if rule.once_per_metric else None)
        if key in self.seen:
            return
        self.seen.add(key)
        if rule.kind == "over-100":
            device = f" (device {instance})" if instance else ""
            self.sink.warn(line, f"{metric} {v} above 100 %{device}{_where(line, sample)}: stored as printed; "
                                 f"{PCT_SOFT_CAP[metric][1]}")
        else:
            self.sink.warn(line, f"{metric} {v} slightly above 100 %: stored as printed")

    def finish(self) -> None:
        if self.dropped > MAX_DROP_WARNINGS:
            self.sink.warn(None, f"... and {self.dropped - MAX_DROP_WARNINGS} more values not stored for the same "
                                 "reason")


def check_rows(rows: list[dict[str, Any]], sink) -> bool:
    """The rules over rows held in Python (tool, ts, interval_s, sample, since_boot, activity, instance, metric,
    value, line): a value a refusing rule holds is a ParseError naming the file and line (or sample); a
    dropped value is set to None in ``rows``. Each row's interval and date must be in range, and a sample
    time repeated for one metric is warned about (two samples at one instant would be averaged twice).
    Returns whether a value was dropped."""
    path = sink.path
    notes = Notes(sink)
    seen: set = set()
    dup_warned = False
    for r in rows:
        v = r["value"]
        m = r["metric"]
        if v is not None:
            rule = broken(m, v)
            if rule is not None:
                if rule.action == "refuse":
                    raise refusal(path, rule, m, v, r["line"], r["sample"])
                notes.add(rule, m, v, r["line"], r["sample"], r["instance"])
                if rule.action == "drop":
                    r["value"] = None
                    continue
        iv = r["interval_s"]
        if iv is not None and not (0 <= iv <= MAX_INTERVAL_S):
            raise ParseError(path, r["line"], f"a sampling interval between 0 s and 31 days"
                                              f"{_where(r['line'], r['sample'])}", repr(iv))
        ts = r["ts"]
        if ts is not None:
            if ts.tzinfo is not None and not (EARLIEST_TS <= ts <= LATEST_TS):
                raise ParseError(path, r["line"], f"a date between 1995 and 2100{_where(r['line'], r['sample'])}",
                                 ts.isoformat())
            key = (ts, r["activity"], r["instance"], m, r["since_boot"])
            if key in seen and not dup_warned:
                sink.warn(r["line"], f"sample time {ts.isoformat()} appears twice for {r['activity']} "
                                     f"{r['instance'] or ''} {m}: duplicated samples (files concatenated?)")
                dup_warned = True
            seen.add(key)
    notes.finish()
    return notes.dropped > 0


def check_stored(sink, no_line: str | None = None) -> None:
    """The rules over the rows a parser loaded with ``load_sql`` (the file's own rows of sys_metrics, in the
    order of their sample and metric); a value missing where the tool prints one is refused too, naming its
    sample (``no_line``: why the file has no line to name, errors.BINARY_FILE for a sa file)."""
    path = sink.path
    rows = sink.own_rows("sys_metrics", f"""
        SELECT rule, metric, value, sample, instance FROM (SELECT {RULE_SQL} AS rule, * FROM {{rows}}
                                                         WHERE value IS NOT NULL)
        WHERE rule IS NOT NULL ORDER BY sample, metric""")
    refused = next((row for row in rows if RULES[row[0]].action == "refuse"), None)
    if refused is not None:
        i, m, v, sample, _ = refused
        raise refusal(path, RULES[i], m, v, None, sample, no_line)
    missing = sink.own_rows("sys_metrics", """
        SELECT metric, sample FROM {rows} WHERE value IS NULL AND activity <> 'restart'
        ORDER BY sample, metric LIMIT 1""")
    if missing:
        m, sample = missing[0]
        raise ParseError(path, None, f"a number in column {m!r} (sample {sample})", "not a number", no_line=no_line)
    notes = Notes(sink)
    for i, m, v, sample, inst in rows:
        notes.add(RULES[i], m, v, None, sample, inst)
    notes.finish()
    if notes.dropped:
        drops = [i for i, r in enumerate(RULES) if r.action == "drop"]
        sink.update_own_rows("sys_metrics", f"value = CASE WHEN ({RULE_SQL}) IN ({', '.join(map(str, drops))}) "
                                            "THEN NULL ELSE value END")


class SafeBoxes:
    """The records of a collector that ``check_rows`` may act on, found with a few calls per record: for each
    list of metric names, the values no rule acts on, per place and for the whole list."""

    def __init__(self, name_lists: list[list[str]]):
        self.boxes = []
        for names in name_lists:
            each = [safe_box(m) for m in names]
            low = max((b[0] for b in each), default=-math.inf)
            high = min((b[1] for b in each), default=math.inf)
            self.boxes.append((low, high, each))

    def suspect(self, names_id: int, values: list[float | None]) -> bool:
        low, high, each = self.boxes[names_id]
        try:
            lo, hi, total = min(values), max(values), sum(values)
        except TypeError:  # None among the values
            return any(v is not None and not (b[0] <= v <= b[1]) for v, b in zip(values, each))
        if total - total != 0:  # NaN or an infinity (min and max are unreliable then)
            return True
        if low <= lo and hi <= high:
            return False
        return any(not (b[0] <= v <= b[1]) for v, b in zip(values, each))
