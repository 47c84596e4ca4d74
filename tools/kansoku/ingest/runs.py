"""Runs: directories of raw files, and their factors.

A run's factors come from ``key=value`` path segments (hive style,
``study=scaleup/workload=read/clients=32/rep=2``), from an optional
``run.toml`` in the run directory, and from the files themselves (pgbench
prints clients, threads, duration). Conflicts between them are errors.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from kansoku.errors import RunError

RUN_TOML = "run.toml"
_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(.+)$")

# Top-level run.toml keys that describe the run but are not factors.
METADATA_KEYS = {
    "start", "end", "collectors_start", "collectors_stop", "hostname", "notes", "note",
    "pgbench_exit_code", "exit_code", "status", "status_note", "logging", "duration_s",
}
# Facts a file may state about its run, and the factor names they must agree with.
FACT_FACTORS = {"clients": "clients", "threads": "threads", "duration_s": "duration_s"}


@dataclass
class Run:
    run_id: str
    run_dir: Path
    factors: dict[str, str]
    factor_origin: dict[str, str]
    meta: dict[str, Any] = field(default_factory=dict)  # run.toml, verbatim

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


def canon(v: Any) -> str:
    """Canonical string for a factor value: 2 and '2' and 2.0 agree."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


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


def load_run_toml(run_dir: Path) -> dict[str, Any]:
    p = run_dir / RUN_TOML
    if not p.is_file():
        return {}
    try:
        with open(p, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise RunError(f"{p}: not valid TOML: {exc}") from None


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
    if segs:
        run_id = "/".join(f"{k}={v}" for k, v in segs)
    else:
        try:
            rel = run_dir.relative_to(root.resolve())
        except ValueError:
            rel = Path(run_dir.name)
        run_id = rel.as_posix() if str(rel) != "." else run_dir.name
    return Run(run_id=run_id, run_dir=run_dir, factors=factors, factor_origin=origin, meta=meta)


def walk_files(paths: list[Path]) -> Iterator[tuple[Path, Path]]:
    """Yield (root, file) for every regular file under the given paths, sorted, hidden files skipped."""
    for root in paths:
        if root.is_file():
            yield root.parent, root
            continue
        if not root.exists():
            raise RunError(f"{root}: no such file or directory")
        for p in sorted(root.rglob("*")):
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts):
                yield root, p
