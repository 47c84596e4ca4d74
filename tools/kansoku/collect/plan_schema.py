"""The collect plan's schema and its checks: every problem of a plan at once, with its line, exit 3.

A plan (``tools/collect --plan PLAN.toml``, format in docs/collect.md) is checked like a report spec
(spec/validate.py, whose line locator and messages this module reuses): its TOML syntax, then this JSON
Schema (every key declared once, with its meaning: ``docs/collect-plan.schema.json`` is written from it for
editors, ``python3 -m kansoku.collect.plan_schema`` rewrites it), then what a schema cannot say, each with
"did you mean": a ``match`` naming a factor the plan does not have or a value the factor never takes, a
``[[when]]`` override of a variable ``[vars]`` does not declare (it would be silently dropped), ``{names}`` in
templates that no factor or variable gives, ``group_by``/``on`` names that are not factors, hosts.

The same checks serve ``tools/collect --hosts FILE`` (a file of ``[hosts.NAME]`` tables only).
"""

from __future__ import annotations

import json
import math
import string
import sys
from pathlib import Path
from typing import Any

from kansoku.collect.run import KEY, MONITORS, CollectError
from kansoku.ingest.runs import canon
from kansoku.spec.validate import Locator, Problem, did_you_mean, load_toml, plain, schema_error_messages

REPO = Path(__file__).resolve().parents[3]
SCHEMA_JSON = REPO / "docs" / "collect-plan.schema.json"
HOST_MONITORS = [m[0] for m in MONITORS]
BUILTIN_NAMES = ("plan_dir", "root", "run_dir")
MOST_REPETITIONS = 10_000  # the factor rep is made whole before anything runs
LONGEST_WAIT_S = 3600  # settle_s, pg_stat_interval_s: an hour; more is a damaged number, not a wait

_SCALAR = {"type": ["string", "integer", "number", "boolean"]}
_VALUES = {"title": "factor values", "anyOf": [_SCALAR, {"type": "array", "items": _SCALAR, "minItems": 1}]}
_NAMES = {"type": "array", "items": {"type": "string", "minLength": 1}}


def _d(description: str, schema: dict) -> dict:
    return {**schema, "description": description}


MATCH = _d("the runs this applies to: a value or a list of values per factor, e.g. { workload = \"update\" }",
           {"type": "object", "additionalProperties": _VALUES})

