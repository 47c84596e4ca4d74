"""Steady state and events of runs, for tables (notes on cells), charts (marks) and the methods note.

Python only orchestrates: the detection runs in DuckDB (``store/steady.sql``, ``store/events.sql``);
this module reads its results through ``store/steady.py`` and words them with ``kansoku.words``.
The rule and its parameters: docs/steady-state.md and ``STEADY_PARAMS``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kansoku import words
from kansoku.parsers.pgbench.steady import STEADY_PARAMS
from kansoku.store import steady as q
from kansoku.store.db import Store
from kansoku.words import LANGS


@dataclass(frozen=True)
class SteadyState:
    """The steady window of one run and what happened in it (a row of ``pgbench_steady_state``)."""

    run_id: str
    found: bool
    series_source: str
    warmup_s: float
    rampdown_s: float
    steady_start_s: float
    steady_end_s: float
    tps_steady: float | None
    tps_cv_pct: float | None
    stall_s: float
    tps_drift_pct: float | None
    flags: tuple[str, ...]  # 'no_steady_state', 'drift', 'stall'

    @classmethod
    def of(cls, row: dict[str, Any]) -> "SteadyState":
        return cls(row["run_id"], bool(row["steady_found"]), row["series_source"], row["warmup_s"],
                   row["rampdown_s"], row["steady_start_s"], row["steady_end_s"], row["tps_steady"],
                   row["tps_cv_pct"], row["stall_s"], row["tps_drift_pct"], tuple(row["flags"] or ()))


@dataclass(frozen=True)
class Event:
    """A mark on a run's time axis (seconds since the run's start, the per-second charts' x axis).

    ``event``: run_start, run_end, steady_start (end of warm-up), steady_end (start of ramp-down),
    stall, checkpoint, restartpoint, checkpoint_stat (counted by pg_stat_bgwriter / pg_stat_checkpointer
    between two snapshots). Spans (stall, checkpoint, checkpoint_stat) have ``until_s``."""

    run_id: str
    event: str
    at_s: float
    until_s: float | None
    reason: str | None
    value: float | None
    unit: str | None

    def label(self, lang: str) -> str:
        """Short text for a chart's hover: what happened, and the number that says how much."""
        text = words.t(lang, f"event_{self.event}")
        if self.event in ("checkpoint", "restartpoint"):
            details = []
            if self.reason:
                details.append(self.reason)
            if self.value is not None:
                details.append(words.t(lang, "event_buffers_written", f"{self.value:.0f}"))
            if self.until_s is not None:
                details.append(f"{self.until_s - self.at_s:.1f} s")
            return f"{text} ({', '.join(details)})" if details else text
        if self.event == "checkpoint_stat":  # counted between two snapshots: said so, never a time it does not know
            details = [words.t(lang, "event_between_snapshots", start=f"{self.at_s:.1f}",
                               end=f"{(self.until_s if self.until_s is not None else self.at_s):.1f}")]
            if self.reason:
                details.append(", ".join(words.t(lang, f"event_reason_{r.strip()}") for r in self.reason.split(",")))
            if self.value is not None:
                details.append(words.t(lang, "event_checkpoints_counted", int(self.value)))
            return f"{text}: {'; '.join(details)}"
        if self.event == "stall" and self.value is not None:
            return f"{text} ({words.t(lang, 'event_stall_min_tps', f'{self.value:.0f}')})"
        return text


def steady_states(store: Store, run_ids: list[str] | None = None) -> dict[str, SteadyState]:
    return {r["run_id"]: SteadyState.of(r) for r in q.steady_state(store, run_ids)}


def events(store: Store, run_ids: list[str], constant: bool = False) -> dict[str, list[Event]]:
    """Every event of the given runs, in time order; runs without events are absent. ``constant``: a few runs
    of a large store (``store.steady.run_events``)."""
    out: dict[str, list[Event]] = {}
    for row in q.run_events(store, run_ids, constant=constant):
        out.setdefault(row["run_id"], []).append(Event(**row))
    return out


