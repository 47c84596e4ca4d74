"""How a chapter's runs were run: their commands and scripts, printed in the method section.

Everything comes from what the runs recorded (run.toml ``[commands] argv``, ``[campaign] setup``) and from the
pgbench scripts kept with them (``tools/collect`` copies ``-f`` scripts into the run directory; the ingest stores
them, docs/formats.md §1.8). Nothing is typed by hand, so the method section cannot drift from the runs.

The runs are grouped by the scripts their command names (one block per workload script, as the consortium's
reports printed one command per workload). Inside a block the command is one template:

- a value that differs between runs is printed as ``[name]``: the factor's name when it always equals the run's
  factor value (``-c [clients]``), else the option's meaning (``-j [threads]``), listed under the command with
  the factor that decides it when one does (``[threads]: 1, 1, 2, 4 (clients 1, 2, 4, 8)``);
- options that only some runs used are printed in brackets and listed with the runs that used them
  (``[-l --sampling-rate=0.02] (Repetition: 1)``).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from pathlib import PurePosixPath
from typing import Any, Callable

from kansoku import words
from kansoku.analysis.tables import factor_name, factor_text, factor_value_label
from kansoku.model import CommandBlock, Script
from kansoku.spec.model import LANGS, Report
from kansoku.store.db import Store

# pgbench options that take a value as the next argument (PostgreSQL 9.6–17, pgbench --help).
PGBENCH_VALUE_OPTIONS = {
    "-b", "-c", "-D", "-f", "-F", "-h", "-I", "-j", "-L", "-M", "-p", "-P", "-R", "-s", "-t", "-T", "-U",
    "--builtin", "--client", "--define", "--file", "--fillfactor", "--host", "--init-steps", "--jobs",
    "--latency-limit", "--log-prefix", "--port", "--progress", "--protocol", "--rate", "--sampling-rate",
    "--aggregate-interval", "--scale", "--time", "--transactions", "--username", "--partitions",
    "--partition-method", "--random-seed", "--max-tries",
}
# What a varying option's value means, as a placeholder name (words key cmd_value_<name>).
OPTION_MEANING = {
    "-c": "clients", "--client": "clients", "-j": "threads", "--jobs": "threads", "-T": "duration",
    "--time": "duration", "-t": "transactions", "--transactions": "transactions", "-s": "scale",
    "--scale": "scale", "-M": "protocol", "--protocol": "protocol", "-R": "rate", "--rate": "rate",
    "-f": "script", "--file": "script", "-h": "host", "--host": "host", "-p": "port", "--port": "port",
    "-U": "user", "--username": "user", "--sampling-rate": "sampling_rate",
    "--set": "setting", "--seed": "seed",
}
SKIP_FACTORS = {"rep", "campaign"}
# A command that starts with one of these runs the script it is given: the block is named after the script.
INTERPRETERS = {"python", "python3", "sh", "bash", "dash", "perl"}


def campaign_root(run_id: str, commands: dict[str, Any], plan: Any = None) -> str | None:
    """The campaign directory on the collecting machine, as its run recorded it: the run's working directory
    (run.toml [commands] cwd) less the run's id (its directory relative to the campaign root); else the
    directory of its plan ([campaign] plan); None when neither says."""
    cwd = commands.get("cwd")
    if isinstance(cwd, str) and cwd.rstrip("/").endswith("/" + run_id):
        return cwd.rstrip("/")[: -len(run_id)].rstrip("/") or None
    if isinstance(plan, str) and plan.startswith("/"):
        return str(PurePosixPath(plan).parent)
    return None


def relative_to(text: str, root: str | None) -> str:
    """A recorded command or path with the campaign directory's absolute path taken out: what lies under it
    relative to it ('scripts/read.sql'), the directory itself '.'; other paths as recorded."""
    if not root:
        return text
    # the root where a path starts (after a space, a quote or an option's "="), not inside a longer one
    return re.sub(r"(?<![^\s'\"=])" + re.escape(root) + r"(?:/|(?=$|[\s'\"]))",
                  lambda m: "" if m.group().endswith("/") else ".", text)


def _program_name(argv: list[str]) -> str:
    """What a command runs, as the block's heading: 'pgbench'; 'python3 …/tools/collect queries …' ->
    'collect queries' (the script an interpreter was given, and its subcommand)."""
    name = PurePosixPath(argv[0]).name
    if name in INTERPRETERS and len(argv) > 1 and not argv[1].startswith("-"):
        name = PurePosixPath(argv[1]).name
        if len(argv) > 2 and re.fullmatch(r"[a-z][a-z0-9_-]*", argv[2]):  # a subcommand
            name += " " + argv[2]
    return name


def _parts(argv: list[str], program: str) -> list[tuple[str, list[str], str | None]]:
    """(key, tokens as written, value) of a command line; keys unique within the line."""
    out: list[tuple[str, list[str], str | None]] = []
    seen: Counter[str] = Counter()
    takes = PGBENCH_VALUE_OPTIONS if program == "pgbench" else set()
    positional = 0
    i = 1
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("--") and "=" in tok:
            key, val = tok.split("=", 1)
            toks = [tok]
        elif tok in takes and i + 1 < len(argv):
            key, val, toks = tok, argv[i + 1], [tok, argv[i + 1]]
            i += 1
        elif program == "pgbench" and re.match(r"^-[a-zA-Z].+", tok) and tok[:2] in takes:
            key, val, toks = tok[:2], tok[2:], [tok]
        elif (program != "pgbench" and tok.startswith("--") and len(tok) > 2 and i + 1 < len(argv)
              and not argv[i + 1].startswith("-") and tok in OPTION_MEANING):
            # another program's long option with its value as the next word ('--seed 5'): named after the option
            key, val, toks = tok, argv[i + 1], [tok, argv[i + 1]]
            i += 1
        elif tok.startswith("-") and len(tok) > 1:
            key, val, toks = tok, None, [tok]
        else:
            positional += 1
            key, val, toks = f"@{positional}", tok, [tok]
        seen[key] += 1
        out.append((key if seen[key] == 1 else f"{key}#{seen[key]}", toks, val))
        i += 1
    return out


def _render(toks: list[str], value: str | None, placeholder: str | None) -> str:
    if placeholder is None:
        return shlex.join(toks)
    if len(toks) == 2:  # "-c 8"
        return f"{toks[0]} {placeholder}"
    tok = toks[0]
    if value is None or tok == value:  # a positional argument
        return placeholder
    if tok.startswith("--") and "=" in tok:  # "--rate=100"
        return tok.split("=", 1)[0] + "=" + placeholder
    return tok[:2] + placeholder  # "-c8"


def _sort_key(v: str) -> tuple[int, float, str]:
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


class _Runs:
    """The runs of one block with what each recorded."""

    def __init__(self, report: Report, runs: list[dict[str, Any]]):
        self.report = report
        self.runs = runs
        values: dict[str, set[str]] = {}
        for r in runs:
            for f, v in r["factors"].items():
                values.setdefault(f, set()).add(v)
        self.varying = [f for f in sorted(values) if len(values[f]) > 1 and f not in SKIP_FACTORS]
        self.all_factors = sorted(values)

    def fname(self, f: str) -> dict[str, str]:
        return {lang: factor_name(self.report, f, lang) for lang in LANGS}

    def vlabel(self, f: str, v: str) -> dict[str, str]:
        return {lang: factor_value_label(self.report, f, v, lang) for lang in LANGS}

    def factor_equal(self, ids: list[int], value_of) -> str | None:
        """A varying factor whose value equals ``value_of(run)`` in every run."""
        for f in self.varying:
            if all(value_of(i) == self.runs[i]["factors"].get(f) for i in ids):
                return f
        return None

    def deciding_factor(self, ids: list[int], value_of) -> str | None:
        """A varying factor whose value decides ``value_of(run)`` (a function of it)."""
        for f in self.varying:
            seen: dict[str, str] = {}
            if all(seen.setdefault(self.runs[i]["factors"].get(f, ""), value_of(i)) == value_of(i) for i in ids):
                return f
        return None

    def condition(self, ids: set[int]) -> dict[str, str]:
        """Words naming the runs ``ids`` among the block's: "Repetition: 1", else "5 of 80 runs"."""
        n = len(self.runs)
        for f in self.all_factors:
            if f == "campaign":  # the same for every run of a block; rep may name the runs ("Repetition: 1")
                continue
            for v in sorted({r["factors"].get(f) for r in self.runs if f in r["factors"]}, key=_sort_key):
                if {i for i in range(n) if self.runs[i]["factors"].get(f) == v} == ids:
                    return {lang: factor_text(self.report, f, v, lang) for lang in LANGS}
        return {lang: words.t(lang, "cmd_runs_of", n=len(ids), total=n) for lang in LANGS}


