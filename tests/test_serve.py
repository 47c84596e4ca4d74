"""`kansoku serve`: a live preview. Hugo's own server renders a prose edit at once; a spec edit is recomputed
by kansoku and shown without a restart; a broken spec is reported while the server goes on with the last good
data, and a fix brings the page back; Ctrl-C stops Hugo too. The site is a starter site of a few example runs
(`kansoku init DIR RUNS`)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from test_start import KANSOKU, subprocess_kansoku
from test_starter import copy_runs

pytestmark = pytest.mark.slow

RUNS = [f"study=scaleup/workload=read/config=checksums-off/clients={c}/rep=1" for c in (1, 2)]


class Served:
    """`kansoku serve --port 0` in ``site``, its output collected as it comes."""

    def __init__(self, site: Path, *args: str, started=None):
        self.proc = subprocess.Popen([sys.executable, "-c", KANSOKU, "serve", "--port", "0", *args], cwd=site,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=lambda s=stream, ls=lines: ls.extend(s), daemon=True).start()
        if started is not None:  # told once the command runs, before its serving line (a --wait, say)
            started(self)
        self.base = self.wait_for(lambda: next((m.group(0) for line in self.out
                                                for m in [re.search(r"http://127\.0\.0\.1:\d+/", line)] if m), None),
                                  120, "the serving line")

    def wait_for(self, found, seconds: float, what: str):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = found()
            if got:
                return got
            assert self.proc.poll() is None, f"kansoku serve ended ({self.proc.returncode}): {''.join(self.err)}"
            time.sleep(0.2)
        raise AssertionError(f"no {what} within {seconds} s:\n{''.join(self.out)}\n{''.join(self.err)[-3000:]}")

    def page(self, path: str) -> str:
        """The page, or the error page Hugo's server shows while a rebuild fails."""
        try:
            with urllib.request.urlopen(self.base + path, timeout=30) as resp:
                return resp.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            return exc.read().decode("utf-8", errors="replace")

    def hugo_environment(self) -> dict[str, str]:
        """The environment Hugo's server (kansoku serve's child) was started with."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        assert children, "no Hugo process is running"
        raw = Path(f"/proc/{children[0]}/environ").read_bytes()
        return dict(item.decode().partition("=")[::2] for item in raw.split(b"\0") if item)

    def shows(self, path: str, text: str, seconds: float = 15) -> None:
        self.wait_for(lambda: text in self.page(path), seconds, f"{text!r} on {path}")


@pytest.fixture
def site(tmp_path) -> Path:
    runs = copy_runs(tmp_path / "runs", RUNS)
    init = subprocess_kansoku("init", tmp_path / "live", runs, "-q", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    return tmp_path / "live"


def test_serve_shows_prose_and_spec_edits_and_outlives_a_broken_spec(site):
    prose = site / "content" / "reports" / "live" / "scaleup.en.md"
    spec = site / "data" / "reports" / "live.toml"
    good = spec.read_text(encoding="utf-8")
    page = "en/reports/live/scaleup/"
    served = Served(site)
    try:
        assert "TPS by clients" in served.page(page) and "livereload" in served.page(page)
        # Hugo's server holds the whole site in memory: not the build's memory bounds (render/hugo.py hugo_env)
        from kansoku.render import hugo

        assert served.hugo_environment().get("GOMEMLIMIT") == hugo.hugo_env(server=True)["GOMEMLIMIT"] != "700MiB"
        # a prose edit: Hugo renders it; kansoku recomputes nothing (the text is not what it computes from): no
        # report computed, no generated file written (each computation stamps the generated directory first)
        stamp = site / "data" / "generated" / "build-cache" / "write-started"
        computed_at = stamp.stat().st_mtime_ns
        prose.write_text(prose.read_text(encoding="utf-8").replace("## Setup", "A sentence written now.\n\n## Setup"),
                         encoding="utf-8")
        served.shows(page, "A sentence written now.")
        time.sleep(1)
        assert not any("recomputed" in line for line in served.out), served.out
        assert stamp.stat().st_mtime_ns == computed_at, "a prose edit made kansoku write the generated data again"
        # a caption changed in the spec: recomputed, shown
        spec.write_text(good.replace('en = "TPS by clients"', 'en = "Throughput as clients grow"'), encoding="utf-8")
        served.shows(page, "Throughput as clients grow")
        # a broken spec: said with its line, the server goes on with the last good data
        spec.write_text(good.replace('rows = "clients"', 'rows = "clientz"'), encoding="utf-8")
        served.wait_for(lambda: "unknown factor 'clientz'" in "".join(served.err), 15, "the spec error")
        line = next(i for i, text in enumerate(good.splitlines(), 1) if text == 'rows = "clients"')
        assert f"live.toml:{line}:" in "".join(served.err)
        assert "Throughput as clients grow" in served.page(page)
        # fixed: the page follows the spec again
        spec.write_text(good.replace('en = "TPS by clients"', 'en = "TPS, fixed"'), encoding="utf-8")
        served.shows(page, "TPS, fixed")
        # a number the prose now states through its data: kansoku resolves it, Hugo shows it
        prose.write_text(prose.read_text(encoding="utf-8").replace(
            "A sentence written now.",
            'At 2 clients: {{< val table="scaleup-tps" row="2" metric="tps" >}}.'), encoding="utf-8")
        served.shows(page, 'class="bound-value"')
    finally:
        hugo = [int(p) for p in Path(f"/proc/{served.proc.pid}/task/{served.proc.pid}/children").read_text().split()] \
            if served.proc.poll() is None else []
        served.proc.send_signal(signal.SIGINT)  # Ctrl-C
        rc = served.proc.wait(timeout=30)
    assert rc == 0, "".join(served.err)[-2000:]
    assert hugo, "no Hugo process was running"
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{p}").exists() for p in hugo) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(Path(f"/proc/{p}").exists() for p in hugo), "Hugo outlived kansoku serve"


def test_serve_waits_while_an_ingest_holds_the_store_then_serves(site):
    """`kansoku serve --wait 60` while another process writes the store: it says it waits, and serves the report
    once the store is free (never exit 4 at once, never a half-read store)."""
    from conftest import held_elsewhere, hold_store

    db = next(site.rglob("*.duckdb"))
    with held_elsewhere(hold_store, str(db)) as release:
        def waiting_then_free(served: Served) -> None:
            served.wait_for(lambda: any("waiting" in line for line in served.err), 60, "the waiting line")
            release.set()
        served = Served(site, "--wait", "60", started=waiting_then_free)
    try:
        assert "TPS by clients" in served.page("en/reports/live/scaleup/")
    finally:
        served.proc.send_signal(signal.SIGINT)
        rc = served.proc.wait(timeout=30)
    assert rc == 0, "".join(served.err)[-2000:]


def test_a_change_seen_while_an_ingest_holds_the_store_is_recomputed_once_it_is_done(site):
    """An ingest of new runs while the server runs: the server sees the store change while the ingest still
    holds it, says it waits for it (not an error, nor a retry left to the writer), and shows the change once
    the store is free."""
    from conftest import held_elsewhere, hold_store

    db = next(site.rglob("*.duckdb"))
    spec = site / "data" / "reports" / "live.toml"
    page = "en/reports/live/scaleup/"
    served = Served(site)
    try:
        with held_elsewhere(hold_store, str(db)) as release:
            spec.write_text(spec.read_text(encoding="utf-8").replace('en = "TPS by clients"',
                                                                      'en = "Shown after the ingest"'),
                            encoding="utf-8")
            served.wait_for(lambda: any("waiting" in line for line in served.err), 30, "the waiting line")
            assert "Shown after the ingest" not in served.page(page)
            release.set()
            served.shows(page, "Shown after the ingest", 60)
        assert not any(line.startswith("error") for line in served.err), served.err
    finally:
        served.proc.send_signal(signal.SIGINT)
        rc = served.proc.wait(timeout=30)
    assert rc == 0, "".join(served.err)[-2000:]


def test_the_stores_events_recompute_only_when_the_store_changed_since_it_was_read(site, tmp_path):
    """An ingest's writes reach the server as several batches of events, the first making it wait for the
    ingest (above): the batches that come while it waits and computes leave the store as that computation
    read it, and compute nothing again (the store is held meanwhile: a writer's next ingest would wait for
    it). A store written after the computation is computed again."""
    from watchfiles import Change

    from kansoku.app.serve import LiveSite
    from test_starter import copy_runs

    db = next(site.rglob("*.duckdb"))
    live = LiveSite(site, db, site / "data" / "reports", site / "content", site / "data" / "generated",
                    site / "config.toml", port=0, quiet=True)
    wal = db.with_name(db.name + ".wal")
    seen = {(Change.modified, str(db)), (Change.deleted, str(wal))}
    assert live.needs_recompute(seen)  # nothing computed yet
    live.compute()
    assert not live.needs_recompute(seen)
    runs = copy_runs(tmp_path / "more", ["study=scaleup/workload=read/config=checksums-off/clients=4/rep=1"])
    ingest = subprocess_kansoku("ingest", "--db", db, runs, "-q", cwd=site)
    assert ingest.returncode == 0, ingest.stderr
    assert live.needs_recompute(seen)
    live.compute()
    assert not live.needs_recompute({(Change.modified, str(wal))})


def test_a_new_run_ingested_while_serving_shows_on_its_conditions_other_pages(site, tmp_path):
    """A new run of a condition changes its condition's file (its median, range and count: render/run_pages.py
    condition_json), not the other runs' own data: Hugo's server renders those runs' pages again from that
    file, and the page of the condition's first run counts the new one."""
    import json

    from kansoku.report.provenance import run_anchor
    from test_starter import copy_runs

    db = next(site.rglob("*.duckdb"))
    served = Served(site)
    try:
        rep = json.loads((site / "data" / "generated" / "data" / "reports" / "live.json").read_text(encoding="utf-8"))
        first = next(r for r in rep["runs"] if r.endswith("clients=1/rep=1"))
        page = f"en/reports/live/runs/{run_anchor(first)}.html"
        row = re.search(r'<tr data-metric="tps">(.*?)</tr>', served.page(page), re.S).group(1)
        assert row.endswith('<td class="num">1</td>'), row  # one run of its condition
        runs = copy_runs(tmp_path / "more", ["study=scaleup/workload=read/config=checksums-off/clients=1/rep=2"])
        ingest = subprocess_kansoku("ingest", "--db", db, runs, "-q", "--wait", "60", cwd=site)
        assert ingest.returncode == 0, ingest.stderr
        served.wait_for(lambda: re.search(r'<tr data-metric="tps">.*?<td class="num">2</td></tr>',
                                          served.page(page), re.S), 60, "the count of 2 runs on the first run's page")
    finally:
        served.proc.send_signal(signal.SIGINT)
        rc = served.proc.wait(timeout=30)
    assert rc == 0, "".join(served.err)[-2000:]


