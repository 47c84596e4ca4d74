#!/usr/bin/env python3
"""Write docs/performance.md from the files under bench/results/ alone, inside its hand-written template.

    python3 bench/performance_doc.py           # rewrite docs/performance.md
    python3 bench/performance_doc.py --check   # exit 1 when docs/performance.md is not what it would write

The template (bench/performance_template.md) holds what a person writes: what is measured and how, and what a
user can tune. Three markers in it are filled from the results: ``{{machines}}`` (one line per machine that has
a results folder), ``{{figures}}`` (one table: the latest file's value of each part and figure name, against its
target and reference tool, with the date and a link to the file, then each linked file's command and load) and
``{{not_measured}}`` (each expected measurement without a results file yet, with its command).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
TEMPLATE = ROOT / "bench" / "performance_template.md"
PAGE = ROOT / "docs" / "performance.md"
MARKERS = ("{{machines}}", "{{figures}}", "{{not_measured}}")

# What the page expects to show, in the order of its table: (part, command, what it measures). A measurement
# counts as measured when a file of its part was made by a command holding every option written here.
EXPECTED = [
    ("txlog", "bench/pgbench_log.py", "a 10-million-line pgbench -l log: the ingest against DuckDB's read_csv"),
    ("sa_day", "bench/sa_day.py", "a day-long 1-second sa file: the ingest against sadf -d alone"),
    ("ingest_parallel", "bench/ingest_parallel.py", "1,000 real run directories: --jobs 1 against every core"),
    ("example_pair", "bench/example_pair.py --ref CHECKOUT",
     "the example's ingest and build against a reference revision, interleaved"),
    ("campaign", "bench/campaign_build.py",
     "synthetic 100- and 1,000-run campaigns: ingest, build, rebuilds, a 100-table spec, the heaviest page"),
    ("campaign", "bench/campaign_build.py --runs 10000 --ingest-only", "the ingest of 10,000 runs"),
    ("campaign", "bench/campaign_build.py --runs 10000 --replicate 10", "the full build of 10,000 runs"),
    ("rebuild_one", "bench/rebuild_one.py --dir DIR --runs 1000", "a rebuild after one new run, 1,000 runs"),
    ("rebuild_one", "bench/rebuild_one.py --dir DIR --example", "a rebuild after one new run, the example"),
    ("site", "bench/site_budget.py", "the example site's build; the weight of a chapter page with ten charts"),
    ("loop", "bench/loop.py --runs 10000 --dir DIR",
     "the writer's loop at 10,000 runs: a full build, a spec item edit, a new run; a prose edit, a spec item edit "
     "and a new run under serve"),
    ("growth", "bench/growth.py --dir DIR", "each step of the loop at 1,000 to 30,000 runs: time and peak memory"),
    ("kill_trials", "bench/kill_trials.py", "kill -9 and Ctrl-C at random moments of ingests and builds"),
    ("same_output", "bench/same_output.py --rev main", "the generated files and site against a revision"),
]
# placeholders in an expected command: any value is accepted for them
_PLACEHOLDERS = {"CHECKOUT", "DIR"}
_UNITS = {"x": "×"}
_COMPARISONS = {"<=": "≤", ">=": "≥"}


class ResultsError(Exception):
    """A results file that cannot be read as a part's record."""


@dataclass(frozen=True)
class Result:
    path: Path  # relative to the repository
    part: str
    date: str
    command: str
    revision: str
    machine: dict
    load: dict
    figures: list[dict]

    @property
    def folder(self) -> str:
        return self.path.parent.name


def load_results(results: Path = RESULTS, root: Path = ROOT) -> list[Result]:
    """Every results file under ``results``, oldest first."""
    out = []
    for path in sorted(results.glob("*/*.json")):
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ResultsError(f"{path}: not a JSON results file ({exc})") from None
        missing = [k for k in ("part", "date", "command", "machine", "figures") if k not in d]
        if missing:
            raise ResultsError(f"{path}: expected the keys of bench/record.py's record, missing {', '.join(missing)}")
        for i, f in enumerate(d["figures"]):
            if not isinstance(f, dict) or not {"name", "value", "unit"} <= f.keys():
                raise ResultsError(f"{path}: figure {i + 1}: expected name, value and unit")
        out.append(Result(path.relative_to(root) if path.is_relative_to(root) else path, d["part"], d["date"],
                          d["command"], d.get("revision", ""), d["machine"], d.get("load") or {}, d["figures"]))
    return sorted(out, key=lambda r: (r.date, str(r.path)))


