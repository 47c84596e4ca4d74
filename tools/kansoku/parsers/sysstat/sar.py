"""sysstat sar: ``sar`` text (``sar -A`` and its parts, live or ``-f``), ``sadf -d`` CSV,
``sadf -j`` JSON and binary ``sa`` data files (rendered with ``sadf -j`` when sysstat is installed).

Every format lands in the tall ``sys_metrics`` table with the same (activity, metric) names:
the sar/sadf -d header names (docs/formats.md §2.4, §2.5); sadf -j keys are mapped to them (§2.6).
The iostat and vmstat modules write into the same table; this module owns the schema and the
typed views ``cpu``, ``disk``, ``memory`` over all three tools, plus the run-window views and metrics.

Several renderings of the same data in one run (the corpus keeps sa.bin, sar_A.txt, sadf_d.csv and
sadf.json side by side): beside a readable sa file, the renderings of its data are kept as sources and
checked on a sample, not stored as rows (``ingest/renderings.py``, docs/ingest.md). Where several files still
hold rows of one activity (renderings without a sa file, another measurement), the views read ONE file per
(run, tool, activity): the lowest ``format_rank`` (sadf -j, then sadf -d, then sar text, then the
sa file through sadf) -- see ``sys_series_chosen``. sadf output is preferred because it carries full
dates and UTC; sar text only has times of day in the machine's local time.

One format per module: ``sar_text``, ``sadf_csv``, ``sadf_json``, ``sa_binary`` (and ``activities``, the
header -> activity table they share); this module declares them, the views and the metrics.
"""

from __future__ import annotations

from kansoku.parsers.base import Format, MetricDef, ParserModule
from kansoku.parsers.sysstat import common as sm
from kansoku.parsers.sysstat.sa_binary import parse_sa_binary, sniff_sa_binary
from kansoku.parsers.sysstat.sadf_csv import parse_sadf_csv, sniff_sadf_csv
from kansoku.parsers.sysstat.sadf_json import load_json_salvaging, parse_sadf_json, sniff_sadf_json
from kansoku.parsers.sysstat.sadf_p import parse_sadf_p, sniff_sadf_p
from kansoku.parsers.sysstat.sadf_x import parse_sadf_xml, sniff_sadf_xml
from kansoku.parsers.sysstat.sar_text import parse_sar_text, sniff_sar_text

__all__ = ["MODULE", "load_json_salvaging"]


# -- views ---------------------------------------------------------------------------------

