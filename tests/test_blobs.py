"""Raw files kept under blobs/ (store/db.py hash_and_keep): a copy-on-write clone where the filesystem
allows it (btrfs, XFS), else a copy; either way the sha256 is of exactly the bytes kept."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path


def test_kept_copy_by_clone_or_by_bytes_has_the_hash_of_its_bytes(tmp_path, monkeypatch):
    from kansoku.store import db

    src = tmp_path / "pgbench.log"
    src.write_bytes(b"line one\nline two\n" * 1000)
    want = hashlib.sha256(src.read_bytes()).hexdigest()

    def fake_clone(path, dest_fd):  # what FICLONE does, on a filesystem that has it
        with open(path, "rb") as fh:
            os.write(dest_fd, fh.read())
        os.lseek(dest_fd, 0, os.SEEK_SET)
        return True

    for name, clone in (("copied", None), ("cloned", fake_clone)):
        if clone is not None:
            monkeypatch.setattr(db, "_reflink", clone)
        blobs = tmp_path / f"blobs-{name}"
        digest, size, newlines = db.hash_and_keep(src, blobs)
        assert (digest, size, newlines) == (want, 18000, 2000), name
        kept = db.blob_path(blobs, digest)
        assert hashlib.sha256(kept.read_bytes()).hexdigest() == want
        assert not os.access(kept, os.W_OK) or os.geteuid() == 0  # read-only (root may write anyway)
        assert not list(Path(blobs).glob(".incoming-*"))
        shutil.rmtree(blobs)
