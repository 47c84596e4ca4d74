"""``kansoku serve``: a live preview of a site while its report is written.

The site's data is computed once (``build.write_site_data``: the build without its final Hugo run), then Hugo's
own server (``hugo server``, rendering to memory, with livereload) serves it on 127.0.0.1 from the same
configuration a build uses (``render/hugo.py hugo_config``). Hugo watches the prose and the generated data
itself: a prose edit under ``content/`` is re-rendered by its fast partial rebuild and the browser reloads.
kansoku watches what Hugo cannot read: the specs (``data/reports/*.toml``), the site's ``config.toml`` and the
store, and of the prose what it computes from (a page's front matter, its shortcodes: a ``val``'s number, a
page a language lacks). On such a change it checks and recomputes the data (only what changed is written,
report/cache.py), and Hugo picks up the files that changed. A store another process still writes (an
ingest) is waited for; a problem (a bad spec) is printed and the last good data stays served; Hugo shows its
own errors (a template's) in the browser. Ctrl-C stops Hugo too."""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from kansoku import shortcodes
from kansoku.app.build import BuildResult, release_memory, write_site_data
from kansoku.app.preflight import preflight
from kansoku.errors import KansokuError
from kansoku.front_matter import parse_front_matter
from kansoku.render import hugo, publish
from kansoku.store.db import BUILD_MEMORY_LIMIT
from kansoku.words import LANGS

# how long a burst of file events (an editor's save, an ingest's writes) is let settle before recomputing
DEBOUNCE_MS = 300
# how long a recomputation after a change waits for another process writing the store (an ingest of the runs
# the writer wants to see: the change the server saw is that ingest's), saying it waits, before giving up
WRITER_WAIT_S = 600.0
# how long Hugo is given to stop after SIGTERM before it is killed
STOP_S = 10.0


