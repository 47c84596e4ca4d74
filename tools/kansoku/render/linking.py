"""Files hard-linked into a fresh site: a reused page from the current output, a raw file from the store's copy.

``link_raw`` checks each copy against its sha256 before linking it (a published raw file always matches the
hash on the sources page). A build links its raw files by :class:`RawLinking`: ``link_raw`` in a process of its
own (``python -m kansoku.render.linking``), on the other core, while the build's computation goes on: a thread
of the computation's would take turns with it for Python's interpreter lock. The module imports nothing of
kansoku's but its errors, so that process starts at once.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from kansoku.errors import KansokuError


@dataclass(frozen=True)
class RawFile:
    sha256: str
    target: str  # path below the site root, e.g. raw/<report>/<run anchor>/<file>
    copy: str    # the store's kept copy of these bytes (store/db.py blob_file)


def link_raw(files: Iterable[RawFile], site: Path, verified: Path | None = None) -> int:
    """Hard-link each raw file from the store's copy into the site, after checking the copy's sha256.
    A missing or altered copy stops the build: it names the file and says how to restore it.

    ``verified``: a JSON file remembering the copies already checked (path -> size, mtime, inode, sha256):
    a copy that has not changed since (same size, modification time and inode) is not read again, so a
    rebuild links its raw files without reading them; any other copy is read and checked. Returns the number
    linked (``files`` is read once, as it comes)."""
    memo: dict[str, list] = {}
    if verified is not None:
        try:
            memo = json.loads(verified.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            memo = {}
    seen: dict[str, list] = {}
    checked: set[str] = set()
    made: set[str] = set()
    n = 0
    for f in files:
        src = os.fspath(f.copy)
        if f.sha256 not in checked:
            try:
                st = os.stat(src)
            except FileNotFoundError:
                st = None
            if st is None or not stat.S_ISREG(st.st_mode):
                raise KansokuError(f"{src}: the stored copy of {f.target} is missing; ingest its run again "
                                   f"(tools/ingest) to restore it")
            stamp = [st.st_size, st.st_mtime_ns, st.st_ino, f.sha256]
            known = memo.get(src)
            if known != stamp:
                if _sha256(src) != f.sha256:
                    raise KansokuError(f"{src}: the stored copy of {f.target} no longer matches its sha256; "
                                       f"remove it and ingest its run again (tools/ingest)")
            seen[src] = stamp if known is None else known  # (equal: the one already held)
            checked.add(f.sha256)
        link_or_copy(src, os.path.join(site, f.target), made)  # another file system: a copy of the verified bytes
        n += 1
    if verified is not None and seen != memo:
        verified.parent.mkdir(parents=True, exist_ok=True)
        tmp = verified.with_name(verified.name + f".tmp-{os.getpid()}")
        tmp.write_text(json.dumps(seen, sort_keys=True), encoding="utf-8")
        os.replace(tmp, verified)
    return n


def _sha256(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def make_folder(target: Path | str, made: set[str] | None = None) -> None:
    """``target``'s folder made; ``made``: the folders known to exist (a caller writing thousands of files: each
    folder is made once, not asked for again per file)."""
    folder = os.path.dirname(target)
    if made is None or folder not in made:
        os.makedirs(folder, exist_ok=True)
        if made is not None:
            made.add(folder)


def link_or_copy(src: Path | str, target: Path | str, made: set[str] | None = None) -> None:
    """``target`` (its folder made: :func:`make_folder`) as a hard link to ``src``, or a copy where a link cannot
    be made (another file system, a file system without links, too many links)."""
    make_folder(target, made)
    try:
        os.link(src, target)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
        shutil.copyfile(src, target)


LINK_NICENESS = 10


class RawLinking:
    """``link_raw(files, site, verified)`` started in a process of its own; :meth:`result` waits for it, and
    raises its error (a missing or altered copy) as the build's. ``plan``: a file the list is handed over in
    (the build's cache directory), rewritten each time: a line of JSON with the site and the verified copies'
    file, then one line a file (read one at a time: the process holds no list of a campaign's files)."""

    def __init__(self, files: list[RawFile], site: Path, verified: Path, plan: Path):
        plan.parent.mkdir(parents=True, exist_ok=True)
        with open(plan, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"site": os.fspath(site), "verified": os.fspath(verified)}) + "\n")
            fh.writelines(json.dumps([f.sha256, f.target, f.copy]) + "\n" for f in files)
        package = os.fspath(Path(__file__).resolve().parents[2])  # (the folder that holds kansoku/)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package, os.environ.get("PYTHONPATH")]))}
        self._proc = subprocess.Popen([sys.executable, "-m", "kansoku.render.linking", os.fspath(plan)], env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._done: tuple[int, str] | None = None

    def wait(self) -> None:
        if self._done is None:
            out, err = self._proc.communicate()
            self._done = (self._proc.returncode, (err or out).decode("utf-8", "replace").strip())

    def stop(self) -> None:
        """Stopped where it is (the build failed: its directory is discarded)."""
        if self._done is None:
            self._proc.kill()
            self.wait()

    def result(self) -> int:
        """The files it linked; its error raised here."""
        self.wait()
        code, said = self._done
        if code == 0:
            return int(said)
        if code == -signal.SIGINT:  # (main leaves a Ctrl-C to the system's default: the process ends by it)
            raise KeyboardInterrupt
        if code == 2:
            raise KansokuError(said)
        raise KansokuError(f"linking the raw files into the site failed (exit {code}): {said[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    """``python -m kansoku.render.linking PLAN``: the files of PLAN (:class:`RawLinking`) linked; prints how many.
    A missing or altered copy: its message, exit 2."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a Ctrl-C ends it at once (the build raises it)
    # behind the computation: a core it leaves idle (a full build's DuckDB statements take both)
    os.nice(LINK_NICENESS)
    with open((argv or sys.argv[1:])[0], encoding="utf-8") as lines:
        plan = json.loads(next(lines))
        try:
            n = link_raw((RawFile(*json.loads(line)) for line in lines), Path(plan["site"]), Path(plan["verified"]))
        except KansokuError as exc:
            print(exc, file=sys.stderr)
            return 2
        except OSError as exc:  # (no space left, no permission: said as the system says it)
            print(f"{exc.filename or plan['site']}: {exc.strerror}", file=sys.stderr)
            return 2
    print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