def _placeholder_words(block: _Runs, key: str, ids: list[int], value_of) -> tuple[dict[str, str], dict[str, str] | None]:
    """The ``[name]`` of a varying value, and the line listing its values (None when a factor names it)."""
    f = block.factor_equal(ids, value_of)
    if f:
        fn = block.fname(f)
        return {lang: f"[{fn[lang]}]" for lang in LANGS}, None
    base = key.split("#")[0]
    meaning = OPTION_MEANING.get(base)
    name = words.both(f"cmd_value_{meaning}") if meaning else {lang: base.lstrip("-@") for lang in LANGS}
    if base.startswith("@"):
        name = words.both("cmd_value_argument")
    ph = {lang: f"[{name[lang]}]" for lang in LANGS}
    decider = block.deciding_factor(ids, value_of)
    if decider:
        order = sorted({block.runs[i]["factors"].get(decider, "") for i in ids}, key=_sort_key)
        by = {block.runs[i]["factors"].get(decider, ""): value_of(i) for i in ids}
        fn = block.fname(decider)
        line = {lang: f"{ph[lang]}: {', '.join(by[v] for v in order)} "
                      f"({fn[lang]} {', '.join(block.vlabel(decider, v)[lang] for v in order)})" for lang in LANGS}
    else:
        vals = sorted({value_of(i) for i in ids}, key=_sort_key)
        line = {lang: f"{ph[lang]}: {', '.join(vals)}" for lang in LANGS}
    return ph, line


