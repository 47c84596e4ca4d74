"""pgbench -i (initialisation) output: steps, tuples generated, step timings (13+). docs/formats.md §1.6."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError
from kansoku.parsers import textfile
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.pgbench.stdout import NUM

SCHEMA = """
CREATE TABLE IF NOT EXISTS pgbench_init (
    source_id VARCHAR NOT NULL,
    run_id VARCHAR,
    tuples_total BIGINT,            -- pgbench_accounts rows generated (100000 x scale)
    scaling_factor INTEGER,         -- tuples_total / 100000
    generate_mode VARCHAR,          -- 'client-side' | 'server-side' (13+), NULL before
    generate_elapsed_s DOUBLE,      -- elapsed time of the last 'N of M tuples' line
    total_s DOUBLE,                 -- 13+: 'done in X s'
    drop_tables_s DOUBLE,
    create_tables_s DOUBLE,
    generate_s DOUBLE,
    vacuum_s DOUBLE,
    primary_keys_s DOUBLE,
    foreign_keys_s DOUBLE,
    status VARCHAR NOT NULL,        -- 'ok' | 'incomplete' (no 'done' line: pgbench -i killed or failed)
    status_note VARCHAR
);
"""

# -- pgbench -i (docs/formats.md §1.6) ---------------------------------------------

_INIT_STEPS = re.compile(r"^(dropping old tables|creating tables|generating data(?: \((?P<mode>client-side|server-side)\))?|"
                         r"vacuuming|creating primary keys|creating foreign keys|set primary keys|done)\.{0,3}\s*$",
                         re.ASCII)
_INIT_TUPLES = re.compile(r"^(?P<n>\d+) of (?P<m>\d+) tuples \(\d+%\) (?:done|of pgbench_accounts done)"
                          r"(?: \(elapsed (?P<el>" + NUM + r") s, remaining (?:" + NUM + r") s\))?\.?\s*$", re.ASCII)
_INIT_DONE = re.compile(r"^done in (?P<total>" + NUM + r") s \((?P<parts>.*)\)\.?\s*$", re.ASCII)
_INIT_PART = re.compile(r"(drop tables|create tables|(?:client|server)-side generate|vacuum|primary keys|foreign keys) "
                        r"(" + NUM + r") s", re.ASCII)
_INIT_PART_COL = {"drop tables": "drop_tables_s", "create tables": "create_tables_s", "vacuum": "vacuum_s",
                  "primary keys": "primary_keys_s", "foreign keys": "foreign_keys_s"}


def sniff_init(head: FileHead) -> bool:
    if head.is_binary:
        return False
    lines = [l.strip("\r") for l in head.text.replace("\r", "\n").split("\n")[:400]]
    steps = sum(1 for l in lines if _INIT_STEPS.match(l))
    tuples = sum(1 for l in lines if _INIT_TUPLES.match(l))
    return ("creating tables..." in lines and (tuples > 0 or steps >= 3)) and not any(
        l.startswith("transaction type: ") for l in lines)


def parse_init(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "pgbench -i output")
    row: dict[str, Any] = {"status": "incomplete", "status_note": "no 'done' line (pgbench -i killed or failed?)"}
    seen = False
    for lineno, raw in enumerate(text.split("\n"), start=1):
        for line in raw.split("\r"):  # progress lines end in \r on a terminal
            line = line.strip()
            m = _INIT_STEPS.match(line)
            if m:
                seen = True
                if m.group("mode"):
                    row["generate_mode"] = m.group("mode")
                if line.startswith("done"):
                    row.update(status="ok", status_note=None)
                continue
            m = _INIT_TUPLES.match(line)
            if m:
                seen = True
                row["tuples_total"] = int(m.group("m"))
                if m.group("el"):
                    row["generate_elapsed_s"] = float(m.group("el"))
                continue
            m = _INIT_DONE.match(line)
            if m:
                row.update(status="ok", status_note=None, total_s=float(m.group("total")))
                for name, value in _INIT_PART.findall(m.group("parts")):
                    col = "generate_s" if name.endswith("generate") else _INIT_PART_COL[name]
                    row[col] = float(value)
                continue
            if re.match(r"^(pgbench: )?(error|fatal|FATAL|ERROR)", line, flags=re.ASCII):
                row["status_note"] = f"line {lineno}: {line[:200]}"
                row["status"] = "incomplete" if row["status"] != "ok" else "ok"
    if not seen:
        raise ParseError(path, None, "pgbench -i output ('creating tables...', 'N of M tuples ... done')", "none")
    if "tuples_total" in row:
        row["scaling_factor"] = row["tuples_total"] // 100000 or None
    if row["status"] != "ok":
        sink.warn(None, row["status_note"])
    sink.add_rows("pgbench_init", [row])


MODULE = ParserModule(
    name="pgbench-init",
    formats=[
        Format(tool="pgbench", name="pgbench-init",
               description="pgbench -i (initialisation) output: steps, tuples generated, step timings (13+)",
               sniff=sniff_init, parse=parse_init, priority=9),
    ],
    schema=SCHEMA,
    tables=["pgbench_init"],
)
