"""Publishing a build: one build at a time per output, a fresh directory swapped in at the end,
raw files linked from the store's content-addressed copies.

- ``output_lock``: an exclusive ``flock`` on ``.<name>.lock`` next to each directory a build writes
  (the output and the generated data). A second build stops at once (exit 4) or waits ``--wait``.
- ``fresh_output`` / ``swap_in``: Hugo writes into ``.<out>.new-<pid>`` next to the output; only a
  build that finished is swapped in (``renameat2(RENAME_EXCHANGE)`` where the kernel has it, else
  two renames), so a failed, killed or concurrent build never leaves a half site, and a failed
  build leaves the output as it was.
- ``plan_raw`` (and ``linking.link_raw``): the raw files of a report that publishes them are the store's copies
  (``blobs/<sha256[:2]>/<sha256>``, written by the ingest), hard-linked into the new site (copied
  when the output is on another file system), each checked against its sha256 first: a published
  file always matches the hash on the sources page, and nothing outside the store is published. A rebuild
  re-reads only the copies whose size, modification time or inode changed since they were last checked.
  The replaced output's raw tree, which no reader sees any more, is kept beside the output
  (``.<out>.raw-kept``) for the next build to bring to its list (``take_kept_raw``) instead of making a
  folder a run again.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator
from urllib.parse import quote

from kansoku.errors import KansokuError, StoreBusyError
from kansoku.interrupts import sigint_held
from kansoku.model import ComputedReport, RunInfo
from kansoku.render.linking import RawFile, make_folder


class BuildBusyError(StoreBusyError):
    """Another build writes the same output (exit 4, like a busy database)."""


def _lock_file(d: Path) -> Path:
    return d.parent / f".{d.name}.lock"


@contextmanager
def output_lock(dirs: list[Path], wait_s: float = 0.0,
                on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on every directory a build writes (sorted: two builds never deadlock)."""
    with ExitStack() as stack:
        for d in sorted({Path(d).resolve() for d in dirs}):
            stack.enter_context(_one_lock(d, wait_s, on_wait))
        yield


