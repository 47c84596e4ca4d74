#!/usr/bin/env python3
"""Check: this tree's sysstat parsers (sar/sadf, iostat, vmstat, mpstat: the formats that write the tall
``sys_metrics`` table) store the same rows, warnings and errors as another revision's.

    python3 bench/same_sysstat_rows.py [--rev main] [--ingest DIR ...] [FILE_OR_DIR ...]

Every file under the given paths (default: the corpus, ``$KANSOKU_CORPUS`` or ../shared/corpus, and the
tests' fixtures) that detection gives to one of those formats is parsed alone by each tree into
a DuckDB database of its own (one source per file); then ``sys_metrics``, ``sys_series`` and
``sys_devices`` are compared row for row in the order they were stored (a binary sa file's rows by content),
every column (NaN equal to NaN),
and so are each file's warnings (line and text) and its error, if any. ``--ingest DIR`` also runs each
tree's ``tools/ingest`` over DIR (a campaign) into a fresh database and compares the same tables and
``sources`` (format, rows, warnings). The revision's tree is exported with ``git archive``. Exit 1 on any
difference (the first ones listed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMATS = {"sa-binary", "sar-text", "sadf-csv", "sadf-json", "sadf-xml", "sadf-p", "iostat-text", "iostat-json",
           "vmstat-text", "mpstat-text", "mpstat-json"}
# sys_metrics in the order stored, but a binary sa file's rows by content: the order of the SQL path's INSERT
# (a hash join) changes from one run to the next with more than one DuckDB thread
TABLES = {"sys_metrics": "CASE WHEN format = 'sa-binary' THEN NULL ELSE rowid END, ts, activity, instance, metric, "
                         "sample, interval_s, value",
          "sys_series": "activity", "sys_devices": "device"}
# and of an ingest, what it recorded of each file (not its path or time)
SOURCES = {"sources": ("source_id, run_id, file_name, sha256, size_bytes, tool, format, tool_version, rows_loaded, "
                       "host, role", "source_id")}

# Run inside each tree (its tools/ first on sys.path): parse every file into DB, print one JSON line per file.
WORKER = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import duckdb
from kansoku import parsers
from kansoku.errors import KansokuError
from kansoku.ingest import detect
from kansoku.parsers.sysstat import common as sm
import sys_helpers

formats = {f.name: f for f in parsers.formats()}
con = duckdb.connect(sys.argv[3])
con.execute("SET TimeZone = 'UTC'")
con.execute("SET enable_progress_bar = false")  # a long file's statements print no bar on stdout (read as JSON)
con.execute(sm.SCHEMA)
wanted = set(json.loads(sys.argv[4]))
for i, line in enumerate(sys.stdin):
    path = Path(line.rstrip("\n"))
    try:
        det = detect.detect(path)
    except Exception:
        continue
    name = det.format.name if det.format is not None else None
    if name not in wanted:
        continue
    sink = sys_helpers.MemSink(path, mem=False)
    sink.con = con
    sink.run_id = str(path)
    try:
        from kansoku.ingest.runs import load_run_toml
        sink.run_meta = load_run_toml(path.parent)
        st = sink.run_meta.get("start")
        sink.run_start = st if hasattr(st, "tzinfo") else None
    except Exception:
        pass
    sid = f"s{i}"
    # the helper's sink writes source 's': give each file its own
    con.execute("UPDATE sys_metrics SET source_id = 'done' WHERE source_id = 's'")
    con.execute("UPDATE sys_series SET source_id = 'done' WHERE source_id = 's'")
    con.execute("UPDATE sys_devices SET source_id = 'done' WHERE source_id = 's'")
    error = None
    con.execute("BEGIN")
    try:
        formats[name].parse(path, sink)
        con.execute("COMMIT")
    except KansokuError as exc:
        error = str(exc)
        con.execute("ROLLBACK")
    for t in ("sys_metrics", "sys_series", "sys_devices"):
        con.execute(f"UPDATE {t} SET source_id = ? WHERE source_id = 's'", [sid])
    print(json.dumps({"path": str(path), "source": sid, "format": name, "error": error,
                      "warnings": [[l, m] for l, m in sink.warnings]}), flush=True)
"""


