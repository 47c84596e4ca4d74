"""Ingest: walk run directories, detect files by content, parse them into the store.

All-or-nothing: the whole ingest is one DuckDB transaction. A file that fails
to parse is reported (file, line, what was expected), the other files are
still checked so that every problem is listed at once, and then nothing is
committed: the database is left exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import duckdb

from kansoku.ingest.detect import Detection, detect
from kansoku.errors import KansokuError, ParseError, RunError
from kansoku.ingest.runs import Run, make_run, walk_files
from kansoku.parsers.base import runs_mixed_in_directory
from kansoku.store.db import FileSink, Store, open_store


@dataclass
class FileResult:
    path: str
    run_id: str | None
    status: str  # 'new' | 'replaced' | 'unchanged' | 'skipped' | 'failed'
    format: str | None = None
    rows: int = 0
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    declared_runs: int = 0  # runs the file declares itself (transcribed published tables)


@dataclass
class IngestReport:
    db: str
    committed: bool = False
    files: list[FileResult] = field(default_factory=list)
    runs_new: int = 0
    runs_updated: int = 0
    runs_seen: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def counts(self) -> dict[str, int]:
        return dict(Counter(f.status for f in self.files))

    @property
    def runs_transcribed(self) -> int:
        """Transcribed runs (re)stored by this ingest."""
        return sum(f.declared_runs for f in self.files)

    def to_json(self) -> str:
        d = asdict(self)
        d["counts"] = self.counts()
        d["ok"] = self.ok
        d["runs_transcribed"] = self.runs_transcribed
        return json.dumps(d, indent=2, ensure_ascii=False)


_HASHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kansoku-sha256")


def sha256_file(path: Path) -> str:
    return digest_and_newlines(path)[0]


def digest_and_newlines(path: Path) -> tuple[str, int]:
    """sha256 of the file and its number of newlines, in one read (parsers of big logs compare the rows
    DuckDB loaded with the lines of the file)."""
    h = hashlib.sha256()
    newlines = 0
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
            newlines += chunk.count(b"\n")
    return h.hexdigest(), newlines


def source_id_for(run_id: str, file_name: str) -> str:
    return hashlib.sha1(f"{run_id}\0{file_name}".encode()).hexdigest()[:16]


def ingest(paths: list[Path], db_path: Path, *, wait_s: float = 0.0,
           progress: Callable[[Iterable], Iterable] | None = None,
           on_wait: Callable[[str], None] | None = None, keep_going: bool = False) -> IngestReport:
    """``keep_going``: store the files that parse (and their runs) even when others fail; the failures
    are still listed in ``report.errors`` (the caller exits non-zero)."""
    report = IngestReport(db=str(db_path))
    # 1. discover and detect (no database needed yet)
    by_dir: dict[Path, list[Detection]] = defaultdict(list)
    roots: dict[Path, Path] = {}
    for root, f in walk_files([Path(p) for p in paths]):
        d = detect(f)
        if d.format is None:
            if d.reason != "run metadata":
                report.files.append(FileResult(str(f), None, "skipped", reason=d.reason))
            continue
        by_dir[f.parent].append(d)
        roots[f.parent] = root
    for run_dir, dets in sorted(by_dir.items()):  # one run per directory (formats declare what that means)
        why = runs_mixed_in_directory([(d.path, d.format) for d in dets if d.format is not None])
        if why:
            report.errors.append(f"{run_dir}: {why}. A run is a directory: put each run (its pgbench output, "
                                 "-l logs, monitors) in its own directory, e.g. clients=4/rep=1/; nothing stored")

    store = open_store(db_path, wait_s=wait_s, on_wait=on_wait)
    try:
        con = store.con
        con.execute("BEGIN TRANSACTION")
        try:
            work = [(run_dir, d) for run_dir in sorted(by_dir) for d in by_dir[run_dir]]
            iterator = progress(work) if progress else work
            runs: dict[Path, Run | None] = {}
            aborted = False
            for run_dir, det in iterator:
                if run_dir not in runs:
                    try:
                        runs[run_dir] = make_run(run_dir, roots[run_dir])
                    except RunError as exc:
                        runs[run_dir] = None
                        report.errors.append(str(exc))
                run = runs[run_dir]
                if run is None:
                    report.files.append(FileResult(str(det.path), None, "failed", det.format.name,
                                                   reason="run metadata error"))
                    continue
                try:
                    res = _ingest_file(store, run, det, report)
                except _Aborted:
                    report.files.append(FileResult(str(det.path), run.run_id, "failed", det.format.name,
                                                   reason=report.errors[-2] if len(report.errors) > 1 else None))
                    aborted = True
                    break
                report.files.append(res)
            if report.errors and (aborted or not keep_going):
                con.execute("ROLLBACK")
                return report
            # a directory holding only files that declare their own runs (published tables) is not a run;
            # with keep_going, a directory none of whose files was stored is not stored as a run either
            failed = {f.path for f in report.files if f.status == "failed"}
            measured_dirs = {run_dir for run_dir, det in work if not det.format.own_runs
                             and str(det.path) not in failed}
            for run in {r.run_id: r for d, r in runs.items() if r is not None and d in measured_dirs}.values():
                report.runs_seen += 1
                state = _upsert_run(store, run)
                report.runs_new += state == "new"
                report.runs_updated += state == "updated"
            con.execute("COMMIT")
            report.committed = True
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise
    finally:
        store.close()
    return report


class _Aborted(Exception):
    """A parser's bulk load failed inside DuckDB: the transaction is gone, the ingest stops (rolled back)."""


