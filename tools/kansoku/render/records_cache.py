"""The page data made of a report's records of its runs alone, kept between builds: a report whose runs did not
change does not encode them again.

A large campaign's report holds thousands of run records (``ComputedReport.runs``: each run's factors, files
and their digests, titles). Its page data encodes every one (render/hugo.py ``runs_data``): what the report's
JSON keeps of each run, the manifest of its published raw files, and the data-sources page's parts, each a JSON
text. A rebuild after a caption edited has the same records; they are kept under
``<generated>/build-cache/records/`` (kansoku/pickle_entries.py), the key being the sha256 of

- the code version (every source file of the package and the words),
- the report's records key (report/runs.py ``records_key``: the report's context, its runs and each one's
  fingerprint, where the store keeps the raw files; None: nothing kept, made every time), and
- the first record as it is (the addresses render/publish.py ``plan_raw`` gives the raw files are set on every
  record, or on none).

Each data-sources part's JSON is an entry of its own, under the sha256 of the code version, the part's first
record as it is and each of its records' keys (``RunInfo.key``, report/runs.py ``key_records``: its run's
fingerprint, the report's context and its title). A new run changes the report's records key and the records of
its own part (and of another only when its title changes the others'): the build after it encodes that part
alone, not every run of the report.

Entries no report of a build used are removed at its end, as the figure cache's are.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Callable

from kansoku.digest import digest
from kansoku.model import ComputedReport, RunInfo
from kansoku.pickle_entries import PickleEntries
from kansoku.resources import code_version


@dataclass
class RunsData:
    """What a report's page data is made of its run records alone (render/hugo.py ``runs_data``)."""

    runs: dict[str, dict]  # run id -> what the report's JSON keeps of it (its anchor and factors)
    manifest: str          # the published raw files' SHA256SUMS (render/publish.py manifest; "" when none)
    layout: dict           # the data-sources page's parts and each run's part (render/hugo.py sources_layout)
    parts: list[str]       # each part's JSON: its runs' whole records, in run id order
    part_keys: list[str | None]  # the entry of each part's JSON (None: not kept)


@dataclass
class RecordsCache(PickleEntries):
    """``RunsData`` kept in ``directory`` (None: made every time), each data-sources part's JSON an entry of its
    own that the whole names (``part_keys``)."""

    def key(self, rep: ComputedReport) -> str | None:
        if rep.records_key is None or not rep.runs:
            return None
        h = hashlib.sha256()
        for part in (code_version(), rep.records_key, repr(next(iter(rep.runs.values())))):
            h.update(part.encode() + b"\0")
        return h.hexdigest()

    def runs_data(self, rep: ComputedReport, make: Callable[[ComputedReport], RunsData]) -> RunsData:
        """The report's ``RunsData``, from the cache when its records are the ones it was made of."""
        key = self.key(rep) if self.directory is not None else None
        if key is not None:
            value = self.load(key)
            if isinstance(value, RunsData):
                parts = [self.load(part) for part in value.part_keys]  # (each kept once, as its own entry)
                if all(isinstance(part, str) for part in parts):
                    return dataclasses.replace(value, parts=parts)
        value = make(rep)
        if key is not None:
            kept = None not in value.part_keys
            self.save(key, dataclasses.replace(value, parts=[]) if kept else value)
        return value

    def part_json(self, records: list[RunInfo], make: Callable[[], str]) -> tuple[str | None, str]:
        """A data-sources part's entry and JSON (``make()``), from the cache while its records are the ones it was
        made of: the same record keys (``RunInfo.key``: each record's run, title and report context) and the same
        addresses of the raw files (the first record as it is, as for the whole). The entry is None when a record
        has no key (nothing kept)."""
        if self.directory is None or not records or any(r.key is None for r in records):
            return None, make()
        key = digest("\0".join([code_version(), "sources-part", repr(records[0]), *(r.key for r in records)]))
        value = self.load(key)
        if not isinstance(value, str):
            value = make()
            self.save(key, value)
        return key, value