HOST = {
    "title": "[hosts.NAME]", "type": "object", "additionalProperties": False, "required": ["role"],
    "properties": {
        "role": _d("the host's role in the run: server, client, standby or a name the campaign uses",
                   {"type": "string", "pattern": r"^[A-Za-z][A-Za-z0-9_-]*$"}),
        "ssh": _d("ssh destination of the host ([user@]host, an alias of the ssh config, or ssh://[user@]host[:port]); "
                  "absent: the host tools/collect runs on (its files at the top of the run directory)",
                  {"type": "string", "minLength": 1, "pattern": "^[^-]"}),
        "identity": _d("private key file for ssh -i, relative to the plan (default: the ssh agent and the ssh "
                                   "config); never a password",
                       {"type": "string", "minLength": 1}),
        "ssh_config": _d("ssh configuration file for ssh -F, relative to the plan", {"type": "string", "minLength": 1}),
        "monitors": _d("the monitors run on this host (default: sar, iostat, vmstat; also mpstat; [] none)",
                       {"type": "array", "items": {"enum": HOST_MONITORS}, "uniqueItems": True}),
        "conninfo": _d("libpq connection string used by psql ON THIS HOST: its [server] settings and pg_stat "
                       "snapshots (template)", {"type": "string", "minLength": 1}),
        "strace_pidfile": _d("file on this host whose first line is the PID to run strace -c -f on (template)",
                             {"type": "string", "minLength": 1}),
        "pg_stat_replication": _d("with conninfo: pg_stat_replication (standbys' lags) before, during and after "
                                  "each run", {"type": "boolean"}),
        "perf_pidfile": _d("perf record -g ON THIS HOST on the processes of the PostgreSQL server whose postmaster.pid "
                           "this is (template; the profile is stored under this host and its role)",
                           {"type": "string", "minLength": 1}),
        "perf_system_wide": _d("perf record -g -a on this host: every CPU", {"type": "boolean"}),
        "perf_frequency": _d("perf's sampling frequency in Hz on this host (default 99)",
                             {"type": "integer", "minimum": 1, "maximum": 100000}),
        "perf_event": _d("the event perf samples on this host (default cycles; cpu-clock where the machine has no "
                         "hardware counters)", {"type": "string", "minLength": 1}),
        "server_log": _d("the PostgreSQL server log ON THIS HOST: the part written during the run is kept as its "
                         "server.log (template)", {"type": "string", "minLength": 1}),
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://kansoku.invalid/collect-plan.schema.json",
    "title": "kansoku collect plan (tools/collect --plan)",
    "type": "object", "additionalProperties": False, "required": ["factors", "run"],
    "properties": {
        "description": _d("what the campaign measures (free text)", {"type": "string"}),
        "root": _d("where run directories go, relative to the plan file (default \".\")", {"type": "string"}),
        "seed": _d("seed of the random order (required when order is random)", {"type": "integer"}),
        "order": _d("random (default): groups shuffled, then runs inside each group; listed: as the factors list them",
                    {"enum": ["random", "listed"]}),
        "group_by": _d("factors whose runs stay together (setups then run once per group)", _NAMES),
        "repetitions": _d("adds the factor rep = 1..N after the factors",
                          {"type": "integer", "minimum": 1, "maximum": MOST_REPETITIONS}),
        "rep_factor": _d("name of the repetition factor (default rep)", {"type": "string", "pattern": KEY.pattern}),
        "settle_s": _d("monitors run this long before and after each benchmark (default 1)",
                       {"type": "number", "minimum": 0, "maximum": LONGEST_WAIT_S}),
        "pg_stat_interval_s": _d("with conninfo: checkpoint counters every this many seconds during a run (default 5; "
                                 "0: only before and after)",
                                 {"type": "number", "minimum": 0, "maximum": LONGEST_WAIT_S}),
        "monitors": _d("the monitors of the host kansoku collect runs on: true (sar, iostat, vmstat; the default), "
                       "false (none), or their names (also mpstat: per-CPU use and softirqs by type)",
                       {"anyOf": [{"type": "boolean"},
                                  {"type": "array", "items": {"enum": HOST_MONITORS}, "uniqueItems": True}]}),
        "factors": _d("the factors and their values, in directory order: study = [\"scaleup\"], clients = [1, 2, 4]",
                      {"type": "object", "minProperties": 1, "additionalProperties": _VALUES,
                       "propertyNames": {"pattern": KEY.pattern}}),
        "run": {
            "title": "[run]", "description": "one benchmark run; strings are templates ({clients}, {plan_dir}, ...)",
            "type": "object", "additionalProperties": False, "required": ["command"],
            "properties": {
                "command": _d("the benchmark command (split like a shell, not run by one)",
                              {"type": "string", "minLength": 1}),
                "output": _d("file for its stdout+stderr (default <program>.log)", {"type": "string", "minLength": 1}),
                "conninfo": _d("libpq connection string of the server under test (psql here)",
                               {"type": "string", "minLength": 1}),
                "strace_pidfile": _d("strace -c -f on the PID in this file's first line", {"type": "string"}),
                "strace_pid": _d("strace -c -f on this PID", {"type": ["integer", "string"]}),
                "server_log": _d("the PostgreSQL server log: the part written during the run is kept",
                                 {"type": "string", "minLength": 1}),
                "pg_stat_replication": _d("with conninfo: pg_stat_replication (standbys' lags) before, during and "
                                          "after each run", {"type": "boolean"}),
                "note": _d("free text stored as notes in run.toml", {"type": "string"}),
                "perf_pidfile": _d("perf record -g on the processes of the PostgreSQL server whose postmaster.pid "
                                   "this is (template; collect/profile.py)", {"type": "string", "minLength": 1}),
                "perf_system_wide": _d("perf record -g -a: every CPU of this host", {"type": "boolean"}),
                "perf_frequency": _d("perf's sampling frequency in Hz (default 99)",
                                     {"type": "integer", "minimum": 1, "maximum": 100000}),
                "perf_event": _d("the event perf samples (default cycles; cpu-clock where the machine has no "
                                 "hardware counters)", {"type": "string", "minLength": 1}),
            },
        },
        "vars": _d("template variables and their defaults", {"type": "object", "additionalProperties": _SCALAR}),
        "when": _d("overrides of [vars] for the runs that match (later entries win)", {
            "type": "array", "items": {"title": "[[when]]", "type": "object", "required": ["match"],
                                       "properties": {"match": MATCH}, "additionalProperties": _SCALAR}}),
        "setup": _d("shell commands run before the first run of each group", {
            "type": "array", "items": {
                "title": "[[setup]]", "type": "object", "additionalProperties": False, "required": ["command"],
                "properties": {
                    "on": _d("a group = runs with the same values of these factors",
                             {"anyOf": [{"type": "string"}, _NAMES]}),
                    "match": MATCH,
                    "command": _d("run by /bin/sh -c in the plan's directory (template); with host, by sh -c on "
                                  "that host over ssh, in the ssh login's directory",
                                  {"type": "string", "minLength": 1}),
                    "host": _d("a host of [hosts] reached over ssh: the command runs there (default: the host "
                               "tools/collect runs on)", {"type": "string", "minLength": 1}),
                    "log": _d("its output, relative to root (default .setup/setup.log; template)",
                              {"type": "string", "minLength": 1}),
                }}}),
        "hosts": _d("the hosts of each run (docs/collect.md, several hosts): [hosts.NAME] tables",
                    {"type": "object", "additionalProperties": HOST,
                     "propertyNames": {"pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"}}),
    },
}

HOSTS_FILE_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["hosts"],
                     "properties": {"hosts": SCHEMA["properties"]["hosts"]}}