def _ingest_file(store: Store, run: Run, det: Detection, report: IngestReport) -> FileResult:
    path = det.path
    fmt = det.format
    assert fmt is not None
    file_name = path.relative_to(run.run_dir).as_posix() if path.is_relative_to(run.run_dir) else path.name
    sid = source_id_for(run.run_id, file_name)
    con = store.con
    old = con.execute("SELECT sha256, size_bytes FROM sources WHERE source_id = ?", [sid]).fetchone()
    hashing: Future | None = None
    if old is None and not fmt.companions:
        # A new file is parsed whatever its hash: hash it while the parser runs (big pgbench logs:
        # sha256 costs as much as half of DuckDB's read, and hashlib releases the GIL).
        hashing = _HASHER.submit(digest_and_newlines, path)
        digest = ""
    else:
        digest = sha256_file(path)
        if fmt.companions:  # files the parse also reads: a change to them must re-ingest this file
            digest = hashlib.sha256("".join([digest] + [sha256_file(c) for c in fmt.companions(path)]).encode()
                                    ).hexdigest()
    if old and old[0] == digest:
        return FileResult(str(path), run.run_id, "unchanged", fmt.name)
    if old:
        _delete_source(store, sid)
    run_id = None if fmt.own_runs else run.run_id
    sink = FileSink(store=store, path=path, run_id=run_id, source_id=sid, run_start=run.start_time,
                    run_meta=run.meta, newlines=(lambda: hashing.result()[1]) if hashing is not None else None)
    try:
        fmt.parse(path, sink)
        for name, value in sink.facts.items():
            run.check_fact(name, value, path)
        _store_declared_runs(store, sink, path)
    except (ParseError, RunError) as exc:
        report.errors.append(str(exc))
        try:
            _delete_source(store, sid)
        except duckdb.TransactionException:  # the parser's load aborted the transaction: nothing is stored
            report.errors.append(f"{path}: the ingest stopped here (DuckDB aborted the transaction on this "
                                 "file); nothing was stored; fix or remove the file and ingest again")
            raise _Aborted() from None
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=str(exc))
    except KansokuError as exc:
        _delete_source(store, sid)
        report.errors.append(f"{path}: {exc}")
        return FileResult(str(path), run.run_id, "failed", fmt.name, reason=str(exc))
    if hashing is not None:
        digest = hashing.result()[0]
    if sink.warnings:
        store.insert_rows("ingest_warnings", (
            {"line": w.line, "message": w.message} for w in sink.warnings), {"source_id": sid})
    store.insert_rows("sources", [{
        "source_id": sid, "run_id": run_id, "path": str(path.resolve()), "file_name": file_name,
        "sha256": digest, "size_bytes": path.stat().st_size, "tool": fmt.tool, "format": fmt.name,
        "tool_version": sink.tool_version, "rows_loaded": sink.rows_loaded,
        "ingested_at": datetime.now(timezone.utc),
    }])
    return FileResult(str(path), run_id, "replaced" if old else "new", fmt.name, sink.rows_loaded,
                      warnings=[f"{path}:{w.line}: {w.message}" if w.line else f"{path}: {w.message}"
                                for w in sink.warnings], declared_runs=len(sink.runs))


