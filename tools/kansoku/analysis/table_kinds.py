"""Every table kind, loaded by plain imports, and the one way to compute a table: ``compute_table`` builds an
item with the kind that claims it (``analysis/table_registry.py``) and adds the notes every table carries.
A module of new kinds is imported here."""

from __future__ import annotations

from kansoku.analysis import data_tables, tables  # noqa: F401  (registration by import)
from kansoku.analysis.tables import ComputedTable
from kansoku.spec.model import Item, Report
from kansoku.store.db import Store


def compute_table(store: Store, report: Report, item: Item) -> ComputedTable:
    t = tables.build_table(store, report, item)
    if "cell_notes" in item.raw:
        tables.apply_cell_notes(item, t)
    tables.apply_steady_notes(store, t)
    tables.apply_coverage_notes(store, t)
    return t
