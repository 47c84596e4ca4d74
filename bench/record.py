"""Where a bench part's figures go: one JSON file a run, under bench/results/<date>-<machine>/.

Every part of bench/ calls `record()` once at its end. A file holds the part's name, the command as typed, the
revision, the machine, the load around the run, each figure with its unit and target, and the part's raw
repetitions, so that docs/performance.md can be written from these files alone.

    from record import Figure, record
    record("txlog", [Figure("ingest / read_csv, CPU", 1.18, "x", target="<= 1.2", met=True)], raw=rows)
"""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
RESULTS = HERE / "bench" / "results"


@dataclass(frozen=True)
class Figure:
    """One measured figure: what it is, its value and unit, the target it is held to and whether it met it."""

    name: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    reference: str = ""  # what it was measured against, when it is a ratio or paired
    extra: dict = field(default_factory=dict)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return re.sub(r"\s+", " ", line.split(":", 1)[1]).strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict:
    return {"cpus": os.cpu_count(), "cpu_model": cpu_model(), "kernel": platform.release(),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)}


def machine_slug() -> str:
    words = re.sub(r"\(r\)|\(tm\)|cpu|processor|@.*|\d+-core", "", cpu_model().lower())
    words = "-".join(w for w in re.split(r"[^a-z0-9]+", words) if w)[:32].strip("-")
    return f"{os.cpu_count()}cpu-{words or 'unknown'}"


def revision() -> str:
    p = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


PROBE_ITERATIONS = 2_000_000


def probe_cpu_s() -> float:
    """CPU seconds of a fixed piece of pure Python (a loop of PROBE_ITERATIONS additions): how fast this machine
    runs one core now. A shared machine's speed drifts from day to day beyond what its load average tells (a
    neighbour's work on the same host); a figure is comparable with another taken at a similar probe."""
    t0 = time.process_time()
    total = 0
    for i in range(PROBE_ITERATIONS):
        total += i
    return round(time.process_time() - t0, 3)


PROBE_FOLDERS = 1000


def probe_folder_us(where: Path) -> float:
    """CPU microseconds (user + sys) to make one folder under ``where``: ``PROBE_FOLDERS`` made in a fresh one,
    then removed. A build from scratch makes a folder for each run's raw files, and one file system can make
    folders far more slowly in one place than in another (an ext4 block group nearly full), which neither the
    load nor the CPU probe shows."""
    top = Path(tempfile.mkdtemp(prefix=".kansoku-probe-", dir=where))
    try:
        t0 = time.process_time()
        for i in range(PROBE_FOLDERS):
            os.mkdir(top / str(i))
        return round((time.process_time() - t0) / PROBE_FOLDERS * 1e6, 1)
    finally:
        shutil.rmtree(top, ignore_errors=True)


class Load:
    """The load average, the CPU probe (``probe_cpu_s``) and the folder probe (``probe_folder_us``, under
    ``where``: the part's working directory, or its nearest existing parent) at the start of a part and now: a
    figure is comparable only under a similar load, on a machine as fast."""

    def __init__(self, where: Path | None = None) -> None:
        where = Path(where or tempfile.gettempdir()).resolve()
        while not where.is_dir():
            where = where.parent
        self.where = where
        self.before = round(os.getloadavg()[0], 2)
        self.probe_before = probe_cpu_s()
        self.folder_before = probe_folder_us(where)
        self.started = time.time()

    def as_dict(self) -> dict:
        return {"before": self.before, "after": round(os.getloadavg()[0], 2),
                "probe_cpu_s": [self.probe_before, probe_cpu_s()],
                "probe_folder_us": [self.folder_before, probe_folder_us(self.where)], "probe_dir": str(self.where)}


def children_cpu() -> float:
    """User + sys CPU seconds of every child waited for so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def record(part: str, figures: list[Figure], *, raw: object = None, load: Load | None = None,
           argv: list[str] | None = None, results: Path = RESULTS) -> Path:
    """Write one run of a part and return the file written; prints where it went."""
    now = datetime.now(timezone.utc)
    out = {
        "part": part,
        "date": now.isoformat(timespec="seconds"),
        "command": " ".join(["bench/" + Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "revision": revision(),
        "machine": machine(),
        "load": load.as_dict() if load else {"after": round(os.getloadavg()[0], 2)},
        "figures": [asdict(f) for f in figures],
        "raw": raw,
    }
    folder = results / f"{now:%Y-%m-%d}-{machine_slug()}"
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / f"{part}-{now:%H%M%S}.json"
    dest.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        shown = dest.relative_to(HERE)
    except ValueError:
        shown = dest
    print(f"results -> {shown}")
    return dest