def _store_declared_runs(store: Store, sink: FileSink, path: Path) -> None:
    """Runs a file declares itself (transcribed published tables): origin 'transcribed', with citation."""
    con = store.con
    if not sink.runs:
        return
    ids = [r["run_id"] for r in sink.runs]
    other = con.execute("SELECT run_id, origin FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) LIMIT 1",
                        [ids]).fetchone()
    if other is not None:
        raise RunError(f"{path}: run {other[0]!r} is already defined by another "
                       f"{'file' if other[1] == 'transcribed' else 'run directory'}; give the table another id")
    now = datetime.now(timezone.utc)
    store.insert_rows("runs", [{
        "run_id": r["run_id"], "run_dir": str(path.parent.resolve()), "origin": "transcribed", "status": "ok",
        "status_note": None, "start_time": None, "end_time": None, "hostname": None, "citation": r["citation"],
        "run_toml": json.dumps({**r["meta"], "source_id": sink.source_id}, ensure_ascii=False, default=str),
        "ingested_at": now} for r in sink.runs])
    store.insert_rows("run_factors", [{"run_id": r["run_id"], "factor": k, "value": v, "origin": "transcribed"}
                                      for r in sink.runs for k, v in r["factors"].items()])


def _delete_source(store: Store, sid: str) -> None:
    declared = "SELECT run_id FROM runs WHERE origin = 'transcribed' AND json_extract_string(run_toml, '$.source_id') = ?"
    store.con.execute(f"DELETE FROM run_factors WHERE run_id IN ({declared})", [sid])
    store.con.execute(f"DELETE FROM runs WHERE run_id IN ({declared})", [sid])
    for table in store.source_tables():
        store.con.execute(f"DELETE FROM {table} WHERE source_id = ?", [sid])
    store.con.execute("DELETE FROM sources WHERE source_id = ?", [sid])


def _upsert_run(store: Store, run: Run) -> str:
    con = store.con
    status, note = run.status
    row = {
        "run_id": run.run_id, "run_dir": str(run.run_dir), "origin": "measured", "status": status,
        "status_note": note, "start_time": run.start_time, "end_time": run.end_time,
        "hostname": run.hostname, "citation": None, "run_toml": run.meta_json(),
    }
    old = con.execute(
        "SELECT run_dir, status, status_note, run_toml::VARCHAR FROM runs WHERE run_id = ?", [run.run_id]
    ).fetchone()
    old_factors = dict(con.execute(
        "SELECT factor, value FROM run_factors WHERE run_id = ?", [run.run_id]).fetchall())
    if old and old_factors == run.factors and old[1:3] == (status, note) and \
            json.loads(old[3] or "null") == json.loads(row["run_toml"]) and old[0] == row["run_dir"]:
        return "unchanged"
    con.execute("DELETE FROM runs WHERE run_id = ?", [run.run_id])
    con.execute("DELETE FROM run_factors WHERE run_id = ?", [run.run_id])
    store.insert_rows("runs", [{**row, "ingested_at": datetime.now(timezone.utc)}])
    store.insert_rows("run_factors", [
        {"run_id": run.run_id, "factor": k, "value": v, "origin": run.factor_origin[k]}
        for k, v in run.factors.items()])
    return "updated" if old else "new"