def run_notes(store: Store, run_ids: list[str], lang: str) -> dict[str, list[str]]:
    """Notes for the cells that use these runs: which runs drift, stall or have no steady state
    (the runs without a flag are absent)."""
    notes: dict[str, list[str]] = {}
    for run_id, st in steady_states(store, run_ids).items():
        out = []
        if "no_steady_state" in st.flags:
            out.append(words.t(lang, "steady_note_none"))
        if "drift" in st.flags and st.tps_drift_pct is not None:
            out.append(words.t(lang, "steady_note_drift", f"{st.tps_drift_pct:+.0f}"))
        if "stall" in st.flags:
            out.append(words.t(lang, "steady_note_stall", f"{st.stall_s:.0f}"))
        if out:
            notes[run_id] = out
    return notes


# the flags that put a note on a table's cells, in the order their notes are listed
NOTE_FLAGS = ("no_steady_state", "drift", "stall")


def flagged_runs(store: Store) -> dict[str, SteadyState]:
    """Every run whose steady state is flagged (no steady state, drift, stall), computed once per store
    (a build opens it read-only; each table asks for its own runs)."""
    cache = store.__dict__.setdefault("_kansoku_steady_cache", {})
    if "flagged" not in cache:
        cache["flagged"] = {r: st for r, st in all_states(store).items() if any(f in NOTE_FLAGS for f in st.flags)}
    return cache["flagged"]


def all_states(store: Store) -> dict[str, SteadyState]:
    """The steady state of every run with a per-second series, computed once per store."""
    cache = store.__dict__.setdefault("_kansoku_steady_cache", {})
    if "all" not in cache:
        cache["all"] = steady_states(store)
    return cache["all"]


def any_steady(store: Store, run_ids: list[str]) -> bool:
    """Whether a steady state was found for any of ``run_ids`` (a report's methods page then says how)."""
    return bool(set(run_ids) & set(all_states(store)))


def _detail(st: SteadyState, flag: str, lang: str) -> str:
    if flag == "drift" and st.tps_drift_pct is not None:
        # a percent as the language prints it, never broken between the number and its unit
        return words.t(lang, "percent", f"{st.tps_drift_pct:+.0f}").replace(" ", "\u00a0")
    if flag == "stall":
        return f"{st.stall_s:.0f}\u00a0s"
    return ""


def table_notes(store: Store, cell_runs: list[list[str]]) -> list[tuple[list[int], dict[str, str]]]:
    """Steady-state notes for a table whose cells use the given runs (one list of run ids per cell).

    One note per kind of flag (no steady state, drift, stall), listed once per table however many cells
    it marks: ``(indices of the cells it marks, text per language)``. The text says how many of the
    table's runs have the flag and how much (each run's drift in %, stall in s)."""
    flagged = flagged_runs(store)
    if not flagged:
        return []
    out = []
    for flag in NOTE_FLAGS:
        cells = [i for i, runs in enumerate(cell_runs) if any(flag in flagged[r].flags for r in runs if r in flagged)]
        if not cells:
            continue
        runs = sorted({r for i in cells for r in cell_runs[i] if r in flagged and flag in flagged[r].flags})
        text = {lang: words.t(lang, f"steady_cellnote_{flag}", len(runs),
                              details=", ".join(d for d in (_detail(flagged[r], flag, lang) for r in runs) if d))
                for lang in LANGS}
        out.append((cells, text))
    return out


def method_note(lang: str) -> str:
    """The rule in words, with its parameters, for a report's methods section."""
    p = STEADY_PARAMS
    values = {
        "band_pct": f"{p['band_fraction'] * 100:g}", "band_mads": p["band_mads"], "consecutive": p["consecutive"],
        "max_warmup_pct": f"{p['max_warmup_fraction'] * 100:g}",
        "max_rampdown_pct": f"{p['max_rampdown_fraction'] * 100:g}",
        "stall_pct": f"{p['stall_fraction'] * 100:g}", "stall_mads": p["stall_mads"],
        "stall_floor_pct": f"{p['stall_floor_fraction'] * 100:g}", "drift_min_pct": p["drift_min_pct"],
        # the two-sided level of the Mann-Kendall test at |Z| >= drift_z
        "drift_level_pct": f"{100 * math.erfc(p['drift_z'] / math.sqrt(2)):.1g}",
    }
    # Hugo's i18n syntax for named arguments ({{ .name }}), filled in here
    return words.t(lang, "steady_method", **values)
