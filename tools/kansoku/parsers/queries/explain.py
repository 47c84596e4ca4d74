"""``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`` output (docs/formats.md §10.1), as ``psql -X -At`` prints it:
one JSON array per statement (``[{"Plan": {…}, "Planning Time": …, "Execution Time": …}]``), several in one
file, each optionally preceded by the marker ``tools/collect`` echoes (``-- kansoku query=q3 repetition=2``).
A statement the server refused shows psql's ``ERROR:`` line after its marker: stored as ``failed`` with the
message, and warned with its line (never a zero time).

Refused with file and line: a document cut short (a killed psql), a plan without actual times (``EXPLAIN``
without ``ANALYZE``: there is nothing measured in it), psql's aligned output (``+`` at the line ends: use
``-At``), a value that is no number, a count beyond the store's integers or a value outside the plan table's
bounds (at the line holding it). Without markers a statement is named by the file (``q3.json`` → ``q3``; ``#2``
for the second of several).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kansoku.errors import ParseError
from kansoku.parsers import bounds, textfile
from kansoku.parsers.base import FileHead, Format, ParserModule, Sink
from kansoku.parsers.queries.common import MARKER, MARKER_START, PSQL_ERROR
from kansoku.parsers.queries.tables import BOUNDS, TABLES

EXPECTED = "EXPLAIN (ANALYZE, FORMAT JSON) output as psql -At prints it: a JSON array of {\"Plan\": …}"
_GATHER = ("Gather", "Gather Merge")
_COMMAND_TAG = re.compile(r"^[A-Z][A-Z ]*[A-Z](?: \d+)*$", re.ASCII)  # psql prints SET, BEGIN, … for other statements
_BUFFERS = {"shared_hit_blocks": "Shared Hit Blocks", "shared_read_blocks": "Shared Read Blocks",
            "shared_dirtied_blocks": "Shared Dirtied Blocks", "shared_written_blocks": "Shared Written Blocks",
            "temp_read_blocks": "Temp Read Blocks", "temp_written_blocks": "Temp Written Blocks"}


def sniff(head: FileHead) -> bool:
    if head.is_binary:
        return False
    text = head.text
    if '"Plan"' not in text or '"Node Type"' not in text:
        return False
    for line in text.split("\n")[:50]:
        s = line.strip().rstrip("+").strip()
        if not s or line.startswith(MARKER_START) or PSQL_ERROR.match(line) or _COMMAND_TAG.match(s) or set(s) <= {"-"}:
            continue
        return s.startswith("[")
    return False


# The store's integer columns (tables.py): a count beyond them is a damaged number, refused at its own line
# while the file is read (the store's own check, on rows that keep no line, could name none).
_BIGINT, _INTEGER = bounds.BIGINT_END, bounds.INTEGER_END
_NODE_TYPE = re.compile(r'"Node Type"\s*:', re.ASCII)
# A plan node keeps no line in the store: its values are checked against the table's bounds as the node is read,
# each refused at the line of the key it comes from (a time × loops at its time's, rows × loops at its rows').
_NODE_BOUNDS = next(tb for tb in BOUNDS if tb.table == "query_plan_nodes")
_KEY_OF = {"actual_total_ms": "Actual Total Time", "inclusive_ms": "Actual Total Time", "self_ms": "Actual Total Time",
           "loops": "Actual Loops", "actual_rows": "Actual Rows", "plan_rows": "Plan Rows", **_BUFFERS}
_PRINTED = ("loops", "actual_total_ms", "plan_rows", *_BUFFERS)  # the columns stored as printed, not computed


class _Doc:
    """One JSON document of the file, where a refusal finds the line of the value it refuses: json keeps no
    positions, so the text is searched then, and only then."""

    def __init__(self, path: Path, text: str, start: int, end: int, line: int):
        self.path, self.text, self.start, self.end, self.first = path, text, start, end, line

    def line(self, key: str, value: Any, node: int | None = None) -> int:
        """The line of ``"key": value``: the first after the ``node``-th "Node Type" (1-based, in pre-order as
        PostgreSQL prints a plan: a node's own keys before its workers' and children's), else the first in the
        document; the document's first line when the text holds none."""
        starts = [self.start]
        if node is not None:
            types = [m.start() for m in _NODE_TYPE.finditer(self.text, self.start, self.end)]
            if node <= len(types):
                starts.insert(0, types[node - 1])
        pair = re.compile(r'"' + re.escape(key) + r'"\s*:\s*', re.ASCII)
        decoder = json.JSONDecoder()
        for start in starts:
            for m in pair.finditer(self.text, start, self.end):
                try:
                    got = decoder.raw_decode(self.text, m.end())[0]
                except json.JSONDecodeError:
                    continue
                if type(got) is type(value) and (got == value or (got != got and value != value)):
                    return self.text.count("\n", 0, m.start()) + 1
        return self.first


def _num(v: Any, doc: _Doc, what: str, integer: bool = False, node: int | None = None, fits: int = _BIGINT) -> Any:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        raise ParseError(doc.path, doc.line(what, v, node), f"a number for {what!r}", repr(v)[:40])
    if v < 0:
        raise ParseError(doc.path, doc.line(what, v, node), f"a number ≥ 0 for {what!r}", repr(v)[:40])
    if integer and v >= fits:
        raise ParseError(doc.path, doc.line(what, v, node), f"a count for {what!r} that fits the store's "
                         f"{'BIGINT' if fits == _BIGINT else 'INTEGER'}", repr(v)[:40])
    return int(v) if integer else float(v)


def _nodes(plan: dict, doc: _Doc, before: int = 0) -> list[dict]:
    """The plan's nodes in pre-order with inclusive and self time (``before``: the nodes of the document's
    earlier plans, for ``doc.line``)."""
    out: list[dict] = []
    path, line = doc.path, doc.first

    def walk(node: Any, parent: int | None, depth: int, procs: int) -> float:
        if not isinstance(node, dict) or "Node Type" not in node:
            raise ParseError(path, line, EXPECTED + " (each plan node with a \"Node Type\")", repr(node)[:60])
        if "Actual Total Time" not in node and not node.get("Actual Loops") == 0:
            raise ParseError(path, line, "EXPLAIN with ANALYZE (actual times in every node)",
                             f"a {node['Node Type']!r} node without 'Actual Total Time' (EXPLAIN without ANALYZE?)")
        no = len(out) + 1
        at = before + no
        loops = _num(node.get("Actual Loops", 0), doc, "Actual Loops", True, at)
        total = _num(node.get("Actual Total Time", 0.0), doc, "Actual Total Time", node=at)
        rows = _num(node.get("Actual Rows", 0), doc, "Actual Rows", node=at)
        if rows * loops >= _BIGINT:  # stored as rows x loops: each may fit while the product does not
            raise ParseError(path, doc.line("Actual Rows", node["Actual Rows"], at),
                             "'Actual Rows' × 'Actual Loops' that fits the store's BIGINT", f"{rows:g} × {loops}")
        planned = _num(node.get("Workers Planned"), doc, "Workers Planned", True, at, _INTEGER)
        launched = _num(node.get("Workers Launched"), doc, "Workers Launched", True, at, _INTEGER)
        row = {"node_no": no, "parent_no": parent, "depth": depth, "node_type": str(node["Node Type"]),
               "relation": node.get("Relation Name"), "parallel_aware": bool(node.get("Parallel Aware", False)),
               "workers_planned": planned, "workers_launched": launched, "loops": loops,
               "actual_total_ms": total, "inclusive_ms": total * loops / max(1, min(procs, loops or 1)),
               "actual_rows": int(round(rows * loops)), "plan_rows": _num(node.get("Plan Rows"), doc, "Plan Rows",
                                                                         node=at),
               **{k: _num(node.get(v), doc, v, True, at) for k, v in _BUFFERS.items()}}
        out.append(row)

        def line_of(column: str) -> int:
            return doc.line(_KEY_OF[column], node.get(_KEY_OF[column]), at)

        # the values as printed first: a damaged loop count is named at its line, not at the time it multiplies
        bounds.refuse_outside(path, line_of, _NODE_BOUNDS, {c: row[c] for c in _PRINTED})
        bounds.refuse_outside(path, line_of, _NODE_BOUNDS, row)
        child_procs = procs
        if row["node_type"] in _GATHER:
            child_procs = (launched or 0) + (0 if node.get("Single Copy") else 1)
        children = node.get("Plans") or []
        if not isinstance(children, list):
            raise ParseError(path, line, EXPECTED + " (\"Plans\" a list)", repr(children)[:60])
        child_time = sum(walk(c, row["node_no"], depth + 1, child_procs) for c in children)
        row["self_ms"] = max(0.0, row["inclusive_ms"] - child_time)
        bounds.refuse_outside(path, line_of, _NODE_BOUNDS, {"self_ms": row["self_ms"]})
        return row["inclusive_ms"]

    walk(plan, None, 0, 1)
    return out


def parse(path: Path, sink: Sink) -> None:
    text = textfile.read_text(path, "EXPLAIN JSON")
    lines = text.split("\n")
    offsets = [0]
    for l in lines:
        offsets.append(offsets[-1] + len(l) + 1)
    decoder = json.JSONDecoder()
    statements: list[dict] = []
    nodes: list[dict] = []
    marker: tuple[str, int, int] | None = None  # query, repetition, line
    pending_error: tuple[str, int] | None = None
    default_name = path.name.split(".")[0] or path.name
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r")
        lineno = i + 1
        m = MARKER.match(line)
        if m:
            if marker is not None and pending_error is None:
                raise ParseError(path, marker[2], "after the marker of query " + marker[0] + " its EXPLAIN JSON or "
                                 "psql's ERROR line", "the next marker (line " + str(lineno) + ")")
            _flush_failed(statements, marker, pending_error, sink)
            marker, pending_error = (m["query"], int(m["rep"]), lineno), None
            i += 1
            continue
        if line.startswith(MARKER_START):
            raise ParseError(path, lineno, "a statement marker '-- kansoku query=ID repetition=N'", line[:80])
        e = PSQL_ERROR.match(line)
        if e:
            if pending_error is None:
                pending_error = (e["msg"].strip(), lineno)
            i += 1
            continue
        s = line.strip()
        if not s or s.startswith("LINE ") or set(s) <= {"^", " "} or s.startswith(("HINT:", "DETAIL:", "CONTEXT:")):
            i += 1
            continue
        if s == "QUERY PLAN" or s.endswith("+"):
            raise ParseError(path, lineno, EXPECTED, "psql's aligned output ('+' at the line ends): use psql -At")
        if _COMMAND_TAG.match(s):
            i += 1
            continue
        if not s.startswith("["):
            raise ParseError(path, lineno, EXPECTED, s[:80])
        start = offsets[i] + lines[i].index("[")
        try:
            doc, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            cut = text.rstrip().count("\n", exc.pos) == 0  # the error is on the file's last line: it ends mid-document
            raise ParseError(path, text.count("\n", 0, exc.pos) + 1, EXPECTED,
                             "the document cut short (a killed psql?)" if cut else f"invalid JSON: {exc.msg}") from None
        if not isinstance(doc, list) or not doc or not all(isinstance(d, dict) and "Plan" in d for d in doc):
            raise ParseError(path, lineno, EXPECTED, "JSON of another shape")
        where, before = _Doc(path, text, start, end, lineno), 0
        for d in doc:
            if "Execution Time" not in d:
                raise ParseError(path, lineno, "EXPLAIN with ANALYZE (an 'Execution Time')",
                                 "a plan without 'Execution Time' (EXPLAIN without ANALYZE?)")
            no = len(statements) + 1
            query, rep, at = marker if marker else (default_name if no == 1 else f"#{no}", 1, lineno)
            plan_nodes = _nodes(d["Plan"], where, before)
            before += len(plan_nodes)
            dom = max(plan_nodes, key=lambda n: n["self_ms"])
            statements.append({
                "query": query, "repetition": rep, "statement_no": no, "mode": "explain", "status": "ok",
                "elapsed_ms": _num(d["Execution Time"], where, "Execution Time"),
                "planning_ms": _num(d.get("Planning Time"), where, "Planning Time"),
                "workers_planned": sum(n["workers_planned"] or 0 for n in plan_nodes if n["node_type"] in _GATHER),
                "workers_launched": sum(n["workers_launched"] or 0 for n in plan_nodes if n["node_type"] in _GATHER),
                "dominant_node": dom["node_type"], "dominant_self_ms": dom["self_ms"], "line": at})
            nodes.extend({**n, "query": query, "repetition": rep, "statement_no": no} for n in plan_nodes)
            marker = None
        if pending_error is not None:
            sink.warn(pending_error[1], f"psql error ignored (not after a query marker): {pending_error[0][:100]}")
            pending_error = None
        i = text.count("\n", 0, end) + 1
    if marker is not None and pending_error is None:
        raise ParseError(path, marker[2], f"after the marker of query {marker[0]} its EXPLAIN JSON", "the end of the file")
    _flush_failed(statements, marker, pending_error, sink)
    if not statements:
        raise ParseError(path, None, EXPECTED, "no plan")
    sink.add_rows("query_statements", statements)
    sink.add_rows("query_plan_nodes", nodes)


def _flush_failed(statements: list[dict], marker, error, sink: Sink) -> None:
    if marker is None or error is None:
        return
    query, rep, at = marker
    statements.append({"query": query, "repetition": rep, "statement_no": len(statements) + 1, "mode": "explain",
                       "status": "failed", "error": error[0], "line": at})
    sink.warn(error[1], f"query {query} (repetition {rep}) failed on the server: {error[0][:120]}; stored as failed, "
              "without a time")


FORMATS = [Format("query", "explain-json", "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) output (psql -At)", sniff, parse,
                  priority=10)]

MODULE = ParserModule(name="query_explain", formats=FORMATS, tables=TABLES, bounds=BOUNDS)
