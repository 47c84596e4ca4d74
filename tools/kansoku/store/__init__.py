"""The measurement store: one DuckDB file. Its tables and views are a documented interface."""

from kansoku.store.db import Store, open_store, DEFAULT_DB

__all__ = ["Store", "open_store", "DEFAULT_DB"]