# Damaged copies (column, printed value, rows): every path of the plausibility check, both trees.
DAMAGES = [("%util", "50000.00", 1), ("%util", "150.00", 2), ("%idle", "100.70", 1), ("%idle", "-3.00", 1),
           ("%idle", "-0.20", 1), ("kbmemfree", "2e16", 2), ("kbmemfree", "-2e16", 1), ("tps", "-5.00", 1),
           ("%usr", "nan", 1), ("%user", "inf", 1), ("%scpu", "103.00", 3), ("%scpu", "20000.00", 1),
           ("frmpg/s", "-12.00", 1), ("%commit", "2e16", 1), ("%iowait", "100.60", 2), ("rkB/s", "12,5", 1),
           ("%steal", "x", 1), ("await", "1.5k", 1), ("free", "-5", 1), ("id", "101", 1), ("us", "nan", 1),
           ("bo", "2e16", 1)]


def damaged(src: Path, dest: Path) -> list[str]:
    """Copies of the sar, iostat or vmstat text ``src`` with one column's value replaced on its first rows (DAMAGES),
    the file twice in a row (duplicated samples), and cut in the middle of its last line."""
    text = src.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    out = []
    for n, (column, value, rows) in enumerate(DAMAGES):
        changed, done = list(lines), 0
        header = None
        for i, line in enumerate(changed):
            toks = line.split()
            if column in toks:
                header = toks
                continue
            # a row under it (vmstat -t prints a date and a time under one zone name)
            if header is not None and abs(len(toks) - len(header)) <= 1 and done < rows \
                    and toks[:1] != ["Average:"] and header.index(column) < len(toks):
                j = header.index(column)
                toks[j] = value
                changed[i] = " ".join(toks)
                done += 1
            elif not toks:
                header = None
        if done:
            f = dest / f"{src.stem}.{n}{src.suffix}"
            f.write_text("\n".join(changed), encoding="utf-8")
            out.append(str(f))
    twice = dest / f"{src.stem}.twice{src.suffix}"
    twice.write_text(text + text, encoding="utf-8")
    cut = dest / f"{src.stem}.cut{src.suffix}"
    cut.write_text(text.rstrip("\n")[:-3], encoding="utf-8")
    return out + [str(twice), str(cut)]


def export(rev: str, dest: Path) -> None:
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def files_under(paths: list[Path]) -> list[str]:
    out = []
    for p in paths:
        if p.is_file():
            out.append(str(p))
        elif p.is_dir():
            out += sorted(str(f) for f in p.rglob("*") if f.is_file() and not f.is_symlink())
    return out


def parse_all(tree: Path, files: list[str], db: Path) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-c", WORKER, str(tree / "tools"), str(ROOT / "tests"), str(db),
                           json.dumps(sorted(FORMATS))], input="\n".join(files), capture_output=True,
                          text=True, cwd=tree)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: the parse worker failed:\n{proc.stderr[-3000:]}")
    return {r["path"]: r for r in map(json.loads, proc.stdout.splitlines())}


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


def compare_tables(db_a: Path, db_b: Path, problems: list[str], label: str, extra: dict | None = None) -> int:
    import duckdb

    n = 0
    for table, order in {**TABLES, **(extra or {})}.items():
        picked = None
        if isinstance(order, tuple):
            picked, order = order
        rows = []
        for db in (db_a, db_b):
            con = duckdb.connect(str(db), read_only=True)
            con.execute("SET TimeZone = 'UTC'")
            cols = [c for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index",
                [table]).fetchall()]
            rows.append(con.execute(f"SELECT {picked or ', '.join(cols)} FROM {table} "
                                    f"ORDER BY source_id, {order}").fetchall())
            con.close()
        a, b = rows
        n += len(a)
        if len(a) != len(b):
            problems.append(f"{label}: {table}: {len(a)} rows vs {len(b)}")
        for i, (ra, rb) in enumerate(zip(a, b)):
            if len(ra) != len(rb) or not all(same(x, y) for x, y in zip(ra, rb)):
                problems.append(f"{label}: {table} row {i}: {ra} vs {rb}")
                if len(problems) > 40:
                    return n
    return n


