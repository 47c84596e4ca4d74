"""What the example report and data/runs/example/README.md say about machines, dates and counts matches the
run records: the run.toml of every run, read here directly.

The records say: the 80 scale-up runs ran on an AMD EPYC guest; the 2 strace and 12 fio runs on an Intel Xeon
guest, a day earlier; the 15 parallel-query, 6 profile and 18 replication runs on the AMD EPYC guest again, two
days later. So the syscall chapter must not say "the same machine as chapter 1"."""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict

import pytest

from conftest import ROOT, ro_con
from kansoku.ingest.runs import machine_fingerprint

EXAMPLE = ROOT / "data" / "runs" / "example"
CONTENT = ROOT / "content" / "reports" / "example"
README = EXAMPLE / "README.md"
CHAPTER_STUDIES = {"scaleup": ["scaleup"], "syscalls": ["syscalls"], "disk": ["fio"], "parallel": ["parallel"],
                   "profile": ["profile"], "replication": ["replication"], "client-server": ["clientserver"], "versions": ["versions"],
                   "walsync": ["fsync", "walsync"], "softirq": ["softirq"], "partition": ["partition"], "fdw": ["fdw"],
                   "fts": ["fts"]}
# the README's name of each study in its run count, in the order it lists them
STUDY_WORDS = {"scaleup": "scale-up", "syscalls": "strace", "fio": "fio", "parallel": "parallel-query",
               "profile": "profile", "replication": "replication", "clientserver": "client/server", "versions": "versions",
               "fsync": "fsync", "walsync": "WAL sync method", "softirq": "softirq", "partition": "partitioning",
               "fdw": "FDW", "fts": "full-text search"}
# a study whose runs show CPU time at nice (sar %nice) shared its machine with other work: its chapter must say so,
# and a chapter must not say so of runs that show none; these chapters say that nothing else ran
NICE_TEST_RUN = {"en": "a test run at nice 19 shared the 2 vCPUs", "ja": "nice 19 のテスト実行が同じ 2 vCPU を使っていた"}
QUIET = {"en": "Nothing else ran on the machine", "ja": "このマシンでは他の処理を動かしていない"}
QUIET_STATED = {"parallel", "profile", "replication"}
SAME_MACHINE = {"en": re.compile(r"same machine", re.I), "ja": re.compile(r"同じマシン")}


@pytest.fixture(scope="module")
def records() -> dict[str, list[dict]]:
    """study -> the run.toml of each of its runs."""
    out: dict[str, list[dict]] = defaultdict(list)
    for p in sorted(EXAMPLE.rglob("run.toml")):
        if any(part.startswith(".") for part in p.relative_to(EXAMPLE).parts):
            continue  # an interrupted attempt kept aside (ingest ignores hidden directories)
        study = re.search(r"study=([^/]+)", str(p)).group(1)
        with open(p, "rb") as fh:
            out[study].append(tomllib.load(fh))
    return out


@pytest.fixture(scope="module")
def nice_pct(example_db) -> dict[str, float]:
    """study -> the largest mean CPU %nice of any of its runs (sar, from the store)."""
    with ro_con(example_db) as con:
        rows = con.sql("""
            SELECT regexp_extract(run_id, 'study=([^/]+)', 1), max(value) FROM run_metrics
             WHERE metric = 'cpu_nice_pct' AND run_id LIKE 'campaign=example-2026-11/%' GROUP BY 1""").fetchall()
    return dict(rows)


def shared(nice_pct: dict[str, float]) -> set[str]:
    return {study for study, nice in nice_pct.items() if nice > 1.0}


def machines_of(runs: list[dict]) -> set[str]:
    return {machine_fingerprint(r["machine"]) for r in runs}


def cpu_short(cpu_model: str) -> str:
    """'Intel(R) Xeon(R) Processor @ 2.50GHz' -> 'Intel Xeon'; 'AMD EPYC' -> 'AMD EPYC'."""
    return " ".join(re.sub(r"\(R\)|\(TM\)", "", cpu_model).split()[:2])


def dates(runs: list[dict]) -> set[str]:
    return {r["start"].astimezone().date().isoformat() if r["start"].tzinfo is None else
            r["start"].date().isoformat() for r in runs}


