"""sadf -d / -dh output (";" separated, UTC or named zone): docs/formats.md §2.5, §2.2."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.numbers import is_digits, to_float
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.activities import (
    INSTANCE_COLS,
    SIGNATURES,
    TEXT_ACTIVITIES,
    TEXT_COLUMNS,
    activity_of,
    norm_instance,
)

# -- sadf -d ---------------------------------------------------------------------------

_SADF_TS = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2}):(\d{2})(?: (\S+))?$", re.ASCII)


def sniff_sadf_csv(head: FileHead) -> bool:
    if head.is_binary:
        return False
    return any(l.startswith("# hostname;interval;timestamp;") for l in head.lines(5))


def sadf_ts(tok: str, tz, tz_cache: dict, sink: Sink | None = None) -> datetime | None:
    if is_digits(tok):
        return datetime.fromtimestamp(int(tok), timezone.utc)  # sadf -U
    m = _SADF_TS.match(tok)
    if not m:
        return None
    d, h, mi, s, zone = m.groups()
    try:
        base = datetime.fromisoformat(f"{d}T{h}:{mi}:{s}")
    except ValueError:  # hour 53, month 13: the caller names the line
        return None
    if zone is None:
        return base.replace(tzinfo=tz)
    z = tz_cache.get(zone)
    if z is None:
        # sysstat prints tzname[0], the standard-time abbreviation, all year: resolve it against the
        # run's IANA zone (summer time right), never as a fixed offset
        z, guess = sm.zone_for_abbreviation(zone, sink)
        if z is None:
            z = tz
            if sink is not None:
                sink.warn(None, f"time zone abbreviation {zone!r} is not known: times taken in "
                                f"{getattr(tz, 'key', tz)} (a guess; set run.toml timezone)")
        elif guess and sink is not None:
            sink.warn(None, f"time zone abbreviation {zone!r} resolved as {getattr(z, 'key', z)} (a guess: "
                            "abbreviations are ambiguous; set run.toml timezone = \"Area/City\")")
        tz_cache[zone] = z
    return base.replace(tzinfo=z)


def csv_segments(cols: list[str]) -> list[dict]:
    """Split a (possibly -h one-line) header into activity segments (docs/formats.md §2.5)."""
    if "idvendor" in cols:  # sar -m USB: text columns, one activity
        return [{"cols": cols, "repeated": False, "activity": "usb", "star": False}]
    segs: list[dict] = []
    cur: list[str] = []

    def close(repeated: bool):
        nonlocal cur
        if cur:
            # a non-repeated run may hold several activities (-dh): split where a known one starts
            if not repeated:
                start = 0
                for i, c in enumerate(cur):
                    if i > start and c in SIGNATURES and cur[start] not in INSTANCE_COLS:
                        segs.append({"cols": cur[start:i], "repeated": False})
                        start = i
                segs.append({"cols": cur[start:], "repeated": False})
            else:
                segs.append({"cols": cur, "repeated": True})
        cur = []

    for c in cols:
        if c.endswith("[...]"):
            cur.append(c[:-5])
            close(True)
        else:
            if c in INSTANCE_COLS and cur and any(x not in INSTANCE_COLS for x in cur):
                close(False)
            cur.append(c)
    close(False)
    for s in segs:
        s["activity"] = activity_of([c for c in s["cols"] if c != "CPU*"] if s["cols"][0] == "INTR"
                                    else s["cols"])
        s["star"] = "CPU*" in s["cols"]
    return segs


def _match_segments(segs: list[dict], vals: list[str], ncpu_hint: int | None) -> list[tuple[dict, list[str]]] | None:
    """Assign the values of a sadf -d(h) row to header segments (repeated groups have unknown counts)."""

    def ok(seg_cols: list[str], chunk: list[str]) -> bool:
        for c, v in zip(seg_cols, chunk):
            if c == "CPU":
                if not re.fullmatch(r"-?\d+|all", v, flags=re.ASCII):
                    return False
            elif c not in INSTANCE_COLS and sm.num(v) is None:
                return False
        return True

    def cols_for(seg: dict, width: int) -> list[str]:
        if not seg["star"]:
            return seg["cols"]
        base = [c for c in seg["cols"] if c != "CPU*"]
        k = width - len(base)
        names = ["all"] + [f"CPU{i}" for i in range(k - 1)]  # -P subsets cannot be told apart
        return base + names

    def rec(i: int, pos: int):
        if i == len(segs):
            return [] if pos == len(vals) else None
        seg = segs[i]
        if seg["star"]:
            base = len(seg["cols"]) - 1
            pref = [ncpu_hint + 1] if ncpu_hint else []
            widths = pref + [base + w for w in range(1, 257) if base + w not in pref]
            widths = [w if w > base else base + w for w in widths]
        else:
            widths = [len(seg["cols"])]
        for width in widths:
            if pos + width > len(vals):
                continue
            cols = cols_for(seg, width)
            if not seg["repeated"]:
                if ok(cols, vals[pos:pos + width]):
                    r = rec(i + 1, pos + width)
                    if r is not None:
                        return [(seg, cols, vals[pos:pos + width])] + r
                continue
            chunks = []
            p = pos
            while p + width <= len(vals) and ok(cols, vals[p:p + width]):
                chunks.append((seg, cols, vals[p:p + width]))
                p += width
                r = rec(i + 1, p)
                if r is not None:
                    return list(chunks) + r
        return None

    return rec(0, 0)


def parse_sadf_csv(path: Path, sink: Sink) -> None:
    lines, truncated = sm.read_text(path, "sadf -d output")
    col = sm.Collector("sar", "sadf-csv")
    tz, basis = sm.local_tz(sink.run_start, sink)
    col.tz_basis = "sadf timestamps (UTC or named zone)"
    tz_cache: dict = {}
    segs: list[dict] | None = None
    simple = False
    sample_of: dict[tuple, int] = {}
    sample_count: dict[str, int] = {}
    n = len(lines)
    ncpu: int | None = None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        is_last = lineno == n
        if line.startswith("#"):
            if not line.startswith("# hostname;interval;timestamp;"):
                continue
            cols = line[2:].split(";")[3:]
            segs = csv_segments(cols)
            simple = len(segs) == 1 and not segs[0]["repeated"] and not segs[0]["star"]
            if len(segs) == 1 and segs[0]["star"] and not segs[0]["repeated"]:
                simple = False
            continue
        parts = line.split(";")
        if len(parts) < 4:
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                continue
            raise ParseError(path, lineno, "a sadf -d row 'host;interval;timestamp;values...'", line)
        host, interval, tstok, vals = parts[0], parts[1], parts[2], parts[3:]
        col.host = host
        ts = sadf_ts(tstok, tz, tz_cache, sink)
        if ts is None:
            if truncated and is_last:
                sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                continue
            raise ParseError(path, lineno, "a sadf timestamp 'YYYY-MM-DD HH:MM:SS [UTC]' or epoch seconds", tstok)
        if is_digits(tstok) or len(tstok.split()) != 3 or tstok.split()[2] not in ("UTC", "GMT"):
            col.tz_basis = "sadf -U epoch seconds" if is_digits(tstok) else f"sadf timestamps ({basis} if no zone)"
        if vals[0].startswith("LINUX-RESTART"):
            m = re.search(r"\((\d+) CPU\)", vals[0], flags=re.ASCII)
            if m:
                ncpu = int(m.group(1))
            col.add(ts, "restart", None, "cpu_count", float(m.group(1)) if m else None, line=lineno)
            continue
        if vals[0].startswith("COM "):
            continue
        if segs is None:
            raise ParseError(path, lineno, "a '# hostname;interval;timestamp;...' header before the rows", line)
        try:
            iv = to_float(interval)
        except ValueError:
            raise ParseError(path, lineno, "the interval in seconds (2nd field)", interval) from None
        if len(segs) == 1 and segs[0]["activity"] in TEXT_ACTIVITIES:
            continue
        if simple:
            cols = segs[0]["cols"]
            if len(vals) != len(cols):
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                    continue
                raise ParseError(path, lineno, f"{len(cols)} values after the timestamp (header "
                                 f"{';'.join(cols[:5])}...)", line)
            assigned = [(segs[0], cols, vals)]
        elif len(segs) == 1 and segs[0]["star"] and not segs[0]["repeated"]:  # INTR;CPU* (sadf -d -I ALL)
            base = [c for c in segs[0]["cols"] if c != "CPU*"]
            k = len(vals) - len(base)
            assigned = [(segs[0], base + ["all"] + [f"CPU{i}" for i in range(k - 1)], vals)]
        else:
            assigned = _match_segments(segs, vals, ncpu)
            if assigned is None:
                if truncated and is_last:
                    sink.warn(lineno, "last line is cut off (sadf killed?); skipped")
                    continue
                raise ParseError(path, lineno, "values matching the sadf -d header's columns", line)
        for seg, cols, chunk in assigned:
            act = seg["activity"]
            if act in TEXT_ACTIVITIES:
                continue
            inst_vals = [v for c, v in zip(cols, chunk) if c in INSTANCE_COLS]
            inst = norm_instance(act, "/".join(inst_vals)) if inst_vals else None
            key = (act, ts)
            if key not in sample_of:
                sample_of[key] = sample_count[act] = sample_count.get(act, -1) + 1
            sn = sample_of[key]
            for c, v in zip(cols, chunk):
                if c in INSTANCE_COLS:
                    continue
                x = sm.num(v)
                if x is None:
                    if c in TEXT_COLUMNS:
                        continue
                    if truncated and is_last:
                        break
                    raise ParseError(path, lineno, f"a number in column {c!r}", v)
                col.add(ts, act, inst, c, x, interval_s=iv, sample=sn, line=lineno)
    if not col.n_values:
        raise ParseError(path, None, "sadf -d rows under a '# hostname;interval;timestamp;...' header", "none")
    col.flush(sink)
