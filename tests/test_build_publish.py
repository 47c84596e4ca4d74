"""Builds: one build at a time per output, a fresh directory swapped in at the end, raw files
published from the store's content-addressed copies (a real ingest, a real Hugo build)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, held_elsewhere, run_tool
from site_helpers import READ_RUN, copy_home_pages, report_head, table_chapter

SPEC = report_head(extra="publish_raw = true\n") + table_chapter()


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Runs copied from the fixtures (so that they can be deleted and edited), ingested; a spec dir."""
    tmp = tmp_path_factory.mktemp("build")
    runs = tmp / "runs"
    shutil.copytree(READ_RUN, runs / "clients=1")
    db = tmp / "db" / "kansoku.duckdb"
    run_tool("ingest", "--db", db, runs, check=True)
    specs = tmp / "specs"
    specs.mkdir()
    (specs / "mini.toml").write_text(SPEC, encoding="utf-8")
    content = tmp / "content"  # the home pages only: the report's pages are generated
    copy_home_pages(content)
    return tmp, runs, db, specs


def build(env, out: Path, *extra, check=True):
    tmp, runs, db, specs = env
    return run_tool("build", "--db", db, "--out", out, "--specs", specs, "--generated", out.parent / "gen",
                    "--content", tmp / "content", *extra, check=check)


def raw_files(out: Path) -> dict[str, Path]:
    """The raw files published (not the manifest of their digests beside them)."""
    return {p.relative_to(out).as_posix(): p for p in (out / "raw").rglob("*") if p.is_file() and p.name != "SHA256SUMS"}


@pytest.fixture(scope="module")
def built(env) -> Path:
    """One build of ``env`` (with a memory limit of 1GB, a size the option takes), shared by the tests that
    read a built site (one Hugo build, not one each). Read it only."""
    out = env[0] / "built" / "public"
    build(env, out, "--memory-limit", "1GB")
    return out


def test_raw_files_come_from_the_store_and_match_their_hash(env, built, tmp_path):
    tmp, runs, db, specs = env
    files = raw_files(built)
    assert len(files) == 6  # 3 repetitions: pgbench.log and run.toml each
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    shas = {r[0] for r in con.execute("SELECT sha256 FROM sources UNION SELECT run_toml_sha256 FROM runs").fetchall()}
    con.close()
    blobs = db.parent / "blobs"
    for rel, p in files.items():
        sha = hashlib.sha256(p.read_bytes()).hexdigest()
        assert sha in shas, rel
        assert os.path.samefile(p, blobs / sha[:2] / sha)  # a hard link to the kept copy, not a copy
    # the runs are gone from where they were ingested, or edited: the site publishes what was ingested
    moved = tmp / "runs-moved"
    shutil.move(runs, moved)
    try:
        out2 = tmp_path / "public2"
        build(env, out2)
        assert {r: hashlib.sha256(p.read_bytes()).hexdigest() for r, p in raw_files(out2).items()} == \
               {r: hashlib.sha256(p.read_bytes()).hexdigest() for r, p in files.items()}
    finally:
        shutil.move(moved, runs)


@pytest.mark.slow  # a fault-injection or concurrency trial: --all (CI) runs it; the quick run keeps the rest of its module
def test_a_damaged_kept_copy_fails_the_build_loudly_and_leaves_public_as_it_was(env, tmp_path):
    tmp, runs, db, specs = env
    # a store of its own: its blobs are damaged below
    own = tmp_path / "db" / "kansoku.duckdb"
    run_tool("ingest", "--db", own, runs, check=True)
    out = tmp_path / "public"
    run_tool("build", "--db", own, "--out", out, "--specs", specs, "--generated", tmp_path / "gen", "--content", tmp / "content", check=True)
    # (raw files are links to the kept copies: damaging a copy damages them too, so names only for those)
    def state():
        return {p.relative_to(out): None if "raw" in p.parts else p.stat().st_mtime_ns for p in out.rglob("*")}
    before = state()
    blob = next(p for p in (own.parent / "blobs").rglob("*") if p.is_file() and not p.name.startswith("."))
    os.chmod(blob, 0o644)
    blob.write_bytes(blob.read_bytes() + b"tampered\n")
    proc = run_tool("build", "--db", own, "--out", out, "--specs", specs, "--generated", tmp_path / "gen", "--content", tmp / "content")
    assert proc.returncode == 1 and "no longer matches its sha256" in proc.stderr and "Traceback" not in proc.stderr
    assert state() == before  # public/ untouched
    assert not list(tmp_path.glob(".public.new-*"))
    blob.unlink()
    proc = run_tool("build", "--db", own, "--out", out, "--specs", specs, "--generated", tmp_path / "gen", "--content", tmp / "content")
    assert proc.returncode == 1 and "is missing; ingest its run again" in proc.stderr
    run_tool("ingest", "--db", own, runs, check=True)  # restores the kept copy
    run_tool("build", "--db", own, "--out", out, "--specs", specs, "--generated", tmp_path / "gen", "--content", tmp / "content", check=True)


