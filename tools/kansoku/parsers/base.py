"""The parser interface.

A parser module describes one tool family. It exposes a list ``FORMATS`` of
:class:`Format` objects; each one can *sniff* a file (decide by content whether
it is that format) and *parse* it into a :class:`Sink`. Parsers know nothing of
DuckDB internals, Hugo or the report: they hand rows (or a DuckDB reader query
for big files) to the sink, and the store decides how to keep them.

A module also declares the tables it fills (``SCHEMA``, DuckDB DDL, every table
with a ``source_id`` column so a re-ingested file can be replaced), the views
it offers to analysis (``VIEWS``), and per-run scalar metrics (``METRICS``)
that the report spec can select by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from kansoku import words
from kansoku.parsers.bounds import TableBounds

SNIFF_BYTES = 64 * 1024
MENDED_MOST = 16  # bytes that are not text in a head still read as a damaged text file (FileHead.mended)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]", re.ASCII)  # no text holds many


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass(frozen=True)
class FileHead:
    """The first bytes of a file, decoded leniently, for content sniffing."""

    path: Path
    raw: bytes
    size_bytes: int

    # Every sniffer (35-odd) asks for these: decoded and split once per file, not once per question
    # (decoding the same head again for each question was most of detection's cost).
    @cached_property
    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")

    @cached_property
    def is_binary(self) -> bool:
        if not self.raw:
            return False
        if b"\x00" in self.raw[:8192]:
            return True
        try:
            self.raw[:8192].decode("utf-8")
        except UnicodeDecodeError as exc:  # a multi-byte char cut at the end is fine
            return exc.start < len(self.raw[:8192]) - 4
        return False

    @cached_property
    def mended(self) -> tuple[FileHead, ...]:
        """A text head but for a few bytes (NUL bytes, sequences that are not UTF-8): the head without the lines
        that hold them, then the head without those bytes alone (a file of one long line, a damaged header).
        What detection asks the sniffers again, so that a text output with a damaged byte is read as its format
        and its parser names the byte's line. Empty for a head that is text, or binary."""
        if "\ufffd" not in self.text and "\x00" not in self.text:
            return ()
        lines = self.raw.split(b"\n")
        kept = [ln for ln in lines if b"\x00" not in ln and is_utf8(ln)]
        if len(kept) == len(lines) or len(lines) - len(kept) > MENDED_MOST:
            return ()
        left = self.raw.decode("utf-8", errors="ignore").replace("\x00", "")
        if len(self.raw) - len(left.encode("utf-8")) > 4 * MENDED_MOST:
            return ()
        if len(_CONTROL.findall(left)) * 100 > len(left):
            return ()
        return tuple(FileHead(path=self.path, raw=raw, size_bytes=self.size_bytes)
                     for raw in (b"\n".join(kept), left.encode("utf-8")))

    @cached_property
    def _lines(self) -> tuple[str, ...]:
        return tuple(self.text.splitlines())

    def lines(self, n: int = 50) -> list[str]:
        return list(self._lines[:n])


@dataclass
class IngestWarning:
    line: int | None
    message: str