@contextmanager
def _one_lock(d: Path, wait_s: float, on_wait) -> Iterator[None]:
    d.parent.mkdir(parents=True, exist_ok=True)
    path = _lock_file(d)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                who = f"process {holder}" if holder.isdigit() else "another process"
                if time.monotonic() >= deadline:
                    raise BuildBusyError(
                        f"{d} is being written by another build ({who}); nothing was changed. "
                        f"Try again when it has finished, or pass --wait SECONDS.") from None
                if not announced and on_wait:
                    on_wait(f"{d} is being written by another build ({who}); waiting up to {wait_s:.0f} s ...")
                    announced = True
                time.sleep(0.25)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def fresh_output(out: Path) -> Path:
    """An empty directory next to ``out`` for this build. Leftovers of killed builds are removed (the
    caller holds the output lock, so no other build is using them); an output a killed build had
    moved aside but not replaced is put back first."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    olds = sorted(out.parent.glob(f".{out.name}.old-*"))
    if not out.exists() and olds:
        os.rename(olds.pop(), out)
    for p in olds + sorted(out.parent.glob(f".{out.name}.new-*")):
        shutil.rmtree(p, ignore_errors=True)
    for p in sorted(out.parent.glob(f".{out.name}.trash-*")):  # a delete that did not finish (killed, reboot)
        _delete_in_background(p)
    new = out.parent / f".{out.name}.new-{os.getpid()}"
    new.mkdir()
    return new


def discard(new: Path) -> None:
    shutil.rmtree(new, ignore_errors=True)


def staging_for(new: Path) -> Path:
    """A directory beside the fresh output ``new`` where files are linked while Hugo writes ``new`` (Hugo
    cleans its destination of files it did not write); named so that :func:`fresh_output` removes it as a
    leftover of a killed build."""
    staging = new.with_name(new.name + "-links")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    return staging


def _kept_raw(out: Path) -> Path:
    return out.parent / f".{out.name}.raw-kept"


def take_kept_raw(out: Path, staging: Path) -> bool:
    """The raw tree of the output this one replaced (:func:`swap_in`), if kept, moved into the fresh
    ``staging`` (render/linking.py RawLinks brings it to this build's list): whether there was one."""
    kept = _kept_raw(Path(out))
    if kept.is_symlink() or not kept.is_dir():  # (none kept: a first build, one killed)
        return False
    try:
        os.rename(kept, Path(staging) / "raw")
    except OSError:  # (another file system)
        return False
    return True


def move_files(src: Path, dest: Path, rels: list[str]) -> int:
    """Move the files ``rels`` (paths relative to both) from ``src`` into ``dest``, their folders made as
    needed; the number moved. A file missing in ``src`` or already in ``dest`` is a build error."""
    made: set[str] = set()
    for rel in rels:
        target = os.path.join(dest, rel)
        make_folder(target, made)
        if os.path.lexists(target):
            raise KansokuError(f"{target}: written twice (two writers of one page)")
        try:
            os.rename(os.path.join(src, rel), target)
        except FileNotFoundError:
            raise KansokuError(f"{rel}: not written by the Hugo run that was to render it") from None
    return len(rels)


def merge_into(src: Path, dest: Path) -> None:
    """Move everything under ``src`` into ``dest`` (``src`` is removed): an entry ``dest`` lacks is moved whole
    (one rename for a whole folder of pages); in a folder both hold, the side with fewer entries is moved
    into the other's. A file both hold is a build error (two writers of one page)."""
    src, dest = os.fspath(src), os.fspath(dest)
    if len(os.listdir(src)) > len(os.listdir(dest)):
        src, dest = dest, src  # the larger folder stays, then takes ``dest``'s place
        _merge_entries(src, dest)
        os.rmdir(src)
        os.rename(dest, src)
        return
    _merge_entries(src, dest)
    os.rmdir(src)


def _merge_entries(src: str, dest: str) -> None:
    for name in os.listdir(src):
        a, b = os.path.join(src, name), os.path.join(dest, name)
        if not os.path.lexists(b):
            os.rename(a, b)
        elif os.path.isdir(a) and not os.path.islink(a) and os.path.isdir(b) and not os.path.islink(b):
            merge_into(a, b)
        else:
            raise KansokuError(f"{b}: written twice by one build (by Hugo and as a linked file)")


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2). False when the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(new: Path, out: Path) -> None:
    """Make the finished build ``new`` the output; the previous output is removed afterwards.
    A Ctrl-C during the swap is raised once the swap is done (never between two renames)."""
    with sigint_held() as held:
        _swap(new, out)
    if held:
        raise KeyboardInterrupt


def _swap(new: Path, out: Path) -> None:
    out = Path(out)
    if not out.exists():
        os.rename(new, out)
        return
    if _exchange(new, out):
        _discard_replaced(new, out)  # ``new`` is now the previous output
        return
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    os.rename(out, old)
    os.rename(new, out)
    _discard_replaced(old, out)


def _discard_replaced(previous: Path, out: Path) -> None:
    """The replaced output is deleted without the build waiting for it (thousands of run pages take seconds
    to unlink): renamed ``.NAME.trash-*`` (never taken for an output to restore, see :func:`fresh_output`,
    which also finishes a delete that was interrupted), then removed by a detached ``rm -rf``. Its raw tree is
    kept for the next build first (:func:`take_kept_raw`)."""
    trash = out.parent / f".{out.name}.trash-{os.getpid()}-{time.monotonic_ns()}"
    kept = _kept_raw(out)
    if os.path.lexists(kept):  # a kept tree no build took (one that published no raw file): the newer replaces it
        os.rename(kept, trash.with_name(trash.name + "-raw"))
        _delete_in_background(trash.with_name(trash.name + "-raw"))
    try:
        os.rename(previous / "raw", kept)  # (its raw files as the build before this one linked them)
    except OSError:  # (none published)
        pass
    os.rename(previous, trash)
    _delete_in_background(trash)


