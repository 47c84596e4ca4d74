"""What a store holds that no tool prints: the check the fuzz tests and the damage harness make of a store
after an ingest of damaged inputs (every format declares what its tool can print: parsers/bounds.py)."""

from __future__ import annotations

from typing import Any

from kansoku import parsers
from kansoku.parsers import bounds

CPU_SHARE_METRICS = ("%usr", "%user", "%sys", "%system", "%idle", "%iowait", "%soft", "us", "sy", "id", "wa")


def stored_outside(con: Any, tables: set[str] | None = None) -> list[str]:
    """What a store holds that no tool prints, as lines to show: NaN or infinity in a DOUBLE column, a value
    outside a bound a format declares, a CPU share outside 0..100. ``con``: a DuckDB connection to the store;
    ``tables``: the tables to look at (default: every base table). The fuzz tests and the damage harness ask it."""
    base = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                      "WHERE table_type = 'BASE TABLE'").fetchall()}
    tables = base if tables is None else set(tables) & base
    bad = []
    for t, c in con.execute("SELECT table_name, column_name FROM information_schema.columns "
                            "WHERE data_type IN ('DOUBLE', 'FLOAT')").fetchall():
        if t in tables:
            n = con.execute(f'SELECT count(*) FROM "{t}" WHERE isnan("{c}") OR isinf("{c}")').fetchone()[0]
            if n:
                bad.append(f"{t}.{c}: {n} NaN/inf")
    for m in parsers.modules():
        for tb in m.bounds:
            if tb.table not in tables:
                continue
            for b in tb.bounds:
                cond, params = bounds._range_sql(b)
                where = f"({bounds.where_sql(b)}) AND " if b.where else ""
                sql = f"SELECT count(*) FROM {tb.table} WHERE {where}{b.column} IS NOT NULL AND ({cond})"
                n = con.execute(sql, {k: v for k, v in params.items() if f"${k}" in sql}).fetchone()[0]
                if n:
                    bad.append(f"{tb.table}.{b.column}: {n} outside {bounds._expected(b)}")
    if "sys_metrics" in tables:
        n = con.execute("SELECT count(*) FROM sys_metrics WHERE metric IN (SELECT unnest(?::VARCHAR[])) "
                        "AND (value < 0 OR value > 105)", [list(CPU_SHARE_METRICS)]).fetchone()[0]
        if n:
            bad.append(f"sys_metrics: {n} CPU shares outside 0..100")
    return bad