def _saturate_links(copy: Path, folder: Path) -> bool:
    """Hard links to ``copy`` in ``folder`` up to its file system's limit; False where there is none in sight."""
    import errno

    folder.mkdir()
    for i in range(70_000):
        try:
            os.link(copy, folder / str(i))
        except OSError as exc:
            if exc.errno == errno.EMLINK:
                return True
            raise
    return False


@pytest.mark.slow  # 65,000 links and a store of its own: --all (CI); the linking itself is tested quickly below
def test_a_stored_copy_at_its_link_limit_is_copied_and_the_build_says_so(env, tmp_path):
    tmp, runs, db, specs = env
    own = tmp_path / "db" / "kansoku.duckdb"
    run_tool("ingest", "--db", own, runs, check=True)
    blob = next(p for p in (own.parent / "blobs").rglob("*") if p.is_file() and not p.name.startswith("."))
    if not _saturate_links(blob, tmp_path / "links"):
        pytest.skip("this file system has no limit of hard links within reach")
    out = tmp_path / "public"
    args = ["--db", own, "--out", out, "--specs", specs, "--generated", tmp_path / "gen", "--content", tmp / "content"]
    proc = run_tool("build", *args, check=True)
    assert f"warning: the stored copy {blob} of a raw file has as many hard links as its file system allows" \
           in proc.stderr, proc.stderr
    published = [p for p in raw_files(out).values() if p.read_bytes() == blob.read_bytes()]
    assert published and not any(os.path.samefile(p, blob) for p in published)  # copies of the verified bytes
    shutil.rmtree(tmp_path / "links")
    proc = run_tool("build", *args, check=True)
    assert "warning" not in proc.stderr and all(os.path.samefile(p, blob) for p in published)  # (the new site's)


def test_a_copy_at_its_link_limit_is_copied_and_named_by_the_linking(tmp_path):
    """render/linking.py: a stored copy with as many links as its file system allows is copied into the site (the
    verified bytes), and named, whichever of the build's two linking processes met it."""
    from kansoku.render.linking import RawLinks

    full, free = _blob(tmp_path, "full\n"), _blob(tmp_path, "free\n")
    if not _saturate_links(Path(full("x").copy), tmp_path / "links"):
        pytest.skip("this file system has no limit of hard links within reach")
    cache = tmp_path / "cache"
    files = [full("raw/r/run-1/a.log"), free("raw/r/run-1/b.log")]
    for name in ("s1", "s2"):  # one process on a first build; the last build's list on the next
        links = RawLinks(tmp_path / name, cache)
        links.link(files)
        links.wait()
        assert links.result() == [full("x").copy]
        site = tmp_path / name
        assert (site / "raw/r/run-1/a.log").read_bytes() == b"full\n"
        assert not os.path.samefile(site / "raw/r/run-1/a.log", full("x").copy)
        assert os.path.samefile(site / "raw/r/run-1/b.log", free("x").copy)