# A CPU/disk device is virtual when it is a loop, zram, ram disk, device-mapper or md device;
# a partition (sda1, nvme0n1p1) would double-count its disk: both are left out of the sums.
VIEWS = r"""
CREATE OR REPLACE VIEW sys_series_chosen AS
SELECT * EXCLUDE (choice) FROM (
  SELECT s.*, row_number() OVER (PARTITION BY coalesce(s.run_id, s.source_id), src.host, src.role, s.tool,
                                 s.activity ORDER BY s.format_rank, s.samples DESC, s.source_id) AS choice
  FROM sys_series s LEFT JOIN sources src ON src.source_id = s.source_id) WHERE choice = 1;

-- The authoritative samples: one file per (run, host, tool, activity), since-boot samples excluded.
CREATE OR REPLACE VIEW sys_metrics_auth AS
SELECT m.* FROM sys_metrics m
WHERE NOT m.since_boot
  AND (m.source_id, m.activity) IN (SELECT (source_id, activity) FROM sys_series_chosen);

CREATE OR REPLACE VIEW cpu AS
SELECT m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample,
       epoch(m.ts) - epoch(r.start_time) AS t_s,
       coalesce(m.instance, 'all') AS cpu,
       max(m.value) FILTER (WHERE m.metric IN ('%usr', '%user', 'us')) AS usr_pct,
       max(m.value) FILTER (WHERE m.metric = '%nice') AS nice_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%sys', '%system', 'sy')) AS sys_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%iowait', 'wa')) AS iowait_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%steal', 'st')) AS steal_pct,
       max(m.value) FILTER (WHERE m.metric = '%irq') AS irq_pct,
       max(m.value) FILTER (WHERE m.metric = '%soft') AS soft_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%guest', 'gu')) AS guest_pct,
       max(m.value) FILTER (WHERE m.metric = '%gnice') AS gnice_pct,
       max(m.value) FILTER (WHERE m.metric IN ('%idle', 'id')) AS idle_pct
FROM sys_metrics_auth m LEFT JOIN runs r ON r.run_id = m.run_id
WHERE m.activity = 'cpu'
GROUP BY ALL;

CREATE OR REPLACE VIEW disk AS
SELECT m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample,
       epoch(m.ts) - epoch(r.start_time) AS t_s,
       m.instance AS device,
       any_value(dv.device_class) AS device_class,
       coalesce(any_value(dv.device_class) IN ('virtual', 'group'),
                regexp_matches(m.instance, '^(loop|zram|ram|dm-|md)\d')) AS is_virtual,
       coalesce(any_value(dv.device_class) = 'partition',
                regexp_matches(m.instance, '^((sd|vd|xvd|hd)[a-z]+\d+|(nvme\d+n\d+|mmcblk\d+)p\d+)$')) AS is_partition,
       coalesce(max(m.value) FILTER (WHERE m.metric IN ('rkB/s', 'kB_read/s')),
                max(m.value) FILTER (WHERE m.metric IN ('rMB/s', 'MB_read/s')) * 1024,
                max(m.value) FILTER (WHERE m.metric IN ('rd_sec/s', 'rsec/s', 'Blk_read/s')) / 2) AS read_kb_s,
       coalesce(max(m.value) FILTER (WHERE m.metric IN ('wkB/s', 'kB_wrtn/s')),
                max(m.value) FILTER (WHERE m.metric IN ('wMB/s', 'MB_wrtn/s')) * 1024,
                max(m.value) FILTER (WHERE m.metric IN ('wr_sec/s', 'wsec/s', 'Blk_wrtn/s')) / 2) AS write_kb_s,
       coalesce(max(m.value) FILTER (WHERE m.metric IN ('dkB/s', 'kB_dscd/s')),
                max(m.value) FILTER (WHERE m.metric IN ('dMB/s', 'MB_dscd/s')) * 1024,
                max(m.value) FILTER (WHERE m.metric IN ('dc_sec/s', 'dsec/s', 'Blk_dscd/s')) / 2) AS discard_kb_s,
       coalesce(max(m.value) FILTER (WHERE m.metric = 'tps'),
                max(m.value) FILTER (WHERE m.metric = 'r/s') + max(m.value) FILTER (WHERE m.metric = 'w/s')
                + coalesce(max(m.value) FILTER (WHERE m.metric = 'd/s'), 0)) AS tps,
       max(m.value) FILTER (WHERE m.metric = 'r/s') AS reads_s,
       max(m.value) FILTER (WHERE m.metric = 'w/s') AS writes_s,
       max(m.value) FILTER (WHERE m.metric IN ('%util', 'util')) AS util_pct,
       max(m.value) FILTER (WHERE m.metric = 'await') AS await_ms,
       max(m.value) FILTER (WHERE m.metric = 'r_await') AS r_await_ms,
       max(m.value) FILTER (WHERE m.metric = 'w_await') AS w_await_ms,
       max(m.value) FILTER (WHERE m.metric IN ('aqu-sz', 'avgqu-sz')) AS aqu_sz,
       max(m.value) FILTER (WHERE m.metric = 'svctm') AS svctm_ms
FROM sys_metrics_auth m LEFT JOIN runs r ON r.run_id = m.run_id
     LEFT JOIN sys_devices dv ON dv.source_id = m.source_id AND dv.device = m.instance
WHERE m.activity = 'disk'
GROUP BY m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample, t_s, m.instance;

-- sar -r/-S (kB) and vmstat (KiB by default: vmstat -S changes the unit and cannot be seen in the
-- output, docs/formats.md §4; such files are stored as printed).
CREATE OR REPLACE VIEW memory AS
SELECT m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample,
       epoch(m.ts) - epoch(r.start_time) AS t_s,
       max(m.value) FILTER (WHERE m.metric IN ('kbmemfree', 'free')) AS mem_free_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbavail') AS mem_avail_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbmemused') AS mem_used_kb,
       max(m.value) FILTER (WHERE m.metric = '%memused') AS mem_used_pct,
       max(m.value) FILTER (WHERE m.metric IN ('kbbuffers', 'buff')) AS buffers_kb,
       max(m.value) FILTER (WHERE m.metric IN ('kbcached', 'cache')) AS cached_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbcommit') AS commit_kb,
       max(m.value) FILTER (WHERE m.metric = '%commit') AS commit_pct,
       max(m.value) FILTER (WHERE m.metric IN ('kbactive', 'active')) AS active_kb,
       max(m.value) FILTER (WHERE m.metric IN ('kbinact', 'inact')) AS inactive_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbdirty') AS dirty_kb,
       max(m.value) FILTER (WHERE m.metric IN ('kbswpused', 'swpd')) AS swap_used_kb,
       max(m.value) FILTER (WHERE m.metric = 'kbswpfree') AS swap_free_kb
FROM sys_metrics_auth m LEFT JOIN runs r ON r.run_id = m.run_id
WHERE m.activity IN ('memory', 'swap')
GROUP BY ALL;

-- Cut to the run window (run.toml start/end): a sample counts when the middle of the interval it
-- covers lies inside [start, end].
CREATE OR REPLACE VIEW cpu_in_run AS
SELECT c.* FROM cpu c JOIN runs r ON r.run_id = c.run_id
WHERE epoch(c.ts) - coalesce(c.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time);

CREATE OR REPLACE VIEW disk_in_run AS
SELECT d.* FROM disk d JOIN runs r ON r.run_id = d.run_id
WHERE epoch(d.ts) - coalesce(d.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time);

CREATE OR REPLACE VIEW memory_in_run AS
SELECT x.* FROM memory x JOIN runs r ON r.run_id = x.run_id
WHERE epoch(x.ts) - coalesce(x.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time);

-- Per run and host, the best tool for CPU numbers: sar (has %soft, per CPU) > mpstat (the same, per CPU)
-- > iostat > vmstat (integers).
CREATE OR REPLACE VIEW cpu_in_run_mean AS
WITH ranked AS (
  SELECT c.*, dense_rank() OVER (PARTITION BY run_id, host, role
      ORDER BY CASE tool WHEN 'sar' THEN 1 WHEN 'mpstat' THEN 2 WHEN 'iostat' THEN 3 ELSE 4 END) AS tool_rank
  FROM cpu_in_run c)
SELECT run_id, host, role, tool, cpu, count(*) AS samples,
       avg(usr_pct) AS usr_pct, avg(nice_pct) AS nice_pct, avg(sys_pct) AS sys_pct,
       avg(iowait_pct) AS iowait_pct, avg(steal_pct) AS steal_pct, avg(irq_pct) AS irq_pct,
       avg(soft_pct) AS soft_pct, avg(idle_pct) AS idle_pct
FROM ranked WHERE tool_rank = 1 GROUP BY run_id, host, role, tool, cpu;

CREATE OR REPLACE VIEW disk_in_run_mean AS
WITH ranked AS (
  SELECT d.*, dense_rank() OVER (PARTITION BY run_id, host, role
      ORDER BY CASE tool WHEN 'sar' THEN 1 ELSE 2 END) AS tool_rank
  FROM disk_in_run d)
SELECT run_id, host, role, device, tool, any_value(device_class) AS device_class,
       bool_or(is_virtual) AS is_virtual, bool_or(is_partition) AS is_partition,
       count(*) AS samples, avg(read_kb_s) AS read_kb_s, avg(write_kb_s) AS write_kb_s,
       avg(discard_kb_s) AS discard_kb_s, avg(tps) AS tps, avg(util_pct) AS util_pct,
       avg(await_ms) AS await_ms, avg(aqu_sz) AS aqu_sz
FROM ranked WHERE tool_rank = 1 GROUP BY run_id, host, role, device, tool;

-- Coverage: how much of its run's window (runs.start_time .. end_time) each time-stamped monitor file's
-- samples cover, per host. A sample covers the interval that ends at its time; the covered seconds are the
-- union of those intervals cut to the window (overlapping intervals counted once). Below the campaign's
-- threshold (.kansoku-campaign coverage_threshold, default 0.9) ingest warns and the cells of every metric
-- read from that monitor are flagged (a monitor that died or a connection lost mid-run: docs/ingest.md).
-- column run_id: the run directory relative to its campaign root (docs/ingest.md)
-- column source_id: the monitor's file (sources.source_id)
-- column file_name: the file, relative to the run directory ('host=db/sa.bin')
-- column tool: 'sar' / 'iostat' / 'vmstat' / 'mpstat' / 'pidstat'
-- column samples: the file's samples whose interval overlaps the window (since-boot samples excluded)
-- column window_s: the run window's length in seconds (runs.end_time - runs.start_time)
-- column covered_s: the seconds of the window the samples cover
-- column coverage: covered_s / window_s, 0..1
-- column threshold: the campaign's coverage_threshold, 0.9 unless it declares one
-- column below: coverage < threshold
-- (Its windows are partitioned by run as well as by file, the same rows since a file is one run's: a filter on
-- run_id then reaches the tall tables, and a few runs' coverage reads their rows alone.)
CREATE OR REPLACE VIEW monitor_coverage AS
WITH stamps AS (
  SELECT run_id, source_id, ts, max(coalesce(interval_s, 0)) AS interval_s FROM sys_metrics
  WHERE NOT since_boot AND ts IS NOT NULL AND activity <> 'restart' GROUP BY run_id, source_id, ts
  UNION ALL
  SELECT run_id, source_id, ts, NULL AS interval_s FROM pidstat
  WHERE NOT since_boot AND ts IS NOT NULL GROUP BY run_id, source_id, ts),
spans AS (  -- each sample's interval (pidstat prints none: the step from its previous sample), cut to the window
  SELECT s.run_id, s.source_id, epoch(r.start_time) AS w0, epoch(r.end_time) AS w1,
         greatest(epoch(s.ts) - coalesce(s.interval_s, epoch(s.ts) - epoch(lag(s.ts) OVER (
             PARTITION BY s.run_id, s.source_id ORDER BY s.ts)), 0), epoch(r.start_time)) AS a,
         least(epoch(s.ts), epoch(r.end_time)) AS b,
         coalesce(r.coverage_threshold, 0.9) AS threshold
  FROM stamps s JOIN runs r ON r.run_id = s.run_id
  WHERE r.start_time IS NOT NULL AND r.end_time > r.start_time),
clipped AS (  -- overlaps with the intervals before (in time order) counted once
  SELECT *, greatest(a, coalesce(max(b) OVER (PARTITION BY run_id, source_id ORDER BY a, b
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), a)) AS a2
  FROM spans),
per_source AS (  -- a file none of whose samples falls in the window is there too, covering 0 s
  SELECT run_id, source_id, any_value(w1 - w0) AS window_s, count(*) FILTER (WHERE b > a) AS samples,
         coalesce(sum(greatest(b - a2, 0)) FILTER (WHERE b > a), 0) AS covered_s, any_value(threshold) AS threshold
  FROM clipped GROUP BY run_id, source_id)
SELECT p.run_id, p.source_id, src.file_name, src.host, src.role, src.tool, p.samples, p.window_s,
       least(p.covered_s, p.window_s) AS covered_s, least(p.covered_s / p.window_s, 1.0) AS coverage,
       p.threshold, least(p.covered_s / p.window_s, 1.0) < p.threshold AS below
FROM per_source p JOIN sources src ON src.source_id = p.source_id;

-- Clocks: each file's first/last sample against the run window (and against sar in the same run).
CREATE OR REPLACE VIEW sys_source_clock AS
WITH per_source AS (
  SELECT source_id, run_id, tool, format, any_value(tz_basis) AS tz_basis, min(first_ts) AS first_ts,
         max(last_ts) AS last_ts, max(samples) AS samples, max(interval_s) AS interval_s,
         max(since_boot_excluded) AS since_boot_excluded
  FROM sys_series WHERE activity <> 'restart' GROUP BY ALL)
SELECT p.*, r.start_time, r.end_time,
       epoch(p.first_ts) - epoch(r.start_time) AS first_minus_start_s,
       epoch(p.last_ts) - epoch(r.end_time) AS last_minus_end_s,
       epoch(p.first_ts) - epoch(min(p.first_ts) FILTER (WHERE p.tool = 'sar')
                                 OVER (PARTITION BY p.run_id)) AS first_minus_sar_first_s
FROM per_source p LEFT JOIN runs r ON r.run_id = p.run_id;
"""

