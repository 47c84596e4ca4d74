#!/usr/bin/env python3
"""Benchmark: a synthetic campaign's ingest and build against its budgets.

    python3 bench/campaign_build.py [--runs 100,1000] [--keep DIR] [--profile FILE]
    python3 bench/campaign_build.py --runs 10000 --ingest-only     # the 10,000-run ingest (< 20 min)
    python3 bench/campaign_build.py --runs 10000 --replicate 10    # 1,000 runs ingested, copied 10 times

For each size, in a temporary directory (nothing of the repository is touched) (``--ingest-only``: steps
1 and 2 only; the ingest's CPU, user + sys of it and its workers, is printed beside its wall time):

1. writes N runs (bench/synthetic.py: pgbench stdout, sar text, iostat, run.toml from the example's files);
2. **ingest**: ``tools/ingest`` of the whole campaign into a fresh database (budget < 2 min at 1,000 runs);
3. **full build**: ``tools/build`` (the whole command: spec check, compute, generated data, Hugo, raw files)
   of a campaign report (12 tables and 12 figures over every run) from an empty generated directory
   (budget < 30 s);
4. **rebuild, nothing changed**: ``tools/build`` again (no budget; it should reuse every table and figure);
5. **rebuild after one new run**: one more run written and ingested, then ``tools/build``
   (budget < 5 s; the ingest of the one run is printed, not counted);
6. **100 tables + 100 figures**: a spec of 100 tables and 100 figures over the campaign, built from an empty
   generated directory (budget < 1 min);
7. **heaviest page**: every HTML page of the last two sites, weighed as a reader's first load counts it:
   the HTML (with its inline data) and the site's own scripts and styles it references, without the
   plotly.js bundle (cached once per site). Budget: no page over 1.5 MB.

Each figure is printed against its budget, with the command's CPU (user + sys, Hugo included), the peak RSS of
its largest process and the load average; the exit status is 1 when a budget is missed. The budgets hold
for 1,000 runs; at other sizes the figures are printed for comparison only. ``--runs 10000`` adds the
budget for the full build at 10,000 runs (< 2 minutes and < 1.5 GB: the larger of the build's largest
process and the build with its children, Hugo included, summed; sampled every 0.2 s); the campaign is
ingested by ``tools/ingest`` like every size (the longest step at that size), or, with ``--replicate K`` (e.g. ``--runs 10000 --replicate 10``), 1/K of it is ingested and its runs
copied K times in SQL with new ``rep`` numbers (``replicate_store``: every table's rows, the same shape per
run; each copy repeats its original's numbers): a large store in a fraction of the ingest's time.
"""

from __future__ import annotations

import argparse
import html.parser
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import proc_tree  # noqa: E402
import synthetic  # noqa: E402
from record import Figure, Load, record  # noqa: E402

BUDGETS = {"ingest": 120.0, "build": 30.0, "rebuild_one": 5.0, "spec100": 60.0, "page_bytes": 1_500_000}
BUDGET_RUNS = 1000
# at 10,000 runs: the full build in < 2 minutes and < 1.5 GB (the peak RSS of its largest process)
BIG_RUNS, BIG_BUILD_S, BIG_BUILD_MB = 10000, 120.0, 1500.0
INGEST_10K = (10000, 1200.0)  # 10,000 runs ingested in < 20 minutes

HEAD = """
[report]
id = "{id}"
fiscal_year = 2026
title = {{ ja = "合成キャンペーン", en = "Synthetic campaign" }}
organisation = {{ ja = "kansoku", en = "kansoku" }}
revision = "1.0"
publish_raw = true

[factors.config]
name = {{ ja = "構成", en = "Configuration" }}
order = ["checksums-off", "checksums-on"]

[factors.clients]
name = {{ ja = "クライアント数", en = "Clients" }}

[factors.workload]
name = {{ ja = "ワークロード", en = "Workload" }}
order = ["read", "update"]
"""

TABLE = """
[[chapter.table]]
id = "t{n}"
caption = {{ ja = "表 {n}", en = "Table {n}" }}
metrics = {metrics}
where = {{ study = "synthetic", workload = "{workload}", shared_buffers = "{sb}" }}
rows = "clients"
columns = "config"
aggregate = "median"
count = true
baseline = {{ factor = "config", value = "checksums-off", compare = "ratio", format = "percent", digits = 2 }}
"""

