"""Where a test run's time went, from a timeline (KANSOKU_TEST_TIMELINE=FILE python3 -m pytest -q; see conftest's
pytest_runtest_protocol): each process's files in the order it ran them (start, end, wall, CPU with the tools it
started, idle gaps), the files that cost most CPU, the tests that cost most.

    python3 tests/timeline.py FILE                 # the summary
    python3 tests/timeline.py FILE --write-costs   # also tests/file_seconds.json: each file's wall seconds,
                                                   # the quick run's scheduling order (conftest)
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    rows = [json.loads(line) for line in Path(argv[0]).read_text().splitlines() if line.strip()]
    t0 = min(r["start"] for r in rows)
    per_worker = collections.defaultdict(list)
    for r in rows:
        per_worker[r["worker"]].append(r)
    for w, rs in sorted(per_worker.items()):
        rs.sort(key=lambda r: r["start"])
        cpu = sum(r["cpu_self"] + r["cpu_children"] for r in rs)
        print(f"== {w}: {len(rs)} tests, {rs[0]['start'] - t0:.0f}..{rs[-1]['end'] - t0:.0f} s, CPU {cpu:.0f} s")
        segments: list[list] = []
        for r in rs:
            f = r["test"].split("::")[0]
            if segments and segments[-1][0] == f:
                segments[-1][2] = r["end"]
                segments[-1][3] += r["cpu_self"] + r["cpu_children"]
                segments[-1][4] += 1
            else:
                segments.append([f, r["start"], r["end"], r["cpu_self"] + r["cpu_children"], 1])
        prev = None
        for f, s, e, c, n in segments:
            gap = f"  idle {s - prev:.1f} s before" if prev is not None and s - prev > 1 else ""
            print(f"  {s - t0:6.0f} {e - t0:6.0f}  wall {e - s:6.1f}  CPU {c:6.1f}  {n:3d} tests  {f}{gap}")
            prev = e
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for r in rows:
        v = files[r["test"].split("::")[0]]
        v[0] += r["cpu_self"]
        v[1] += r["cpu_children"]
        v[2] += r["end"] - r["start"]
        v[3] += 1
    print(f"CPU of the tests: {sum(v[0] + v[1] for v in files.values()):.0f} s; the files that cost most:")
    for f, (own, child, wall, n) in sorted(files.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:30]:
        print(f"  CPU {own + child:6.1f} (pytest {own:5.1f}, tools {child:6.1f})  wall {wall:6.1f}  {n:3d} tests  {f}")
    print("the tests that cost most CPU:")
    for r in sorted(rows, key=lambda r: -(r["cpu_self"] + r["cpu_children"]))[:20]:
        print(f"  {r['cpu_self'] + r['cpu_children']:6.1f}  wall {r['end'] - r['start']:6.1f}  {r['worker']}  {r['test']}")
    if "--write-costs" in argv:
        out = Path(__file__).with_name("file_seconds.json")
        costs = {Path(f).name: round(v[2], 1) for f, v in sorted(files.items())}
        out.write_text(json.dumps(costs, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
