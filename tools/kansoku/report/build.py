"""Build the computed report: store + report spec -> :class:`~kansoku.model.ComputedReport`.

Everything the site and the PDF show is computed here, once: tables (``analysis.tables``), figures' chart
data (``analysis.figures``), the runs behind each item (``report.provenance``), the test-environment
appendix (``report.environment``), the page structure (``report.structure``). The cross-year view is
``report.trends``. ``kansoku.app`` opens the store, calls these and hands the results to the renderers,
which take them and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from kansoku import words
from kansoku.analysis import figures, steady
from kansoku.analysis import tables as analysis
from kansoku.analysis.charts.profiles import profile_of, profiled_hosts
from kansoku.analysis.commands import chapters_command_blocks
from kansoku.analysis.table_kinds import compute_table
from kansoku.model import Author, Chapter, ComputedReport, Figure, MissingFigure, Revision, Table
from kansoku.report import machines
from kansoku.report.cache import ItemCache
from kansoku.report.comparisons import compute_comparison
from kansoku.report.environment import environment, label_wheres
from kansoku.report.methods import method_notes, transcribed_note
from kansoku.report.provenance import figure_representatives, item_provenance, runs_provenance
from kansoku.report.runs import key_records, label_runs, records_key, records_of_rows, records_rows, run_pages
from kansoku.report.structure import generated_body, report_pages
from kansoku.report.values import findings, page_values
from kansoku.spec.model import LANGS, Item, Report, text
from kansoku.spec.validate import SpecProblems
from kansoku.store.db import Store

CONTENT = Path("content")


# -- one report ---------------------------------------------------------------------------------------

def _text_dict(v: Any, where: str, report: Report) -> dict[str, str] | None:
    t = text(v, where, report.spec_file, required=False)
    return t.as_dict() if t else None


def compute_report(store: Store, report: Report, content_root: Path = CONTENT / "reports",
                   with_run_pages: bool = True, cache: ItemCache | None = None) -> ComputedReport:
    """Everything the site and the PDF show for one report, computed once (the run pages only for the site).
    With a ``cache``, a table or figure whose inputs have not changed since it was last computed is reused
    (report/cache.py)."""
    cache = cache or ItemCache(None)
    cache.keep_run_rows(store)  # a per-host metric of every run: the runs changed since the last build alone
    chapters = []
    run_ids: set[str] = set()
    item_runs: list[tuple[Item, list[str]]] = []
    commands_of: list[list[str]] = []  # each chapter's runs: their command blocks read the runs once a report
    for ch in report.chapters:
        out = Chapter(ch.id, ch.number, ch.title.as_dict(), order=[it.id for it in ch.items])
        chapter_runs: set[str] = set()
        for it in ch.items:
            if it.kind == "table":
                out.tables[it.id] = t = cache.get_or_compute(store, report, it,
                                                             lambda it=it: compute_table_model(store, report, it))
            else:
                out.figures[it.id] = t = cache.get_or_compute(store, report, it,
                                                              lambda it=it: compute_figure_model(store, report, it))
            run_ids.update(t.runs)
            chapter_runs.update(t.runs)
            item_runs.append((it, list(t.runs)))
        commands_of.append(sorted(chapter_runs))
        out.missing_figures = [MissingFigure(
            number=m.number, label={lang: words.t(lang, "figure_label", m.number) for lang in LANGS},
            caption=m.caption.as_dict(), reason=words.both(f"figure_missing_{m.reason}"),
            note=m.note.as_dict() if m.note else None) for m in ch.missing_figures]
        chapters.append(out)
    blocks_of = cache.of_runs(store, report, "commands", commands_of, lambda: chapters_command_blocks(
        store, report, commands_of, kept=lambda name, runs, compute: cache.per_run(store, name, runs, compute)))
    for out, blocks in zip(chapters, blocks_of):
        out.commands = blocks
    # machines: named once per report; a table or figure mixes them only when its spec says so
    item_run_ids = sorted(run_ids)
    rm = cache.of_runs(store, report, "machines", item_run_ids, lambda: machines.run_machines(store, item_run_ids))
    names = machines.machine_names(rm)
    for it, runs_of in item_runs:
        machines.check_item(report, it, rm, names, runs_of)
    for ch, out in zip(report.chapters, chapters):
        ch_runs = sorted({r for it, rs in item_runs if it.chapter_id == ch.id for r in rs})
        out.machines = machines.chapter_machines(rm, names, ch_runs)
    compares = [cache.comparison(store, report, spec, lambda spec=spec: compute_comparison(store, report, spec))
                for spec in report.compares]
    for c in compares:
        run_ids.update(c.runs)
    rep = report.raw.get("report", {})
    pages = report_pages(report, content_root)
    pdf_pages = report_pages(report, content_root, site=False)
    bodies = {p.id: generated_body(p, report) for p in pages}
    values, problems = page_values(pages, chapters)
    if problems:
        raise SpecProblems(problems)
    all_run_ids = sorted(run_ids)
    runs_key = records_key(store, report, all_run_ids, cache)
    runs = kept_records(report.id, runs_key, lambda: labelled_provenance(store, report, all_run_ids, cache),
                        cache)
    env = cache.of_runs(store, report, "environment", all_run_ids, lambda: label_wheres(
        environment(store, all_run_ids, rm, names, kept=lambda *part: cache.per_run(store, *part)),
        lambda f, lang: analysis.factor_name(report, f, lang),
        lambda f, v, lang: analysis.factor_value_label(report, f, v, lang)))

    def has_steady(ids: list[str]) -> bool:  # (every run's steady state computed: kept by the runs' fingerprints)
        return cache.of_runs(store, report, "steady", ids, lambda: steady.any_steady(store, ids))

    return ComputedReport(
        id=report.id, fiscal_year=report.fiscal_year, title=report.title.as_dict(),
        subtitle=report.subtitle.as_dict() if report.subtitle else None,
        organisation=report.organisation.as_dict(), revision=report.revision, copyright=report.copyright,
        license=_text_dict(rep.get("license"), "[report] license", report),
        revision_history=revision_history(report), authors=authors(report), themes=themes(report),
        publish_raw=bool(rep.get("publish_raw", False)), chapters=chapters,
        runs=runs, records_key=runs_key, environment=env,
        pages=pages, pdf_pages=pdf_pages, generated_bodies=bodies, content_dir=content_root / report.id,
        site_url=rep.get("site_url"), methods=method_notes(store, chapters, sorted(run_ids), has_steady),
        transcribed=transcribed_note(store, sorted(run_ids)), compares=compares, values=values,
        findings=findings(report, chapters),
        run_pages=run_pages(store, report, chapters, runs, cache) if with_run_pages else {},
    )


# Each report's records of its runs as last made or read in this process, under their key (report/runs.py
# records_key): ``kansoku serve`` recomputes after each edit, and a spec edited leaves them as they were
_RECORDS: dict[str, tuple[str, dict]] = {}


def kept_records(report_id: str, key: str | None, make: Callable[[], dict], cache: ItemCache | None = None) -> dict:
    """The report's records of its runs: those this process made last under ``key``, else those a build kept in
    ``cache`` under it (as rows: report/runs.py records_rows), else ``make()`` (kept under ``key``; None: never
    kept). Their readers do not change them, but for the addresses of the raw files (render/publish.py
    plan_raw), the same for the same report and records."""
    keeps = key is not None and cache is not None and cache.directory is not None
    got = _RECORDS.get(report_id)
    if key is not None and got is not None and got[0] == key:
        if keeps:
            cache.keep(key)  # (kept for the next process: a build prunes the entries it did not use)
        return got[1]
    runs = None
    if keeps:
        rows = cache.load(key)  # (the key holds the code's version: rows of this code's shape)
        runs = records_of_rows(rows) if isinstance(rows, list) else None
    if runs is None:
        runs = make()
        if keeps:
            cache.save(key, records_rows(runs))  # (pickled at once: before plan_raw sets the addresses)
    if key is not None:
        _RECORDS[report_id] = (key, runs)
    else:
        _RECORDS.pop(report_id, None)
    return runs


def labelled_provenance(store: Store, report: Report, run_ids: list[str], cache: ItemCache | None = None) -> dict:
    """The runs' provenance, their factors as a reader reads them: the report's names and value labels, each
    record keyed by what it is made of (with a cache: ``key_records``)."""
    runs = runs_provenance(store, run_ids)
    label_runs(report, runs)
    key_records(store, report, runs, cache)
    return runs


def compute_table_model(store: Store, report: Report, item: Item) -> Table:
    """A table: its numbers (analysis.tables) and the runs behind it, grouped (provenance)."""
    t = compute_table(store, report, item)
    reps = {c.representative for row in t.rows for c in row if c.representative}
    out = t.to_model(item_provenance(store, report, t.runs, reps))
    out.footnote = profile_footnote(store, item, out.runs, scope_footnote(store, item, out.footnote))
    return out


def compute_figure_model(store: Store, report: Report, item: Item) -> Figure:
    """A figure: its chart data (analysis.figures; each renderer draws it) and the runs behind it, grouped
    (provenance)."""
    f = figures.figure_data(store, report, item)
    f.provenance = item_provenance(store, report, f.runs, figure_representatives(store, item))
    f.footnote = profile_footnote(store, item, f.runs, scope_footnote(store, item, f.footnote))
    return f


def profile_footnote(store: Store, item: Item, runs: list[str],
                     footnote: dict[str, str] | None) -> dict[str, str] | None:
    """A profile's table or figure names the host it profiled, that host's role and its machine (a two-host run
    profiles the server over ssh, a one-host run where collect runs: the reader is told which)."""
    profile = profile_of(item)
    hosts = profiled_hosts(store, runs, profile) if profile and runs else []
    if not hosts:
        return footnote
    out = {}
    for lang in LANGS:
        parts = []
        for host, role, inv, _ in hosts:
            if inv:
                d = machines.describe(inv)
                cpu = d["cpu"][lang] if isinstance(d["cpu"], dict) else d["cpu"]
                machine = f"{cpu}, {d['memory']}"
            else:
                machine = words.t(lang, "profile_host_no_machine")
            parts.append(words.t(lang, "profile_host_one", host=host or "—",
                                 role=analysis.role_label(role, lang) if role else "—", machine=machine))
        note = words.t(lang, "profile_host_note", words.t(lang, "list_separator").join(parts))
        out[lang] = " ".join(x for x in ((footnote or {}).get(lang), note) if x)
    return out


def scope_footnote(store: Store, item: Item, footnote: dict[str, str] | None) -> dict[str, str] | None:
    """The item's footnote, saying which of its runs lie outside its report's scope (those its ``where``
    names on purpose: another campaign compared with the report's own)."""
    outside = analysis.outside_scope(store, item, named=True)
    if not outside:
        return footnote
    names = ", ".join(f"{name} ({n})" for _, name, n in outside)
    return {lang: " ".join(x for x in ((footnote or {}).get(lang), words.t(lang, "scope_outside_note", names)) if x)
            for lang in LANGS}


def revision_history(report: Report) -> list[Revision]:
    out = []
    for i, e in enumerate(report.raw.get("report", {}).get("revision_history", []) or []):
        out.append(Revision(str(e.get("revision", "")), str(e.get("date", "")),
                            _text_dict(e.get("changes"), f"[[report.revision_history]] #{i + 1} changes",
                                       report) or words.same("")))
    return out


def authors(report: Report) -> list[Author]:
    out = []
    for i, a in enumerate(report.raw.get("report", {}).get("author", []) or []):
        chapters = [str(c) for c in a.get("chapters", [])]
        titles = {c.id: c for c in report.chapters}
        out.append(Author(
            name=_text_dict(a.get("name"), f"[[report.author]] #{i + 1} name", report) or words.same(""),
            affiliation=_text_dict(a.get("affiliation"), f"[[report.author]] #{i + 1} affiliation", report),
            chapters=[{"id": c, "number": titles[c].number if c in titles else None,
                       "title": titles[c].title.as_dict() if c in titles else words.same(c)}
                      for c in chapters],
        ))
    return out


def themes(report: Report) -> dict[str, list[str]]:
    raw = report.raw.get("report", {}).get("themes", []) or []
    out: dict[str, list[str]] = {lang: [] for lang in LANGS}
    for i, t in enumerate(raw):
        d = _text_dict(t, f"[report] themes #{i + 1}", report) or {}
        for lang in LANGS:
            if d.get(lang):
                out[lang].append(d[lang])
    return out
