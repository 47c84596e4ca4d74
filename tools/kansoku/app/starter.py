"""The starter report of ``kansoku init DIR RUNS…``: from what the store holds (``store/inventory.py``), a
chapter per study of each campaign, each with a table of TPS (else the study's main metric) over the factor
with the most values, its first value the baseline, beside the server's CPU %idle when every run has a host
of role ``server``, and a figure over the same factor; and the chapter's prose pages placing them. The spec
is a first draft that builds at once, written to be edited."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from kansoku import words
from kansoku.analysis.compare import REPETITION_FACTORS
from kansoku.spec.model import GROUPING
from kansoku.store.db import Store
from kansoku.store.inventory import inventory

MAIN_METRIC = "tps"
SERVER_CPU = "cpu_idle_pct[server]"
SERVER_ROLE = "server"
ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
DIRECTIONLESS = "neither is better"  # (store/inventory.py DIRECTION)


@dataclass
class StarterChapter:
    id: str
    where: dict[str, str]
    x: str
    series: str | None = None
    pinned: dict[str, list[str]] = field(default_factory=dict)  # factor: its values, the first one kept
    metrics: list[str] = field(default_factory=list)
    baseline: str | None = None
    numeric_x: bool = True
    several_machines: bool = False
    runs: int = 0


def _numeric(value: str) -> bool:
    try:
        float(value)
        return True
    except ValueError:
        return False


def chapters(store: Store) -> list[StarterChapter]:
    """One chapter per (campaign, study) of the store's good runs, in name order."""
    groups = [({"campaign": c["campaign"], "study": s["study"]} if s else {"campaign": c["campaign"]})
              for c in inventory(store, parts=("campaigns",))["campaigns"]
              for s in (c["studies"] or [None])]
    studies = [g.get("study") for g in groups]
    out: list[StarterChapter] = []
    for where in groups:
        inv = inventory(store, where, parts=("factors", "metrics", "machines", "runs"))
        ok = sum(r["runs"] for r in inv["runs"] if r["status"] == "ok")
        if not ok:
            continue
        name = where.get("study") if where.get("study") and studies.count(where.get("study")) == 1 else \
            "-".join(where.values())
        values = {f["factor"]: [v["value"] for v in f["values"]] for f in inv["factors"]}
        varied = sorted((f for f, vs in values.items() if f not in GROUPING and f not in REPETITION_FACTORS),
                        key=lambda f: (-len(values[f]), not all(map(_numeric, values[f])), f))
        several = [f for f in varied if len(values[f]) > 1]
        x = varied[0] if varied else ("study" if "study" in where else "campaign")
        ch = StarterChapter(id=ID_CHARS.sub("-", name).strip("-.") or "study", where=dict(where), x=x, runs=ok,
                            numeric_x=all(map(_numeric, values.get(x, []))),
                            several_machines=len(inv["machines"]) > 1)
        if len(values.get(x, [])) > 1:
            ch.baseline = values[x][0]
        rest = [f for f in several if f != x]
        if rest:
            ch.series = rest[0]
        for f in rest[1:]:  # a cell is one condition: every other varied factor at its first value
            ch.pinned[f] = values[f]
            ch.where[f] = values[f][0]
        measured = {m["metric"]: m for m in inv["metrics"]}
        if MAIN_METRIC in measured:
            ch.metrics.append(MAIN_METRIC)
        elif measured:  # the metric most runs answer, one with a direction first
            ch.metrics.append(max(measured.values(), key=lambda m: (m["runs"], m["direction"] != DIRECTIONLESS,
                                                                    m["metric"]))["metric"])
        else:
            continue
        cpu = measured.get(SERVER_CPU.split("[")[0])
        if cpu and any(r["role"] == SERVER_ROLE and r["runs"] == ok for r in cpu["roles"]):
            ch.metrics.append(SERVER_CPU)
        out.append(ch)
    return out


def _toml(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)  # a TOML basic string is a JSON string


def _inline(d: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{k if BARE_KEY.match(k) else _toml(k)} = {_toml(v)}" for k, v in d.items()) + " }"


def _metric_label(lang: str, metric: str) -> str:
    name, _, role = metric.partition("[")
    label = words.t(lang, f"metric_{name}") if words.has(f"metric_{name}", lang) else name
    role = role.rstrip("]")
    if role:
        label += f" [{words.t(lang, f'role_{role}') if words.has(f'role_{role}', lang) else role}]"
    return label


def _caption(ch: StarterChapter, key: str) -> dict[str, str]:
    out = {}
    for lang in words.LANGS:
        pinned = "".join(f", {f} = {ch.where[f]}" for f in ch.pinned)
        out[lang] = words.t(lang, key, metric=_metric_label(lang, ch.metrics[0]), factor=ch.x, where=pinned)
    return out


def _texts(by_lang: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{lang} = {_toml(t)}" for lang, t in by_lang.items()) + " }"


def spec_chapters(chs: list[StarterChapter]) -> str:
    """The ``[[chapter]]`` tables of the starter spec."""
    parts = []
    for ch in chs:
        item = f"{ch.id}-{ch.metrics[0]}"
        lines = ["[[chapter]]", f"id = {_toml(ch.id)}", f"title = {_texts(words.same(ch.id))}", ""]
        if ch.pinned:
            lines.append("# a cell is one condition: " + "; ".join(
                f"{f} is kept at {vs[0]} (its other values: {', '.join(vs[1:])})" for f, vs in ch.pinned.items()))
        lines += ["[[chapter.table]]", f"id = {_toml(item)}", f"caption = {_texts(_caption(ch, 'starter_table'))}"]
        lines.append(f"metrics = [{', '.join(map(_toml, ch.metrics))}]" if len(ch.metrics) > 1
                     else f"metric = {_toml(ch.metrics[0])}")
        lines += [f"where = {_inline(ch.where)}", f"rows = {_toml(ch.x)}"]
        if ch.series:
            lines.append(f"columns = {_toml(ch.series)}")
        if ch.baseline is not None:
            lines.append(f"baseline = {{ factor = {_toml(ch.x)}, value = {_toml(ch.baseline)} }}")
        if ch.several_machines:
            lines.append('machines = "factor"  # its runs ran on several machines')
        lines += ["", "[[chapter.figure]]", f"id = {_toml(item)}",
                  f"caption = {_texts(_caption(ch, 'starter_figure'))}",
                  f"chart = {_toml('line' if ch.numeric_x else 'bar')}", f"metric = {_toml(ch.metrics[0])}",
                  f"where = {_inline(ch.where)}", f"x = {_toml(ch.x)}"]
        if ch.series:
            lines.append(f"series = {_toml(ch.series)}")
        if ch.several_machines:
            lines.append('machines = "factor"')
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def chapter_blocks(ch: StarterChapter) -> dict[str, list[str]]:
    """The blocks a chapter's page places, by the key of its section's heading."""
    item = f"{ch.id}-{ch.metrics[0]}"
    return {"prose_heading_method": ["{{< commands >}}"],
            "prose_heading_results": [f'{{{{< tbl "{item}" >}}}}', f'{{{{< fig "{item}" >}}}}']}
