"""The Discussion sections of the example's parallel-query and profile chapters, ja and en, quote
only numbers the runs give: recomputed here from the raw files (psql \\timing output, EXPLAIN ANALYZE JSON) or
from the store (the profile's per-run function shares), compared with the site's tables, and looked for in the
built pages' prose, which prints them through the data ({{< val >}})."""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT, ro_con
from test_example_report import VERDICT_WORDS, grab, rank_sum_p, rendered_discussion

STUDY = ROOT / "data" / "runs" / "example" / "campaign=example-2026-11"
TIME_LINE = re.compile(r"^-- kansoku query=(\S+) repetition=\d+\nTime: ([0-9.]+) ms", re.M)
MARKER = re.compile(r"^-- kansoku query=(\S+) repetition=\d+$", re.M)


def discussion(public: Path, chapter: str, lang: str) -> str:
    """The chapter's Discussion section as the built page prints it, whitespace folded (ja: removed)."""
    return rendered_discussion(public, chapter, lang)


def says(prose: str, lang: str, phrase: str) -> bool:
    return phrase in prose if lang == "en" else "".join(phrase.split()) in prose


def parallel_runs() -> dict[str, list[Path]]:
    """workers -> the run directories of the parallel-query study."""
    out = defaultdict(list)
    for run in sorted((STUDY / "study=parallel").glob("config=*/workers=*/rep=*")):
        out[run.parent.name.split("=", 1)[1]].append(run)
    assert sorted(out) == ["0", "1", "2"] and all(len(v) == 5 for v in out.values())
    return out


def timings() -> dict[tuple[str, str], list[float]]:
    """(workers, query) -> psql's \\timing of each run, straight from queries-timing.txt."""
    out = defaultdict(list)
    for workers, runs in parallel_runs().items():
        for run in runs:
            for query, ms in TIME_LINE.findall((run / "queries-timing.txt").read_text()):
                out[(workers, query)].append(float(ms))
    return out


def explains(workers: str) -> list[tuple[str, dict]]:
    """(query, plan) of every EXPLAIN ANALYZE of a workers level, from queries-explain.txt."""
    out = []
    for run in parallel_runs()[workers]:
        text = (run / "queries-explain.txt").read_text()
        parts = MARKER.split(text)[1:]
        for query, body in zip(parts[::2], parts[1::2]):
            out.append((query, json.loads(body)[0]["Plan"]))
    return out


def nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def fmt_ratio(x: float) -> str:
    return f"×{x:.2f}"


