"""Runs: directories of raw files, their identity and their factors.

Identity: a run is its directory, named by the path relative to the campaign root
(every segment counts, ``hostA/clients=4/rep=1`` and ``hostB/clients=4/rep=1`` are two
runs). The campaign root is, in this order:

1. the nearest directory at or above the run holding a ``.kansoku-campaign`` marker file;
2. else the path given on the command line, moved up to the parent of the topmost
   ``key=value`` segment when the given path lies inside a hive-style tree (so that
   ``tools/ingest runs/study=a`` and ``tools/ingest runs`` name a run the same way).

A tree without ``key=value`` segments and without a marker is named relative to the path
given; the ingest refuses (naming both) to store a directory under a second name, so
``tools/ingest campaign`` then ``tools/ingest campaign/2026`` cannot store the data twice.

A run's factors come from ``key=value`` path segments (hive style,
``study=scaleup/workload=read/clients=32/rep=2``), from an optional
``run.toml`` in the run directory, and from the files themselves (pgbench
prints clients, threads, duration). Conflicts between them are errors.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from kansoku.errors import DIRECTORY, RunError, last_line, lineless
from kansoku.values import canon

RUN_TOML = "run.toml"
HOST_TOML = "host.toml"
HOST_DIR_PREFIX = "host="
DEFAULT_ROLE = "server"  # the run's own host when neither run.toml nor the campaign says
_ROLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
BLOBS_MARKER = ".kansoku-blobs"  # as in store/db.py (the ingest stage does not import the store here)
CAMPAIGN_MARKER = ".kansoku-campaign"
_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(.+)$")

# Top-level run.toml keys that describe the run but are not factors.
METADATA_KEYS = {
    "start", "end", "collectors_start", "collectors_stop", "hostname", "notes", "note",
    "pgbench_exit_code", "exit_code", "status", "status_note", "logging", "duration_s", "role",
}
# Facts a file may state about its run, and the factor names they must agree with.
FACT_FACTORS = {"clients": "clients", "threads": "threads", "duration_s": "duration_s"}


# Inventory keys that do not make another machine: the name it answers to, and details a later collect
# records beside an older key (virtualization_layers beside virtualization), which must not split the runs
# of one machine between collects.
NOT_IDENTITY = frozenset({"hostname", "virtualization_layers"})
# MemTotal moves by a few KiB between boots of one machine (the kernel reserves a little more or less), so
# memory is compared in whole GiB.
MEMORY_GRAIN_KIB = 1 << 20


def machine_identity(machine: dict[str, Any] | None) -> dict[str, Any]:
    """What makes a machine: its inventory without the keys of NOT_IDENTITY, memory in whole GiB."""
    inv = {k: v for k, v in (machine or {}).items() if k not in NOT_IDENTITY}
    mem = inv.get("mem_total_kib")
    if isinstance(mem, (int, float)) and not isinstance(mem, bool):
        inv["mem_total_kib"] = round(mem / MEMORY_GRAIN_KIB)
    return inv


def machine_fingerprint(machine: dict[str, Any] | None) -> str | None:
    """A machine is its identity (:func:`machine_identity` of [machine] of run.toml / host.toml): the first
    12 hex digits of the sha256 of it as canonical JSON. None when nothing was captured."""
    inv = machine_identity(machine)
    if not inv:
        return None
    text = json.dumps(inv, sort_keys=True, default=str, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass
class Host:
    """One host of a run: the run's own host (``key`` '', the files at the top of the run directory, described
    by run.toml) or another one (``key`` the name of its ``host=<key>/`` subdirectory, described by host.toml)."""

    key: str
    hostname: str | None  # what the host's `hostname` printed (host.toml / run.toml), else the directory's name
    role: str
    meta: dict[str, Any] = field(default_factory=dict)  # host.toml (or run.toml for the run's own host)
    toml_path: Path | None = None

    @property
    def machine(self) -> dict[str, Any]:
        m = self.meta.get("machine")
        return m if isinstance(m, dict) else {}

    @property
    def machine_id(self) -> str | None:
        return machine_fingerprint(self.machine)

    @property
    def clock_offset_s(self) -> float | None:
        v = self.meta.get("clock_offset_s") if self.key else 0.0
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    @property
    def clock_offset_error_s(self) -> float | None:
        v = self.meta.get("clock_offset_error_s") if self.key else 0.0
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    @property
    def where(self) -> str:
        return f"{HOST_DIR_PREFIX}{self.key}/" if self.key else "the top of the run directory"


@dataclass
class Run:
    run_id: str
    run_dir: Path
    factors: dict[str, str]
    factor_origin: dict[str, str]
    meta: dict[str, Any] = field(default_factory=dict)  # run.toml, verbatim
    default_role: str | None = None  # the campaign's declared default role (.kansoku-campaign), if any
    coverage_threshold: float | None = None  # the campaign's declared coverage threshold (None: 0.9)
    hosts: dict[str, Host] = field(default_factory=dict)  # key ('' = the run's own host) -> host

    @property
    def start_time(self) -> datetime | None:
        v = self.meta.get("start")
        return v if isinstance(v, datetime) else None

    @property
    def end_time(self) -> datetime | None:
        v = self.meta.get("end")
        return v if isinstance(v, datetime) else None

    @property
    def hostname(self) -> str | None:
        return self.meta.get("hostname") or self.meta.get("machine", {}).get("hostname")

    @property
    def status(self) -> tuple[str, str | None]:
        st = self.meta.get("status")
        if st in ("failed", "aborted", "interrupted"):
            return "failed", self.meta.get("status_note") or f"run.toml says status = {st!r}"
        for key in ("exit_code", "pgbench_exit_code"):
            code = self.meta.get(key)
            if isinstance(code, int) and code != 0:
                return "failed", f"run.toml: {key} = {code}"
        return "ok", None

    def host_of(self, path: Path) -> Host:
        """The host a file of this run belongs to (its host=<name>/ subdirectory, else the run's own)."""
        if path.parent != self.run_dir and path.parent.name.startswith(HOST_DIR_PREFIX):
            key = path.parent.name[len(HOST_DIR_PREFIX):]
            if key in self.hosts:
                return self.hosts[key]
        return self.hosts[""]

    def meta_json(self) -> str:
        return json.dumps(self.meta, default=str, ensure_ascii=False)

    def check_fact(self, name: str, value: Any, file: Path) -> None:
        factor = FACT_FACTORS.get(name)
        if factor is None or factor not in self.factors or value is None:
            return
        if canon(value) != self.factors[factor]:
            raise RunError(
                f"{file}: the file says {name} = {value}, but the run's {factor} is "
                f"{self.factors[factor]} (from {self.factor_origin[factor]}); fix the directory name or run.toml"
            )


def path_safe(value: str) -> str:
    """How a value is spelled in a directory name when it holds '+': 'json+' -> 'jsonplus'
    (shared/corpus/real/README.md: "format=jsonplus stands for fio's json+")."""
    return value.replace("+", "plus")


def path_factors(path: Path) -> list[tuple[str, str]]:
    out = []
    for part in path.parts:
        m = _SEGMENT.match(part)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def read_toml(p: Path, what: str = "") -> tuple[dict[str, Any], str]:
    """A layout file (run.toml, host.toml, .kansoku-campaign) read as TOML, and its text; RunError naming the file
    and line when it is not UTF-8 or not valid TOML (``what``: what the file should hold, for the message)."""
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise RunError(f"{p}:{line}: expected UTF-8 text (TOML is UTF-8), found the byte 0x{raw[exc.start]:02x}; "
                       "save the file as UTF-8") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        # "(at end of document)": an unterminated string or table, whose error is its last line
        where = f"{p}:{m.group(1) if m else last_line(text)}"
        raise RunError(f"{where}: not valid TOML ({exc}){what}") from None


def _line_of(p: Path, text: str, key: str) -> str:
    """``file:line`` of a top-level ``key = ...`` (the file alone when it cannot be found)."""
    m = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*=", text, re.M)
    return f"{p}:{text[:m.start()].count(chr(10)) + 1}" if m else str(p)


def key_line(p: Path, key: str) -> str:
    """``file:line`` of ``key = ...`` in the layout file ``p`` read again (the file alone when it cannot be)."""
    try:
        return _line_of(p, p.read_text(encoding="utf-8"), key)
    except (OSError, UnicodeDecodeError):
        return str(p)


def _check_machine(p: Path, text: str, meta: dict[str, Any]) -> None:
    v = meta.get("machine")
    if v is not None and not isinstance(v, dict):
        raise RunError(f"{_line_of(p, text, 'machine')}: machine = {v!r}: expected the [machine] table of the host's "
                       "inventory (hostname, kernel, cpu_model, cpu_count, mem_total_kib, ...: docs/ingest.md), as "
                       "tools/collect writes it; a factor goes in [factors]")


def load_run_toml(run_dir: Path) -> dict[str, Any]:
    p = run_dir / RUN_TOML
    if p.is_symlink() or not p.is_file():  # a link may point anywhere: never read (the walk reports it)
        return {}
    meta, text = read_toml(p)
    _check_times(p, text, meta)
    _check_machine(p, text, meta)
    return meta


# The times of a run (run.toml), like every time a tool prints (parsers/bounds.py): from a real clock.
RUN_TIMES = ("start", "end", "collectors_start", "collectors_stop")


def _check_times(p: Path, text: str, meta: dict[str, Any]) -> None:
    from kansoku.parsers.bounds import EARLIEST, LATEST  # loaded at every command's start: no parsers there

    for key in RUN_TIMES:
        v = meta.get(key)
        if not isinstance(v, datetime):
            continue
        aware = v if v.tzinfo is not None else v.replace(tzinfo=EARLIEST.tzinfo)
        if not EARLIEST <= aware <= LATEST:
            raise RunError(f"{_line_of(p, text, key)}: expected {key} between {EARLIEST.year} and {LATEST.year} (a time of a real "
                           f"clock), found {v.isoformat()}")


def campaign_settings(run_dir: Path) -> dict[str, Any]:
    """The campaign's settings: the nearest ``.kansoku-campaign`` at or above the run, read as TOML (a marker of
    comments only has no settings; one that is not TOML is a RunError with its line). Keys read:
    ``default_role`` (the role of a run's own host when run.toml names none, and the role a spec's metric
    without ``[role]`` reads in runs with several hosts) and ``coverage_threshold`` (the share of a run's window
    each monitor must cover, a number in (0, 1]; default 0.9: docs/ingest.md, "Coverage")."""
    for d in (run_dir, *run_dir.parents):
        marker = d / CAMPAIGN_MARKER
        if marker.is_file() and not marker.is_symlink():
            # comments, or settings; anything else would silently change every run's roles
            doc, text = read_toml(marker, "; a campaign marker holds comments (# ...) and settings such as "
                                          "default_role = \"client\" (a string in quotes)")
            role = doc.get("default_role")
            if role is not None and (not isinstance(role, str) or not _ROLE.match(role)):
                raise RunError(f"{_line_of(marker, text, 'default_role')}: default_role = {role!r}: expected a role "
                               "name such as \"server\" or \"client\" (letters, digits, '_' and '-')")
            cov = doc.get("coverage_threshold")
            if cov is not None and (isinstance(cov, bool) or not isinstance(cov, (int, float))
                                    or not 0 < cov <= 1):
                raise RunError(f"{_line_of(marker, text, 'coverage_threshold')}: coverage_threshold = {cov!r}: "
                               "expected a share of the run window between 0 and 1, e.g. 0.9 (each monitor's "
                               "samples cover 90 % of the run)")
            return doc
    return {}


def host_dir_key(d: Path) -> str | None:
    """``<name>`` when ``d`` is a ``host=<name>/`` subdirectory of a run (docs/ingest.md, "Hosts in a run"):
    it holds a host.toml, or its parent holds a run.toml. A ``host=`` directory without either is an older
    campaign's factor segment and stays one. A directory of files below a host's directory (a ``host=`` inside
    another) would be a run of its own: RunError naming both."""
    outer = next((a for a in d.parents if _host_key(a) is not None), None)
    if outer is not None:
        raise RunError(f"{lineless(d, DIRECTORY)}: a directory of files inside the host directory {outer}/ of run "
                       f"{outer.parent}: a host's files are directly in its {HOST_DIR_PREFIX}<name>/ directory, "
                       f"and a run's hosts are {HOST_DIR_PREFIX}<name>/ directories directly in the run directory "
                       "(docs/ingest.md, \"Hosts in a run\"); move the files, nothing was stored")
    return _host_key(d)


def _host_key(d: Path) -> str | None:
    if not d.name.startswith(HOST_DIR_PREFIX) or len(d.name) == len(HOST_DIR_PREFIX):
        return None
    if (d / HOST_TOML).is_file() or (d.parent / RUN_TOML).is_file():
        return d.name[len(HOST_DIR_PREFIX):]
    return None


def load_host(run: Run, key: str, host_dir: Path) -> Host:
    """A host=<key>/ subdirectory's host (host.toml read as metadata; see docs/ingest.md)."""
    p = host_dir / HOST_TOML
    meta: dict[str, Any] = {}
    text = ""
    if p.is_file() and not p.is_symlink():
        meta, text = read_toml(p)
    role = meta.get("role")
    if role is None:
        # a host.toml without the key is named at its last line (read to its end for it); none, by the directory
        where = f"{p}:{last_line(text)}" if p.is_file() and not p.is_symlink() else lineless(host_dir, DIRECTORY)
        raise RunError(f"{where}: the host {key!r} of run {run.run_id!r} has no role; write "
                       f"{HOST_TOML} with role = \"server\" (or client, standby, a name of the campaign's) and "
                       "hostname = \"<what `hostname` prints there>\"")
    if not isinstance(role, str) or not _ROLE.match(role):
        raise RunError(f"{_line_of(p, text, 'role')}: role = {role!r}: expected a role name such as \"server\" or "
                       "\"client\"")
    for k in ("clock_offset_s", "clock_offset_error_s"):
        v = meta.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            raise RunError(f"{_line_of(p, text, k)}: {k} = {v!r}: expected a number of seconds")
    _check_machine(p, text, meta)
    hostname = meta.get("hostname") or (meta.get("machine") or {}).get("hostname") or key
    return Host(key, str(hostname), role, meta, p if meta else None)


def check_host_names(run: Run) -> None:
    """Two hosts of one run whose hostnames are one name (``pg`` on two cloned standbys, or a ``host=``
    directory repeating the run's own hostname): the stored rows of a file are keyed by its host's name, so one
    host's samples would be lost under the other's. Refused, both hosts named (RunError, exit 2)."""
    seen: dict[str, Host] = {}
    for key, host in sorted(run.hosts.items()):
        if not host.hostname:
            continue
        name = str(host.hostname).split(".", 1)[0].lower()  # 'db1' and 'db1.example.org' are one name
        other = seen.setdefault(name, host)
        if other is host:
            continue
        where = lambda h: (key_line(h.toml_path, "hostname") if h.toml_path  # noqa: E731
                           else run.run_dir / (f"{HOST_DIR_PREFIX}{h.key}" if h.key else RUN_TOML))
        raise RunError(
            f"{where(other)} and {where(host)}: two hosts of run {run.run_id!r} "
            f"({_host_label(other)} and {_host_label(host)}) have one hostname {host.hostname!r}; the samples of "
            f"one would be stored under the other's. Give each machine its own hostname (what `hostname` prints "
            f"there, which its files print too) and measure again; nothing from this run was stored")


def _host_label(h: Host) -> str:
    return f"{HOST_DIR_PREFIX}{h.key}/" if h.key else "the run's own host"


def campaign_root(run_dir: Path, given: Path) -> Path:
    """The directory a run's id is relative to (see the module docstring). Both paths absolute, resolved."""
    for d in (run_dir, *run_dir.parents):
        if (d / CAMPAIGN_MARKER).is_file():
            return d
    root = given
    if run_dir.is_relative_to(given):
        while _SEGMENT.match(root.name) and root.parent != root:
            root = root.parent
    return root


def run_id_for(run_dir: Path, given: Path) -> str:
    root = campaign_root(run_dir, given)
    rel = run_dir.relative_to(root) if run_dir.is_relative_to(root) else Path(run_dir.name)
    return rel.as_posix() if str(rel) != "." else run_dir.name


def make_run(run_dir: Path, root: Path) -> Run:
    run_dir = run_dir.resolve()
    segs = path_factors(run_dir)
    factors: dict[str, str] = {}
    origin: dict[str, str] = {}
    for k, v in segs:
        if k in factors and factors[k] != v:
            raise RunError(f"{run_dir}: factor {k!r} appears twice in the path with different values")
        factors[k], origin[k] = v, "path"
    meta = load_run_toml(run_dir)
    toml_factors = dict(meta.get("factors", {}))
    for k, v in meta.items():
        if k not in METADATA_KEYS and not isinstance(v, (dict, list, datetime)):
            toml_factors.setdefault(k, v)
    for k, v in toml_factors.items():
        cv = canon(v)
        if k in factors and factors[k] != cv and factors[k] != path_safe(cv):
            raise RunError(
                f"{run_dir / RUN_TOML}: {k} = {cv!r} disagrees with the directory name ({k}={factors[k]})"
            )
        if k not in factors:
            factors[k], origin[k] = cv, "run.toml"
    run_id = run_id_for(run_dir, root.resolve())
    settings = campaign_settings(run_dir)
    default_role = settings.get("default_role")
    role = meta.get("role", default_role or DEFAULT_ROLE)
    if not isinstance(role, str) or not _ROLE.match(role):
        raise RunError(f"{run_dir / RUN_TOML}: role = {role!r}: expected a role name such as \"server\" or \"client\"")
    run = Run(run_id=run_id, run_dir=run_dir, factors=factors, factor_origin=origin, meta=meta,
              default_role=default_role, coverage_threshold=settings.get("coverage_threshold"))
    run.hosts[""] = Host("", run.hostname, role, meta, run_dir / RUN_TOML if meta else None)
    return run


@dataclass(frozen=True)
class Walked:
    root: Path           # the path given (a directory; a file's parent)
    path: Path           # the file, or a symbolic link that was not followed
    whole_dir: bool      # True when the file's whole directory was walked (its set of files is known)
    link: str | None = None  # why a symbolic link was skipped


def walk_files(paths: list[Path]) -> Iterator[Walked]:
    """Every regular file under the given paths, sorted, hidden files skipped.

    The tree is the boundary: symbolic links below a given path are never followed (a link to a
    file elsewhere would publish that file; a link to a directory could walk anything). They are
    yielded with ``link`` set so the ingest reports them as skipped."""
    for given in paths:
        if given.is_file():
            yield Walked(given.parent, given, False)
            continue
        if not given.exists():
            raise RunError(f"{given}: no such file or directory")
        root = given.resolve()
        found: list[Walked] = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            d = Path(dirpath)
            if BLOBS_MARKER in filenames:  # a store's own copies of raw files
                dirnames[:] = []
                continue
            dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
            for n in list(dirnames):
                if (d / n).is_symlink():
                    dirnames.remove(n)
                    found.append(Walked(root, d / n, True, _link_reason(d / n, root)))
            for n in filenames:
                if n.startswith("."):
                    continue
                p = d / n
                if p.is_symlink():
                    found.append(Walked(root, p, True, _link_reason(p, root)))
                elif p.is_file():
                    found.append(Walked(root, p, True))
        yield from sorted(found, key=lambda w: w.path)


def _link_reason(link: Path, root: Path) -> str:
    try:
        target = link.resolve()
    except (RuntimeError, OSError):  # a link that leads back to itself: reported as skipped like any other link
        return "symbolic link in a loop (not followed)"
    if target.is_relative_to(root):
        return "symbolic link (not followed; the target is ingested where it is)"
    return "symbolic link out of the tree (not followed)"
