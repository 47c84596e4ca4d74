"""Renderings of a run's sa file: sar -A text, sadf -d and sadf -j beside sa.bin are kept and checked
on a sample of their records, not parsed whole; another measurement is read whole; a disagreement is an error
naming the file and line (docs/ingest.md, "Renderings of a sa file")."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES, run_tool

REAL_RUN = "study=scaleup/workload=read/config=checksums-off/clients=2/rep=1"
RENDERINGS = {"sadf.json": "sadf-json", "sadf_d.csv": "sadf-csv", "sar_A.txt": "sar-text"}


def _copy_run(corpus: Path, dest: Path, *, renderings: bool = True) -> Path:
    """The corpus's real run under dest/campaign/<its id> (writable), with or without its renderings."""
    run = dest / "campaign" / REAL_RUN
    shutil.copytree(corpus / "real" / REAL_RUN, run,
                    ignore=None if renderings else shutil.ignore_patterns(*RENDERINGS))
    (dest / "campaign" / ".kansoku-campaign").write_text("")
    for p in run.iterdir():
        os.chmod(p, 0o644)
    os.chmod(run, 0o755)
    return run


def _record_times(run: Path) -> list[str]:
    """The record times of the run's sa file, as sadf -d prints them (its first section)."""
    out = []
    for line in (run / "sadf_d.csv").read_text().split("\n")[1:]:
        if line.startswith("#"):
            break
        ts = line.split(";")[2][:-4]
        if not out or out[-1] != ts:
            out.append(ts)
    return out


def _json_files(proc) -> dict[str, dict]:
    return {Path(f["path"]).name: f for f in json.loads(proc.stdout)["files"]}


def _ro(db: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(db), read_only=True)


def _rounded(rows: list[tuple]) -> list[tuple]:
    """Floats to 12 significant digits: DuckDB's parallel sums may differ in the last bits between two reads."""
    return [tuple(float(f"{v:.12g}") if isinstance(v, float) else v for v in r) for r in rows]


def _stored(db: Path) -> dict[str, list]:
    """What the views and metrics read, and the sysstat rows, without the columns naming the file."""
    con = _ro(db)
    try:
        return {k: _rounded(v) for k, v in {
            "sys_metrics": con.execute(
                "SELECT run_id, tool, format, ts, interval_s, sample, since_boot, activity, instance, metric, value, "
                "line, host, role FROM sys_metrics ORDER BY ALL").fetchall(),
            "sys_series": con.execute("SELECT * EXCLUDE (source_id) FROM sys_series ORDER BY ALL").fetchall(),
            "run_metrics": con.execute("SELECT * FROM run_metrics ORDER BY ALL").fetchall(),
            "cpu_in_run_mean": con.execute("SELECT * FROM cpu_in_run_mean ORDER BY ALL").fetchall(),
            "disk_in_run_mean": con.execute("SELECT * FROM disk_in_run_mean ORDER BY ALL").fetchall(),
            "memory_in_run": con.execute("SELECT * EXCLUDE (source_id) FROM memory_in_run ORDER BY ALL").fetchall(),
        }.items()}
    finally:
        con.close()


def _counts(db: Path) -> tuple:
    con = _ro(db)
    try:
        return con.execute("SELECT (SELECT count(*) FROM sys_metrics), (SELECT count(*) FROM sources), "
                           "(SELECT count(*) FROM runs)").fetchone()
    finally:
        con.close()


