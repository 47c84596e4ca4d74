#!/usr/bin/env python3
"""Benchmark: the site's budgets.

    python bench/site_budget.py [--reps 3] [--keep DIR]

1. Build time of the full example site: the repository's example report (data/reports/example.toml,
   content/reports/example) over its real measurements in data/runs/example (ingested once into a
   fresh database), built --reps times
   (compute every table and figure, write data/generated-like files, run Hugo); prints the median and
   the split compute / Hugo of the last build.
2. Transfer of a chapter page with ten charts (and two tables), the same runs: a bench report whose one
   chapter holds ten figures (lines and grouped bars over clients and configurations). The page is
   loaded in headless chromium from a local http.server; every response is counted (HTML, CSS, JS,
   chart data inline) except the plotly.js bundle, which a reader's browser caches once for the site.
   Budget: < 1.5 MB. Also printed: the bundle's size, and the gzip size of what was counted.

The figures are recorded with ``record()`` under bench/results/.

Nothing under data/generated or public/ is touched: everything is built in a temporary directory.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from kansoku.app import build_site  # noqa: E402
from kansoku.render import hugo as site  # noqa: E402
from record import Figure, Load, record  # noqa: E402

EXAMPLE_RUNS = ROOT / "data/runs/example"
BUDGET_BYTES = 1_500_000

BENCH_SPEC = """
[report]
id = "bench"
fiscal_year = 2025
title = { ja = "予算計測", en = "Budget bench" }
organisation = { ja = "kansoku", en = "kansoku" }
revision = "1.0"

[factors.config]
name = { ja = "構成", en = "Configuration" }

[[chapter]]
id = "ten"
title = { ja = "図が 10 個の章", en = "A chapter with ten charts" }

[[chapter.table]]
id = "read"
caption = { ja = "参照系", en = "Read" }
metric = "tps"
where = { study = "scaleup", workload = "read" }
rows = "clients"
columns = "config"
count = true

[[chapter.table]]
id = "update"
caption = { ja = "更新系", en = "Update" }
metric = "tps"
where = { study = "scaleup", workload = "update" }
rows = "clients"
columns = "config"
count = true
"""
FIGURES = [("read", "line"), ("update", "line"), ("read", "bar"), ("update", "bar")]


def bench_spec() -> str:
    out = [BENCH_SPEC]
    for i in range(10):
        workload, chart = FIGURES[i % len(FIGURES)]
        series = "config" if i % 3 else "rep"
        out.append(f"""
