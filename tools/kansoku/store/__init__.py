"""The measurement store: one DuckDB file. Its tables and views are a documented interface."""

from kansoku.store.db import DEFAULT_DB, Store, open_store

__all__ = ["Store", "open_store", "DEFAULT_DB"]