def test_renderings_are_checked_not_parsed_and_the_store_equals_a_sa_file_only_ingest(corpus, tmp_path):
    run = _copy_run(corpus, tmp_path / "all")
    alone = _copy_run(corpus, tmp_path / "alone", renderings=False)
    db, db_alone = tmp_path / "all.duckdb", tmp_path / "alone.duckdb"
    proc = run_tool("ingest", "--db", db, "--json", run.parents[4], check=True)
    files = _json_files(proc)
    for name, fmt in RENDERINGS.items():
        f = files[name]
        assert (f["status"], f["format"], f["rows"]) == ("checked", fmt, 0), f
        n = 4 if fmt == "sar-text" else 3  # sar text: the first two records (their gap is the interval)
        assert f["reason"].startswith(f"rendering of sa.bin, not parsed: {n} records compared ("), f
    assert files["sa.bin"]["status"] == "new" and files["sa.bin"]["rows"] > 8000
    assert json.loads(proc.stdout)["counts"]["checked"] == 3
    run_tool("ingest", "--db", db_alone, alone.parents[4], check=True)
    # the rows, series, views and metrics are those of the sa file alone
    assert _stored(db) == _stored(db_alone)
    # with workers (the sa file parsed in one, its rows compared as that worker wrote them): the same
    files = _json_files(run_tool("ingest", "--db", tmp_path / "jobs.duckdb", "--jobs", "2", "--json",
                                 run.parents[4], check=True))
    assert {n: (f["status"], f["reason"].split(":")[0]) for n, f in files.items() if n in RENDERINGS} == {
        n: ("checked", "rendering of sa.bin, not parsed") for n in RENDERINGS}
    assert _stored(tmp_path / "jobs.duckdb") == _stored(db_alone)
    assert not list((tmp_path / ".kansoku-scratch").glob("**/*.parquet"))
    con = _ro(db)
    sources = con.execute("SELECT file_name, format, sha256, size_bytes, rows_loaded, checked_against, records_checked "
                          "FROM sources WHERE file_name IN ('sadf.json', 'sadf_d.csv', 'sar_A.txt') ORDER BY 1").fetchall()
    sa_sha = con.execute("SELECT sha256 FROM sources WHERE file_name = 'sa.bin'").fetchone()[0]
    checked_sha = {r[0] for r in con.execute("SELECT checked_against_sha256 FROM sources "
                                             "WHERE checked_against IS NOT NULL").fetchall()}
    con.close()
    assert [(n, f) for n, f, *_ in sources] == list(RENDERINGS.items())
    assert checked_sha == {sa_sha}
    import hashlib

    for name, _, sha, size, rows, against, records in sources:
        data = (run / name).read_bytes()
        n = 4 if name == "sar_A.txt" else 3
        assert (sha, size, rows, against, records) == (hashlib.sha256(data).hexdigest(), len(data), 0, "sa.bin", n)
        # the bytes are kept like any source's (the sources page lists them, a build can publish them)
        assert (db.parent / "blobs" / sha[:2] / sha).read_bytes() == data
    # -v lists what happened to each rendering; the summary counts them
    proc = run_tool("ingest", "--db", tmp_path / "v.duckdb", "-v", run, check=True)
    assert "3 checked (renderings of a sa file compared on a sample, not parsed)" in proc.stdout
    for name, fmt in RENDERINGS.items():
        assert f"{name}: kept as {fmt}, checked: rendering of sa.bin, not parsed: " in proc.stdout
    # again, nothing changed: unchanged, and said so
    files = _json_files(run_tool("ingest", "--db", db, "--json", run.parents[4], check=True))
    for name in RENDERINGS:
        assert files[name]["status"] == "unchanged"
        assert "rendering of sa.bin, checked before" in files[name]["reason"]


def _tamper_line(path: Path, starts: str, old: str, new: str) -> int:
    """Change ``old`` to ``new`` in the first line starting with ``starts``; its line number."""
    lines = path.read_text().split("\n")
    i = next(k for k, l in enumerate(lines) if l.startswith(starts) and old in l)
    lines[i] = lines[i].replace(old, new, 1)
    path.write_text("\n".join(lines))
    return i + 1


@pytest.mark.parametrize("name", [n if n == "sar_A.txt" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in RENDERINGS])  # two of three in CI only (--all)
def test_a_rendering_that_disagrees_on_a_sampled_record_is_an_error_with_file_and_line(corpus, tmp_path, name):
    run = _copy_run(corpus, tmp_path)
    db = tmp_path / "k.duckdb"
    # a value of the last record (a sampled one: the first, the middle and the last are; sar text: the first two)
    second = _record_times(run)[-1]
    tod = second[11:]
    if name == "sadf_d.csv":
        line_text = next(l for l in (run / name).read_text().split("\n") if f";{second} UTC;-1;" in l)
        value = line_text.split(";")[4]
        line = _tamper_line(run / name, line_text[:40], f";{value};", ";99.99;")
        expect = f"cpu %usr of all at {second} UTC is 99.99 here and {float(value):g} in sa.bin"
    elif name == "sar_A.txt":
        line_text = next(l for l in (run / name).read_text().split("\n") if l.startswith(tod) and " all " in l)
        value = line_text.split()[2]
        line = _tamper_line(run / name, tod, f" {value} ", " 99.99 ")
        expect = f"cpu %usr of all at {second} UTC is 99.99 here and {float(value):g} in sa.bin"
    else:
        text = (run / name).read_text()
        at = text.index(f'"time": "{tod}"')
        rec_line = text.count("\n", 0, at) + 1
        usr = text.index('"usr": ', at)
        end = text.index(",", usr)
        value = text[usr + 7:end]
        (run / name).write_text(text[:usr] + '"usr": 99.99' + text[end:])
        line = rec_line
        expect = f"cpu %usr of all at {second} UTC is 99.99 here and {float(value):g} in sa.bin"
    assert float(value) != 99.99
    for jobs in ("1", "2"):  # the sa file parsed by the writer, or by a worker
        proc = run_tool("ingest", "--db", db, "--jobs", jobs, run)
        assert proc.returncode == 2, proc.stdout
        assert f"{run / name}:{line}: this file renders the measurement of sa.bin" in proc.stderr, proc.stderr
        assert expect in proc.stderr
        assert "Traceback" not in proc.stderr
        assert not db.exists() or _counts(db) == (0, 0, 0)  # nothing stored