def test_readme_counts_dates_and_machines_match_the_records(records, nice_pct):
    text = README.read_text(encoding="utf-8")
    total = sum(len(v) for v in records.values())
    assert set(records) == set(STUDY_WORDS), sorted(records)
    counts = ", ".join(f"{len(records[s])} {w}" for s, w in STUDY_WORDS.items())
    assert f"{total} runs ({counts})" in text
    every = [r for v in records.values() for r in v]
    n_machines = len(machines_of(every))
    assert n_machines == 3  # what the README and the prose below are written for
    assert "three small virtual machines" in text and "one small machine" not in text
    per_machine: dict[str, int] = defaultdict(int)
    for study in STUDY_WORDS:
        runs = records[study]
        [machine] = machines_of(runs)  # each study ran on one machine
        per_machine[runs[0]["machine"]["cpu_model"]] += len(runs)
        cpu = runs[0]["machine"]["cpu_model"]
        [day] = dates(runs)
        kernel = runs[0]["machine"]["kernel"].split()[1]
        row = next((l for l in text.splitlines() if l.startswith("|") and f"`{cpu}`" in l and f"`{kernel}`" in l),
                   None)
        assert row is not None, f"README: no machine row for {cpu} with kernel {kernel}"
        assert day in row and f"study={study}" in row, row
        if sum(1 for s in STUDY_WORDS if f"study={s}" in row) > 1:
            assert f"`study={study}`: {len(runs)}" in row, row  # the row splits its runs per study
    # the table of studies: one row per study with its run count, date and machine
    for study, runs in records.items():
        row = next((l for l in text.splitlines() if l.startswith(f"| `study={study}` |")), None)
        assert row is not None, f"README: no row for study={study} in the table of studies"
        cells = [c.strip() for c in row.strip("|").split("|")]
        [day] = dates(runs)
        assert cells[1] == str(len(runs)) and cells[3] == day, row
        assert cells[4] == cpu_short(runs[0]["machine"]["cpu_model"]) + " guest", row
        conditions, reps = (int(x) for x in cells[2].split(" × "))
        assert conditions * reps == len(runs) and len({r["factors"].get("rep", "1") for r in runs}) == reps, row
    # a machine's row counts every run that ran on it and names every day it was used
    for cpu, kernel in {(r["machine"]["cpu_model"], r["machine"]["kernel"].split()[1]) for r in every}:
        runs = [r for r in every if (r["machine"]["cpu_model"], r["machine"]["kernel"].split()[1]) == (cpu, kernel)]
        row = next(l for l in text.splitlines() if l.startswith("|") and f"`{cpu}`" in l and f"`{kernel}`" in l)
        assert f"| {len(runs)} (" in row and all(d in row for d in dates(runs)), row
    assert set(nice_pct) == set(STUDY_WORDS)
    for study in shared(nice_pct):
        [day] = dates(records[study])
        assert day in text and "a test run at nice 19 shared" in text
    if not shared(nice_pct):
        assert "a test run at nice 19 shared" not in text
    # the opening sentence's dates and CPUs
    opening = text.split("\n\n", 2)[1]
    for study in STUDY_WORDS:
        [day] = dates(records[study])
        assert day in opening and cpu_short(records[study][0]["machine"]["cpu_model"]) in opening


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_chapter_names_the_machine_its_runs_ran_on(records, nice_pct, lang):
    first = records["scaleup"]
    for chapter, studies in CHAPTER_STUDIES.items():
        runs = [r for s in studies for r in records[s]]
        text = (CONTENT / f"{chapter}.{lang}.md").read_text(encoding="utf-8")
        setup = text.split("## ", 3)[2]  # the setup section
        cpus = {cpu_short(r["machine"]["cpu_model"]) for r in runs}
        for cpu in cpus:
            assert cpu in setup, f"{chapter}.{lang}.md: the setup does not name {cpu}"
        if chapter != "scaleup" and machines_of(runs) != machines_of(first):
            assert not SAME_MACHINE[lang].search(setup) or ("not the machine of chapter 1" in setup.lower()
                                                             or "第 1 章とは別のマシン" in setup
                                                             or "第 1 章の AMD EPYC の仮想マシンではない" in setup), \
                f"{chapter}.{lang}.md says the same machine as chapter 1, the records say otherwise"
            assert cpu_short(first[0]["machine"]["cpu_model"]) in setup  # says which machine chapter 1 used
        for day in dates(runs):
            assert day in setup, f"{chapter}.{lang}.md: the setup does not give the date {day} of its runs"
        folded = "".join(setup.split())
        says_shared = NICE_TEST_RUN[lang].replace(" ", "") in folded or "nice19" in folded
        assert says_shared == any(s in shared(nice_pct) for s in studies), \
            f"{chapter}.{lang}.md: the setup says a test run shared the machine: {says_shared}; the runs' %nice: " \
            f"{[nice_pct[s] for s in studies]}"
        if chapter in QUIET_STATED:
            assert not says_shared and QUIET[lang].replace(" ", "") in folded, \
                f"{chapter}.{lang}.md: the setup does not say that nothing else ran"


REPLICATION_SETUP = {
    "en": ["same small virtual machine with 2 vCPUs", "FY2017 report §8.2.1", "Nothing else ran on the machine",
           "the %nice column of the first table is 0.0 in every run", "role `server`"],
    "ja": ["2 vCPU (AMD EPYC、23.5 GiB) の同じ小さな仮想マシン", "8.2.1 節", "このマシンでは他の処理を動かしていない",
           "%nice の列はどの実行でも 0.0", "ロール `server`"],
}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_replication_chapter_says_one_machine_for_everything_and_nothing_else_ran(records, nice_pct, lang):
    """The replication runs: primary, both standbys and pgbench on one 2-vCPU machine (FY2017's set-up cited),
    with nothing else running (no CPU time at nice in any run); the monitored host's role is the records'."""
    runs = records["replication"]
    assert {r["machine"]["cpu_count"] for r in runs} == {2} and {r.get("role") for r in runs} == {"server"}
    assert {r["server"]["port"] for r in runs} == {"5440"}
    setup = " ".join((CONTENT / f"replication.{lang}.md").read_text(encoding="utf-8").split("## ", 3)[2].split())
    for phrase in REPLICATION_SETUP[lang]:
        assert phrase in setup, f"replication.{lang}.md setup: {phrase!r} missing"
    text = README.read_text(encoding="utf-8")
    assert nice_pct["replication"] == 0
    assert "one machine for everything" in text and "nothing else ran" in text