def _value_in(token: str, value: str) -> re.Pattern | None:
    """Where a factor's value stands in a token: the whole token, or a part of it bounded by other kinds of
    character ("pg15" in ``/pg15/bin``, "read" in ``bench_read``); single characters only as the whole token."""
    if token == value:
        return re.compile(re.escape(value))
    if len(value) < 2:
        return None
    edge = r"\d" if value.isdigit() else r"[0-9A-Za-z]"
    pat = re.compile(rf"(?<!{edge}){re.escape(value)}(?!{edge})")
    return pat if pat.search(token) else None


def _template_setup(block: _Runs) -> list[dict[str, str]]:
    """The runs' setup commands, in order, each value of a varying factor printed as [factor] where the runs'
    lines differ (a word every run's line holds alike stays as it is, though it spells a factor's value)."""
    lines_at: dict[tuple[int, int], list[list[str]]] = {}
    for r in block.runs:
        for i, line in enumerate(r["setup"]):
            toks = line.split(" ")
            lines_at.setdefault((i, len(toks)), []).append(toks)

    same: dict[tuple[int, int, int], bool] = {}  # asked once a token's place: the runs' lines are many

    def alike(i: int, toks: list[str], j: int) -> bool:
        where = (i, len(toks), j)
        if where not in same:
            same[where] = len({t[j] for t in lines_at[(i, len(toks))]}) == 1
        return same[where]

    out: list[dict[str, str]] = []
    seen: set[str] = set()
    done: set[tuple] = set()  # runs with the same lines and the same values of the varying factors print the same
    for r in block.runs:
        key = (tuple(r["setup"]), tuple(r["factors"].get(f) for f in block.varying))
        if key in done:
            continue
        done.add(key)
        for i, line in enumerate(r["setup"]):
            toks = line.split(" ")
            per_lang = {}
            for lang in LANGS:
                printed = list(toks)
                for j, t in enumerate(toks):
                    if alike(i, toks, j):
                        continue
                    for f in block.varying:
                        v = r["factors"].get(f)
                        where = _value_in(t, v) if v else None
                        if where is not None:
                            printed[j] = where.sub(f"[{factor_name(block.report, f, lang)}]", printed[j])
                per_lang[lang] = " ".join(printed)
            if per_lang["en"] not in seen:
                seen.add(per_lang["en"])
                out.append(per_lang)
    return out