@pytest.fixture(scope="module")
def parallel_page(example_site) -> Path:
    return example_site[1] / "en" / "reports" / "example" / "parallel" / "index.html"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_parallel_discussion_quotes_the_measured_speed_ups(parallel_page, lang):
    times = timings()
    queries = sorted({q for _, q in times})
    assert queries == ["q1", "q2", "q3", "q4", "q5"]
    speedup, verdict = {}, {}
    for workers in ("1", "2"):
        for q in queries:
            base, value = times[("0", q)], times[(workers, q)]
            assert len(base) == len(value) == 5
            ratio = statistics.median(base) / statistics.median(value)
            speedup[(workers, q)] = fmt_ratio(ratio)
            # the documented rule: beyond noise when the exact rank-sum p <= 0.10 and the medians differ >= 2 %
            verdict[(workers, q)] = ("✓" if ratio > 1 else "✗") \
                if rank_sum_p(value, base) <= 0.10 and abs(ratio - 1) >= 0.02 else "≈"
    # the site's table prints the same speed-ups and verdicts
    rows = {r[0]: r for r in grab(parallel_page, "parallel-times").rows[1:]}
    for q in queries:
        assert rows[q][3] == speedup[("1", q)] + verdict[("1", q)], rows[q]
        assert rows[q][5] == speedup[("2", q)] + verdict[("2", q)], rows[q]
    prose = discussion(parallel_page.parents[4], "parallel", lang)
    # each query's speed-up and verdict, with one worker and with two
    words = VERDICT_WORDS[lang]
    for q in queries:
        (s1, v1), (s2, v2) = ((speedup[(w, q)], words[verdict[(w, q)]]) for w in ("1", "2"))
        line = {"en": f"{q}: {s1} with one worker, {v1}; {s2} with two, {v2}",
                "ja": f"{q}: ワーカー 1 で {s1}、判定は{v1}。ワーカー 2 で {s2}、判定は{v2}"}[lang]
        assert says(prose, lang, line), line
    # "a second worker brought nothing more": two workers against one, the medians' ratio of elapsed time
    two_over_one = [fmt_ratio(statistics.median(times[("2", q)]) / statistics.median(times[("1", q)])) for q in queries]
    assert all(r >= "×0.95" for r in two_over_one), two_over_one
    against = {"en": "Against one worker, two took {} the time for q1, {} for q2, {} for q3, {} for q4 and {} for q5",
               "ja": "ワーカー 1 に対するワーカー 2 の実行時間の比は、q1 で {}、q2 で {}、q3 で {}、q4 で {}、q5 で {} だった"}[lang]
    assert says(prose, lang, against.format(*two_over_one)), two_over_one
    # "about ×2 is the most this machine can give, and q1 and q3 come close to it"
    assert sorted(queries, key=lambda q: speedup[("1", q)])[-2:] == ["q3", "q1"] and speedup[("1", "q3")] >= "×1.90"
    q5 = {"en": f"gained the least ({speedup[('1', 'q5')]} with one worker, {speedup[('2', 'q5')]} with two)",
          "ja": f"(ワーカー 1 で {speedup[('1', 'q5')]}、ワーカー 2 で {speedup[('2', 'q5')]})"}[lang]
    assert says(prose, lang, q5)
    assert min(queries, key=lambda q: speedup[("1", q)]) == "q5"  # "q5 ... gained the least"
    # the total of the five queries: the median over a workers level's runs of each run's sum
    totals = []
    for workers in ("0", "1", "2"):
        sums = [sum(float(ms) for _, ms in TIME_LINE.findall((run / "queries-timing.txt").read_text()))
                for run in parallel_runs()[workers]]
        totals.append(statistics.median(sums))
    assert min(range(3), key=lambda i: totals[i]) == 1, totals  # "their total time is shortest with one worker"
    assert says(prose, lang, {"en": "The five queries together (Figure 4.2) tell the same story: their total time is "
                                    "shortest with one worker",
                              "ja": "合計の実行時間はワーカー 1 で最も短い"}[lang])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_parallel_discussion_says_what_the_plans_say(example_db, parallel_page, lang):
    prose = discussion(parallel_page.parents[4], "parallel", lang)
    # every EXPLAIN ANALYZE launched as many workers as allowed (the Gather nodes' "Workers Launched")
    for workers in ("0", "1", "2"):
        for query, plan in explains(workers):
            gathers = [n for n in nodes(plan) if n["Node Type"] in ("Gather", "Gather Merge")]
            assert sum(n.get("Workers Launched", 0) for n in gathers) == int(workers), (workers, query)
            if workers != "0" and query == "q5":
                # the median's ordered-set aggregate stays above the Gather: the leader alone aggregates
                assert plan["Node Type"] == "Aggregate" and plan["Plans"][0]["Node Type"] == "Gather"
    assert says(prose, lang, {"en": "the median of parallel workers launched is 0, 1 and 2, with the same minimum and maximum",
                              "ja": "起動された並列ワーカー数の中央値は 0、1、2 で、最小と最大も同じだった"}[lang])
    assert says(prose, lang, {"en": "its plan is an Aggregate above a Gather",
                              "ja": "プランは Gather の上の Aggregate となり"}[lang])
    # planning times as the store has them (median over runs), as the table prints them
    with ro_con(example_db) as con:
        planning = con.sql("""
            SELECT f.value, count(*) FILTER (WHERE s.planning_ms >= 1) AS slow
              FROM query_statements s JOIN run_factors f ON f.run_id = s.run_id AND f.factor = 'workers'
             WHERE s.run_id LIKE 'campaign=example-2026-11/study=parallel/%' AND s.mode = 'explain'
             GROUP BY ALL ORDER BY 1""").fetchall()
    assert [w for w, _ in planning] == ["0", "1", "2"] and all(slow == 0 for _, slow in planning)
    table = [r[2] for r in grab(parallel_page, "parallel-workers").rows[1:]]
    assert says(prose, lang, {"en": "({}, {} and {} ms with 0, 1 and 2 workers)",
                              "ja": "(ワーカー 0、1、2 で {}、{}、{} ms)"}[lang].format(*table)), table
    # the dominant plan node per query, as the table prints it
    dominant = {r[0]: r[6] for r in grab(parallel_page, "parallel-times").rows[1:]}
    by_node = defaultdict(list)
    for q, node in sorted(dominant.items()):
        by_node[node].append(q)
    assert dict(by_node) == {"Seq Scan": ["q1", "q4"], "Aggregate": ["q2", "q5"], "Hash Join": ["q3"]}
    assert says(prose, lang, {"en": "the Seq Scan for q1 and q4, the Hash Join for q3, the Aggregate for q2 and q5",
                              "ja": "q1 と q4 は Seq Scan、q3 は Hash Join、q2 と q5 は Aggregate"}[lang])


