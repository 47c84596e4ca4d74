"""The measurement store: one DuckDB file. Its tables and views are a documented interface."""

__all__ = ["Store", "open_store", "DEFAULT_DB"]


def __getattr__(name: str):
    """``kansoku.store.Store`` and the others from store/db.py, loaded when first used: importing a light
    module of the store (``kansoku.store.limits``) does not load DuckDB."""
    if name in __all__:
        from kansoku.store import db  # loaded on first use: importing kansoku.store loads no DuckDB

        return getattr(db, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