# The CPU and disk samples of every run's window made whole (a first build makes the views ``cpu_in_run`` and
# ``disk_in_run`` tables of all their rows: report/runs.py share_samples, Store.computed_here): the same rows,
# columns and types as the views (tests/test_has_data.py compares them, EXCEPT ALL both ways), for about half
# the CPU. The views join every stored value to its run and its device and compare its metric name with some
# twenty IN-lists, then pivot with a ``max() FILTER`` an output column; here each value's metric is named by a
# small number once (the names of one FILTER of the view share its number), the values are grouped on the
# views' own key straight from ``sys_metrics`` (``t_s`` and the device's class depend on that key) with a
# ``max(CASE ...)`` an output column, and what depends on the key alone comes after, on one row a sample: the
# chosen file (``sys_metrics_auth``), the run window (``*_in_run``), ``t_s``, the device's class. This roughly
# halves what the views cost a large build (docs/build-performance.md). Change one with its view.
def _coded(names: dict[int, tuple[str, ...]]) -> str:
    """Each value's metric named by its number, 0 for a metric no column reads (one list lookup, cheaper than a CASE
    of some thirty string comparisons)."""
    pairs = [(n, k) for k, ns in names.items() for n in ns]
    numbers = ", ".join(str(k) for _, k in pairs)
    quoted = ", ".join("'" + n + "'" for n, _ in pairs)
    return f"coalesce([{numbers}][list_position([{quoted}], m.metric)], 0)"