def _args(command: str) -> list[str]:
    """The options of a bench command, without the program that ran it."""
    words = command.split()
    while words and not words[0].startswith("-") and (words[0].startswith(("bench/", "python")) or
                                                       words[0] in {part for part, _, _ in EXPECTED}):
        words = words[1:]
    return words


def measured(part: str, command: str, results: list[Result]) -> bool:
    wanted = [w for w in _args(command) if w not in _PLACEHOLDERS]
    return any(r.part == part and set(wanted) <= set(_args(r.command)) for r in results)


# figures of code since removed: their files stay under bench/results/, the page shows only what the code does
RETIRED = {
    ("sa_day", "ingest with no typed CSV reads (FAST_SQL off) / with every path, CPU"):
        "the sadf -d sections' typed reads, removed: the line split alone meets the sa targets",
    # the tree's memory was its processes' RSS summed: a build's forked child and its parent share pages, which
    # that sum counted twice; bench/proc_tree.py sums PSS now ("peak memory (PSS) of the process tree")
    **{(part, f"{step} at {n} runs, peak RSS of the process tree"): "summed RSS, replaced by summed PSS"
       for part in ("loop", "growth") for step in ("full", "spec_item", "new_run", "prose")
       for n in (1000, 3000, 10000, 30000)},
    **{("growth", f"{step}: memory at 10000 runs / at 1000 runs"): "summed RSS, replaced by summed PSS"
       for step in ("full", "spec_item", "new_run", "prose")},
}


def current(results: list[Result]) -> list[tuple[Result, dict]]:
    """The latest value of each part and figure name with the file it came from, in the page's order (a
    ``RETIRED`` figure left out)."""
    latest: dict[tuple[str, str], tuple[Result, dict]] = {}
    for r in results:  # oldest first: a later file replaces an earlier one
        for f in r.figures:
            if (r.part, f["name"]) not in RETIRED:
                latest[(r.part, f["name"])] = (r, f)
    order = list(dict.fromkeys(part for part, _, _ in EXPECTED))

    def key(item: tuple[Result, dict]) -> tuple:
        r, f = item
        pos = order.index(r.part) if r.part in order else len(order)
        return (pos, r.part, r.date, [g["name"] for g in r.figures].index(f["name"]))
    return sorted(latest.values(), key=key)


def number(value: float) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.6g}"


def _figure(f: dict) -> str:
    unit = _UNITS.get(f["unit"], f["unit"])
    if unit in _UNITS.values():
        return f"{number(f['value'])}{unit}"
    if f["value"] == 1 and unit.isalpha() and unit.endswith("s") and len(unit) > 3:  # "1 input"; never "MB/s"
        unit = unit[:-1]
    return f"{number(f['value'])} {unit}".rstrip()  # (a count has no unit: no space before the bold's end)


def _target(f: dict) -> str:
    target = f.get("target") or ""
    if not target:
        return "—"
    for ascii_, sign in _COMPARISONS.items():
        target = target.replace(ascii_, sign)
    unit = _UNITS.get(f["unit"], f["unit"])
    if unit and unit in target.split():  # a target that names its unit ("< 5 s at 10000 runs") says it once
        shown = target
    else:
        shown = f"{target}{unit}" if unit in _UNITS.values() else f"{target} {unit}".rstrip()
    met = f.get("met")
    return shown + ("" if met is None else ": met" if met else ": **missed**")


def _measurement(f: dict) -> str:
    extra = ", ".join(f"{k} {number(v)}" for k, v in (f.get("extra") or {}).items())
    return f"{f['name']} ({extra})" if extra else f["name"]


