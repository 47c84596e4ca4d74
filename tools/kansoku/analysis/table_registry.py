"""The registry of table kinds, like the parsers' formats and the chart kinds: a kind says which spec
items it builds (``claims``) and builds them; the highest ``priority`` claim wins, so a new kind is a
function with ``@table_kind`` and nothing else changes (``analysis.tables.compute_table`` asks here).
Kinds: ``grouped`` (``row_groups``: one sub-table per group), ``metric-rows`` (``rows = "metrics"``), and
``plain`` (rows and columns of factor values; claims every table, lowest priority)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class TableKind:
    name: str
    claims: Callable[[Any], bool]      # (spec item) -> does this kind build it
    build: Callable[..., Any]          # (store, report, item) -> analysis.tables.ComputedTable
    priority: int = 0
    checks_itself: bool = False        # rows that are data, not a factor: the factor grammar does not apply


TABLE_KINDS: list[TableKind] = []


def table_kind(name: str, claims: Callable[[Any], bool], priority: int = 0, checks_itself: bool = False):
    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        TABLE_KINDS.append(TableKind(name, claims, f, priority, checks_itself))
        TABLE_KINDS.sort(key=lambda k: -k.priority)
        return f
    return deco


# the modules whose functions register kinds, loaded on first use like the parsers' registry (a kind's module
# builds on analysis.tables, which asks here: loading them by name keeps the imports one way)
KIND_MODULES = ("kansoku.analysis.tables", "kansoku.analysis.data_tables")


def kind_of(item: Any) -> TableKind:
    """The kind that builds this table item."""
    import importlib

    for name in KIND_MODULES:
        importlib.import_module(name)
    return next(k for k in TABLE_KINDS if k.claims(item))