_DISK_CODES = {1: ("rkB/s", "kB_read/s"), 2: ("rMB/s", "MB_read/s"), 3: ("rd_sec/s", "rsec/s", "Blk_read/s"),
               4: ("wkB/s", "kB_wrtn/s"), 5: ("wMB/s", "MB_wrtn/s"), 6: ("wr_sec/s", "wsec/s", "Blk_wrtn/s"),
               7: ("dkB/s", "kB_dscd/s"), 8: ("dMB/s", "MB_dscd/s"), 9: ("dc_sec/s", "dsec/s", "Blk_dscd/s"),
               10: ("tps",), 11: ("r/s",), 12: ("w/s",), 13: ("d/s",), 14: ("%util", "util"), 15: ("await",),
               16: ("r_await",), 17: ("w_await",), 18: ("aqu-sz", "avgqu-sz"), 19: ("svctm",)}
_CPU_CODES = {1: ("%usr", "%user", "us"), 2: ("%nice",), 3: ("%sys", "%system", "sy"), 4: ("%iowait", "wa"),
              5: ("%steal", "st"), 6: ("%irq",), 7: ("%soft",), 8: ("%guest", "gu"), 9: ("%gnice",),
              10: ("%idle", "id")}


def _maxima(codes: dict[int, tuple[str, ...]]) -> str:
    """The view's ``max(value) FILTER (WHERE metric IN ...)`` (the same value: NULL where none), as the maximum
    of a CASE: a FILTER costs each aggregate a pass of its own over the values."""
    return ", ".join(f"max(CASE WHEN m.k = {k} THEN m.value END) AS v{k}" for k in codes)


