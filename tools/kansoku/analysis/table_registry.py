"""The registry of table kinds, like the parsers' formats and the chart kinds: a kind says which spec
items it builds (``claims``) and builds them; the highest ``priority`` claim wins, so a new kind is a
function with ``@table_kind`` in a module ``analysis/table_kinds.py`` imports, and nothing else changes.
Kinds: ``grouped`` (``row_groups``: one sub-table per group), ``metric-rows`` (``rows = "metrics"``), and
``plain`` (rows and columns of factor values; claims every table, lowest priority) in ``analysis/tables.py``;
``functions`` and ``queries`` in ``analysis/data_tables.py``.

This module imports no kind: the kinds' modules import it to register, and ``analysis/table_kinds.py``
imports them all, so every import stays one way."""

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


def kind_of(item: Any) -> TableKind:
    """The registered kind that builds this table item."""
    return next(k for k in TABLE_KINDS if k.claims(item))