def _delete_in_background(path: Path) -> None:
    rm = shutil.which("rm")
    if rm is None:
        shutil.rmtree(path, ignore_errors=True)
        return
    # at the lowest CPU and disk priority: the next build, or the reader's server, goes first
    prefix = (["nice", "-n", "19"] if shutil.which("nice") else []) + \
        (["ionice", "-c", "3"] if shutil.which("ionice") else [])
    subprocess.Popen(prefix + [rm, "-rf", "--", str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)  # outlives the build; Ctrl-C spares it


def raw_dir(report_id: str) -> str:
    """Where a report's raw files are published, below the site root: ``<raw_dir>/<run anchor>/<file>``."""
    return f"raw/{report_id}"


MANIFEST = "SHA256SUMS"  # the report's raw files and their digests, in raw_dir beside them


def manifest(runs: dict[str, dict]) -> str:
    """The raw files of a report's runs (its page-ready JSON's ``runs``: anchor, sources, run.toml) as
    ``sha256sum`` prints them: one line per file, its path below :func:`raw_dir`, in path order; run there,
    ``sha256sum -c SHA256SUMS`` checks the published copies. Empty when no run keeps a file."""
    return _manifest((r["anchor"], [(s["file"], s.get("sha256")) for s in r.get("sources", ())],
                      r.get("run_toml_sha256")) for r in runs.values())


def records_manifest(runs: dict[str, RunInfo]) -> str:
    """:func:`manifest` of a report's run records as they are (``ComputedReport.runs``), not encoded first: a
    campaign's site writes it from thousands of records of which only a new run's are encoded again."""
    return _manifest((r.anchor, [(s.file, s.sha256) for s in r.sources], r.run_toml_sha256) for r in runs.values())


def _manifest(runs: Iterable[tuple[str, list[tuple[str, str | None]], str | None]]) -> str:
    """The manifest of (anchor, [(file, sha256)], run.toml's sha256) per run."""
    lines = []
    for anchor, sources, toml_sha in runs:
        files = {name: sha for name, sha in sources if sha}
        if toml_sha:
            files.setdefault("run.toml", toml_sha)
        lines += [(f"{anchor}/{name}", sha) for name, sha in files.items()]
    out = []
    for path, sha in sorted(lines):
        if "\\" in path or "\n" in path:  # sha256sum's escaped form: a backslash first, then the digest
            out.append("\\" + sha + "  " + path.replace("\\", "\\\\").replace("\n", "\\n"))
        else:
            out.append(f"{sha}  {path}")
    return "".join(line + "\n" for line in out)


def manifest_digest(text: str) -> str:
    """The digest of a manifest as a whole: what ``sha256sum SHA256SUMS`` prints."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_raw(rep: ComputedReport) -> list[RawFile]:
    """Give each kept raw file (and run.toml) of the report's runs its URL; the files to link after Hugo.
    Only what the store keeps is published: nothing is read from where the runs were ingested."""
    out: list[RawFile] = []
    quoted: dict[str, str] = {}  # a file name as a URL's last part: a campaign's runs share a few names
    for run in rep.runs.values():
        base = f"{raw_dir(rep.id)}/{run.anchor}"
        url = "/" + quote(base)
        for s in run.sources:
            if s.path is not None and s.sha256:
                out.append(RawFile(s.sha256, f"{base}/{s.file}", s.path))
                name = quoted.get(s.file)
                if name is None:
                    name = quoted[s.file] = quote(s.file)
                s.url = f"{url}/{name}"
        if run.run_toml is not None and run.run_toml_sha256:  # the run's own description
            out.append(RawFile(run.run_toml_sha256, f"{base}/run.toml", run.run_toml))
            run.run_toml_url = f"{url}/run.toml"
    return out