def _link(r: Result) -> str:
    """A link from docs/ to the file."""
    return f"[{r.path.name}](../{r.path.as_posix()})"


def machines_text(results: list[Result]) -> str:
    """One line per machine folder: its cores, CPU model, memory and kernel as its files recorded them."""
    seen: dict[str, dict] = {}
    for r in results:  # a later file fills what an earlier one did not record
        slug = r.folder.split("-", 3)[-1]
        m = seen.setdefault(slug, {})
        m.update({k: v for k, v in r.machine.items() if v is not None})
    lines = []
    for slug, m in sorted(seen.items()):
        model = m.get("cpu_model")
        words = [f"{m.get('cpus', '?')} vCPUs", model if model and model != "unknown" else "CPU model not recorded"]
        if m.get("memory_gib") is not None:
            words.append(f"{number(m['memory_gib'])} GiB of memory")
        if m.get("kernel"):
            words.append(f"Linux {m['kernel']}")
        lines.append(f"- `{slug}`: " + ", ".join(words))
    return "\n".join(lines) if lines else "No results recorded yet."


def figures_text(results: list[Result]) -> str:
    rows = current(results)
    if not rows:
        return "No results recorded yet."
    out = ["| part | measurement | figure | target | reference | date | file |", "|---|---|---|---|---|---|---|"]
    for r, f in rows:
        cells = [f"`{r.part}`", _measurement(f), f"**{_figure(f)}**", _target(f), f.get("reference") or "—",
                 r.date[:10], _link(r)]
        # (a cell on one line: a failed step's error is several)
        out.append("| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |")
    out += ["", "Each file's command, revision, machine, load average before and after, the CPU seconds of a fixed "
            "piece of Python before and after (`bench/record.py probe_cpu_s`: the machine's speed that day) and, "
            "where recorded, the CPU microseconds to make a folder where the part worked (`probe_folder_us`):", ""]
    for r in {r.path: r for r, _ in rows}.values():
        load = " → ".join("not recorded" if r.load.get(k) is None else number(r.load[k]) for k in ("before", "after"))
        probe = r.load.get("probe_cpu_s")
        probe = " → ".join(f"{number(x)} s" for x in probe) if probe else "not recorded"
        folders = r.load.get("probe_folder_us")
        folders = f", a folder {' → '.join(f'{number(x)} µs' for x in folders)}" if folders else ""
        out.append(f"- {_link(r)}: `{r.command}`, revision {r.revision or '—'}, "
                   f"`{r.folder.split('-', 3)[-1]}`, load {load}, probe {probe}{folders}")
    return "\n".join(out)


def not_measured_text(results: list[Result]) -> str:
    missing = [(cmd, what) for part, cmd, what in EXPECTED if not measured(part, cmd, results)]
    if not missing:
        return "Every measurement above has a results file."
    return "\n".join(f"- {what}: `{cmd}`" for cmd, what in missing)


def render(results: Path = RESULTS, template: Path = TEMPLATE, root: Path = ROOT) -> str:
    text = template.read_text(encoding="utf-8")
    absent = [m for m in MARKERS if m not in text]
    if absent:
        raise ResultsError(f"{template}: expected the markers {', '.join(absent)}")
    found = load_results(results, root)
    for marker, fill in zip(MARKERS, (machines_text, figures_text, not_measured_text)):
        text = text.replace(marker, fill(found))
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the page is out of date")
    ap.add_argument("--results", type=Path, default=RESULTS, help="the results folder (default bench/results)")
    ap.add_argument("--page", type=Path, default=PAGE, help="the page written (default docs/performance.md)")
    args = ap.parse_args(argv)
    try:
        text = render(args.results)
    except ResultsError as exc:
        print(f"performance_doc: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if not args.page.is_file() or args.page.read_text(encoding="utf-8") != text:
            print(f"{args.page} is out of date: python3 bench/performance_doc.py", file=sys.stderr)
            return 1
        return 0
    args.page.write_text(text, encoding="utf-8")
    print(f"wrote {args.page} from {len(load_results(args.results))} results files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