def test_link_all_makes_each_file_as_link_or_copy_does_and_names_both_paths_of_a_failure(tmp_path):
    """render/linking.py link_all (the reused run pages of a rebuild, linked a folder at a time through its
    descriptors): each file a hard link to its source, in folders made as needed; a file at its link limit
    copied; a source missing, or a file there already, is link_or_copy's error naming the file's paths."""
    from kansoku.render.linking import link_all

    src, dest = tmp_path / "src", tmp_path / "dest"
    rels = ["top.html", "ja/reports/r/runs/a.html", "ja/reports/r/runs/b.html", "csv/r/runs/a.csv"]
    for rel in rels:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(rel)
    made: set[str] = set()
    assert link_all(str(src), str(dest), rels, made) == len(rels)
    assert all(os.path.samefile(src / rel, dest / rel) for rel in rels)
    assert str(dest / "ja/reports/r/runs") in made
    with pytest.raises(FileNotFoundError, match="gone/x.html"):
        link_all(str(src), str(tmp_path / "other"), ["gone/x.html"])
    with pytest.raises(FileExistsError, match=re.escape(str(dest / "ja/reports/r/runs/b.html"))):
        link_all(str(src), str(dest), ["ja/reports/r/runs/b.html"])
    if _saturate_links(src / "csv/r/runs/a.csv", tmp_path / "links"):
        assert link_all(str(src), str(tmp_path / "limit"), ["csv/r/runs/a.csv"]) == 1
        copied = tmp_path / "limit/csv/r/runs/a.csv"
        assert copied.read_text() == "csv/r/runs/a.csv" and not os.path.samefile(copied, src / "csv/r/runs/a.csv")


def _hold(lock_dir: str, ready, release):
    from kansoku.render import publish

    with publish.output_lock([Path(lock_dir)]):
        ready.set()
        release.wait(60)