def _block(report: Report, program: str, runs: list[dict[str, Any]], stored: dict[str, tuple[tuple[str, ...], ...]],
           name: str | None = None) -> CommandBlock:
    block = _Runs(report, runs)
    queries = name == "collect queries"  # its script: the statement list
    parsed = [r["parts"] for r in runs]
    by_run = [{k: (t, v) for k, t, v in p} for p in parsed]
    order: list[str] = []
    for p in parsed:
        prev = None
        for k, _, _ in p:
            if k not in order:
                order.insert(order.index(prev) + 1 if prev is not None else 0, k)
            prev = k
    n = len(runs)
    pieces: list[tuple[dict[str, str], frozenset[int] | None]] = []  # text, runs using it (None: all)
    varying: list[dict[str, str]] = []
    for key in order:
        ids = [i for i in range(n) if key in by_run[i]]
        toks0, val0 = by_run[ids[0]][key]
        same = all(by_run[i][key] == (toks0, val0) for i in ids)
        if same:
            text = {lang: _render(toks0, val0, None) for lang in LANGS}
        else:
            ph, line = _placeholder_words(block, key, ids, lambda i, k=key: by_run[i][k][1] or "")
            text = {lang: _render(toks0, val0, ph[lang]) for lang in LANGS}
            if line:
                varying.append(line)
        pieces.append((text, None if len(ids) == n else frozenset(ids)))
    # options used by the same subset of runs, one after the other, share one pair of brackets
    command = {lang: shlex.quote(program) for lang in LANGS}
    optional: list[dict[str, str]] = []
    i = 0
    while i < len(pieces):
        text, subset = pieces[i]
        if subset is None:
            for lang in LANGS:
                command[lang] += " " + text[lang]
            i += 1
            continue
        j = i
        group = []
        while j < len(pieces) and pieces[j][1] == subset:
            group.append(pieces[j][0])
            j += 1
        part = {lang: "[" + " ".join(g[lang] for g in group) + "]" for lang in LANGS}
        for lang in LANGS:
            command[lang] += " " + part[lang]
        cond = block.condition(set(subset))
        optional.append({lang: words.t(lang, "cmd_optional_runs", option=part[lang], runs=cond[lang]) for lang in LANGS})
        i = j
    scripts = []
    for script in runs[0]["scripts"]:
        copies: Counter[tuple[str, str]] = Counter()
        for r in runs:
            for file_name, sha, text, kind in stored.get(r["run_id"], ()):
                # a pgbench script is kept under its own name; a query list as collect keeps it (queries.sql)
                if file_name == PurePosixPath(script).name if kind == "script" else queries:
                    copies[(sha, text)] += 1
        if not copies:
            scripts.append(Script(script, None, None, 0))
        for (sha, text), k in copies.most_common():
            scripts.append(Script(script, text, sha, k))
    # the heading: a pgbench block is named after its script, a query study after its command
    heading = runs[0]["scripts"][-1] if runs[0]["scripts"] and not queries else name
    return CommandBlock(program=heading or program, runs=n, setup=_template_setup(block), command=command,
                        varying=varying, optional=optional, scripts=scripts)


def _query_list(parts: list[tuple[str, list[str], str | None]]) -> list[str]:
    """The statement list of a ``collect queries`` command line: its last positional argument."""
    lists = [val for key, _, val in parts if key.startswith("@") and val]
    return lists[-1:]


def _script_names(parts: list[tuple[str, list[str], str | None]]) -> list[str]:
    """The -f scripts of a parsed pgbench command line (``@weight`` cut)."""
    return [re.sub(r"@\d+$", "", val) for key, _, val in parts if key.split("#")[0] in ("-f", "--file") and val]


def chapters_command_blocks(store: Store, report: Report, chapters: list[list[str]],
                            kept: Callable[..., dict[str, Any]] | None = None) -> list[list[CommandBlock]]:
    """The command blocks (measured runs whose run.toml has an argv) of each set of runs (each chapter's of
    a report): each run's command as :func:`run_commands` reads it (asked once for every set: ``kept(name,
    runs, compute)`` gives them as an earlier build kept them, computing those of new or changed runs alone:
    report/cache.py ``ItemCache.per_run``), then grouped into blocks."""
    every = sorted(set().union(*map(set, chapters))) if chapters else []
    if not every:
        return [[] for _ in chapters]

    def compute(run_ids: list[str]) -> dict[str, Any]:
        return run_commands(store, run_ids)

    per_run = kept("commands", every, compute) if kept is not None else compute(every)
    runs_of: dict[str, tuple[dict[str, Any], tuple[str, str, tuple[str, ...]]]] = {}
    stored: dict[str, tuple[tuple[str, str, str, str], ...]] = {}
    for run_id in every:  # (in run id order)
        got = per_run.get(run_id)
        if got is None:  # not a measured run, or no command line
            continue
        program, name, scripts, parts, factors, setup, files = got
        runs_of[run_id] = ({"run_id": run_id, "parts": parts, "factors": dict(factors), "scripts": list(scripts),
                            "setup": list(setup)}, (program, name, scripts))
        stored[run_id] = files
    out = []
    for run_ids in chapters:
        want = set(run_ids)
        groups: dict[tuple[str, str, tuple[str, ...]], list[dict[str, Any]]] = {}
        for run_id, (run, key) in runs_of.items():
            if run_id in want:
                groups.setdefault(key, []).append(run)
        out.append([_block(report, program, runs, stored, name) for (program, name, _), runs in groups.items()])
    return out


