"""CPU profiles during a run: ``perf record -g`` on the postmaster's processes (the backends it forks
during the run included: perf's counters are inherited) or system-wide, at a stated frequency, stopped with the
monitors; then ``perf script | gzip`` into the run as ``perf-script.txt.gz`` (ingest reads it, docs/formats.md
§9.1) and the binary ``perf.data`` removed (it is only readable with the same binaries and kernel).

The event: ``cycles`` when the machine has hardware counters, else ``cpu-clock`` (virtual machines and most
containers have none); ``--perf-event`` chooses. Before the run a one-shot probe records ``true`` with the same
options, so a machine where perf cannot record (``kernel.perf_event_paranoid`` above 1 for a non-root user, a
container without ``CAP_PERFMON`` or a seccomp profile that refuses ``perf_event_open``) stops the run with
perf's own words and what to change, before anything is measured.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kansoku.collect import lifetime
from kansoku.collect.processes import stop_group

OUTPUT = "perf-script.txt.gz"
DATA = "perf.data"


class ProfileError(Exception):
    """perf cannot profile here: the message says why and what to change."""


@dataclass
class ProfileRequest:
    frequency_hz: int = 99
    pid: int | None = None  # the postmaster (its processes and their children); None: system-wide
    pidfile: Path | None = None  # $PGDATA/postmaster.pid: the pid read from its first line when the run starts
    system_wide: bool = False
    event: str | None = None  # default: cycles when available, else cpu-clock

    def target(self) -> list[str]:
        if self.system_wide:
            return ["-a"]
        pid = self.pid
        if pid is None and self.pidfile is not None:
            try:
                pid = int(self.pidfile.read_text().split()[0])
            except (OSError, ValueError, IndexError) as exc:
                raise ProfileError(f"{self.pidfile}: cannot read a PID from it ({exc})") from None
        if pid is None:
            raise ProfileError("perf: give a PID (--perf-pid, --perf-pidfile) or --perf-system-wide")
        if not Path(f"/proc/{pid}").exists():
            raise ProfileError(f"perf: no process {pid} to profile (is the server running?)")
        # perf -p follows the processes forked after it attached (its counters are inherited), not the
        # children that already run (checkpointer, walwriter, …): they are named too
        return ["-p", ",".join(str(p) for p in [pid, *children(pid)])]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == str(pid):
            out.append(int(stat.parent.name))
    return sorted(out)


def _paranoid() -> str | None:
    try:
        return Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
    except OSError:
        return None


def probe(event: str | None, frequency_hz: int) -> str:
    """The event to record (``event`` or the best available), after checking that perf can record here."""
    if shutil.which("perf") is None:
        raise ProfileError("perf not found in PATH (Debian: apt-get install linux-perf)")
    if frequency_hz <= 0:
        raise ProfileError(f"perf: the sampling frequency must be a positive number of Hz, not {frequency_hz}")
    candidates = candidate_events(event)
    last = ""
    with lifetime.TempDir("kansoku-perf-") as tmp:
        for ev in candidates:
            try:
                proc = subprocess.run(["perf", "record", "-q", "-g", "-F", str(frequency_hz), "-e", ev,
                                       "-o", str(Path(tmp) / "probe.data"), "--", "true"],
                                      capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ProfileError(f"perf record could not be run: {exc}") from None
            if proc.returncode == 0:
                # perf falls back from a hardware event it cannot count to cpu-clock without failing: the
                # event it really recorded is the one the run states
                ls = subprocess.run(["perf", "evlist", "-i", str(Path(tmp) / "probe.data")], capture_output=True,
                                    timeout=30, stdin=subprocess.DEVNULL, text=True)
                real = ls.stdout.strip().split("\n")[0].split(":")[0].strip() if ls.returncode == 0 else ""
                return real or ev
            last = " ".join(proc.stderr.decode(errors="replace").split())[:400]
    raise ProfileError(f"perf cannot record on this machine (event {', '.join(candidates)}): {last or 'no output'}; "
                       f"{paranoid_hint(_paranoid())}")


def paranoid_hint(paranoid: str | None) -> str:
    """What to change when perf cannot record (here, or on another host: collect/hosts.py)."""
    return (f"kernel.perf_event_paranoid is {paranoid}: as a non-root user perf needs 1 or less "
            "(sysctl kernel.perf_event_paranoid=1), or CAP_PERFMON; in a container, perf_event_open must be "
            "allowed (docker run --cap-add PERFMON / a seccomp profile that permits it)")


def candidate_events(event: str | None) -> list[str]:
    """The events to try, best first: the one asked for, else cycles, then cpu-clock."""
    return [event] if event else ["cycles", "cpu-clock"]


@dataclass
class Profiler:
    request: ProfileRequest
    event: str = ""
    argv: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    error: str | None = None
    stop_signal: str = ""

    @classmethod
    def prepare(cls, request: ProfileRequest) -> "Profiler":
        """Probe perf and build the command (raises ProfileError before the run starts)."""
        event = probe(request.event, request.frequency_hz)
        argv = ["perf", "record", "-g", "-F", str(request.frequency_hz), "-e", event, *request.target(),
                "-o", DATA]
        return cls(request, event, argv)

    def commands(self) -> dict[str, Any]:
        return {"perf_record": shlex.join(self.argv) + " 2> perf-record.log",
                "perf_script": f"perf script -i {DATA} | gzip > {OUTPUT}",
                "perf_frequency_hz": self.request.frequency_hz, "perf_event": self.event,
                "perf_target": "system-wide" if self.request.system_wide else "postmaster and its processes"}

    def start(self, run_dir: Path, lock: lifetime.RunLock | None = None) -> None:
        err = open(run_dir / "perf-record.log", "wb")
        try:
            self.proc = subprocess.Popen(self.argv, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                         **lifetime.child(lock=lock))
        except OSError as exc:
            self.error = f"perf record: {exc}"
        finally:
            err.close()
        self._wait_attached()

    def _wait_attached(self, timeout: float = 10.0) -> None:
        """Wait until perf has opened its events (perf_event file descriptors), so that the benchmark's
        first connections are not forked before perf follows the postmaster."""
        if self.proc is None:
            return
        deadline = time.monotonic() + timeout
        fd_dir = Path(f"/proc/{self.proc.pid}/fd")
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if any("perf_event" in os.readlink(fd) for fd in fd_dir.iterdir()):
                    return
            except OSError:
                pass
            time.sleep(0.02)

    def stop(self, run_dir: Path, lock: lifetime.RunLock | None = None) -> list[str]:
        """Stop perf record (SIGINT: it writes its data and exits), then write perf script's output, gzip-compressed.
        Returns the errors (empty when the profile is in the run)."""
        if self.proc is None:
            self.stop_signal = "not-started"
            return [self.error or "perf record was not started"]
        if self.proc.poll() is None:
            self.stop_signal = stop_group(self.proc, ((signal.SIGINT, 30), (signal.SIGTERM, 5), (signal.SIGKILL, 5))) or self.stop_signal
        else:
            self.stop_signal = f"exited({self.proc.returncode})"
        lifetime.ended(self.proc)
        data = run_dir / DATA
        if not data.exists():
            log = (run_dir / "perf-record.log").read_text(errors="replace") if (run_dir / "perf-record.log").exists() else ""
            return [f"perf record wrote no {DATA}: " + " ".join(log.split())[:300]]
        return self.script(run_dir, lock)

    def script(self, run_dir: Path, lock: lifetime.RunLock | None = None) -> list[str]:
        out = run_dir / OUTPUT
        script = gz = None
        try:
            with open(out, "wb") as fh, tempfile.TemporaryFile() as err:
                # stopped by collect's lifeline if collect dies while they write
                script = subprocess.Popen(["perf", "script", "-i", DATA], cwd=run_dir, stdout=subprocess.PIPE,
                                          stderr=err, stdin=subprocess.DEVNULL, **lifetime.child(lock=lock))
                gz = subprocess.Popen(["gzip", "-c"], stdin=script.stdout, stdout=fh, stderr=err,
                                      **lifetime.child(lock=lock))
                script.stdout.close()
                gz.wait(timeout=1800)
                script.wait(timeout=60)
                err.seek(0)
                messages = err.read()
        except (OSError, subprocess.TimeoutExpired) as exc:
            for p in (script, gz):
                if p is not None:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    p.wait()
            out.unlink(missing_ok=True)
            return [f"perf script: {exc}"]
        finally:
            lifetime.ended(script)
            lifetime.ended(gz)
        if script.returncode != 0 or gz.returncode != 0:
            out.unlink(missing_ok=True)
            return [f"perf script exited {script.returncode}, gzip {gz.returncode}: "
                    + " ".join(messages.decode(errors="replace").split())[:300]]
        (run_dir / DATA).unlink(missing_ok=True)
        return []