class PlanProblems(CollectError):
    """Every problem of a plan (exit 3): one line each, ``file:line: key path: message``."""

    exit_code = 3

    def __init__(self, path: Path, problems: list[Any], what: str = "the collect plan"):
        self.problems = sorted(problems, key=lambda p: p.line or 0)
        n = len(self.problems)
        super().__init__(f"{n} problem{'s' if n != 1 else ''} in {what} {path}:\n"
                         + "\n".join(f"  {p}" for p in self.problems))


def _template_names(template: str) -> list[str]:
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    except ValueError:
        return []
    return [f.split(".")[0].split("[")[0] for f in fields if f.split(".")[0].split("[")[0]]


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


def cross_problems(raw: dict) -> list[tuple[tuple, str]]:
    """What the schema cannot say (module docstring)."""
    out: list[tuple[tuple, str]] = []
    factors_in = raw.get("factors") if isinstance(raw.get("factors"), dict) else {}
    factors = {k: [canon(x) for x in _as_list(v)] for k, v in factors_in.items()}
    for k, vals in factors.items():
        for x in vals:
            if not x or "/" in x or x.startswith(".") or x != x.strip():
                out.append((("factors", k), f"value {x!r} cannot name a directory (no '/', leading '.' or spaces)"))
    reps = raw.get("repetitions")
    rep_factor = raw.get("rep_factor", "rep")
    if isinstance(reps, int) and 1 <= reps <= MOST_REPETITIONS and isinstance(rep_factor, str):
        if rep_factor in factors:
            out.append((("repetitions",), f"adds the factor {rep_factor!r}, which [factors] already has"))
        else:
            factors[rep_factor] = [str(i) for i in range(1, reps + 1)]
    if raw.get("order", "random") == "random" and "seed" not in raw:
        out.append(((), "a random order needs seed = <integer> (it makes the order reproducible), "
                        "or order = \"listed\""))
    vars_ = raw.get("vars") if isinstance(raw.get("vars"), dict) else {}

    def factor_name(path: tuple, name: Any, what: str) -> bool:
        if name in factors:
            return True
        out.append((path, f"{what} {json.dumps(name, ensure_ascii=False)} is not a factor of the plan"
                    + (did_you_mean(name, factors) or f"; factors: {', '.join(factors)}")))
        return False

    def match(path: tuple, m: Any) -> None:
        if not isinstance(m, dict):
            return
        for k, v in m.items():
            if not factor_name(path + (k,), k, "match names"):
                continue
            for x in _as_list(v):
                if canon(x) not in factors[k]:
                    out.append((path + (k,), f"{k} = {json.dumps(x, ensure_ascii=False)} never matches: {k} takes "
                                + ", ".join(factors[k]) + did_you_mean(canon(x), factors[k])))

    for i, g in enumerate(raw.get("group_by", []) if isinstance(raw.get("group_by"), list) else []):
        factor_name(("group_by", i), g, "group_by names")
    whens = raw.get("when") if isinstance(raw.get("when"), list) else []
    for i, w in enumerate(whens):
        if not isinstance(w, dict):
            continue
        match(("when", i, "match"), w.get("match"))
        for k in w:
            if k == "match" or k in vars_:
                continue
            if k in factors:
                out.append((("when", i, k), f"{k!r} is a factor: a [[when]] cannot change a factor's value"))
            else:
                out.append((("when", i, k), f"{json.dumps(k, ensure_ascii=False)} is not a variable of [vars]: "
                            f"the override would be dropped" + (did_you_mean(k, list(vars_) + list(factors))
                                                                 or "; declare its default in [vars]")))
    setups = raw.get("setup") if isinstance(raw.get("setup"), list) else []
    for i, s in enumerate(setups):
        if not isinstance(s, dict):
            continue
        on = s.get("on", [])
        for j, g in enumerate(_as_list(on) if isinstance(on, (str, list)) else []):
            factor_name(("setup", i, "on") + ((j,) if isinstance(on, list) else ()), g, "on names")
        match(("setup", i, "match"), s.get("match"))
        h = s.get("host")
        hosts = raw.get("hosts") if isinstance(raw.get("hosts"), dict) else {}
        if isinstance(h, str) and h not in hosts:
            out.append((("setup", i, "host"), f"host {json.dumps(h, ensure_ascii=False)} is not a host of [hosts]"
                        + (did_you_mean(h, list(hosts)) or (f"; hosts: {', '.join(hosts)}" if hosts else
                                                              "; the plan has no [hosts]"))))

    known = list(factors) + list(vars_) + list(BUILTIN_NAMES)

    def templates(path: tuple, v: Any) -> None:
        if not isinstance(v, str):
            return
        try:
            list(string.Formatter().parse(v))
        except ValueError as exc:
            out.append((path, f"not a valid template ({exc}); write {{{{ and }}}} for literal braces"))
            return
        for name in _template_names(v):
            if name not in known:
                out.append((path, f"{{{name}}} is not a factor, a variable of [vars] or one of "
                                  f"{', '.join(BUILTIN_NAMES)}" + did_you_mean(name, known)))

    run = raw.get("run") if isinstance(raw.get("run"), dict) else {}
    for k, v in run.items():
        templates(("run", k), v)
    if run.get("pg_stat_replication") and "conninfo" not in run:
        out.append((("run", "pg_stat_replication"), "needs conninfo (the primary psql reads it from)"))
    if "strace_pid" in run and "strace_pidfile" in run:
        out.append((("run", "strace_pid"), "give strace_pid or strace_pidfile, not both"))
    for i, s in enumerate(setups):
        if isinstance(s, dict):
            for k in ("command", "log"):
                templates(("setup", i, k), s.get(k))
    out += host_problems(raw, templates)
    return out


