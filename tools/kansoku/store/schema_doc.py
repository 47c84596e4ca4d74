"""Writes docs/database.md: every table and view of the store, with its columns, from a fresh database.

    python -m kansoku.store.schema_doc > docs/database.md   (run from tools/, or with tools/ on sys.path)

The comments next to each column in the DDL (``-- ...``) are carried into the document, so the
schema is documented where it is defined and the document cannot drift (a test compares them).
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from kansoku import parsers
from kansoku.store.db import HOSTS_SCHEMA_FILE, SCHEMA_FILE, open_store

# A view documents its own columns with comment lines ``-- column NAME: meaning`` before its CREATE.
_VIEW_COL_COMMENT = re.compile(r"^\s*--\s*column\s+([a-z_][a-z0-9_]*):\s*(.+?)\s*$")
_CREATE_VIEW = re.compile(r"^\s*CREATE (?:OR REPLACE )?VIEW ([a-z_][a-z0-9_]*)", re.I)
# ``ALTER TABLE t ADD COLUMN IF NOT EXISTS c TYPE;  -- comment``, or the comment on the line above it
_ALTER = re.compile(r"^\s*ALTER TABLE ([a-z_][a-z0-9_]*) ADD COLUMN IF NOT EXISTS ([a-z_][a-z0-9_]*)\b[^;]*;\s*(?:--\s*(.+?))?\s*$")
_CREATE_TABLE = re.compile(r"^\s*CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)", re.I)
_COL_COMMENT = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s+[A-Z][A-Z0-9_\[\]]*(?:\([^)]*\))?[^-]*?--\s*(.+?)\s*$")


def column_comments() -> dict[str, str]:
    """column name -> comment, from every DDL text (first comment wins)."""
    out: dict[str, str] = {}
    texts = [SCHEMA_FILE.read_text()] + [m.schema for m in parsers.modules()]
    for text in texts:
        for line in text.splitlines():
            m = _COL_COMMENT.match(line)
            if m:
                out.setdefault(m.group(1), m.group(2))
    return out


def view_column_comments() -> dict[tuple[str, str], str]:
    """(view or table, column) -> comment: the ``-- column`` lines above each view's CREATE, and the
    comments in each table's own DDL (a column name shared by several tables keeps its own meaning)."""
    out: dict[tuple[str, str], str] = {}
    for text in [SCHEMA_FILE.read_text(), HOSTS_SCHEMA_FILE.read_text()] + [m.schema for m in parsers.modules()]:
        table = None
        above = None
        for line in text.splitlines():
            if m := _ALTER.match(line):
                if m.group(3) or above:
                    out.setdefault((m.group(1), m.group(2)), m.group(3) or above)
                elif m.group(2) in ("host", "role"):  # the hosts file: one comment serves every table
                    first = {"host": "the file's host (sources.host)",
                             "role": "the file's host's role in its run (sources.role)"}[m.group(2)]
                    out.setdefault((m.group(1), m.group(2)), first)
                above = None
                continue
            above = (line.strip()[2:].strip() if line.strip().startswith("--") else None)
            if m := _CREATE_TABLE.match(line):
                table = m.group(1)
            elif table and (m := _COL_COMMENT.match(line)):
                out.setdefault((table, m.group(1)), m.group(2))
    for mod in parsers.modules():
        pending: dict[str, str] = {}
        for line in mod.views.splitlines():
            if m := _VIEW_COL_COMMENT.match(line):
                pending[m.group(1)] = m.group(2)
            elif m := _CREATE_VIEW.match(line):
                out.update({(m.group(1), col): text for col, text in pending.items()})
                pending = {}
    return out


def render() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "doc.duckdb")
        con = store.con
        objs = con.execute(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main' "
            "ORDER BY table_type DESC, table_name").fetchall()
        cols = {}
        for name, _ in objs:
            cols[name] = con.execute(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                "AND table_schema = 'main' ORDER BY ordinal_position", [name]).fetchall()
        metrics = sorted(parsers.metrics().values(), key=lambda m: m.name)
        store.close()
    comments = column_comments()
    # host and role mean the same in every table and view that has them (docs/ingest.md, "Hosts in a run")
    comments["host"] = "the host the row's file came from (sources.host; docs/ingest.md, \"Hosts in a run\")"
    comments["role"] = "that host's role in its run: 'server', 'client', 'standby', ... (sources.role)"
    view_comments = view_column_comments()
    view_comments.setdefault(("sys_series", "host"), "the hostname the file itself prints (sysstat header)")
    owner = {}
    for mod in parsers.modules():
        for name, _ in objs:
            if re.search(rf"\b(?:TABLE|VIEW)(?: IF NOT EXISTS)? {re.escape(name)}\b", mod.schema + mod.views):
                owner.setdefault(name, mod.name)
    lines = ["# The kansoku database", "",
             "Generated by `python -m kansoku.store.schema_doc` from the schema in the code "
             "(tools/kansoku/store/schema.sql and each parser module); do not edit by hand.", "",
             "## Metrics (`run_metrics.metric`)", "",
             "A metric with a selection is written `name[sel]` in a report spec: `disk_write_kb_s[hdd]` "
             "(devices, or a group of the spec's `[device_groups]`), `cpu_soft_pct[0+1]` (CPUs). A metric measured "
             "per host has one row per host of a run (`run_metrics.host`, `role`); a spec picks one by its role, "
             "`cpu_idle_pct[server]` (docs/spec.md, \"Hosts and roles\").", "",
             "| metric | unit | better | selection | per host | label (en) |", "|---|---|---|---|---|---|"]
    for m in metrics:
        lines.append(f"| `{m.name}` | {m.unit} | {'higher' if m.higher_is_better else 'lower'} | "
                     f"{m.selection_of or ''} | {'yes' if m.per_host else ''} | {m.label_en} |")
    for kind, title in (("BASE TABLE", "Tables"), ("VIEW", "Views")):
        lines += ["", f"## {title}", ""]
        for name, typ in objs:
            if typ != kind:
                continue
            src = owner.get(name, "core")
            lines += [f"### `{name}` ({src})", "", "| column | type | meaning |", "|---|---|---|"]
            for c, t in cols[name]:
                lines.append(f"| `{c}` | {t} | {view_comments.get((name, c), comments.get(c, '')).replace('|', '/')} |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