[[chapter.figure]]
id = "f{i}"
caption = {{ ja = "図 {i}", en = "Figure {i}" }}
chart = "{chart}"
metric = "tps"
where = {{ study = "scaleup", workload = "{workload}" }}
x = "clients"
series = "{series}"
aggregate = "median"
""")
    return "".join(out)


def bench_page() -> str:
    body = "\n\n".join(['{{< tbl "read" >}}', '{{< tbl "update" >}}'] + [f'{{{{< fig "f{i}" >}}}}' for i in range(10)])
    return f"---\ntitle: \"A chapter with ten charts\"\nreport: bench\nchapter: ten\nchapter_number: 1\nweight: 1\n---\n## Results\n\n{body}\n"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def measure_transfer(public: Path, path: str) -> dict:
    from playwright.sync_api import sync_playwright

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(public)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    got: list[tuple[str, bytes]] = []
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"])
            page = b.new_page()
            page.on("response", lambda r: got.append((r.url, r.body())))
            t0 = time.monotonic()
            page.goto(base + path)
            page.wait_for_function("document.querySelectorAll('div.chart[data-rendered=\"true\"]').length === 10",
                                   timeout=30000)
            render_s = time.monotonic() - t0
            b.close()
    finally:
        srv.shutdown()
    counted = [(u, body) for u, body in got if site.PLOTLY_BUNDLE not in u]
    bundle = sum(len(body) for u, body in got if site.PLOTLY_BUNDLE in u)
    raw = sum(len(body) for _, body in counted)
    gz = sum(len(gzip.compress(body)) for _, body in counted)
    return {"requests": len(got), "counted": [(u.removeprefix(base), len(body)) for u, body in counted],
            "bytes": raw, "gzip_bytes": gz, "bundle_bytes": bundle, "render_s": render_s}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="builds of the example site to time (default 3)")
    ap.add_argument("--keep", type=Path, help="build here and keep it (default: a temporary directory)")
    args = ap.parse_args()
    load = Load(args.keep)
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="kansoku-site-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        db = tmp / "kansoku.duckdb"
        if not db.exists():
            subprocess.run([sys.executable, str(ROOT / "tools/ingest"), "--db", str(db), str(EXAMPLE_RUNS)],
                           check=True, capture_output=True)
        # 1. the full example site
        specs = tmp / "specs"
        content = tmp / "content"
        for d in (specs, content):
            shutil.rmtree(d, ignore_errors=True)
        specs.mkdir()
        shutil.copy(ROOT / "data/reports/example.toml", specs)
        (content / "reports").mkdir(parents=True)
        for p in (ROOT / "content").glob("_index.*.md"):
            shutil.copy(p, content)
        for p in (ROOT / "content/reports").glob("_index.*.md"):
            shutil.copy(p, content / "reports")
        shutil.copytree(ROOT / "content/reports/example", content / "reports/example")
        times = []
        for _ in range(args.reps):
            t0 = time.monotonic()
            res = build_site(db, tmp / "public", spec_dir=specs, generated=tmp / "generated", content=content)
            times.append(time.monotonic() - t0)
        t0 = time.monotonic()
        site.run_hugo(tmp / "public", tmp / "generated", content)
        hugo_s = time.monotonic() - t0
        print(f"example site: {res.pages} pages, {res.tables} tables, {res.figures} figures; build median "
              f"{statistics.median(times):.2f} s over {args.reps} (min {min(times):.2f} s; of which Hugo "
              f"{hugo_s:.2f} s)")
        # 2. a chapter with ten charts
        (specs / "bench.toml").write_text(bench_spec(), encoding="utf-8")
        (content / "reports/bench").mkdir()
        (content / "reports/bench/ten.en.md").write_text(bench_page(), encoding="utf-8")
        (content / "reports/bench/_index.en.md").write_text(
            "---\ntitle: Budget bench\nreport: bench\nfiscal_year: 2025\n---\n", encoding="utf-8")
        t0 = time.monotonic()
        res = build_site(db, tmp / "public", spec_dir=specs, generated=tmp / "generated", content=content)
        print(f"site with the ten-chart chapter: {res.pages} pages built in {time.monotonic() - t0:.2f} s")
        m = measure_transfer(tmp / "public", "/en/reports/bench/ten/")
        verdict = "OK" if m["bytes"] < BUDGET_BYTES else "OVER BUDGET"
        print(f"chapter page with 10 charts: {m['bytes'] / 1e3:.1f} kB transferred excluding the plotly bundle "
              f"({m['gzip_bytes'] / 1e3:.1f} kB if gzipped), {len(m['counted'])} requests; budget "
              f"{BUDGET_BYTES / 1e6:.1f} MB: {verdict}")
        for u, n in m["counted"]:
            print(f"    {n / 1e3:8.1f} kB  {u}")
        print(f"plotly bundle (cached once per site): {m['bundle_bytes'] / 1e6:.2f} MB ({site.PLOTLY_BUNDLE}); "
              f"page loaded and 10 charts drawn in {m['render_s']:.2f} s")
        ok = m["bytes"] < BUDGET_BYTES
        record("site", [
            Figure("example site build", round(statistics.median(times), 2), "s", extra={"reps": args.reps}),
            Figure("example site, Hugo alone", round(hugo_s, 2), "s"),
            Figure("chapter page with ten charts, without plotly.js", round(m["bytes"] / 1e3, 1), "kB",
                   f"< {BUDGET_BYTES / 1e3:.0f}", ok),
            Figure("chapter page with ten charts, gzipped", round(m["gzip_bytes"] / 1e3, 1), "kB"),
            Figure("plotly.js bundle, cached once", round(m["bundle_bytes"] / 1e6, 2), "MB"),
        ], load=load, raw={"build_s": times, "hugo_s": hugo_s, "transfer": m})
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