def free_port() -> int:
    """A port no one listens on now (for --port 0: Hugo's server takes a number)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In Hugo's process before it starts: Linux ends it when kansoku ends, however kansoku ends (kill -9)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux's libc: Ctrl-C and SIGTERM still stop it (LiveSite.stop)
        pass


class LiveSite:
    """One site served live: its data recomputed on a change of what kansoku reads, Hugo's server on it."""

    def __init__(self, root: Path, db: Path, specs: Path, content: Path, generated: Path, config: Path,
                 port: int, wait_s: float = 0.0, memory_limit: str = BUILD_MEMORY_LIMIT, quiet: bool = False,
                 strict: bool = False, out=print, err=print, warn=None, on_wait=None, progress=None):
        self.root, self.db, self.specs, self.content = root, db, specs, content
        self.generated, self.config, self.port = generated, config, port
        self.store_files = (db, db.with_name(db.name + ".wal"))  # the store and its write-ahead log
        self.wait_s, self.memory_limit, self.quiet, self.strict = wait_s, memory_limit, quiet, strict
        self.out, self.err, self.warn, self.on_wait = out, err, warn, on_wait
        self.say = progress or (lambda message: None)
        self.hugo: subprocess.Popen | None = None
        self._relay: threading.Thread | None = None
        self._prose: dict[Path, tuple | None] = {}  # each prose page's prose_inputs
        self._store_read: tuple | None = None  # the store's files as the last computation left them (store_state)

    # -- the data ---------------------------------------------------------------------------------------

    def compute(self, wait_s: float | None = None) -> BuildResult:
        """Check the specs and prose, recompute the reports and write the generated data and Hugo's
        configuration (each file only when its bytes change). Raises KansokuError; the data stays as it was
        when the specs do not pass the check. ``wait_s``: how long to wait for a store another process holds
        (default: the server's --wait)."""
        wait_s = self.wait_s if wait_s is None else wait_s
        self._store_read = None
        reports = preflight(self.specs, self.db, self.content / "reports", content=self.content,
                            config=self.config, site_root=self.root, wait_s=wait_s, on_wait=self.on_wait,
                            strict=self.strict, warn=self.warn,
                            clean=self.generated / hugo.BUILD_CACHE / "specs-checked.json")
        with publish.output_lock([self.generated], wait_s, self.on_wait):
            res, *_ = write_site_data(self.db, self.specs, self.generated, self.content, self.config, wait_s,
                                      self.on_wait, None, reports, self.memory_limit, self.say)
            hugo.hugo_config(self.generated, self.content, self.config)
        # what it read: a later event of the store that leaves it so is of the writes it waited for (an ingest's)
        self._store_read = self.store_state()
        release_memory()
        return res

    def store_state(self) -> tuple:
        """The store's file and write-ahead log as they stand: their inode, size and modification time."""
        def state(path: Path) -> tuple | None:
            try:
                st = path.stat()
            except FileNotFoundError:
                return None
            return st.st_ino, st.st_size, st.st_mtime_ns
        return tuple(state(path) for path in self.store_files)

    def update(self, why: str) -> bool:
        """Recompute after a change (``why``: the files), saying the outcome; False when it failed."""
        t0 = time.monotonic()
        try:  # (a store being written, by an ingest of new runs: recomputed once it is done, WRITER_WAIT_S)
            res = self.compute(wait_s=max(self.wait_s, WRITER_WAIT_S))
        except KansokuError as exc:
            self.err(f"{exc} (the server goes on with the last good data; fix it and save)")
            return False
        except Exception as exc:  # noqa: BLE001 (the server outlives any one recomputation)
            self.err(f"recomputing after {why} failed: {type(exc).__name__}: {exc} (the server goes on with the "
                     "last good data)")
            return False
        if not self.quiet:
            self.out(f"{why}: recomputed {len(res.reports)} report(s), {res.files_written} file(s) changed, "
                     f"in {time.monotonic() - t0:.1f} s")
        return True

    # -- Hugo's server ----------------------------------------------------------------------------------

    def start_hugo(self) -> None:
        """Hugo's server on the generated data, once it answers on 127.0.0.1:port."""
        cfg = self.generated / "hugo.json"
        base = f"http://127.0.0.1:{self.port}/"
        cmd = [hugo.hugo_binary(), "server", "--source", str(self.root), "--config", str(cfg.resolve()),
               "--bind", "127.0.0.1", "--port", str(self.port), "--baseURL", base, "--appendPort=false",
               "--renderToMemory", "--printI18nWarnings",
               "--cacheDir", str((self.generated / "hugo-cache").resolve())]
        # its own session: Ctrl-C reaches kansoku alone, which stops Hugo (stop) after the step in hand
        self.hugo = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace",
                                     env=hugo.hugo_env(server=True),
                                     start_new_session=True, preexec_fn=_die_with_parent)
        last: list[str] = []
        self._relay = threading.Thread(target=self._relay_output, args=(last,), name="kansoku-hugo-output",
                                       daemon=True)
        self._relay.start()
        while self.hugo.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self._relay.join(timeout=5)
        raise KansokuError("hugo server stopped before it served the site:\n" + "\n".join(last[-20:]))

    def _relay_output(self, last: list[str]) -> None:
        """Hugo's lines on stderr (with -q its errors and warnings only), the last kept for an error."""
        assert self.hugo is not None and self.hugo.stdout is not None
        for line in self.hugo.stdout:
            line = line.rstrip("\n")
            last.append(line)
            del last[:-40]
            if not self.quiet or line.startswith(("ERROR", "WARN", "Error")):
                print(f"hugo: {line}" if line else "", file=sys.stderr, flush=True)

    def stop(self) -> None:
        """Stop Hugo's server and wait for it (killed when it does not stop in STOP_S)."""
        if self.hugo is None or self.hugo.poll() is not None:
            return
        try:
            os.killpg(self.hugo.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.hugo.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.hugo.pid, signal.SIGKILL)
            self.hugo.wait()
        if self._relay is not None:
            self._relay.join(timeout=5)

    # -- watching ---------------------------------------------------------------------------------------

    def watched(self) -> tuple[list[Path], list[Path], set[Path]]:
        """What is watched: the prose and the specs with what is below them, the site's root and the store's
        directory alone (the generated data below them is Hugo's to watch); and the files there that matter:
        config.toml, the store and its write-ahead log."""
        files = {self.root / "config.toml", *self.store_files}
        deep = [d for d in (self.content, self.specs) if d.is_dir()]
        flat = [d for d in sorted({self.root, self.db.parent}) if d.is_dir() and d not in deep]
        return deep, flat, files

    def relevant(self, path: Path, files: set[Path]) -> bool:
        return path in files or (path.suffix == ".toml" and path.is_relative_to(self.specs)) or \
            (path.suffix == ".md" and path.is_relative_to(self.content))

    def prose_inputs(self, path: Path) -> tuple | None:
        """What kansoku reads of a prose page: its front matter and its shortcodes (a ``val``'s number, a
        block's placement are computed before Hugo renders), and whether a language lacks it (its generated
        stand-in copies this page's text). None: no such page. Any other edit is Hugo's alone to render."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        try:
            front, body = parse_front_matter(text, path)
        except KansokuError:
            return ("unreadable front matter", text)  # the recomputation's check says where
        stem, _, _ = path.name.rpartition(".")[0].rpartition(".")
        alone = not stem or any(not (path.parent / f"{stem}.{lang}.md").exists() for lang in LANGS)
        return (repr(sorted(front.items())), tuple((sc.name, sc.args, sc.named) for sc in shortcodes.parse(body)),
                body if alone else None)

    def needs_recompute(self, changes: set[tuple[object, str]]) -> bool:
        """Whether a batch of changes reaches the data kansoku computes (a prose page's text alone does not, nor
        the store's events when its files are as the last computation read them: an ingest's writes seen while
        the server waited for it to finish)."""
        need = False
        for _, name in changes:
            path = Path(name)
            if path in self.store_files:
                need = need or self._store_read is None or self.store_state() != self._store_read
                continue
            if not (path.suffix == ".md" and path.is_relative_to(self.content)):
                need = True
                continue
            now = self.prose_inputs(path)
            if self._prose.get(path) != now:
                need = True
            self._prose[path] = now
        return need

    def watch(self) -> int:
        """Recompute on every change of what kansoku reads, until Ctrl-C or Hugo's end (exit 1)."""
        import watchfiles  # only the live preview watches files

        deep, flat, files = self.watched()
        self._prose = {p: self.prose_inputs(p) for p in self.content.rglob("*.md")} if self.content.is_dir() else {}
        events: queue.SimpleQueue = queue.SimpleQueue()
        stop = threading.Event()

        def run(dirs: list[Path], recursive: bool) -> None:
            try:
                for changes in watchfiles.watch(*dirs, watch_filter=lambda _, p: self.relevant(Path(p), files),
                                                debounce=DEBOUNCE_MS, recursive=recursive, stop_event=stop,
                                                raise_interrupt=False):
                    events.put(changes)
            except Exception as exc:  # noqa: BLE001 (said in the main thread)
                events.put(exc)

        threads = [threading.Thread(target=run, args=(dirs, rec), name="kansoku-watch", daemon=True)
                   for dirs, rec in ((deep, True), (flat, False)) if dirs]
        for t in threads:
            t.start()
        try:
            while True:
                try:
                    changes = events.get(timeout=1.0)
                except queue.Empty:
                    changes = None
                assert self.hugo is not None
                if self.hugo.poll() is not None:
                    self.err(f"hugo server stopped (exit {self.hugo.returncode})")
                    return 1
                if isinstance(changes, Exception):
                    self.err(f"watching the site's files failed: {changes}")
                    return 1
                if not changes:
                    continue
                while not events.empty():  # what the other watcher saw meanwhile joins this batch
                    more = events.get()
                    if isinstance(more, Exception):
                        events.put(more)
                        break
                    changes |= more
                if self.needs_recompute(changes):
                    names = sorted({os.path.relpath(p, self.root) for _, p in changes})
                    self.update(", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else ""))
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=5)


def serve_live(site: LiveSite, langs: tuple[str, ...]) -> int:
    """Compute, serve, watch; Hugo stopped on the way out, however it is left (Ctrl-C, SIGTERM, an error)."""
    site.compute()
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        site.start_hugo()
        site.out(f"serving {site.root} on http://127.0.0.1:{site.port}/{langs[0]}/ (live: Ctrl-C to stop)")
        return site.watch()
    except KeyboardInterrupt:  # the way a server is stopped: not a failure
        site.stop()
        if not site.quiet:
            site.out("stopped")
        return 0
    finally:
        site.stop()
        signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM ends the server as Ctrl-C does: Hugo stopped, exit 130
