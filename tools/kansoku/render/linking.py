"""Files hard-linked into a fresh site: a reused page from the current output, a raw file from the store's copy.

``link_raw`` checks each copy against its sha256 before linking it (a published raw file always matches the
hash on the sources page). A build links its raw files by :class:`RawLinks`: ``link_raw`` in a process of its
own (``python -m kansoku.render.linking``), on the other core, while the build's computation goes on: a thread
of the computation's would take turns with it for Python's interpreter lock. It starts at once on the last
build's list of files (a rebuild's list is mostly the same, and the reports' computation leaves the other core
idle), and once this build's list is known the difference is linked and unlinked. The module imports nothing
of kansoku's but its errors, so that process starts at once.
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


def link_raw(files: Iterable[RawFile], site: Path, verified: Path | None = None, keep_checked: bool = False,
             at_limit: set[str] | None = None, kept: bool = False) -> int:
    """Hard-link each raw file from the store's copy into the site, after checking the copy's sha256.
    A missing or altered copy stops the build: it names the file and says how to restore it.

    ``verified``: a JSON file remembering the copies already checked (path -> size, mtime, inode, sha256):
    a copy that has not changed since (same size, modification time and inode) is not read again, so a
    rebuild links its raw files without reading them; any other copy is read and checked. It then remembers the
    copies of ``files``; ``keep_checked``: those it remembered already as well (``files`` are the rest of a
    site's). Returns the number linked (``files`` is read once, as it comes); ``at_limit`` gets each copy that was
    copied, not linked, because it has as many links as its file system allows.

    ``kept``: ``site`` already holds a raw tree (a replaced output's, :class:`RawLinks`): a file there that is a
    link to its checked copy stays, any other is replaced, and the files ``files`` does not name are removed
    (with the folders they leave empty), so the tree ends as a fresh one would be."""
    memo: dict[str, list] = {}
    if verified is not None:
        try:
            memo = json.loads(verified.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            memo = {}
    seen: dict[str, list] = {}
    checked: dict[str, os.stat_result] = {}  # sha256 -> its copy's stat, once checked
    made: set[str] = set()
    present = _files_under(os.fspath(site), "raw", made) if kept else {}
    n = 0
    for f in files:
        src = os.fspath(f.copy)
        st = checked.get(f.sha256)
        if st is None:
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
            checked[f.sha256] = st
        target = os.path.join(site, f.target)
        there = present.pop(f.target, None)
        if there is not None:
            if there == (st.st_dev, st.st_ino):  # the kept tree's link to this very copy
                n += 1
                continue
            _remove(target)
        # another file system, or a copy at its links' limit: a copy of the verified bytes
        if link_or_copy(src, target, made) and at_limit is not None:
            at_limit.add(src)
        n += 1
    for rel in present:  # what the kept tree holds and ``files`` does not name
        _remove_with_folders(os.path.join(site, rel), os.fspath(site))
    if keep_checked:
        seen = {**memo, **seen}
    if verified is not None and seen != memo:
        verified.parent.mkdir(parents=True, exist_ok=True)
        tmp = verified.with_name(verified.name + f".tmp-{os.getpid()}")
        tmp.write_text(json.dumps(seen, sort_keys=True), encoding="utf-8")
        os.replace(tmp, verified)
    return n


def _files_under(site: str, top: str, folders: set[str]) -> dict[str, tuple[int, int]]:
    """Every entry but a folder under ``site/top`` ("/"-separated path below ``site`` -> its device and inode,
    not following a symbolic link); each folder's path into ``folders`` (known to exist)."""
    found: dict[str, tuple[int, int]] = {}
    stack = [top]
    while stack:
        rel = stack.pop()
        folder = os.path.join(site, rel)
        folders.add(folder)
        try:
            # an entry that is not a folder is on its folder's device, and its inode is in the listing: a stat
            # a folder, not one a file (a campaign's raw tree holds a few files a run)
            dev = os.stat(folder).st_dev
            with os.scandir(folder) as it:
                entries = list(it)
        except FileNotFoundError:
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                stack.append(path)
            else:
                found[path] = (dev, entry.inode())
    return found


def _remove(path: str) -> None:
    """What is at ``path`` (a file, a link, a folder), gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _remove_with_folders(path: str, root: str) -> None:
    """The file ``path`` unlinked, and its folders below ``root`` that it leaves empty."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    folder = os.path.dirname(path)
    while folder != root and folder.startswith(root + os.sep):
        try:
            os.rmdir(folder)
        except OSError:  # (not empty)
            return
        folder = os.path.dirname(folder)


def _sha256(path: Path | str) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def folder_names(folder: str, listed: dict[str, set[str] | None]) -> set[str] | None:
    """The names in ``folder`` (None: no such directory), read once into ``listed`` (a caller asking for
    thousands of files: a listing a folder, not a stat a file)."""
    if folder not in listed:
        try:
            listed[folder] = set(os.listdir(folder))
        except (FileNotFoundError, NotADirectoryError):
            listed[folder] = None
    return listed[folder]


def is_listed(base: str, rel: str, listed: dict[str, set[str] | None]) -> bool:
    """Whether the file ``rel`` (a "/"-separated path under ``base``) is there, by its folder's listing
    (:func:`folder_names`)."""
    cut = rel.rfind("/")
    names = folder_names(f"{base}/{rel[:cut]}" if cut >= 0 else base, listed)
    return names is not None and rel[cut + 1:] in names


def make_folder(target: Path | str, made: set[str] | None = None) -> None:
    """``target``'s folder made; ``made``: the folders known to exist (a caller writing thousands of files: each
    folder is made once, not asked for again per file)."""
    folder = os.path.dirname(target)
    if made is None or folder not in made:
        os.makedirs(folder, exist_ok=True)
        if made is not None:
            made.add(folder)


def link_or_copy(src: Path | str, target: Path | str, made: set[str] | None = None) -> bool:
    """``target`` (its folder made: :func:`make_folder`) as a hard link to ``src``, or a copy where a link cannot
    be made (another file system, a file system without links, too many links). True: copied because ``src``
    has as many links as its file system allows."""
    make_folder(target, made)
    try:
        os.link(src, target)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
        shutil.copyfile(src, target)
        return exc.errno == errno.EMLINK
    return False


def link_all(src: str, dest: str, rels: Iterable[str], made: set[str] | None = None) -> int:
    """Each of ``rels`` ("/"-separated paths relative to both) under ``dest`` as :func:`link_or_copy` makes it
    from the same path under ``src``; the number of files. A folder's files are linked through the two folders'
    descriptors: a name looked up in its folder, not two whole paths a file (thousands of run pages a build).
    A file the descriptors cannot link is left to :func:`link_or_copy` (a copy, or its error with both paths)."""
    by_folder: dict[str, list[str]] = {}
    for rel in rels:
        cut = rel.rfind("/")
        by_folder.setdefault(rel[:cut] if cut >= 0 else "", []).append(rel[cut + 1:])
    for folder, names in by_folder.items():
        src_dir, dest_dir = os.path.join(src, folder), os.path.join(dest, folder)
        make_folder(os.path.join(dest_dir, names[0]), made)
        fds: list[int] = []
        try:
            for d in (src_dir, dest_dir):
                fds.append(os.open(d, os.O_RDONLY | os.O_DIRECTORY))
        except OSError:
            pass
        try:
            for name in names:
                if len(fds) == 2:
                    try:
                        os.link(name, name, src_dir_fd=fds[0], dst_dir_fd=fds[1])
                        continue
                    except OSError:
                        pass
                link_or_copy(os.path.join(src_dir, name), os.path.join(dest_dir, name))
        finally:
            for fd in fds:
                os.close(fd)
    return sum(map(len, by_folder.values()))


LINK_NICENESS = 10


def write_plan(plan: Path, lines: list[str], verified: Path) -> None:
    """A list of files for :class:`RawLinking`: a line of JSON naming the verified copies' file, then one line a
    file (:func:`plan_line`); written aside and renamed into place (a process reading the last one keeps it)."""
    plan.parent.mkdir(parents=True, exist_ok=True)
    tmp = plan.with_name(plan.name + f".tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"verified": os.fspath(verified)}) + "\n")
        fh.writelines(line + "\n" for line in lines)
    os.replace(tmp, plan)


# json.dumps's own encoder of a str (ASCII, as json.dumps writes by default): a plan line is the JSON of three
# strs, made with it directly for the tens of thousands of a campaign's files (tests/test_build_publish.py
# holds it to json.dumps)
_json_str = json.encoder.encode_basestring_ascii


def plan_line(f: RawFile) -> str:
    """A file's line of a plan: ``json.dumps([sha256, target, copy])`` (JSON keeps a name with a tab or a newline
    whole)."""
    return f"[{_json_str(f.sha256)}, {_json_str(f.target)}, {_json_str(f.copy)}]"


def _plan_lines(plan: Path) -> list[str]:
    with open(plan, encoding="utf-8") as fh:
        next(fh, None)
        return [line.rstrip("\n") for line in fh]


class RawLinking:
    """``link_raw`` of the files of ``plan`` (:func:`write_plan`) into ``site`` started in a process of its own;
    :meth:`result` waits for it, and raises its error (a missing or altered copy) as the build's. The process
    reads the plan a line at a time: it holds no list of a campaign's files."""

    def __init__(self, plan: Path, site: Path, keep_checked: bool = False, kept: bool = False):
        package = os.fspath(Path(__file__).resolve().parents[2])  # (the folder that holds kansoku/)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package, os.environ.get("PYTHONPATH")]))}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "kansoku.render.linking", os.fspath(plan), os.fspath(site)]
            + (["--keep-checked"] if keep_checked else []) + (["--kept"] if kept else []),
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._done: tuple[int, str] | None = None
        self.at_limit: list[str] = []  # copies copied, not linked, at their file system's limit of links

    def wait(self) -> None:
        if self._done is None:
            out, err = self._proc.communicate()
            self._done = (self._proc.returncode, (err or out).decode("utf-8", "replace").strip())

    def stop(self) -> None:
        """Stopped where it is (the build failed: its directory is discarded)."""
        if self._done is None:
            self._proc.kill()
            self.wait()

    def ok(self) -> bool:
        """Whether it linked every file (waiting for it)."""
        self.wait()
        return self._done[0] == 0

    def result(self) -> int:
        """The files it linked; its error raised here."""
        self.wait()
        code, said = self._done
        if code == 0:
            got = json.loads(said)
            self.at_limit = got["at_limit"]
            return got["linked"]
        if code == -signal.SIGINT:  # (main leaves a Ctrl-C to the system's default: the process ends by it)
            raise KeyboardInterrupt
        if code == 2:
            raise KansokuError(said)
        raise KansokuError(f"linking the raw files into the site failed (exit {code}): {said[-2000:]}")


class RawLinks:
    """A build's raw files linked into its fresh directory ``site``. The last build's list (``cache_dir``: the
    build's cache) is linked from the start; :meth:`link` gives this build's: when it is the same, nothing more
    is done; else, once the first process is done, the files this build has not are unlinked and those the last
    build had not are linked by a second process (all of them, after the first one failed: a copy of a run since
    removed may be gone). :meth:`result` raises a process's error as the build's.

    A ``site`` that holds a raw tree already (a replaced output's, put there by ``publish.take_kept_raw``) is
    brought to the list rather than made afresh (``link_raw``'s ``kept``): its folders are not made again (a
    folder a run, which some file systems make far more slowly than they link a file). After a first process
    that failed, the tree it leaves is brought to the whole list the same way."""

    def __init__(self, site: Path, cache_dir: Path):
        self.site = site
        self.plan = cache_dir / "raw-links.json"
        self.verified = cache_dir / "verified-raw.json"
        self._last = cache_dir / "raw-links.last.json"
        self._early: RawLinking | None = None
        self._rest: RawLinking | None = None
        self._same = False
        self._kept = (site / "raw").is_dir()
        try:
            os.replace(self.plan, self._last)
        except FileNotFoundError:
            return
        self._early = RawLinking(self._last, site, kept=self._kept)

    def link(self, files: list[RawFile]) -> None:
        """This build's raw files (none: the plan is removed, and whatever the first process linked)."""
        lines = [plan_line(f) for f in files]
        if not lines:  # none published: whatever was linked or kept goes
            self.plan.unlink(missing_ok=True)
            if self._early is not None:
                self._early.stop()
            shutil.rmtree(self.site / "raw", ignore_errors=True)
            return
        write_plan(self.plan, lines, self.verified)
        if self._early is None:
            self._rest = RawLinking(self.plan, self.site, kept=self._kept)
            return
        last = _plan_lines(self._last)
        if last == lines:
            self._same = True
            return
        if not self._early.ok():  # (a copy since removed): the tree in no known state, brought to the list whole
            self._rest = RawLinking(self.plan, self.site, kept=True)
            return
        stays = set(last).intersection(lines)  # the tree is the last list: what this build has not goes
        for line in last:
            if line not in stays:
                _remove_with_folders(os.path.join(self.site, json.loads(line)[1]), os.fspath(self.site))
        missing = [x for x in lines if x not in stays]
        if missing:
            rest = self.plan.with_name("raw-links.rest.json")
            write_plan(rest, missing, self.verified)
            self._rest = RawLinking(rest, self.site, keep_checked=True)

    def wait(self) -> None:
        for proc in (self._early, self._rest):
            if proc is not None:
                proc.wait()

    def stop(self) -> None:
        for proc in (self._early, self._rest):
            if proc is not None:
                proc.stop()

    def result(self) -> list[str]:
        """Every file linked; a process's error raised here. Returns the copies that were copied, not linked,
        at their file system's limit of links (each build copies them again)."""
        done = [self._early] if self._same or (self._early is not None and self._early.ok()) else []
        done += [self._rest] if self._rest is not None else []
        for proc in done:
            proc.result()
        return sorted({copy for proc in done for copy in proc.at_limit})


def main(argv: list[str] | None = None) -> int:
    """``python -m kansoku.render.linking PLAN SITE [--keep-checked] [--kept]``: the files of PLAN
    (:func:`write_plan`) linked into SITE (``--kept``: SITE's raw tree brought to PLAN, :func:`link_raw`); prints
    how many, and the copies copied at their links' limit, as JSON. A missing or altered copy: its message,
    exit 2."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a Ctrl-C ends it at once (the build raises it)
    # behind the computation: a core it leaves idle (a full build's DuckDB statements take both)
    os.nice(LINK_NICENESS)
    args = argv if argv is not None else sys.argv[1:]
    site = Path(args[1])
    at_limit: set[str] = set()
    with open(args[0], encoding="utf-8") as lines:
        plan = json.loads(next(lines))
        try:
            n = link_raw((RawFile(*json.loads(line)) for line in lines), site, Path(plan["verified"]),
                         keep_checked="--keep-checked" in args[2:], at_limit=at_limit, kept="--kept" in args[2:])
        except KansokuError as exc:
            print(exc, file=sys.stderr)
            return 2
        except OSError as exc:  # (no space left, no permission: said as the system says it)
            print(f"{exc.filename or site}: {exc.strerror}", file=sys.stderr)
            return 2
    print(json.dumps({"linked": n, "at_limit": sorted(at_limit)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