def host_problems(raw: dict, templates: Any = None) -> list[tuple[tuple, str]]:
    out: list[tuple[tuple, str]] = []
    hosts = raw.get("hosts") if isinstance(raw.get("hosts"), dict) else {}
    local = [n for n, h in hosts.items() if isinstance(h, dict) and "ssh" not in h]
    if len(local) > 1:
        out.append((("hosts", local[1]), f"hosts {', '.join(local)} have no ssh: only one host can be the one "
                    f"tools/collect runs on"))
    for n, h in hosts.items():
        if not isinstance(h, dict):
            continue
        if "ssh" not in h:
            for k in ("identity", "ssh_config", "conninfo", "strace_pidfile", "pg_stat_replication", "monitors",
                      "perf_pidfile", "perf_system_wide", "perf_frequency", "perf_event", "server_log"):
                if k in h:
                    out.append((("hosts", n, k), f"{k} is for a host reached over ssh; for the host tools/collect "
                                f"runs on, use [run] (and monitors = at the top)"))
        if h.get("pg_stat_replication") and "conninfo" not in h:
            out.append((("hosts", n, "pg_stat_replication"), "needs conninfo (psql on that host)"))
        if "perf_pidfile" in h and h.get("perf_system_wide"):
            out.append((("hosts", n, "perf_system_wide"), "give perf_pidfile or perf_system_wide, not both"))
        for k in ("perf_frequency", "perf_event"):
            if k in h and "perf_pidfile" not in h and not h.get("perf_system_wide"):
                out.append((("hosts", n, k), f"{k} without perf_pidfile or perf_system_wide: nothing is profiled"))
        if templates is not None:
            for k in ("conninfo", "strace_pidfile", "perf_pidfile", "server_log"):
                templates(("hosts", n, k), h.get(k))
    return out