class Sink(Protocol):
    """What a parser writes into. Implemented by the store."""

    path: Path
    run_id: str | None
    run_start: Any  # datetime | None: the run's start time if known (run.toml)
    run_meta: dict[str, Any]  # the run's run.toml as ingest read it (parsers never re-read it)

    def add_rows(self, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Rows of ``table``; its ``source_id``/``run_id`` (and ``file_no``: the file's number in the store,
        for the tables keyed by it, store/db.py FILE_TABLE) are filled in."""

    def load_sql(self, table: str, select_sql: str, params: dict[str, Any] | None = None) -> int:
        """INSERT INTO table BY NAME <select_sql>. ``$source_id``, ``$run_id`` and ``$file_no`` are bound."""

    def warn(self, line: int | None, message: str) -> None: ...

    # The bulk path (pgbench -l logs): after load_sql, the parser checks the rows DuckDB loaded. Only
    # the file's own rows are reachable; no store connection is handed out.
    def own_rows(self, table: str, select_sql: str, params: dict[str, Any] | None = None) -> list[tuple]:
        """``select_sql`` with ``{rows}`` standing for this file's rows of ``table``."""

    def update_own_rows(self, table: str, set_sql: str, params: dict[str, Any] | None = None) -> None: ...

    def delete_last_own_row(self, table: str, where_sql: str, params: list[Any]) -> int: ...

    def delete_own_rows(self, table: str) -> int:
        """Delete this file's rows of ``table`` (a bulk load tried first and not kept); how many."""

    def csv_rejects(self, reader_sql: str, params: dict[str, Any]) -> list[tuple[int, int, str, str]]:
        """Lines DuckDB's CSV reader could not read (error path of a bulk load)."""

    def newline_count(self) -> int:
        """Number of newline characters in the file (free when the ingest hashed it in the same read)."""

    def fact(self, name: str, value: Any) -> None:
        """Something the file says about its run (clients, threads, duration_s):
        checked against the run's factors; a conflict is an error."""

    def set_tool_version(self, version: str | None) -> None: ...

    def add_run(self, run_id: str, factors: dict[str, str], *, citation: str | None = None,
                meta: dict[str, Any] | None = None) -> None:
        """Declare a run the file itself describes (only for formats with ``own_runs``: a
        table transcribed from a published report holds many runs). Stored with
        origin 'transcribed' and the citation; removed again when the file is re-ingested."""


@dataclass(frozen=True)
class Format:
    """One detectable file format of a tool."""

    tool: str  # e.g. "pgbench"
    name: str  # e.g. "pgbench-stdout"
    description: str
    sniff: Callable[[FileHead], bool]
    parse: Callable[[Path, Sink], None]
    # Higher wins when several formats claim a file.
    priority: int = 0
    # The file declares its own runs (sink.add_run), e.g. a transcribed published table:
    # its directory is not a run. Files written by such a format have source run_id NULL.
    own_runs: bool = False
    # Other files the parse reads (e.g. the CSV a published-table sidecar names): their
    # content is part of the file's digest, so a change to them re-ingests the file.
    companions: Callable[[Path], list[Path]] | None = None
    # A run holds at most one file of this format (pgbench stdout: one summary per run). Several in one
    # run directory are several runs laid out as one: refused (one run per directory), never merged.
    one_per_run: bool = False
    # A file that belongs to a run but never makes a directory a run by itself (a pgbench script lying
    # beside a campaign plan): in a directory with no other run file it is skipped.
    attachment: bool = False
    # The parse streams many rows that need not stay cached (a day of sar): the store limits
    # DuckDB's memory while it runs, so memory stays flat in the file's length. Other formats run without
    # the limit (a limited bulk read_csv of a transaction log spills and runs slower).
    memory_bound: bool = False
    # Which run a file of this format belongs to, from its name (pgbench -l logs: PREFIX.PID): files with
    # different keys in one run directory are refused like ``one_per_run``.
    run_key: Callable[[Path], str | None] | None = None


def runs_mixed_in_directory(files: list[tuple[Path, Format]]) -> str | None:
    """Why the files detected in one directory hold more than one run, or None."""
    by_fmt: dict[str, list[Path]] = {}
    keys: dict[str, set[str]] = {}
    for path, fmt in files:
        by_fmt.setdefault(fmt.name, []).append(path)
        if fmt.run_key is not None:
            k = fmt.run_key(path)
            if k is not None:
                keys.setdefault(fmt.tool, set()).add(k)
    for path, fmt in files:
        if fmt.one_per_run and len(by_fmt[fmt.name]) > 1:
            names = ", ".join(p.name for p in by_fmt[fmt.name])
            return f"{names}: {len(by_fmt[fmt.name])} {fmt.name} files in one run directory"
    for tool, ks in keys.items():
        if len(ks) > 1:
            return f"{tool} logs of {len(ks)} different runs ({', '.join(sorted(ks))}) in one run directory"
    return None


# The columns naming the host a row's file came from and the host's role in its run (docs/ingest.md, "Hosts
# in a run"), with what each says; the sink fills them (store/db.py FileSink).
HOST_COLUMNS = {"host": "the file's host (sources.host)", "role": "the file's host's role in its run (sources.role)"}


@dataclass
class ParserModule:
    name: str
    formats: list[Format]
    schema: str = ""
    views: str = ""
    metrics: list["MetricDef"] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    # A SELECT yielding run_id, metric, value, unit for metrics whose names are data, not
    # code (transcribed published values); UNION-ed into run_metrics like METRICS.
    metrics_sql: str = ""
    # What the tool can print: one table of plausibility bounds per format (parsers/bounds.py), checked
    # against the rows of every file the ingest parses.
    bounds: list[TableBounds] = field(default_factory=list)
    # Tables of an older layout this module's tables replace: name -> the SQL that moves their rows into the
    # new tables and drops them, run once by the store's upgrade (store/db.py, ensure_schema) when it holds one.
    retired: dict[str, str] = field(default_factory=dict)
    # Views this module computes whole for less: name -> a SELECT giving exactly the view's rows over every stored
    # run (the same columns and types), which a connection making the view a table of all its rows runs instead
    # (Store.computed_here, computed_once). Not part of the schema: a store never holds them.
    whole_views: dict[str, str] = field(default_factory=dict)
    # Its tables whose rows carry their file's host and role: table -> which of HOST_COLUMNS (a table whose own
    # ``host`` column says something else has only ``role``). The store adds them after the module's DDL, to a
    # store of an older layout too (parsers.host_columns_ddl).
    host_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricDef:
    """A per-run scalar metric the spec can select by name.

    ``sql`` is a SELECT yielding columns ``run_id, value`` (one row per run).
    """

    name: str
    sql: str
    unit: str  # "tps", "ms", "%", "KB/s", ...
    # Its direction: True, higher is better (TPS); False, lower is better (latency); None, neither is
    # better (CPU %idle, disk KB/s, system calls): a change beyond noise is then "changed", never better or
    # worse. The catalogue of every metric (unit, direction, label) is ``parsers.catalogue()``.
    higher_is_better: bool | None
    # Optional: the same metric over a selection of instances, written ``name[sel]`` in a spec
    # (``disk_read_kb_s[hdd]``, ``cpu_soft_pct[0+1]``). ``{selection}`` is replaced by a SQL list of the
    # selected instance names; a spec's [device_groups] name several devices at once.
    selection_sql: str | None = None
    selection_of: str = ""  # what the selection names: "device", "cpu"
    # The metric is measured on a host (system metrics, statistics snapshots): ``sql`` and ``selection_sql``
    # yield ``run_id, host, role, value``, one row per host of the run; a spec picks the host by its role,
    # ``cpu_idle_pct[server]`` (docs/spec.md, "Hosts and roles"), never an average of hosts.
    per_host: bool = False
    # The time-stamped monitors (sys_metrics / pidstat tools) whose samples the metric is computed from, in the
    # order the metric prefers them: a cell whose runs' preferred monitor covers less of the run window than
    # the campaign's threshold is flagged (store view monitor_coverage; analysis/tables.py coverage notes).
    monitors: tuple[str, ...] = ()

    @property
    def direction(self) -> str:
        """higher (higher is better), lower (lower is better) or neither."""
        return {True: "higher", False: "lower", None: "neither"}[self.higher_is_better]

    def label(self, lang: str) -> str:
        """The metric's label in ``lang``: i18n/<lang>.toml [metric_<name>]. Read when asked, so that a metric
        without its word stops only what labels it, with a message naming both, never every command."""
        return words.metric_label(self.name, lang)