def profile_shares(db: Path) -> dict[tuple[str, str], dict[str, list[float]]]:
    """(clients, function) -> {'self': [per run], 'total': [per run]} from the store's per-run profiles."""
    out: dict = defaultdict(lambda: {"self": [], "total": []})
    with ro_con(db) as con:
        rows = con.sql("""
            SELECT f.value, p.function, p.self_pct, p.total_pct
              FROM profile_functions p JOIN run_factors f ON f.run_id = p.run_id AND f.factor = 'clients'
             WHERE p.run_id LIKE 'campaign=example-2026-11/study=profile/%' AND p.profile = 'cpu'""").fetchall()
    for clients, function, self_pct, total_pct in rows:
        out[(clients, function)]["self"].append(self_pct)
        out[(clients, function)]["total"].append(total_pct)
    return out


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_profile_discussion_quotes_the_measured_shares(example_site, lang):
    db, public = example_site
    shares = profile_shares(db)
    prose = discussion(public, "profile", lang)

    def med(clients: str, function: str, kind: str = "self") -> float:
        values = shares[(clients, function)][kind]
        assert len(values) <= 3, (clients, function, values)
        return statistics.median(values + [0.0] * (3 - len(values)))  # absent from a run: no sample there

    def pct(clients, function, kind="self") -> str:
        return f"{med(clients, function, kind):.2f} %"

    # the table prints the same medians
    page = public / "en" / "reports" / "example" / "profile" / "index.html"
    table = {r[0]: [re.sub(r"\(\*\d\)", "", c) for c in r[1:]] for r in grab(page, "profile-top").rows[2:]}
    for function, cells in table.items():
        assert cells == [f"{med(c, function, k):.2f}" for c in ("1", "8") for k in ("self", "total")], function
    # at one client: the largest self shares, in the order the prose gives them
    top = sorted({f for c, f in shares if c == "1"}, key=lambda f: -med("1", f))[:5]
    assert top == ["finish_task_switch.isra.0", "iowrite16", "_raw_spin_unlock_irqrestore", "_raw_spin_unlock_irq",
                   "hash_search_with_hash_value"], top
    for function in ("finish_task_switch.isra.0", "iowrite16", "_raw_spin_unlock_irqrestore", "_raw_spin_unlock_irq"):
        assert says(prose, lang, f"`{function}` {pct('1', function)}"), function
    # PostgreSQL built with symbols: frames perf could not name are a fraction of a percent of the samples
    assert med("1", "[unknown] (postgres)", "total") < 1 and med("8", "[unknown] (postgres)", "total") < 1
    named = {"en": ["`hash_search_with_hash_value` {} self", "(`_bt_compare` {})", "(`heap_page_prune` {} self, {} with"],
             "ja": ["`hash_search_with_hash_value` self {}", "(`_bt_compare` {})", "(`heap_page_prune` self {}、呼び出す関数を含めて {}"]}[lang]
    assert says(prose, lang, named[0].format(pct("1", "hash_search_with_hash_value")))
    assert says(prose, lang, named[1].format(pct("1", "_bt_compare")))
    assert says(prose, lang, named[2].format(pct("1", "heap_page_prune"), pct("1", "heap_page_prune", "total")))

    # from 1 to 8 clients: the change in self share (points) and whether it is beyond noise (3 runs against 3)
    def change(function: str) -> tuple[str, str]:
        a, b = ([*shares[(c, function)]["self"], *[0.0] * (3 - len(shares[(c, function)]["self"]))] for c in ("1", "8"))
        diff = statistics.median(b) - statistics.median(a)
        # with 3 runs against 3 the exact two-sided rank-sum p is at most 0.10 only when the runs do not overlap
        assert rank_sum_p([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == pytest.approx(0.10)
        beyond = min(b) > max(a) or max(b) < min(a)
        return f"{diff:+.2f}".replace("-", "−"), ("higher" if diff > 0 else "lower") if beyond else "within noise"

    both = {f for c, f in shares if c == "1"} & {f for c, f in shares if c == "8"}
    grew_most = max(both, key=lambda f: med("8", f) - med("1", f))  # "grew the most"
    assert grew_most == "finish_task_switch.isra.0"
    assert change("finish_task_switch.isra.0")[1] == "higher"
    def size(points: str) -> str:  # the prose says "more" or "less" and prints the difference's size
        return points.lstrip("+−")

    grew = {"en": "`finish_task_switch.isra.0` from {} to {} self ({} points more)",
            "ja": "`finish_task_switch.isra.0` は self {} から {} に {} ポイント増え"}[lang]
    assert says(prose, lang, grew.format(pct("1", "finish_task_switch.isra.0"), pct("8", "finish_task_switch.isra.0"),
                                         size(change("finish_task_switch.isra.0")[0])))
    for function in ("handle_softirqs", "__futex_abstimed_wait_common"):
        assert change(function)[1] == "higher", function
    points = size(change("handle_softirqs")[0])
    assert says(prose, lang, {"en": f"`handle_softirqs` ({points} points more)",
                              "ja": f"`handle_softirqs` ({points} ポイント増)"}[lang])
    # __futex_abstimed_wait_common is in no table: the prose names the figure, not a number
    assert says(prose, lang, {"en": "`__futex_abstimed_wait_common` (Figure 5.2;",
                              "ja": "`__futex_abstimed_wait_common` (図 5.2。"}[lang])
    points, verdict = change("iowrite16")
    assert verdict == "lower"
    fell = {"en": "`iowrite16` fell from {} to {} ({} points less)", "ja": "`iowrite16` は {} から {} に {} ポイント減った"}[lang]
    assert says(prose, lang, fell.format(pct("1", "iowrite16"), pct("8", "iowrite16"), size(points)))
    moved = {"en": "`_raw_spin_unlock_irqrestore` moved from {} to {}",
             "ja": "`_raw_spin_unlock_irqrestore` は {} から {} になった"}[lang]
    assert says(prose, lang, moved.format(pct("1", "_raw_spin_unlock_irqrestore"), pct("8", "_raw_spin_unlock_irqrestore")))
    with ro_con(db) as con:
        # iowrite16 is the virtio disk's notification at the end of a commit's WAL flush: its largest stack says so
        [(stack,)] = con.sql("""
            SELECT stack FROM profile_run_stacks
             WHERE run_id LIKE 'campaign=example-2026-11/study=profile/%clients=1/%' AND leaf = 'iowrite16'
             ORDER BY samples DESC LIMIT 1""").fetchall()
        # at 8 clients a large part of _raw_spin_unlock_irqrestore is the wake-up by XLogFlush's LWLockRelease,
        # and the futex waits' stacks reach no PostgreSQL frame (the C library has no frame pointers)
        [(woken, spin, waits_named)] = con.sql("""
            SELECT sum(samples) FILTER (WHERE stack LIKE '%XLogFlush;LWLockRelease;sem_post%'
                                          AND leaf = '_raw_spin_unlock_irqrestore'),
                   sum(samples) FILTER (WHERE leaf = '_raw_spin_unlock_irqrestore'),
                   count(*) FILTER (WHERE stack LIKE '%__futex_abstimed_wait_common%' AND stack LIKE '%PostgresMain%')
              FROM profile_stacks WHERE run_id LIKE 'campaign=example-2026-11/study=profile/%clients=8/%'""").fetchall()
    path = ["CommitTransactionCommand", "CommitTransaction", "XLogFlush", "XLogWrite", "fdatasync", "virtqueue_notify",
            "iowrite16"]
    frames = stack.split(";")
    assert [f for f in frames if f in path] == path, stack
    assert says(prose, lang, "`CommitTransactionCommand` → `CommitTransaction` → `XLogFlush` → `XLogWrite` → `fdatasync` → …")
    assert woken / spin > 0.4 and waits_named == 0, (woken, spin, waits_named)
    assert says(prose, lang, "(`XLogFlush` → `LWLockRelease` → `sem_post`)")
    # the flame graphs' towers: the commit's narrower, the wait for the client's next message wider at 8 clients
    assert med("8", "CommitTransactionCommand", "total") < med("1", "CommitTransactionCommand", "total")
    assert med("8", "pq_getbyte", "total") > med("1", "pq_getbyte", "total")
    assert says(prose, lang, {"en": "at 8 clients the tower of `CommitTransactionCommand` is narrower and that of `pq_getbyte`",
                              "ja": "8 クライアントでは `CommitTransactionCommand` の塔が細くなり、`pq_getbyte`"}[lang])
    # what the data cannot show is said
    for phrase in {"en": ["2 vCPUs", "99 Hz for 30 s, 3 runs per condition"],
                   "ja": ["2 vCPU", "99 Hz で 30 秒"]}[lang]:
        assert says(prose, lang, phrase), phrase