# every run of the campaign in one table and one figure (their run lists are the longest of a page)
OVERVIEW = """
[[chapter.table]]
id = "overview"
caption = { ja = "全実行", en = "Every run" }
metric = "tps"
where = { study = "synthetic" }
rows = "clients"
columns = "workload"
count = true

[[chapter.figure]]
id = "overview"
caption = { ja = "全実行", en = "Every run" }
chart = "line"
metric = "tps"
where = { study = "synthetic" }
x = "clients"
series = "workload"
"""

FIGURES = {
    "line": """
[[chapter.figure]]
id = "f{n}"
caption = {{ ja = "図 {n}", en = "Figure {n}" }}
chart = "line"
metric = "{metric}"
where = {{ study = "synthetic", workload = "{workload}", shared_buffers = "{sb}" }}
x = "clients"
series = "config"
""",
    "bar": """
[[chapter.figure]]
id = "f{n}"
caption = {{ ja = "図 {n}", en = "Figure {n}" }}
chart = "bar"
metric = "{metric}"
where = {{ study = "synthetic", workload = "{workload}", shared_buffers = "{sb}" }}
x = "clients"
series = "config"
""",
    "tps_over_time": """
[[chapter.figure]]
id = "f{n}"
caption = {{ ja = "図 {n}", en = "Figure {n}" }}
chart = "tps_over_time"
metric = "tps"
where = {{ study = "synthetic", workload = "{workload}", shared_buffers = "{sb}", config = "checksums-off" }}
series = "clients"
""",
    "cpu_stacked": """
[[chapter.figure]]
id = "f{n}"
caption = {{ ja = "図 {n}", en = "Figure {n}" }}
chart = "cpu_stacked"
metric = "tps"
where = {{ study = "synthetic", workload = "{workload}", shared_buffers = "{sb}", config = "checksums-off", clients = 8 }}
""",
}
TABLE_METRICS = ['["tps", "cpu_idle_pct"]', '["latency_avg_ms"]', '["tps", "latency_avg_ms"]', '["tps_steady"]']
FIGURE_METRICS = ["tps", "latency_avg_ms", "cpu_idle_pct", "tps_steady"]


def campaign_spec(report_id: str, n_runs: int, tables: int, figures: int, per_chapter: int = 10) -> str:
    """A report over the synthetic campaign: ``tables`` tables and ``figures`` figures (the first of each over
    every run, the others cycling over the campaign's workloads and shared_buffers values, metrics and chart
    kinds); ``per_chapter`` items a chapter."""
    conds, _ = synthetic.grid(n_runs)
    combos = sorted({(c["workload"], c["shared_buffers"]) for c in conds})
    kinds = list(FIGURES)
    items = [OVERVIEW]
    for n in range(max(tables, figures) - 1):
        wl, sb = combos[n % len(combos)]
        if n < tables - 1:
            items.append(TABLE.format(n=n + 1, metrics=TABLE_METRICS[n % len(TABLE_METRICS)], workload=wl, sb=sb))
        if n < figures - 1:
            items.append(FIGURES[kinds[n % len(kinds)]].format(
                n=n + 1, metric=FIGURE_METRICS[n % len(FIGURE_METRICS)], workload=wl, sb=sb))
    out = [HEAD.format(id=report_id)]
    for c in range(0, len(items), per_chapter):
        out.append(f'\n[[chapter]]\nid = "c{c // per_chapter + 1}"\n'
                   f'title = {{ ja = "章 {c // per_chapter + 1}", en = "Chapter {c // per_chapter + 1}" }}\n')
        out.extend(items[c:c + per_chapter])
    return "".join(out)


def content_dir(base: Path, report_id: str) -> Path:
    """The site's own pages (home, reports list) and a report cover; chapters get generated pages."""
    content = base / "content"
    if content.exists():
        shutil.rmtree(content)
    (content / "reports" / report_id).mkdir(parents=True)
    for p in (ROOT / "content").glob("_index.*.md"):
        shutil.copy(p, content)
    for p in (ROOT / "content/reports").glob("_index.*.md"):
        shutil.copy(p, content / "reports")
    for lang in ("ja", "en"):
        (content / "reports" / report_id / f"_index.{lang}.md").write_text(
            f"---\ntitle: Synthetic campaign\nreport: {report_id}\nfiscal_year: 2026\n---\n", encoding="utf-8")
    return content


