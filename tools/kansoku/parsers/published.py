"""Published tables: numbers transcribed by hand from older reports, with a citation.

A transcribed table is two files side by side (see docs/spec.md, "Published tables"):

* ``<name>.csv`` — the table's columns as printed (one header line, then one line per
  printed row; numbers exactly as printed: ``98.30`` keeps its two decimals, because the
  printed precision is what the consistency checks reason about);
* ``<name>.toml`` — the sidecar: which report, table and page the numbers come from, the
  factors every row shares, and how each CSV column maps to a factor or to a metric (with
  the factor values that distinguish the column, e.g. ``tps_9.2`` = metric ``tps`` of
  ``version = 9.2``).

Each CSV row gives one run per distinct set of column factors (row ``clients = 16``,
columns for versions 9.2 and 9.3 -> two runs). Runs are stored with origin 'transcribed',
the citation, and every factor (plus ``published_table`` = the table id), and their
values flow into ``run_metrics`` through ``published_values``: a spec queries them like
measured data.

The sidecar is the file the parser claims (sniffed by content: a TOML document with a
``[published]`` table naming its CSV); the CSV is its companion, so editing either file
re-ingests the table. The CSV itself is also claimed (when a sidecar in its directory
names it) so that it is listed among the sources with its own sha256.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import tomllib
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError, last_line
from kansoku.parsers.base import FileHead, Format, ParserModule
from kansoku.parsers.textfile import read_text
from kansoku.values import canon as _canon  # one spelling of a factor value everywhere

SIDECAR_KEYS = {"id", "csv", "citation", "factors", "columns", "note", "environment"}
CITATION_KEYS = {"report", "year", "document", "table", "page", "section", "url", "printed_as", "note",
                 "transcribed_by", "transcribed_on"}
# [published.environment]: the machine and method the numbers were measured with, as the report states them
# (the cross-year view shows them beside each point): machine (an id: equal ids are one machine), cpu, cores,
# memory, storage, os (texts, or { ja, en }), scale (pgbench scale factor), duration_s (run length), runs
# (repetitions behind each printed value), note
ENVIRONMENT_KEYS = {"machine", "cpu", "cores", "memory", "storage", "os", "software", "scale", "duration_s", "runs", "note",
                    "source"}  # source: where the report states its environment (section, table, slide)
COLUMN_KEYS = {"factor", "metric", "factors", "unit", "ignore"}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", re.ASCII)
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$", re.ASCII)

SCHEMA = """
CREATE TABLE IF NOT EXISTS published_tables (
    source_id     VARCHAR NOT NULL,
    run_id        VARCHAR,            -- NULL: a published table declares its own runs
    table_id      VARCHAR NOT NULL,   -- sidecar [published] id, also the factor published_table
    csv_file      VARCHAR NOT NULL,   -- the CSV's file name, next to the sidecar
    csv_sha256    VARCHAR NOT NULL,
    citation      VARCHAR NOT NULL,   -- one line, as stored in runs.citation
    citation_json JSON NOT NULL,      -- the sidecar's [published.citation], structured
    rows          INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS published_values (
    source_id  VARCHAR NOT NULL,
    run_id     VARCHAR,               -- NULL (the sink's run: a published table has none)
    transcribed_run_id VARCHAR NOT NULL,  -- the transcribed run the value belongs to
    table_id   VARCHAR NOT NULL,
    csv_line   INTEGER NOT NULL,      -- line of the CSV (1 = header)
    csv_column VARCHAR NOT NULL,
    metric     VARCHAR NOT NULL,
    value      DOUBLE NOT NULL,
    printed    VARCHAR NOT NULL,      -- the number exactly as printed ('98.30')
    decimals   INTEGER NOT NULL,      -- digits after the decimal point as printed
    half_unit  DOUBLE NOT NULL,       -- half a unit of the last printed digit: the rounding error bound
    unit       VARCHAR
);
"""

METRICS_SQL = "SELECT transcribed_run_id AS run_id, metric, value, unit FROM published_values"


def _is_sidecar_text(text: str) -> dict | None:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    pub = doc.get("published")
    if isinstance(pub, dict) and isinstance(pub.get("csv"), str):
        return doc
    return None


def sniff_sidecar(head: FileHead) -> bool:
    if head.is_binary or "[published" not in head.text:
        return False
    return _is_sidecar_text(head.text) is not None


def _sidecars_naming(csv_path: Path) -> list[Path]:
    out = []
    for p in sorted(csv_path.parent.glob("*.toml")):
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        doc = _is_sidecar_text(text) if "[published" in text else None
        if doc and doc["published"]["csv"] == csv_path.name:
            out.append(p)
    return out


def sniff_csv(head: FileHead) -> bool:
    if head.is_binary:
        return False
    first = head.text.split("\n", 1)[0]
    if "," not in first:
        return False
    return bool(_sidecars_naming(head.path))


def confined_csv(sidecar: Path, name: str) -> Path | None:
    """The CSV a sidecar names, only when it is a plain file next to the sidecar: the tree is the
    boundary (``csv = "/etc/passwd"``, ``"../../x.csv"`` or a symbolic link are never read)."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        return None
    p = sidecar.parent / name
    if p.is_symlink() or not p.is_file() or p.resolve().parent != sidecar.parent.resolve():
        return None
    return p


def companions(sidecar: Path) -> list[Path]:
    try:
        doc = _is_sidecar_text(sidecar.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []
    if not doc:
        return []
    p = confined_csv(sidecar, doc["published"]["csv"])
    return [p] if p is not None else []


def parse_csv_companion(path: Path, sink) -> None:
    """The CSV is read with its sidecar; here we only check it is the one its sidecar expects."""
    header = next(_csv_rows(path, read_text(path, "a published table's CSV").removeprefix("\ufeff")), None)
    if not header:
        raise ParseError(path, 1, "a CSV header line (the columns as printed)", "")


def _line_of(text: str, needle: str) -> int | None:
    for i, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return i
    return None


def citation_line(c: dict[str, Any]) -> str:
    """One line for runs.citation: 'report (ja / en) (year), table, section, page, url' — the original report
    as a reader finds it; ``document`` (the file it was transcribed from) stays in the structured citation."""
    rep = c.get("report")
    if isinstance(rep, dict):
        names = [rep.get("ja"), rep.get("en")]
        rep = " / ".join(n for n in names if n)
    parts = [f"{rep} ({c['year']})" if c.get("year") else str(rep)]
    if c.get("table"):
        parts.append(str(c["table"]))
    if c.get("section"):
        parts.append(f"§{c['section']}")
    if c.get("page"):
        parts.append(f"p. {c['page']}")
    if c.get("url"):
        parts.append(str(c["url"]))
    return ", ".join(parts)


def decimals_of(printed: str) -> int:
    mant = re.split(r"[eE]", printed, flags=re.ASCII)[0]
    return len(mant.split(".", 1)[1]) if "." in mant else 0


def half_unit(printed: str) -> float:
    """Half a unit of the last printed digit: 98.30 -> 0.005, 10247 -> 0.5, 1.5e3 -> 50."""
    parts = re.split(r"[eE]", printed, flags=re.ASCII)
    exp = int(parts[1]) if len(parts) > 1 else 0
    return 0.5 * 10.0 ** (exp - decimals_of(parts[0]))


def _csv_rows(path: Path, text: str):
    """The CSV's rows; a row the csv module cannot read (a field beyond its limit, a quote left open) is an
    error naming its line."""
    reader = csv.reader(io.StringIO(text))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ParseError(path, reader.line_num, "a CSV row as printed (fields of a table)", str(exc)) from None
        yield row


def parse_sidecar(path: Path, sink) -> None:
    text = read_text(path, "a published-table sidecar")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"\(at line (\d+)", str(exc), re.ASCII)
        line = int(at.group(1)) if at else None
        if line is None and "at end of document" in str(exc):  # a string or array left open: the last line
            line = max(1, len(text.splitlines()))
        raise ParseError(path, line, "a published-table sidecar in TOML", str(exc)) from None
    pub = doc["published"]

    def err(key: str, expected: str, found: Any = None) -> ParseError:
        # a key not in the text was looked for to its end: its last line
        return ParseError(path, (_line_of(text, key.split(".")[-1]) or last_line(text)) if key else None, expected,
                          None if found is None else str(found))

    unknown = set(pub) - SIDECAR_KEYS
    if unknown:
        raise err(sorted(unknown)[0], f"only the keys {sorted(SIDECAR_KEYS)} in [published]", sorted(unknown))
    table_id = pub.get("id")
    if not isinstance(table_id, str) or not _ID.match(table_id):
        raise err("id", "[published] id = \"<table id>\" (letters, digits, '.', '_', '-')", table_id)
    cit = pub.get("citation")
    if not isinstance(cit, dict) or not cit.get("report") or not cit.get("table"):
        raise err("citation", "a [published.citation] table with at least report and table "
                  "(transcribed numbers must say where they were printed)")
    bad = set(cit) - CITATION_KEYS
    if bad:
        raise err(sorted(bad)[0], f"citation keys among {sorted(CITATION_KEYS)}", sorted(bad))
    env = pub.get("environment") or {}
    if not isinstance(env, dict):
        raise err("environment", "a [published.environment] table (machine, cpu, cores, memory, storage, ...)")
    bad = set(env) - ENVIRONMENT_KEYS
    if bad:
        raise err(sorted(bad)[0], f"environment keys among {sorted(ENVIRONMENT_KEYS)}", sorted(bad))
    for k in ("cores", "scale", "duration_s", "runs"):
        if k in env and (isinstance(env[k], bool) or not isinstance(env[k], (int, float)) or env[k] <= 0):
            raise err(k, f"environment {k} = a positive number", env[k])
    const = {k: _canon(v) for k, v in (pub.get("factors") or {}).items()}
    columns = pub.get("columns")
    if not isinstance(columns, dict) or not columns:
        raise err("columns", "a [published.columns] table mapping every CSV column to a factor or a metric")
    for name, m in columns.items():
        if not isinstance(m, dict):
            raise err(name, f"column {name!r} = {{ factor = \"...\" }} or {{ metric = \"...\", factors = {{...}} }}")
        bad = set(m) - COLUMN_KEYS
        if bad:
            raise err(name, f"column keys among {sorted(COLUMN_KEYS)}", sorted(bad))
        if not m.get("ignore") and (("factor" in m) == ("metric" in m)):
            raise err(name, f"column {name!r}: exactly one of factor or metric (or ignore = true)")

    name = pub["csv"]
    if "/" in name or "\\" in name or name in (".", "..") or (path.parent / name).is_symlink():
        # not echoed: the value may name any file on the machine
        raise err("csv", "the name of a CSV file in the sidecar's own directory (no directories, no links)",
                  "a path outside the sidecar's directory")
    csv_path = confined_csv(path, name)
    if csv_path is None:
        raise err("csv", f"the CSV file {name!r} next to the sidecar", "no such file")
    csv_text = read_text(csv_path, "a published table's CSV").removeprefix("\ufeff")
    reader = _csv_rows(csv_path, csv_text)
    header = next(reader, None)
    if not header:
        raise ParseError(csv_path, 1, "a header line with the printed columns", "")
    missing = [c for c in header if c not in columns]
    if missing:
        raise ParseError(csv_path, 1, f"every column described in {path.name} [published.columns]", missing[0])
    extra = [c for c in columns if c not in header]
    if extra:
        raise err(extra[0], f"a column of {csv_path.name} (its header is {header})", extra[0])
    row_factor_cols = [c for c in header if "factor" in columns[c] and not columns[c].get("ignore")]
    metric_cols = [c for c in header if "metric" in columns[c] and not columns[c].get("ignore")]
    if not metric_cols:
        raise err("columns", "at least one column mapped to a metric")

    runs: dict[str, dict] = {}
    values = []
    nrows = 0
    for line_no, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise ParseError(csv_path, line_no, f"{len(header)} fields like the header", f"{len(row)} fields")
        nrows += 1
        cells = dict(zip(header, (c.strip() for c in row)))
        row_factors = {columns[c]["factor"]: cells[c] for c in row_factor_cols}
        for c in row_factor_cols:
            if not cells[c]:
                raise ParseError(csv_path, line_no, f"a value for factor column {c!r}", "")
        for c in metric_cols:
            printed = cells[c]
            if printed == "":
                continue  # not printed: no value
            if not _NUMBER.match(printed):
                raise ParseError(csv_path, line_no, f"a number in column {c!r} (as printed, without units)", printed)
            col_factors = {k: _canon(v) for k, v in (columns[c].get("factors") or {}).items()}
            factors = {**const, **row_factors, **col_factors, "published_table": table_id}
            run_key = [f"{k}={v}" for k, v in {**row_factors, **col_factors}.items()]
            run_id = f"published/{table_id}/" + "/".join(run_key)
            run = runs.setdefault(run_id, {"factors": factors, "line": line_no})
            if run["factors"] != factors:
                raise ParseError(csv_path, line_no, "the same factors for every value of a run", run_id)
            values.append({
                "transcribed_run_id": run_id, "table_id": table_id, "csv_line": line_no, "csv_column": c,
                "metric": columns[c]["metric"], "value": float(printed), "printed": printed,
                "decimals": decimals_of(printed), "half_unit": half_unit(printed), "unit": columns[c].get("unit"),
            })
    if not values:
        raise ParseError(csv_path, 2, "at least one row of numbers")
    dup = {}
    for v in values:
        k = (v["transcribed_run_id"], v["metric"])
        if k in dup:
            raise ParseError(csv_path, v["csv_line"], f"one value per run and metric; {v['metric']} of {v['transcribed_run_id']} "
                             f"is also on line {dup[k]}", v["printed"])
        dup[k] = v["csv_line"]
    citation = citation_line(cit)
    for run_id, r in runs.items():
        sink.add_run(run_id, r["factors"], citation=citation,
                     meta={"published": {"table_id": table_id, "csv": csv_path.name, "csv_line": r["line"],
                                         "citation": cit, "note": pub.get("note"), "environment": env}})
    sink.add_rows("published_values", values)
    sink.add_rows("published_tables", [{
        "table_id": table_id, "csv_file": csv_path.name,
        "csv_sha256": hashlib.sha256(csv_path.read_bytes()).hexdigest(),
        "citation": citation, "citation_json": cit, "rows": nrows}])


FORMATS = [
    Format(tool="published", name="published-table",
           description="sidecar TOML of a table transcribed from a published report (citation, column mapping)",
           sniff=sniff_sidecar, parse=parse_sidecar, priority=10, own_runs=True, companions=companions),
    Format(tool="published", name="published-csv",
           description="CSV of a transcribed published table (read with its sidecar TOML)",
           sniff=sniff_csv, parse=parse_csv_companion, priority=1, own_runs=True),
]

MODULE = ParserModule(
    name="published",
    formats=FORMATS,
    schema=SCHEMA,
    tables=["published_tables", "published_values"],
    metrics_sql=METRICS_SQL,
)
