"""app/build.py Ahead: a build's run pages made one batch ahead in a thread while the renderer writes the one
before. What the renderer gets is what the batches are, in their order; never more than two batches alive;
an error of the thread is the renderer's; closing stops a thread in the middle of a statement; a kept page read
back by the renderer reads the store under the thread's lock (DuckDB refuses a connection used by two threads)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import pytest

from kansoku.app.build import Ahead
from kansoku.errors import KansokuError
from kansoku.model import KeptRunPage
from kansoku.store.db import Store


@pytest.fixture()
def store():
    con = duckdb.connect()
    con.execute("SET threads = 1")
    s = Store(con, Path(":memory:"), True)
    yield s
    s.close()


def test_batches_come_in_order_and_at_most_one_ahead(store):
    made: list[int] = []
    taken: list[int] = []
    written: list[int] = []
    alive: list[int] = []

    def batches():
        for i in range(12):
            # the thread reads the store for each batch, as run_page_batches does
            (n,) = store.query("SELECT count(*) FROM range(?)", [1000 * (i + 1)])[0]
            made.append(i)
            alive.append(len(made) - len(written))
            yield f"report-{n}", {f"run-{i}": i}

    ahead = Ahead(batches(), store)
    try:
        for rep, pages in ahead:
            taken.append(next(iter(pages.values())))
            assert rep == f"report-{1000 * len(taken)}"
            time.sleep(0.01)  # the renderer writing its batch
            written.append(taken[-1])
    finally:
        ahead.close()
    assert taken == list(range(12))
    # batches made and not yet written: the one the renderer writes and the one made meanwhile, never a third
    assert max(alive) <= 2, alive


def test_an_error_of_the_thread_is_raised_in_the_renderer(store):
    def batches():
        yield "r", {"a": 1}
        store.query("SELECT 1")
        raise KansokuError("the store could not give the batch")

    ahead = Ahead(batches(), store)
    got = []
    try:
        with pytest.raises(KansokuError, match="could not give the batch"):
            for _, pages in ahead:
                got.append(pages)
    finally:
        ahead.close()
    assert got == [{"a": 1}]


def test_close_interrupts_a_statement_and_waits_for_the_thread(store):
    started = threading.Event()

    def batches():
        yield "r", {"a": 1}
        started.set()
        # a statement of minutes: close() must not wait for its end
        store.query("SELECT count(*) FROM range(10000000000) a, range(10) b WHERE a.range % 7 = b.range")
        yield "r", {"b": 2}

    ahead = Ahead(batches(), store)
    it = iter(ahead)
    assert next(it)[1] == {"a": 1}
    assert started.wait(30)
    time.sleep(0.2)
    t0 = time.monotonic()
    ahead.close()
    assert time.monotonic() - t0 < 30
    assert not ahead._thread.is_alive()
    assert store.query("SELECT 42") == [(42,)]  # the connection is free for the build's next step


def test_a_kept_page_is_read_back_under_the_threads_lock(store):
    seen: list[bool] = []
    ahead: Ahead | None = None

    def load():
        seen.append(ahead.lock.locked())
        return store.query("SELECT 7")[0][0]

    def batches():
        yield "r", {"x": KeptRunPage(info=None, key="k", has_series=False, load=load), "y": 1}
        yield "r", {"z": 2}

    ahead = Ahead(batches(), store)
    try:
        for _, pages in ahead:
            for page in pages.values():
                if isinstance(page, KeptRunPage):
                    assert page.full() == 7
    finally:
        ahead.close()
    assert seen == [True]


def test_entries_written_behind_read_back_and_flushed(tmp_path):
    """PickleEntries.write_behind: an entry saved is read back at once (from memory until written), every one
    is on disk after flush, in the directory's one file of entries, and read back by another reader."""
    from conftest import cache_entries
    from kansoku.pickle_entries import DB_FILE, PickleEntries

    entries = PickleEntries(tmp_path / "items")
    entries.write_behind()
    values = {f"k{i}": {"i": i, "text": "x" * (i * 37)} for i in range(300)}
    for key, value in values.items():
        entries.save(key, value)
        assert entries.has(key)
        assert entries.load(key) == value
    entries.flush()
    assert sorted(cache_entries(tmp_path / "items")) == sorted(values)
    assert {p.name for p in (tmp_path / "items").iterdir()} <= {DB_FILE, DB_FILE + "-wal", DB_FILE + "-shm"}
    again = PickleEntries(tmp_path / "items")
    assert all(again.load(k) == v for k, v in values.items())


def test_entries_dropped_unflushed_stop_their_writer_and_keep_what_was_saved(tmp_path):
    """A build that fails in a process that goes on (kansoku serve) drops its cache without flushing it: the
    writer thread ends with the entries (it does not hold them), having written what was saved; the prune keeps
    the entries used and removes the others."""
    import gc
    import threading

    from kansoku.pickle_entries import PickleEntries

    entries = PickleEntries(tmp_path / "items")
    entries.write_behind()
    writer = entries._writer
    for i in range(100):
        entries.save(f"k{i}", i)
    del entries
    gc.collect()
    writer.join(timeout=30)
    assert not writer.is_alive() and not any(t is writer for t in threading.enumerate())
    again = PickleEntries(tmp_path / "items")
    assert [again.load(f"k{i}") for i in range(100)] == list(range(100))
    again.used = {f"k{i}" for i in range(0, 100, 2)}  # (as if this build had used the even ones alone)
    assert again.prune() == 50
    last = PickleEntries(tmp_path / "items")
    assert [last.load(f"k{i}") for i in range(100)] == [i if i % 2 == 0 else None for i in range(100)]


def test_a_damaged_cache_file_is_a_cache_lost_and_made_again(tmp_path):
    """A cache file SQLite cannot read (a disk's damage, another program's bytes): no entry is found in it, and
    the next save makes it again, empty but for what is saved."""
    from kansoku.pickle_entries import DB_FILE, PickleEntries

    (tmp_path / "items").mkdir()
    (tmp_path / "items" / DB_FILE).write_bytes(b"not a database " * 1000)
    entries = PickleEntries(tmp_path / "items")
    assert entries.load("k") is None and not entries.has("k")
    entries.write_behind()
    entries.save("k", {"a": 1})
    entries.flush()
    assert PickleEntries(tmp_path / "items").load("k") == {"a": 1}


def test_an_entry_that_cannot_be_written_is_an_error_of_flush(tmp_path):
    from kansoku.errors import KansokuError
    from kansoku.pickle_entries import PickleEntries

    entries = PickleEntries(tmp_path / "items")
    entries.write_behind()
    (tmp_path / "items").rmdir()
    (tmp_path / "items").write_text("not a directory")
    entries.save("k", {"a": 1})
    with pytest.raises(KansokuError, match=r"items/entries\.sqlite: cannot keep the build's cache"):
        entries.flush()