LAST = {"cpu": 0.0, "peak_mb": 0.0, "tree_mb": 0.0}  # the last tool's CPU (user + sys, its children
# included), the peak RSS of its largest process, and the peak of its and its children's PSS summed (sampled)


def remove_site(out: Path) -> None:
    """A built site gone whole, for a build from scratch: the output and the raw tree kept beside it for the next
    build (render/publish.py take_kept_raw)."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(out.parent / f".{out.name}.raw-kept", ignore_errors=True)


def tool_env() -> dict[str, str]:
    """The tools' environment, with their bytecode kept as an installed package keeps it: where
    PYTHONDONTWRITEBYTECODE is set every start compiles kansoku's modules from
    source again, a cost an installed package does not pay; the compiled modules are kept outside the
    checkouts instead (PYTHONPYCACHEPREFIX; the first build of each checkout compiles them)."""
    env = dict(os.environ)
    if env.pop("PYTHONDONTWRITEBYTECODE", None) is not None and "PYTHONPYCACHEPREFIX" not in env:
        env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / f"kansoku-bench-pycache-{os.getuid()}")
    return env


def tool(name: str, *args: object, profile: Path | None = None, tree: Path = ROOT) -> tuple[float, str]:
    """Run tools/NAME (of the checkout ``tree``: this one unless told) as a user would; its wall time and its
    stdout (its CPU and the peak RSS of its largest process, Hugo included, in LAST). A failure stops the
    bench."""
    cmd = [sys.executable]
    env = tool_env()
    if profile is not None:
        cmd += ["-m", "cProfile", "-o", str(profile)]
        # a build computes in a child process (app/forked.py), profiled into a file of its own
        env["KANSOKU_PROFILE_CHILD"] = str(profile.with_suffix(".child.prof"))
    cmd += [str(tree / "tools" / name), *map(str, args)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        m = proc_tree.measure(cmd, stdout=out, stderr=err, cwd=tree, env=env)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    dt = m.wall_s
    LAST.update(cpu=m.cpu_s, peak_mb=m.peak_mb, tree_mb=m.tree_mb)
    tool.cpu = LAST["cpu"]  # user + sys of the tool and the children it waited for (an ingest's workers, Hugo)
    if m.returncode != 0:
        raise SystemExit(f"tools/{name} {' '.join(map(str, args))} exited {m.returncode}:\n"
                         f"{stdout[-3000:]}\n{stderr[-3000:]}")
    return dt, stdout.strip()


def cpu_mem() -> str:
    return (f"CPU {LAST['cpu']:.1f} s, peak {LAST['peak_mb']:.0f} MB (largest process; with its children, "
            f"sampled: {LAST['tree_mb']:.0f} MB), load {open('/proc/loadavg').read().split()[0]}")


class _Refs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.refs.append(a["src"])
        elif tag == "link" and a.get("href") and "stylesheet" in (a.get("rel") or ""):
            self.refs.append(a["href"])


def page_weights(public: Path, skip: str) -> list[tuple[int, str]]:
    """(bytes, page) of every HTML page: the HTML and the local scripts and styles it loads, but ``skip``."""
    sizes: dict[Path, int] = {}
    out = []
    for page in public.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        p = _Refs()
        p.feed(text)
        total = len(text.encode("utf-8"))
        for ref in set(p.refs):
            if skip in ref or ref.startswith(("http:", "https:", "//")):
                continue
            f = public / ref.split("?")[0].lstrip("/") if ref.startswith("/") else page.parent / ref.split("?")[0]
            if f.is_file():
                total += sizes.setdefault(f, f.stat().st_size)
        out.append((total, str(page.relative_to(public))))
    return sorted(out, reverse=True)


def verdict(value: float, budget: float, applies: bool) -> str:
    if not applies:
        return "(budget applies at 1,000 runs)"
    return "OK" if value < budget else "OVER BUDGET"


REPLICATED_RUN_TABLES = ("runs", "run_factors", "run_hosts")  # keyed by run; every other table by source


def replicate_store(db: Path, copies: int) -> int:
    """Make the store at ``db`` (a synthetic campaign of R repetitions per condition, bench/synthetic.py) hold
    ``copies`` times its runs, in SQL: copy k (1 .. copies - 1) of each run is the run with ``rep`` r + k * R,
    every row of it copied (the same tables, the same rows per run: runs, factors, hosts, sources, and every
    data table's rows, source ids made as the ingest makes them, sha1 of run id and file name), so that the
    store is the one an ingest of a campaign of ``copies`` times the repetitions would give, but for the numbers
    each copy repeats (its pgbench output is its original's; the sar and iostat files are the same in every
    synthetic run anyway). Returns the number of runs. A statement per copy and table, each committed (a
    scratch store: an interrupted copy leaves it part-replicated); far faster than ingesting each copy."""
    import duckdb

    con = duckdb.connect(str(db))
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute("SET preserve_insertion_order = false")
        reps = con.execute("SELECT max(value::INTEGER) FROM run_factors WHERE factor = 'rep'").fetchone()[0]
        bad = con.execute("SELECT count(*) FROM sources WHERE run_id IS NULL OR source_id <> "
                          "substr(sha1(run_id || chr(0) || file_name), 1, 16)").fetchone()[0]
        if bad:
            raise SystemExit(f"{db}: {bad} sources whose id is not the ingest's (or of no run): not a synthetic store")
        con.execute(f"""CREATE TEMP TABLE rmap AS
            SELECT r.run_id AS old, k.range AS k,
                   CAST(regexp_extract(r.run_id, '/rep=([0-9]+)$', 1) AS INTEGER) AS rep,
                   CAST(regexp_extract(r.run_id, '/rep=([0-9]+)$', 1) AS INTEGER) + k.range * {reps} AS new_rep,
                   regexp_replace(r.run_id, '/rep=[0-9]+$', '') || '/rep=' || new_rep AS new
            FROM runs r, range(1, {copies}) k""")
        con.execute("""CREATE TEMP TABLE smap AS
            SELECT s.source_id AS old, m.new AS run_id, m.k, substr(sha1(m.new || chr(0) || s.file_name), 1, 16) AS new
            FROM sources s JOIN rmap m ON m.old = s.run_id""")
        tables = con.execute("SELECT table_name, list(column_name ORDER BY column_index) FROM duckdb_columns() "
                             "WHERE database_name = current_database() AND schema_name = 'main' AND table_name IN "
                             "(SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main') GROUP BY 1").fetchall()
        for k, table, cols in [(k, t, c) for k in range(1, copies) for t, c in tables]:
            # a statement (and commit) per copy and table: one transaction of them all held every copy's
            # rows in its transaction-local storage (several times slower)
            if table in REPLICATED_RUN_TABLES:
                join, src = "JOIN rmap m ON m.old = t.run_id", {"run_id": "m.new"}
            elif "source_id" in cols:
                join, src = "JOIN smap m ON m.old = t.source_id", {"source_id": "m.new", "run_id": "m.run_id"}
            else:
                continue  # machines, kansoku_meta: not per run
            rep_path = "regexp_replace({c}, '/rep=[0-9]+(/|$)', '/rep=' || mr.new_rep || '\\1')"
            extra = {
                "runs": {"run_dir": rep_path.format(c="t.run_dir"),
                         "run_toml": "regexp_replace(t.run_toml::VARCHAR, '\"rep\":( *\"?)[0-9]+', "
                                     "'\"rep\":\\1' || mr.new_rep)::JSON"},
                "run_factors": {"value": "CASE WHEN t.factor = 'rep' THEN mr.new_rep::VARCHAR ELSE t.value END"},
                "sources": {"path": rep_path.format(c="t.path")},
            }.get(table, {})
            if extra:
                join += (" JOIN rmap mr ON mr.old = t.run_id AND mr.k = m.k" if table == "sources"
                         else " JOIN rmap mr ON mr.old = t.run_id AND mr.new = m.new")
            exprs = ", ".join(extra.get(c) or src.get(c) or f't."{c}"' for c in cols)
            con.execute(f"INSERT INTO {table} SELECT {exprs} FROM {table} t {join} WHERE m.k = {k}")
        con.execute("CHECKPOINT")
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]
    finally:
        con.close()


def measured(step: str, n: int, wall: float, target: str = "", met: bool | None = None) -> list[Figure]:
    """A step's wall time (against its budget), with its CPU and peak memory as the last tool left them."""
    return [Figure(f"{step} at {n} runs, wall", round(wall, 3), "s", target=target, met=met),
            Figure(f"{step} at {n} runs, CPU with children", round(LAST["cpu"], 3), "s"),
            Figure(f"{step} at {n} runs, peak RSS", round(max(LAST["peak_mb"], LAST["tree_mb"]), 1), "MB",
                   extra={"largest_process_mb": round(LAST["peak_mb"], 1), "tree_mb": round(LAST["tree_mb"], 1)})]


def bench_size(n: int, base: Path, profile_dir: Path | None, results: list[bool], ingest_only: bool = False,
               replicate: int = 1, figures: list[Figure] | None = None) -> None:
    """One size's steps, printed against their budgets; their figures appended to ``figures``."""
    figs = figures if figures is not None else []
    from kansoku.render.hugo import PLOTLY_BUNDLE

    applies = n >= BUDGET_RUNS
    base.mkdir(parents=True, exist_ok=True)
    camp = base / "campaign"
    t0 = time.monotonic()
    n_ingest = n // replicate
    if replicate > 1 and (n % replicate or synthetic.grid(n_ingest)[0] != synthetic.grid(n)[0]):
        raise SystemExit(f"--replicate {replicate}: {n} runs are not {replicate} times the repetitions of "
                         f"{n_ingest} runs' conditions (bench/synthetic.py grid)")
    synthetic.write_campaign(camp, n_ingest, work=base / "templates")
    print(f"\n== {n} runs ({base}) ==\nwritten in {time.monotonic() - t0:.1f} s")
    db = base / "kansoku.duckdb"
    db.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    dt, _ = tool("ingest", "--db", db, camp)
    budget = INGEST_10K[1] if n_ingest >= INGEST_10K[0] else BUDGETS["ingest"]
    ok = dt < budget
    results.append(ok or not applies)
    figs += measured(f"ingest of {n_ingest}", n_ingest, dt, f"< {budget:g} s" if applies else "", ok if applies else None)
    print(f"ingest of {n_ingest} runs:           {dt:7.1f} s   budget < {budget:.0f} s   "
          f"{verdict(dt, budget, applies)}   (CPU {tool.cpu:.1f} s, {tool.cpu / n_ingest * 1000:.0f} ms a run; "
          f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after)")
    if replicate > 1:
        t0 = time.monotonic()
        total = replicate_store(db, replicate)
        print(f"store replicated {replicate}x in SQL: {total} runs in {time.monotonic() - t0:.1f} s "
              f"(not an ingest: see replicate_store)")
        figs.append(Figure(f"store copied {replicate}x in SQL to {total} runs", round(time.monotonic() - t0, 3), "s"))
    if ingest_only:
        return

    specs = base / "specs"
    shutil.rmtree(specs, ignore_errors=True)
    specs.mkdir()
    (specs / "campaign.toml").write_text(campaign_spec("campaign", n, 12, 12), encoding="utf-8")
    content = content_dir(base, "campaign")
    gen, out = base / "generated", base / "public"
    shutil.rmtree(gen, ignore_errors=True)
    prof = (lambda name: profile_dir / f"{n}-{name}.prof") if profile_dir else (lambda name: None)
    build = ["--db", db, "--out", out, "--specs", specs, "--generated", gen, "--content", content]
    dt, msg = tool("build", *build, profile=prof("build"))
    results.append(dt < BUDGETS["build"] or not applies)
    figs += measured("full build", n, dt, f"< {BUDGETS['build']:g} s at {BUDGET_RUNS} runs",
                     dt < BUDGETS["build"] if n == BUDGET_RUNS else None)
    print(f"full build (12 + 12 items):  {dt:7.1f} s   budget < {BUDGETS['build']:.0f} s    "
          f"{verdict(dt, BUDGETS['build'], applies)}   ({cpu_mem()})   [{msg}]")
    if n >= BIG_RUNS:
        big_ok = dt < BIG_BUILD_S and max(LAST["peak_mb"], LAST["tree_mb"]) < BIG_BUILD_MB
        results.append(big_ok)
        figs.append(Figure(f"full build at {n} runs, within {BIG_BUILD_S:g} s and {BIG_BUILD_MB:g} MB", float(big_ok),
                           "bool", target="1", met=big_ok))
        print(f"  at {n} runs: budget < {BIG_BUILD_S:.0f} s and < {BIG_BUILD_MB:.0f} MB   "
              f"{'OK' if big_ok else 'OVER BUDGET'}")
    dt, msg = tool("build", *build, profile=prof("rebuild"))
    figs += measured("rebuild, nothing changed", n, dt)
    print(f"rebuild, nothing changed:    {dt:7.1f} s   ({cpu_mem()})   [{msg}]")
    new = synthetic.add_run(camp, n, work=base / "templates")
    dt_i, _ = tool("ingest", "--db", db, new)
    dt, msg = tool("build", *build, profile=prof("rebuild-one"))
    results.append(dt < BUDGETS["rebuild_one"] or not applies)
    figs += measured("rebuild after one new run", n, dt, f"< {BUDGETS['rebuild_one']:g} s" if applies else "",
                     dt < BUDGETS["rebuild_one"] if applies else None)
    print(f"rebuild after one new run:   {dt:7.1f} s   budget < {BUDGETS['rebuild_one']:.0f} s     "
          f"{verdict(dt, BUDGETS['rebuild_one'], applies)}   ({cpu_mem()}; its ingest: {dt_i:.1f} s)   [{msg}]")
    heavy = page_weights(out, PLOTLY_BUNDLE)

    specs100 = base / "specs100"
    shutil.rmtree(specs100, ignore_errors=True)
    specs100.mkdir()
    (specs100 / "campaign.toml").write_text(campaign_spec("campaign", n, 100, 100), encoding="utf-8")
    gen100, out100 = base / "generated100", base / "public100"
    shutil.rmtree(gen100, ignore_errors=True)
    dt, msg = tool("build", "--db", db, "--out", out100, "--specs", specs100, "--generated", gen100,
                   "--content", content, profile=prof("spec100"))
    results.append(dt < BUDGETS["spec100"] or not applies)
    figs += measured("100 tables + 100 figures", n, dt, f"< {BUDGETS['spec100']:g} s" if applies else "",
                     dt < BUDGETS["spec100"] if applies else None)
    print(f"100 tables + 100 figures:    {dt:7.1f} s   budget < {BUDGETS['spec100']:.0f} s    "
          f"{verdict(dt, BUDGETS['spec100'], applies)}   ({cpu_mem()})   [{msg}]")
    heavy = sorted(heavy + [(b, f"public100/{p}") for b, p in page_weights(out100, PLOTLY_BUNDLE)], reverse=True)
    b, page = heavy[0]
    results.append(b < BUDGETS["page_bytes"])
    figs.append(Figure(f"heaviest page at {n} runs", b, "bytes", target=f"< {BUDGETS['page_bytes']}",
                       met=b < BUDGETS["page_bytes"], extra={"page": page, "pages": len(heavy)}))
    print(f"heaviest page:               {b / 1e6:7.2f} MB  budget < {BUDGETS['page_bytes'] / 1e6:.1f} MB  "
          f"{'OK' if b < BUDGETS['page_bytes'] else 'OVER BUDGET'}   ({page}; of {len(heavy)} pages)")
    for b, page in heavy[1:4]:
        print(f"    next: {b / 1e6:.2f} MB  {page}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default="100,1000", help="campaign sizes, comma-separated (default 100,1000)")
    ap.add_argument("--keep", type=Path, help="work here and keep everything (default: a temporary directory)")
    ap.add_argument("--profile", type=Path, metavar="DIR", help="write a cProfile of each build into DIR")
    ap.add_argument("--ingest-only", action="store_true",
                    help="only write and ingest each campaign (e.g. --runs 10000 --ingest-only: budget < 20 min)")
    ap.add_argument("--replicate", type=int, default=1, metavar="K",
                    help="ingest 1/K of each campaign and copy its runs K times in SQL (new rep numbers; "
                         "replicate_store): e.g. --runs 10000 --replicate 10 builds a 10,000-run store in minutes")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="kansoku-campaign-bench-"))
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    results: list[bool] = []
    figures: list[Figure] = []
    load = Load(args.keep)
    try:
        for n in (int(x) for x in args.runs.split(",") if x.strip()):
            bench_size(n, tmp / f"runs-{n}", args.profile, results, args.ingest_only, args.replicate, figures)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    record("campaign", figures, load=load)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