# the views' tool order of the means (cpu_in_run_mean, disk_in_run_mean)
_CPU_TOOL_RANK = "CASE {t} WHEN 'sar' THEN 1 WHEN 'mpstat' THEN 2 WHEN 'iostat' THEN 3 ELSE 4 END"
_DISK_TOOL_RANK = "CASE {t} WHEN 'sar' THEN 1 ELSE 2 END"
_IN_WINDOW = "epoch(g.ts) - coalesce(g.interval_s, 0) / 2 BETWEEN epoch(r.start_time) AND epoch(r.end_time)"

WHOLE_VIEWS = {
    "cpu_in_run": f"""
WITH g AS (
  SELECT m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample, m.cpu,
         {_maxima(_CPU_CODES)}
  FROM (SELECT m.*, coalesce(m.instance, 'all') AS cpu, {_coded(_CPU_CODES)} AS k
        FROM sys_metrics m WHERE m.activity = 'cpu' AND NOT m.since_boot) m
  GROUP BY m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample, m.cpu)
SELECT g.run_id, g.source_id, g.host, g.role, g.tool, g.format, g.ts, g.interval_s, g.sample,
       epoch(g.ts) - epoch(r.start_time) AS t_s, g.cpu,
       v1 AS usr_pct, v2 AS nice_pct, v3 AS sys_pct, v4 AS iowait_pct, v5 AS steal_pct, v6 AS irq_pct,
       v7 AS soft_pct, v8 AS guest_pct, v9 AS gnice_pct, v10 AS idle_pct
FROM g JOIN runs r ON r.run_id = g.run_id
WHERE g.source_id IN (SELECT source_id FROM sys_series_chosen WHERE activity = 'cpu') AND {_IN_WINDOW}""",
    "disk_in_run": rf"""
WITH g AS (
  SELECT m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample, m.instance,
         {_maxima(_DISK_CODES)}
  FROM (SELECT m.*, {_coded(_DISK_CODES)} AS k FROM sys_metrics m WHERE m.activity = 'disk' AND NOT m.since_boot) m
  GROUP BY m.run_id, m.source_id, m.host, m.role, m.tool, m.format, m.ts, m.interval_s, m.sample, m.instance),
dv AS (SELECT source_id, device, any_value(device_class) AS device_class FROM sys_devices GROUP BY ALL)
SELECT g.run_id, g.source_id, g.host, g.role, g.tool, g.format, g.ts, g.interval_s, g.sample,
       epoch(g.ts) - epoch(r.start_time) AS t_s, g.instance AS device, dv.device_class,
       coalesce(dv.device_class IN ('virtual', 'group'),
                regexp_matches(g.instance, '^(loop|zram|ram|dm-|md)\d')) AS is_virtual,
       coalesce(dv.device_class = 'partition',
                regexp_matches(g.instance, '^((sd|vd|xvd|hd)[a-z]+\d+|(nvme\d+n\d+|mmcblk\d+)p\d+)$')) AS is_partition,
       coalesce(v1, v2 * 1024, v3 / 2) AS read_kb_s, coalesce(v4, v5 * 1024, v6 / 2) AS write_kb_s,
       coalesce(v7, v8 * 1024, v9 / 2) AS discard_kb_s, coalesce(v10, v11 + v12 + coalesce(v13, 0)) AS tps,
       v11 AS reads_s, v12 AS writes_s, v14 AS util_pct, v15 AS await_ms, v16 AS r_await_ms, v17 AS w_await_ms,
       v18 AS aqu_sz, v19 AS svctm_ms
FROM g JOIN runs r ON r.run_id = g.run_id LEFT JOIN dv ON dv.source_id = g.source_id AND dv.device = g.instance
WHERE g.source_id IN (SELECT source_id FROM sys_series_chosen WHERE activity = 'disk') AND {_IN_WINDOW}""",
    # The means: the views' ``dense_rank() = 1`` over (run, host, role) is the tool whose rank is the least of
    # its run, host and role's (a small GROUP BY joined back; NULLs match as PARTITION BY groups them), instead
    # of a window over every sample with all its columns, which costs more than twice as much. The same
    # rows but for the last bits of an average, which DuckDB's parallel sums give the views themselves from one
    # statement to the next (a build keeps 12 significant digits: values.stable).
    "cpu_in_run_mean": f"""
WITH best AS (
  SELECT run_id, host, role, min({_CPU_TOOL_RANK.format(t="tool")}) AS tool_rank FROM cpu_in_run GROUP BY run_id, host, role)
SELECT c.run_id, c.host, c.role, c.tool, c.cpu, count(*) AS samples,
       avg(c.usr_pct) AS usr_pct, avg(c.nice_pct) AS nice_pct, avg(c.sys_pct) AS sys_pct,
       avg(c.iowait_pct) AS iowait_pct, avg(c.steal_pct) AS steal_pct, avg(c.irq_pct) AS irq_pct,
       avg(c.soft_pct) AS soft_pct, avg(c.idle_pct) AS idle_pct
FROM cpu_in_run c JOIN best b ON b.run_id IS NOT DISTINCT FROM c.run_id AND b.host IS NOT DISTINCT FROM c.host
     AND b.role IS NOT DISTINCT FROM c.role AND b.tool_rank = {_CPU_TOOL_RANK.format(t="c.tool")}
GROUP BY c.run_id, c.host, c.role, c.tool, c.cpu""",
    "disk_in_run_mean": f"""
WITH best AS (
  SELECT run_id, host, role, min({_DISK_TOOL_RANK.format(t="tool")}) AS tool_rank FROM disk_in_run GROUP BY run_id, host, role)
SELECT d.run_id, d.host, d.role, d.device, d.tool, any_value(d.device_class) AS device_class,
       bool_or(d.is_virtual) AS is_virtual, bool_or(d.is_partition) AS is_partition,
       count(*) AS samples, avg(d.read_kb_s) AS read_kb_s, avg(d.write_kb_s) AS write_kb_s,
       avg(d.discard_kb_s) AS discard_kb_s, avg(d.tps) AS tps, avg(d.util_pct) AS util_pct,
       avg(d.await_ms) AS await_ms, avg(d.aqu_sz) AS aqu_sz
FROM disk_in_run d JOIN best b ON b.run_id IS NOT DISTINCT FROM d.run_id AND b.host IS NOT DISTINCT FROM d.host
     AND b.role IS NOT DISTINCT FROM d.role AND b.tool_rank = {_DISK_TOOL_RANK.format(t="d.tool")}
GROUP BY d.run_id, d.host, d.role, d.device, d.tool""",
}