def test_serve_without_a_store_says_how_to_make_one(tmp_path):
    (tmp_path / "data" / "reports").mkdir(parents=True)
    proc = subprocess_kansoku("serve", "--port", "0", cwd=tmp_path)
    assert proc.returncode == 2 and "kansoku ingest" in proc.stderr, proc.stderr
    assert not os.path.exists(tmp_path / "data" / "generated")


def test_only_what_kansoku_computes_from_makes_a_prose_edit_recompute(tmp_path):
    from kansoku.app.serve import LiveSite

    content = tmp_path / "content"
    (content / "reports" / "r").mkdir(parents=True)
    pages = {lang: content / "reports" / "r" / f"c1.{lang}.md" for lang in ("ja", "en")}
    for lang, page in pages.items():
        page.write_text(f"---\ntitle: {lang}\n---\nText.\n", encoding="utf-8")
    live = LiveSite(tmp_path, tmp_path / "k.duckdb", tmp_path / "specs", content, tmp_path / "gen",
                    tmp_path / "config.toml", port=0)
    live._prose = {p: live.prose_inputs(p) for p in content.rglob("*.md")}
    en = pages["en"]

    def edit(text: str) -> bool:
        en.write_text(text, encoding="utf-8")
        return live.needs_recompute({(None, str(en))})

    assert not edit("---\ntitle: en\n---\nText, rewritten at length.\n\nA second paragraph.\n")
    assert edit("---\ntitle: en, renamed\n---\nText, rewritten at length.\n\nA second paragraph.\n")
    assert edit('---\ntitle: en, renamed\n---\nTPS: {{< val table="t" row="1" metric="tps" >}}.\n')
    assert not edit('---\ntitle: en, renamed\n---\nThe TPS: {{< val table="t" row="1" metric="tps" >}}.\n')