_VALIDATORS: dict[int, Any] = {}


def _validator(schema: dict):
    v = _VALIDATORS.get(id(schema))
    if v is None:
        from jsonschema import Draft202012Validator, validators  # built once, when a plan is checked

        # TOML tells 2 from 2.0, which JSON Schema's integer takes: an integer key is an int, a number finite
        # (TOML's nan and inf), so what a plan converts (range, sleep) never sees either
        types = Draft202012Validator.TYPE_CHECKER.redefine_many({
            "integer": lambda _, x: isinstance(x, int) and not isinstance(x, bool),
            "number": lambda _, x: isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)})
        v = _VALIDATORS[id(schema)] = validators.extend(Draft202012Validator, type_checker=types)(schema)
    return v


def _schema_problems(data: Any, schema: dict) -> list[tuple[tuple, str]]:
    seen, out = set(), []
    for err in _validator(schema).iter_errors(data):
        for p, m in schema_error_messages(err):
            if (p, m) not in seen:
                seen.add((p, m))
                out.append((p, m))
    return out


def check(path: Path, hosts_only: bool = False) -> dict:
    """The plan (or hosts file) as data, or PlanProblems listing every problem (exit 3)."""
    what = "the hosts file" if hosts_only else "the collect plan"
    raw, text, problems = load_toml(path)
    if raw is None:
        if problems and problems[0].message == "no such report spec":
            raise CollectError(f"{path}: no such file")
        raise PlanProblems(path, problems, what)
    found = _schema_problems(plain(raw), HOSTS_FILE_SCHEMA if hosts_only else SCHEMA)
    found += host_problems(raw) if hosts_only else cross_problems(raw)
    if found:
        loc = Locator(text or "")
        raise PlanProblems(path, [Problem(path, loc.line(p), p, m) for p, m in found], what)
    return raw


def schema_json() -> str:
    return json.dumps(SCHEMA, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    SCHEMA_JSON.write_text(schema_json(), encoding="utf-8")
    print(f"wrote {SCHEMA_JSON}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