_REAL_DISKS = "NOT is_virtual AND NOT is_partition"
# the tools the CPU and disk means read, in the order they prefer them (cpu_in_run_mean, disk_in_run_mean)
CPU_MONITORS = ("sar", "mpstat", "iostat", "vmstat")
DISK_MONITORS = ("sar", "iostat")


def _cpu_metric(name: str, col: str, hib: bool | None) -> MetricDef:
    return MetricDef(name, f"SELECT run_id, host, role, {col} AS value FROM cpu_in_run_mean WHERE cpu = 'all'",
                     "%", hib, per_host=True, monitors=CPU_MONITORS,
                     selection_sql=f"SELECT run_id, host, role, avg({col}) AS value FROM cpu_in_run_mean "
                                   "WHERE cpu IN {selection} GROUP BY run_id, host, role",
                     selection_of="cpu")


METRICS = [
    _cpu_metric("cpu_idle_pct", "idle_pct", None),
    _cpu_metric("cpu_usr_pct", "usr_pct", None),
    _cpu_metric("cpu_sys_pct", "sys_pct", None),
    _cpu_metric("cpu_iowait_pct", "iowait_pct", None),
    _cpu_metric("cpu_soft_pct", "soft_pct", None),
    _cpu_metric("cpu_nice_pct", "nice_pct", None),  # CPU time of niced processes (another job sharing the machine)
    MetricDef("disk_read_kb_s",
              f"SELECT run_id, host, role, sum(read_kb_s) AS value FROM disk_in_run_mean WHERE {_REAL_DISKS} "
              "GROUP BY run_id, host, role", "KB/s", None, per_host=True, monitors=DISK_MONITORS,
              selection_sql="SELECT run_id, host, role, sum(read_kb_s) AS value FROM disk_in_run_mean "
                            "WHERE device IN {selection} GROUP BY run_id, host, role", selection_of="device"),
    MetricDef("disk_write_kb_s",
              f"SELECT run_id, host, role, sum(write_kb_s) AS value FROM disk_in_run_mean WHERE {_REAL_DISKS} "
              "GROUP BY run_id, host, role", "KB/s", None, per_host=True, monitors=DISK_MONITORS,
              selection_sql="SELECT run_id, host, role, sum(write_kb_s) AS value FROM disk_in_run_mean "
                            "WHERE device IN {selection} GROUP BY run_id, host, role", selection_of="device"),
    MetricDef("disk_util_pct_max",
              f"SELECT run_id, host, role, max(util_pct) AS value FROM disk_in_run_mean WHERE {_REAL_DISKS} "
              "GROUP BY run_id, host, role", "%", None, per_host=True, monitors=DISK_MONITORS,
              selection_sql="SELECT run_id, host, role, max(util_pct) AS value FROM disk_in_run_mean "
                            "WHERE device IN {selection} GROUP BY run_id, host, role", selection_of="device"),
]