def test_a_rendering_of_another_day_is_read_whole(corpus, tmp_path):
    run = _copy_run(corpus, tmp_path)
    csv = run / "sadf_d.csv"
    first = _record_times(run)[0]
    csv.write_text(csv.read_text().replace("2026-11-21 ", "2026-11-20 "))
    db = tmp_path / "k.duckdb"
    proc = run_tool("ingest", "--db", db, "--json", run, check=True)
    f = _json_files(proc)["sadf_d.csv"]
    assert (f["status"], f["format"]) == ("new", "sadf-csv") and f["rows"] > 8000, f
    assert f["reason"] == (f"read whole: not a rendering of sa.bin: its record of 2026-11-20 {first[11:]} UTC is "
                           "not among sa.bin's records")
    assert {n: x["status"] for n, x in _json_files(proc).items() if n in RENDERINGS} == {
        "sadf.json": "checked", "sadf_d.csv": "new", "sar_A.txt": "checked"}
    con = _ro(db)
    assert con.execute("SELECT min(ts)::DATE::VARCHAR FROM sys_metrics m JOIN sources s USING (source_id) "
                       "WHERE s.file_name = 'sadf_d.csv'").fetchone()[0] == "2026-11-20"
    con.close()


def test_a_rendering_of_another_interval_is_read_whole(corpus, tmp_path):
    run = _copy_run(corpus, tmp_path)
    csv = run / "sadf_d.csv"
    csv.write_text("\n".join(l.replace(";1;2026-", ";10;2026-", 1) for l in csv.read_text().split("\n")))
    proc = run_tool("ingest", "--db", tmp_path / "k.duckdb", "--json", run, check=True)
    f = _json_files(proc)["sadf_d.csv"]
    assert f["status"] == "new" and f["rows"] > 8000
    assert "not a rendering of sa.bin: its" in f["reason"] and "interval is 10 s, sa.bin's 1 s" in f["reason"]


def test_a_rendering_naming_another_host_is_read_whole_and_the_run_refused(corpus, tmp_path):
    run = _copy_run(corpus, tmp_path)
    csv = run / "sadf_d.csv"
    csv.write_text("\n".join(("other" + l[2:]) if l.startswith("vm;") else l for l in csv.read_text().split("\n")))
    proc = run_tool("ingest", "--db", tmp_path / "k.duckdb", run)
    assert proc.returncode == 2
    assert "outputs of 2 hosts in one directory" in proc.stderr, proc.stderr


def test_renderings_alone_are_parsed_as_before(corpus, tmp_path):
    run = _copy_run(corpus, tmp_path)
    (run / "sa.bin").unlink()
    files = _json_files(run_tool("ingest", "--db", tmp_path / "k.duckdb", "--json", run, check=True))
    for name, fmt in RENDERINGS.items():
        assert (files[name]["status"], files[name]["format"]) == ("new", fmt)
        assert files[name]["rows"] > 8000 and files[name]["reason"] is None