def test_machine_described_in_plain_words():
    """CPUs counted as CPUs (virtual ones on a virtual machine), a paravirtual disk named as such and never
    'rotational', the virtualisation as detected: a container in a virtual machine when its disks say so."""
    from kansoku.report.machines import describe, disk_kind

    vm = {"cpu_model": "AMD EPYC", "cpu_count": 2, "virtualization": "docker",
          "disks": {"vda": {"rotational": True, "size_bytes": 1 << 38}}}
    d = describe(vm)
    assert d["cpu"] == {"en": "2 vCPUs (AMD EPYC)", "ja": "2 vCPU (AMD EPYC)"}
    assert d["virtualization"]["en"] == "docker container in a virtual machine"
    assert "virtio disk" in d["storage"]["en"] and "rotational" not in d["storage"]["en"]
    # a hypervisor's disk reported rotational is a virtual disk; on bare metal the kernel's word stands
    assert disk_kind("sda", {"rotational": True}, {"virtualization": "kvm"}) == "virtual"
    bare = {"cpu_model": "Xeon", "cpu_count": 1, "virtualization": "none", "disks": {"sda": {"rotational": True}}}
    assert describe(bare)["cpu"]["en"] == "1 CPU (Xeon)"
    assert describe(bare)["virtualization"]["en"] == "none (a physical machine)"
    assert "rotational" in describe(bare)["storage"]["en"]


def test_both_virtualisation_layers_are_worded_where_they_differ():
    """A container in a virtual machine, both layers recorded (systemd-detect-virt --vm, --container): the words
    name both, in the chapter's block and the appendix alike; one layer alone is worded as before."""
    from kansoku.report.environment import machine_value
    from kansoku.report.machines import describe

    both = {"cpu_count": 2, "virtualization": "docker", "virtualization_layers": {"vm": "kvm", "container": "docker"}}
    words = {"en": "docker container in a virtual machine (kvm)", "ja": "仮想マシン (kvm) 上の docker コンテナ"}
    assert describe(both)["virtualization"] == words
    assert machine_value("virtualization", "docker", both) == words
    vm_only = {"virtualization": "kvm", "virtualization_layers": {"vm": "kvm", "container": "none"}}
    assert describe(vm_only)["virtualization"]["en"] == "virtual machine (kvm)"
    in_container = {"virtualization": "docker", "virtualization_layers": {"vm": "none", "container": "docker"}}
    assert describe(in_container)["virtualization"]["en"] == "docker container"


def test_example_machine_words_are_the_same_in_chapter_and_appendix(example_site):
    """The words a chapter's machines block uses for the virtualisation and the disk are the appendix's."""
    _, public = example_site
    for lang, virt, disk in (("en", "docker container in a virtual machine", "virtio disk"),
                             ("ja", "仮想マシン上の docker コンテナ", "virtio ディスク")):
        chapter = (public / lang / "reports/example/scaleup/index.html").read_text(encoding="utf-8")
        block = chapter.split('class="chapter-machines"')[1].split("</section>")[0]
        appendix = (public / lang / "reports/example/appendix/index.html").read_text(encoding="utf-8")
        for words in (virt, disk):
            assert words in block and words in appendix, (lang, words)
        assert "× 2" not in block and "vCPU" in block
        assert 'href="#chapter-machines"' in chapter.split('class="page-toc"')[1].split("</details>")[0]
        # every configuration column of the settings is named, not only counted
        heads = re.findall(r'<th scope="col">([^<]*)(?:<br>)?[^<]*</th>',
                           appendix.split('class="plain env-settings env-settings-varying"')[1].split("</thead>")[0])
        assert heads and all(h.strip() and not re.fullmatch(r"\d+ (runs|実行)", h.strip()) for h in heads[1:]), heads


def test_a_machine_described_in_more_detail_by_a_later_collect_is_the_same_machine(records):
    """A later collect records the virtualisation layers beside the older key; the runs of one machine
    measured before and after keep one fingerprint."""
    [inv] = [r["machine"] for r in records["fts"][:1]]
    assert "virtualization_layers" in inv
    older = {k: v for k, v in inv.items() if k != "virtualization_layers"}
    assert machine_fingerprint(older) == machine_fingerprint(inv)
    assert machine_fingerprint({**older, "cpu_count": 4}) != machine_fingerprint(inv)