MODULE = ParserModule(
    name="sysstat",
    formats=[
        Format(tool="sar", name="sadf-json", description="sadf -j JSON (sysstat 10.0.3+)",
               sniff=sniff_sadf_json, parse=parse_sadf_json, priority=20),
        Format(tool="sar", name="sadf-csv", description="sadf -d / -dh CSV (';' separated)",
               sniff=sniff_sadf_csv, parse=parse_sadf_csv, priority=20),
        Format(tool="sar", name="sadf-xml", description="sadf -x XML (sysstat 8+)",
               sniff=sniff_sadf_xml, parse=parse_sadf_xml, priority=20),
        Format(tool="sar", name="sadf-p", description="sadf -p (one value per tab-separated line)",
               sniff=sniff_sadf_p, parse=parse_sadf_p, priority=20),
        Format(tool="sar", name="sar-text", description="sar text output (sar -A and parts, live or -f)",
               sniff=sniff_sar_text, parse=parse_sar_text, priority=15),
        Format(tool="sar", name="sa-binary", description="sysstat binary data file (sa), read with sadf -d",
               sniff=sniff_sa_binary, parse=parse_sa_binary, priority=20, memory_bound=True),
    ],
    schema=sm.SCHEMA,
    views=VIEWS,
    tables=sm.TABLES,
    metrics=METRICS,
    whole_views=WHOLE_VIEWS,
    # sys_series keeps the hostname the file prints in its own host column
    host_columns={"sys_metrics": ("host", "role"), "sys_series": ("role",), "sys_devices": ("role",)},
)