@pytest.mark.slow  # a fault-injection or concurrency trial: --all (CI) runs it; the quick run keeps the rest of its module
def test_a_second_build_into_the_same_output_stops_or_waits(env, tmp_path):
    out = tmp_path / "public"
    with held_elsewhere(_hold, str(out)) as release:
        proc = build(env, out, check=False)
        assert proc.returncode == 4
        assert "being written by another build" in proc.stderr and "--wait" in proc.stderr
        assert not out.exists()
        import subprocess
        import sys

        tmp, runs, db, specs = env
        waiting = subprocess.Popen([sys.executable, str(ROOT / "tools" / "build"), "--db", str(db), "--out", str(out),
                                    "--specs", str(specs), "--generated", str(tmp_path / "gen"),
                                    "--content", str(tmp / "content"), "--wait", "120"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # release the lock only once the second build says it waits for it (a real signal, not a sleep: under
        # load a second was not enough for the build to start). readline is bounded: the build gives up
        # after its --wait and closes stderr.
        first = []
        while not any("waiting" in ln for ln in first):
            line = waiting.stderr.readline()
            if not line:
                break
            first.append(line)
        release.set()
        _, err = waiting.communicate(timeout=180)
        err = "".join(first) + err
        assert waiting.returncode == 0, err
        assert "waiting" in err
    assert (out / "index.html").is_file() and len(raw_files(out)) == 6


def test_build_help_offers_wait_and_version(tool):
    proc = tool("build", "--help", check=True)
    assert "--wait SECONDS" in proc.stdout and "--version" in proc.stdout
    for name in ("ingest", "build", "pdf", "example", "collect", "compare"):
        proc = tool(name, "--version", check=True)
        assert proc.stdout.startswith(f"tools/{name} (kansoku) ")


def test_swap_and_the_repair_of_a_build_killed_between_two_renames(tmp_path, monkeypatch):
    from kansoku.render import publish

    out = tmp_path / "public"
    out.mkdir()
    (out / "old.html").write_text("old")
    new = publish.fresh_output(out)
    (new / "new.html").write_text("new")
    publish.swap_in(new, out)  # renameat2(RENAME_EXCHANGE) on Linux
    assert [p.name for p in out.iterdir()] == ["new.html"] and not new.exists()
    # without the atomic exchange: two renames, and a build killed between them is repaired by the next
    monkeypatch.setattr(publish, "_exchange", lambda a, b: False)
    new = publish.fresh_output(out)
    (new / "newer.html").write_text("newer")
    publish.swap_in(new, out)
    assert [p.name for p in out.iterdir()] == ["newer.html"]
    out.rename(tmp_path / ".public.old-999")  # killed after moving the output aside
    (tmp_path / ".public.new-998").mkdir()     # and a half build of another killed run
    new = publish.fresh_output(out)
    assert [p.name for p in out.iterdir()] == ["newer.html"]
    assert sorted(p.name for p in tmp_path.iterdir()
                  if p.name.startswith(".public.") and ".trash-" not in p.name) == [new.name]
    publish.discard(new)


def test_the_replaced_output_is_deleted_after_the_swap_without_the_build_waiting(tmp_path):
    """The previous site goes to .public.trash-* and a detached rm deletes it (a build at 1,000 runs spent
    seconds unlinking the old site); a trash left by a killed delete is finished by the next build."""
    import time

    from kansoku.render import publish

    out = tmp_path / "public"
    out.mkdir()
    for i in range(200):
        (out / f"page{i}.html").write_text("old")
    new = publish.fresh_output(out)
    (new / "index.html").write_text("new")
    publish.swap_in(new, out)
    assert [p.name for p in out.iterdir()] == ["index.html"] and not new.exists()

    def trash():
        return [p for p in tmp_path.iterdir() if p.name.startswith(".public.trash-")]

    deadline = time.monotonic() + 30
    while trash() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not trash()
    # a delete that never ran (the machine went down): the next build's fresh output finishes it
    left = tmp_path / ".public.trash-1-2"
    (left / "deep").mkdir(parents=True)
    (left / "deep" / "page.html").write_text("old")
    new = publish.fresh_output(out)
    deadline = time.monotonic() + 30
    while trash() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not trash() and [p.name for p in out.iterdir()] == ["index.html"]
    publish.discard(new)


def test_a_build_beyond_its_memory_limit_says_so_and_leaves_public_as_it_was(env, built):
    """DuckDB's memory in a build is limited (--memory-limit, default 500MB): a statement that needs more and
    cannot spill ends the build with one line saying what to do, exit 1, never a traceback; public/ stays.
    (The shared build ``built`` ran with --memory-limit 1GB: a limit given as a size builds.)"""
    out = built
    before = {p.relative_to(out): p.stat().st_mtime_ns for p in out.rglob("*")}
    proc = build(env, out, "--memory-limit", "1MB", check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "more memory than its limit of 1MB" in proc.stderr and "--memory-limit" in proc.stderr
    assert {p.relative_to(out): p.stat().st_mtime_ns for p in out.rglob("*")} == before
    assert not list(out.parent.glob(".public.new-*"))
    proc = build(env, out, "--memory-limit", "12", check=False)  # not a size: a usage error naming it
    assert proc.returncode == 2 and "'12': expected a size such as 500MB or 2GB" in proc.stderr
    assert {p.relative_to(out): p.stat().st_mtime_ns for p in out.rglob("*")} == before
    build(env, out, "--memory-limit", "1GB")  # the next build after a failed one works (same site: ``built`` holds)


def test_hugo_runs_with_bounded_memory_unless_the_environment_says_otherwise(monkeypatch):
    """Hugo's cache and Go's heap are bounded for a build (the memory target of docs/performance.md);
    a value the user set in the environment wins."""
    from kansoku.render import hugo

    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    monkeypatch.delenv("HUGO_MEMORYLIMIT", raising=False)
    env = hugo.hugo_env()
    assert env["GOMEMLIMIT"] == "700MiB" and env["HUGO_MEMORYLIMIT"] == "0.1" and env["PATH"] == os.environ["PATH"]
    monkeypatch.setenv("GOMEMLIMIT", "4GiB")
    assert hugo.hugo_env()["GOMEMLIMIT"] == "4GiB"


def test_hugo_server_runs_without_the_builds_memory_bounds(monkeypatch):
    """kansoku serve: Hugo's server keeps the whole site in memory, so the build's GOMEMLIMIT (below its live heap)
    would have Go collect without pause after every edit; its heap is bounded by half the machine's memory alone."""
    from kansoku.render import hugo

    for name in ("GOGC", "GOMEMLIMIT", "HUGO_MEMORYLIMIT"):
        monkeypatch.delenv(name, raising=False)
    env = hugo.hugo_env(server=True)
    half = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    assert not {"GOGC", "HUGO_MEMORYLIMIT"} & set(env) and env["PATH"] == os.environ["PATH"]
    assert env["GOMEMLIMIT"].endswith("MiB") and abs(int(env["GOMEMLIMIT"][:-3]) - (half >> 20)) <= 1
    monkeypatch.setenv("GOMEMLIMIT", "3GiB")
    assert hugo.hugo_env(server=True)["GOMEMLIMIT"] == "3GiB"


def test_hugo_collects_its_heap_for_the_limit_alone_unless_the_environment_sets_one(monkeypatch):
    """render/hugo.py HUGO_GOGC_UNDER_LIMIT: in a rebuild rendering a few pages, Go's collector runs to keep Hugo
    under the build's GOMEMLIMIT, not at every doubling; not in a build rendering every page, and never when the
    environment sets its own limit or GOGC (the heap would have no bound)."""
    from kansoku.render import hugo

    for name in ("GOGC", "GOMEMLIMIT"):
        monkeypatch.delenv(name, raising=False)
    env = hugo.hugo_env(few=True)
    assert env["GOGC"] == "off" and env["GOMEMLIMIT"] == "700MiB"
    assert "GOGC" not in hugo.hugo_env()  # every page rendered
    monkeypatch.setenv("GOMEMLIMIT", "100GiB")
    assert "GOGC" not in hugo.hugo_env(few=True)
    monkeypatch.delenv("GOMEMLIMIT")
    monkeypatch.setenv("GOGC", "150")
    assert hugo.hugo_env(few=True)["GOGC"] == "150" and hugo.hugo_env(few=True)["GOMEMLIMIT"] == "700MiB"


def test_the_sources_page_parts_hold_whole_conditions_and_a_new_run_changes_its_own_part():
    """render/hugo.py sources_layout: every run on exactly one part, in run id order; a part ends with a
    condition once it holds SOURCES_PER_PAGE runs (one condition too long for a part is cut at twice that);
    the forwarding map names the runs beyond part 1 only (a one-part page has none). A run added to the first
    condition changes the first part alone (parts of a fixed size would each take the run before them)."""
    from kansoku.render import hugo

    per = hugo.SOURCES_PER_PAGE

    def campaign(reps: dict[int, int], big: int = 0) -> dict[str, dict]:
        runs = {f"c{c:04d}/rep={r:03d}": {"anchor": f"run-{c:04d}-{r:03d}", "factors": {"c": str(c), "rep": str(r)}}
                for c, n in reps.items() for r in range(1, n + 1)}
        runs.update({f"z/rep={r:04d}": {"anchor": f"run-z-{r:04d}", "factors": {"c": "z", "rep": str(r)}}
                     for r in range(big)})
        return runs

    def condition(rid: str) -> str:
        return rid.split("/")[0]
    reps = {c: 3 + c % 5 for c in range(3 * per // 4)}  # conditions of 3 to 7 runs
    runs = campaign(reps, big=2 * per + 9)
    lay = hugo.sources_layout(runs)
    parts = lay["sources_parts"]
    assert [r for p in parts for r in p] == sorted(runs)
    ids = sorted(runs)
    for p in parts[:-1]:  # each ends a condition, or is cut at twice the size inside one
        after_it = ids[ids.index(p[-1]) + 1]
        assert len(p) == 2 * per or per <= len(p) < per + 7 and condition(p[-1]) != condition(after_it), len(p)
    assert len([p for p in parts if len(p) == 2 * per]) == 1 and len(parts) > 3  # (the long condition's)
    assert lay["sources_part_of"] == {runs[r]["anchor"]: k for k, p in enumerate(parts, 1) for r in p if k > 1}

    more = {**reps, 0: reps[0] + 1}
    after = hugo.sources_layout(campaign(more, big=2 * per + 9))["sources_parts"]
    assert after[0] == sorted(parts[0] + ["c0000/rep=004"]) and after[1:] == parts[1:]

    one = hugo.sources_layout(dict(list(runs.items())[:3]))
    assert one == {"sources_parts": [sorted(runs)[:3]]}


@pytest.mark.slow  # a store of millions of rows: --all (CI); test_a_build_beyond_its_memory_limit_says_so_... is quick
def test_a_run_too_big_for_the_memory_limit_is_told_a_limit_that_builds(tmp_path):
    """A run that logged millions of transactions needs more memory than the limit for its latency
    percentiles: the build's error gives a --memory-limit computed from the run's row count (never a fixed
    figure), and a build with it works. A synthetic store: the fixture's -l log, its rows repeated."""
    import duckdb

    from kansoku.app.build import TX_ROW_BYTES, size_bytes
    from kansoku.parsers.pgbench import txlog

    src = ROOT / "tests" / "fixtures" / "pgbench" / "study=scaleup" / "workload=read" / "config=checksums-off"
    runs = tmp_path / "runs"
    shutil.copytree(src / "clients=1" / "rep=1", runs / "study=scaleup" / "workload=read" /
                    "config=checksums-off" / "clients=1" / "rep=1")
    db = tmp_path / "db" / "kansoku.duckdb"
    run_tool("ingest", "--db", db, runs, check=True)
    con = duckdb.connect(str(db))
    con.execute(f"INSERT INTO {txlog.TX_PLAIN} SELECT t.* REPLACE (t.transaction_no + r.range * 100000 AS "
                f"transaction_no) FROM {txlog.TX_PLAIN} t, range(1, 1000) r")
    rows = con.execute(txlog.LARGEST_RUN_ROWS_SQL).fetchone()[0]
    con.close()
    assert rows > 3_000_000
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "mini.toml").write_text(SPEC, encoding="utf-8")
    copy_home_pages(tmp_path / "content")
    env = (tmp_path, runs, db, specs)
    out = tmp_path / "site" / "public"
    # a limit its latencies alone nearly fill (8 bytes each), so that no machine fits the percentiles in it
    assert rows * 8 > 0.6 * size_bytes("40MB")
    proc = build(env, out, "--memory-limit", "40MB", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"its largest run logged {rows:,} transactions" in proc.stderr, proc.stderr
    advised = re.search(r"run it again with --memory-limit (\S+)", proc.stderr).group(1)
    assert size_bytes(advised) >= rows * TX_ROW_BYTES
    build(env, out, "--memory-limit", advised)
    assert (out / "index.html").is_file()


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("larger", ["src", "dest"])
def test_merge_into_moves_what_the_output_lacks_and_merges_shared_folders(tmp_path, larger):
    """publish.merge_into (linked files moved into Hugo's output): a folder the output lacks is moved whole
    (same inode: one rename), a folder both hold is merged whichever side holds more, and the source is gone."""
    from kansoku.render.publish import merge_into

    src, dest = tmp_path / "links", tmp_path / "hugo"
    files = {"src": ["en/reports/r/runs/a/index.html", "raw/r/a/pgbench.log", "en/reports/r/runs/b/index.html"],
             "dest": ["en/reports/r/index.html", "en/index.html", "en/reports/r/runs/c/index.html"]}
    if larger == "dest":
        files["dest"] += [f"en/reports/r/runs/d{i}/index.html" for i in range(5)]
    else:
        files["src"] += [f"en/reports/r/runs/d{i}/index.html" for i in range(5)]
    for side, names in files.items():
        for name in names:
            p = (src if side == "src" else dest) / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"{side}:{name}", encoding="utf-8")
    raw_inode = (src / "raw").stat().st_ino
    want = {name: f"{side}:{name}" for side, names in files.items() for name in names}
    merge_into(src, dest)
    assert not src.exists() and _tree(dest) == want
    assert (dest / "raw").stat().st_ino == raw_inode  # moved, not made again


def test_merge_into_refuses_a_page_written_twice(tmp_path):
    from kansoku.errors import KansokuError
    from kansoku.render.publish import merge_into

    for side in ("links", "hugo"):
        (tmp_path / side / "en").mkdir(parents=True)
        (tmp_path / side / "en" / "index.html").write_text(side, encoding="utf-8")
    with pytest.raises(KansokuError, match="written twice"):
        merge_into(tmp_path / "links", tmp_path / "hugo")
    assert (tmp_path / "hugo" / "en" / "index.html").read_text(encoding="utf-8") == "hugo"


def test_raw_files_are_linked_by_a_process_of_their_own_whose_error_is_the_builds(tmp_path):
    """render/linking.py RawLinking: the files linked (the store's copy itself, not a copy of it) and counted,
    the copies it checked remembered; a copy altered or missing since is the build's error, named, with what
    to do; a process stopped mid-way leaves nothing running."""
    from kansoku.errors import KansokuError
    from kansoku.render.linking import RawFile, RawLinking, plan_line, write_plan

    blob = tmp_path / "blobs" / "ab" / "copy"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"pgbench output\n")
    sha = hashlib.sha256(b"pgbench output\n").hexdigest()
    files = [RawFile(sha, f"raw/rep/run-{i}/pgbench.log", str(blob)) for i in range(3)]
    site, cache = tmp_path / "site", tmp_path / "cache"
    plan = cache / "plan.json"
    write_plan(plan, [plan_line(f) for f in files], cache / "verified.json")
    assert RawLinking(plan, site).result() == 3
    assert all((site / f.target).stat().st_ino == blob.stat().st_ino for f in files)
    assert str(blob) in (cache / "verified.json").read_text()

    blob.chmod(0o644)
    blob.write_bytes(b"pgbench output, edited\n")
    with pytest.raises(KansokuError, match=r"copy of raw/rep/run-0/pgbench.log no longer matches its sha256; "
                                           r"remove it and ingest its run again"):
        RawLinking(plan, tmp_path / "site2").result()
    blob.unlink()
    with pytest.raises(KansokuError, match=r"the stored copy of raw/rep/run-0/pgbench.log is missing; ingest"):
        RawLinking(plan, tmp_path / "site3").result()

    stopped = RawLinking(plan, tmp_path / "site4")
    stopped.stop()
    assert stopped._proc.returncode is not None


def _blob(tmp_path, text: str):
    from kansoku.render.linking import RawFile

    data = text.encode()
    sha = hashlib.sha256(data).hexdigest()
    copy = tmp_path / "blobs" / sha[:2] / sha
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(data)
    return lambda target: RawFile(sha, target, str(copy))


def _linked(site) -> dict[str, int]:
    return {str(p.relative_to(site)): p.stat().st_ino for p in sorted(site.rglob("*")) if p.is_file()}


def test_a_build_starts_linking_the_last_builds_raw_files_and_links_the_difference(tmp_path):
    """render/linking.py RawLinks: each build's raw files are linked from the start on the last build's list;
    once this build's list is known, a file it no longer has is unlinked (its folder too, left empty), a new
    or changed one linked; a first process that failed on a copy this build no longer publishes is not the
    build's error (every file is linked again); the same list is linked once; and the copies checked stay
    remembered across the two processes."""
    import json

    from kansoku.errors import KansokuError
    from kansoku.render.linking import RawLinks

    cache = tmp_path / "cache"
    a, b, c = _blob(tmp_path, "a\n"), _blob(tmp_path, "b\n"), _blob(tmp_path, "c\n")
    first = [a("raw/r/run-1/a.log"), b("raw/r/run-2/b.log"), b("raw/r/run-3/b.log")]

    def build(name: str, files: list) -> dict[str, int]:
        links = RawLinks(tmp_path / name, cache)
        links.link(files)
        links.wait()
        links.result()
        return _linked(tmp_path / name)

    def inode(f) -> int:
        return Path(f.copy).stat().st_ino

    assert build("s1", first) == {f.target: inode(f) for f in first}  # (no last list: linked by one process)
    assert (cache / "raw-links.json").exists()
    assert build("s2", first) == {f.target: inode(f) for f in first}  # the last list, the same: nothing more
    # run-2 gone, run-3's file changed, run-4 new
    second = [a("raw/r/run-1/a.log"), c("raw/r/run-3/b.log"), c("raw/r/run-4/c.log")]
    assert build("s3", second) == {f.target: inode(f) for f in second}
    assert not (tmp_path / "s3" / "raw" / "r" / "run-2").exists()  # its folder gone with its file
    remembered = json.loads((cache / "verified-raw.json").read_text(encoding="utf-8"))
    assert {f.copy for f in second} <= set(remembered)

    Path(c("x").copy).unlink()  # run-3 and run-4 removed from the store: the last list's copy is gone
    third = [a("raw/r/run-1/a.log"), b("raw/r/run-5/b.log")]
    assert build("s4", third) == {f.target: inode(f) for f in third}
    assert build("s5", []) == {} and not (cache / "raw-links.json").exists()  # none published: no list kept
    assert build("s6", third) == {f.target: inode(f) for f in third}
    Path(b("x").copy).chmod(0o644)
    Path(b("x").copy).write_bytes(b"b, edited\n")  # a copy this build publishes, altered: the build's error
    with pytest.raises(KansokuError, match=r"copy of raw/r/run-5/b.log no longer matches its sha256"):
        build("s7", third)
    links = RawLinks(tmp_path / "s8", cache)  # a build that fails: the process started is stopped
    links.stop()
    assert all(p is None or p._proc.returncode is not None for p in (links._early, links._rest))


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(), st.text())
def test_a_raw_files_plan_line_is_the_json_dumps_of_its_three_fields(sha, target, copy):
    """render/linking.py plan_line, made with json's own str encoder for speed, is json.dumps of the file's three
    fields, whatever they hold (a tab, a newline, a quote, a name outside ASCII), and reads back as them."""
    from kansoku.render.linking import RawFile, plan_line

    line = plan_line(RawFile(sha, target, copy))
    assert line == json.dumps([sha, target, copy])
    assert json.loads(line) == [sha, target, copy]


def test_a_build_brings_the_replaced_outputs_raw_tree_to_its_list_rather_than_making_it_again(tmp_path):
    """render/publish.py keeps the raw tree of the output a swap replaces (no reader sees it any more), and
    the next build takes it into its fresh directory: a file linked to its checked copy stays, one that is not
    is linked again, what the build does not publish (Hugo's SHA256SUMS, a run gone, a stray file) is removed,
    and a run's folder is not made again. A process that did not finish leaves no kept file behind."""
    from kansoku.render import publish
    from kansoku.render.linking import RawLinks

    out, cache = tmp_path / "public", tmp_path / "cache"
    a, b, c = _blob(tmp_path, "a\n"), _blob(tmp_path, "b\n"), _blob(tmp_path, "c\n")

    def build(files: list, before_links=lambda staging: None) -> bool:
        new = publish.fresh_output(out)
        staging = publish.staging_for(new)
        took = publish.take_kept_raw(out, staging)
        before_links(staging)
        links = RawLinks(staging, cache)
        links.link(files)
        links.wait()
        links.result()
        if files:
            (new / "raw" / "r").mkdir(parents=True)
            (new / "raw" / "r" / "SHA256SUMS").write_text("sums\n")  # (Hugo writes it beside the raw files)
        publish.merge_into(staging, new)
        publish.swap_in(new, out)
        return took

    def published() -> dict[str, int]:
        return {k: v for k, v in _linked(out).items() if not k.endswith("SHA256SUMS")}

    def inode(f) -> int:
        return Path(f.copy).stat().st_ino

    first = [a("raw/r/run-1/a.log"), b("raw/r/run-2/b.log"), b("raw/r/run-3/b.log")]
    assert not build(first) and not build(first)  # (a first output: nothing replaced, nothing kept)
    kept = tmp_path / ".public.raw-kept"
    assert sorted(_linked(kept)) == ["r/SHA256SUMS", "r/run-1/a.log", "r/run-2/b.log", "r/run-3/b.log"]
    folder = (kept / "r" / "run-1").stat().st_ino

    def damage(staging):
        (staging / "raw" / "r" / "run-1" / "stray.txt").write_text("not published\n")
        (staging / "raw" / "r" / "run-3" / "b.log").unlink()
        (staging / "raw" / "r" / "run-3" / "b.log").write_text("b\n")  # the same bytes, not the copy's link

    second = [a("raw/r/run-1/a.log"), b("raw/r/run-3/b.log"), c("raw/r/run-4/c.log")]
    assert build(second, damage)
    assert published() == {f.target: inode(f) for f in second}
    assert (out / "raw" / "r" / "run-1").stat().st_ino == folder  # moved, not made again
    assert not (out / "raw" / "r" / "run-2").exists() and (out / "raw" / "r" / "SHA256SUMS").read_text() == "sums\n"
    assert build(second) and published() == {f.target: inode(f) for f in second}
    Path(c("x").copy).unlink()  # run-4 removed from the store: the first process fails on the last list
    assert build(first) and published() == {f.target: inode(f) for f in first}  # (the kept tree linked anew)
    # a build that publishes no raw file removes the kept tree it took; the one after takes the tree of the
    # output that build replaced
    assert build([]) and not (out / "raw").exists()
    assert build(first) and published() == {f.target: inode(f) for f in first}
    assert not build(first)  # (the output replaced had no raw tree)
    assert published() == {f.target: inode(f) for f in first}