def ingest(tree: Path, camp: Path, db: Path) -> list:
    """What ``tools/ingest --json`` over ``camp`` into ``db`` (a fresh database) said of each file: path,
    status, format, rows and each warning."""
    proc = subprocess.run([sys.executable, str(tree / "tools" / "ingest"), "--json", "--db", str(db), str(camp.resolve())],
                          capture_output=True, text=True, cwd=tree)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}/tools/ingest {camp} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout)
    return sorted((f["path"], f.get("status"), f.get("format"), f.get("rows"), w)
                  for f in out["files"] for w in (f.get("warnings") or [None]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="files or directories (default: the corpus and tests/fixtures)")
    ap.add_argument("--rev", default="main", help="the revision to compare with (default main)")
    ap.add_argument("--ingest", type=Path, action="append", default=[], help="also ingest this campaign with both")
    ap.add_argument("--damage", type=Path, action="append", default=[],
                    help="also parse damaged copies of this sar, iostat or vmstat text file")
    ap.add_argument("--no-files", action="store_true", help="only the --ingest comparisons")
    args = ap.parse_args()
    corpus = Path(os.environ.get("KANSOKU_CORPUS", ROOT.parent / "shared" / "corpus"))
    if not corpus.is_dir():
        corpus = Path("/work/shared/corpus")
    paths = args.paths or [corpus, ROOT / "tests" / "fixtures"]
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kansoku-same-sys-") as tmp:
        tmp = Path(tmp)
        base = tmp / "base"
        export(args.rev, base)
        if not args.no_files:
            files = files_under(paths)
            (tmp / "damaged").mkdir()
            for src in args.damage:
                files += damaged(src, tmp / "damaged")
            got = {}
            for name, tree in (("base", base), ("new", ROOT)):
                got[name] = parse_all(tree, files, tmp / f"{name}.duckdb")
            a, b = got["base"], got["new"]
            for p in sorted(set(a) | set(b)):
                if p not in a or p not in b:
                    problems.append(f"{p}: read by only one tree")
                    continue
                for k in ("format", "error", "warnings"):
                    if a[p][k] != b[p][k]:
                        problems.append(f"{p}: {k}: {a[p][k]!r} vs {b[p][k]!r}")
            n = compare_tables(tmp / "base.duckdb", tmp / "new.duckdb", problems, "files")
            failed = sum(1 for r in b.values() if r["error"])
            warned = sum(1 for r in b.values() if r["warnings"])
            print(f"{len(b)} files parsed by both ({failed} refused, {warned} with warnings), "
                  f"{n} stored rows compared")
        for i, camp in enumerate(args.ingest):  # a fresh pair of databases per campaign
            dbs = {name: tmp / f"ingest-{i}-{name}" / "kansoku.duckdb" for name in ("base", "new")}
            warned = {name: ingest(tree, camp, dbs[name]) for name, tree in (("base", base), ("new", ROOT))}
            if warned["base"] != warned["new"]:
                diff = sorted(set(warned["base"]) ^ set(warned["new"]))
                problems.append(f"{camp}: the ingests' file summaries differ: {diff[:3]}")
            n = compare_tables(dbs["base"], dbs["new"], problems, str(camp), SOURCES)
            print(f"{camp}: ingested by both ({len({w[0] for w in warned['new']})} files, "
                  f"{sum(1 for w in warned['new'] if w[4])} warnings), {n} stored rows compared")
    for p in problems[:40]:
        print("  " + p)
    print(f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