def test_sa_file_sadf_cannot_read_one_rendering_is_read_the_other_checked(tmp_path):
    d = tmp_path / "runs" / "run"
    d.mkdir(parents=True)
    shutil.copy(FIXTURES / "sa_old_format" / "sa.bin", d / "sa.bin")
    text = FIXTURES / "sysstat_variants" / "sar_d_loop.txt"
    shutil.copy(text, d / "sar_d.txt")
    shutil.copy(text, d / "sar_d_copy.txt")
    db = tmp_path / "k.duckdb"
    proc = run_tool("ingest", "--db", db, "--json", d, check=True)
    files = _json_files(proc)
    assert files["sa.bin"]["status"] == "new" and files["sa.bin"]["rows"] == 0
    assert any("sar_d.txt holds the same data and is used instead" in w for w in files["sa.bin"]["warnings"])
    assert files["sar_d.txt"]["status"] == "new" and files["sar_d.txt"]["rows"] > 0
    assert files["sar_d.txt"]["reason"] == "read whole: sa.bin gave no rows (see its warning)"
    assert files["sar_d_copy.txt"]["status"] == "checked"
    assert files["sar_d_copy.txt"]["reason"].startswith("rendering of sar_d.txt, not parsed:")
    con = _ro(db)
    assert con.execute("SELECT count(DISTINCT instance) FROM sys_metrics WHERE activity = 'disk'").fetchone()[0] == 2
    con.close()


def test_renderings_in_a_host_directory_are_checked_against_that_hosts_sa_file(corpus, tmp_path):
    camp = tmp_path / "campaign"
    run = camp / "rep=1"
    host = run / "host=db"
    host.mkdir(parents=True)
    (camp / ".kansoku-campaign").write_text("")
    src = corpus / "real" / REAL_RUN
    shutil.copy(src / "pgbench.log", run / "pgbench.log")
    # the run's own host is another machine than the one its sa file comes from (one hostname for two hosts of
    # a run is refused)
    (run / "run.toml").write_text((src / "run.toml").read_text().replace('hostname = "vm"', 'hostname = "client"'))
    for name in ("sa.bin", *RENDERINGS):
        shutil.copy(src / name, host / name)
    (host / "host.toml").write_text('hostname = "vm"\nrole = "server"\n')
    files = _json_files(run_tool("ingest", "--db", tmp_path / "k.duckdb", "--json", camp, check=True))
    for name in RENDERINGS:
        assert files[name]["status"] == "checked"
        assert files[name]["reason"].startswith("rendering of host=db/sa.bin, not parsed:")
    con = _ro(tmp_path / "k.duckdb")
    assert con.execute("SELECT DISTINCT format, host, role FROM sys_metrics").fetchall() == [("sa-binary", "vm", "server")]
    con.close()


def test_the_sources_and_run_pages_say_a_rendering_was_checked_against_the_sa_file(corpus, tmp_path):
    """A reader of the published site sees that sar_A.txt etc. were compared with sa.bin, not read (ja and en)."""
    from conftest import ROOT
    from test_build_publish import SPEC

    run = _copy_run(corpus, tmp_path)
    db = tmp_path / "db" / "kansoku.duckdb"
    run_tool("ingest", "--db", db, run.parents[4], check=True)
    specs, content = tmp_path / "specs", tmp_path / "content"
    specs.mkdir()
    (specs / "mini.toml").write_text(SPEC.replace("clients = 1", "clients = 2"), encoding="utf-8")
    (content / "reports").mkdir(parents=True)
    for p in (ROOT / "content").glob("_index.*.md"):
        shutil.copy(p, content)
    for p in (ROOT / "content/reports").glob("_index.*.md"):
        shutil.copy(p, content / "reports")
    out = tmp_path / "public"
    run_tool("build", "--db", db, "--out", out, "--specs", specs, "--generated", tmp_path / "gen",
             "--content", content, check=True)
    said = {"en": "a rendering of sa.bin, checked against it on {n} records, not read again",
            "ja": "sa.bin の出力 ({n} レコードで照合済み、再読込なし)"}
    for lang, text in said.items():
        pages = [out / lang / "reports" / "mini" / "sources" / "index.html",
                 next((out / lang / "reports" / "mini" / "runs").glob("run-*.html"))]
        for page in pages:
            html = page.read_text()
            for name in RENDERINGS:
                row = html[html.index(f"<code>{name}</code>"):]
                row = row[:row.index("</tr>")]
                n = 4 if name == "sar_A.txt" else 3
                assert text.format(n=n) in row, (page, name)
            row = html[html.index("<code>sa.bin</code>"):]
            assert "checked-against" not in row[:row.index("</tr>")]  # the sa file itself was read