# What one run says of its command, as a block reads it (:func:`run_commands`): its program, the block's name
# and scripts, its command line parsed (:func:`_parts`), its factors (sorted pairs), its setup commands and the
# scripts kept with it ((file name, sha256, text, kind), in file name order). Tuples of plain values: kept for
# every run of a campaign (report/cache.py ``ItemCache.per_run``) and read back each build.
RunCommand = tuple[str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...], str | None], ...],
                   tuple[tuple[str, str], ...], tuple[str, ...], tuple[tuple[str, str, str, str], ...]]


def run_commands(store: Store, run_ids: list[str]) -> dict[str, RunCommand | None]:
    """The command of each measured run of ``run_ids`` (None: no command line), from its row in ``runs``, its
    factors and the scripts stored with it alone: three statements for any number of runs. What several runs
    hold alike (a command line, a script, a factor's name) is one object, held once in a pickle of them."""
    if not run_ids:
        return {}
    # only the two parts of run.toml read here (every run's whole run.toml is large)
    rows = store.query_dicts(
        "SELECT r.run_id, (r.run_toml -> 'commands')::VARCHAR AS commands, "
        "(r.run_toml -> 'campaign' -> 'setup')::VARCHAR AS setup FROM runs r WHERE r.origin = 'measured' "
        "AND r.run_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY r.run_id", [run_ids])
    share: dict[Any, Any] = {}

    def one(x: Any) -> Any:
        return share.setdefault(x, x)

    factors: dict[str, list[tuple[str, str]]] = {}
    for run_id, f, v in store.query(
            "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [run_ids]):
        factors.setdefault(run_id, []).append(one((one(f), one(v))))
    stored: dict[str, list[tuple[str, str, str, str]]] = {}
    for run_id, file_name, sha, text, kind in store.query(
            "SELECT s.run_id, s.file_name, s.sha256, p.text, 'script' AS kind FROM sources s "
            "JOIN pgbench_script_files p USING (source_id) WHERE s.run_id IN (SELECT unnest(?::VARCHAR[])) "
            "UNION ALL SELECT s.run_id, s.file_name, s.sha256, q.text, 'query-list' FROM sources s "
            "JOIN query_list_files q USING (source_id) WHERE s.run_id IN (SELECT unnest(?::VARCHAR[])) "
            "ORDER BY run_id, file_name", [run_ids, run_ids]):
        stored.setdefault(run_id, []).append(one((one(file_name), one(sha), one(text), one(kind))))
    # the block's template and its scripts, parsed once per command line (the repetitions of a condition
    # and the chapters showing them run the same one)
    parsed: dict[tuple[str, tuple[str, ...]], Any] = {}
    out: dict[str, RunCommand | None] = {}
    for row in rows:
        got = _run_command(row, parsed)
        if got is not None:
            program, name, scripts, parts, setup = got
            got = (program, name, one(scripts), parts, one(tuple(sorted(factors.get(row["run_id"], [])))),
                   one(setup), one(tuple(stored.get(row["run_id"], ()))))
        out[row["run_id"]] = got
    return out


def _run_command(row: dict[str, Any], parsed: dict) -> tuple | None:
    """A measured run's program, block name, scripts, parsed command line and setup commands; None: no
    command line."""
    cmds = json.loads(row["commands"]) if row["commands"] else {}
    cmds = cmds if isinstance(cmds, dict) else {}
    argv = cmds.get("argv")
    if not argv and isinstance(cmds.get("benchmark"), str):
        try:
            argv = shlex.split(cmds["benchmark"])
        except ValueError:
            argv = None
    if not argv or not isinstance(argv, list):
        return None
    argv = [str(a) for a in argv]
    program = PurePosixPath(argv[0]).name
    root = campaign_root(row["run_id"], cmds)
    if root:  # paths on the measuring machine, printed relative to the campaign root
        argv = [argv[0]] + [relative_to(a, root) for a in argv[1:]]
    key = (program, tuple(argv))
    got = parsed.get(key)
    if got is None:
        parts = tuple((k, tuple(toks), v) for k, toks, v in _parts(argv, program))
        name = _program_name(argv)
        scripts = (_script_names(parts) if program == "pgbench" else _query_list(parts) if name == "collect queries"
                   else [])
        got = parsed[key] = (parts, name, tuple(scripts))
    parts, name, scripts = got
    setup = (json.loads(row["setup"]) if row["setup"] else None) or []
    return program, name, scripts, parts, tuple(relative_to(str(s), root) for s in setup if isinstance(s, str))
