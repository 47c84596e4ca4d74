"""The test-environment appendix: hardware, software versions and PostgreSQL settings of a report's
measured runs, read from their run.toml (``runs.run_toml``); and, for its transcribed runs, the environment
the cited report states (``[published.environment]`` of the transcription), labelled as transcribed."""

from __future__ import annotations

import json
from typing import Any, Callable

from kansoku import words
from kansoku.model import Environment
from kansoku.report import machines
from kansoku.report.methods import citation_text
from kansoku.report.provenance import human_size
from kansoku.spec.model import LANGS
from kansoku.store.db import Store

# What the appendix reads: runs.run_toml (run.toml as JSON, written by tools/collect or by hand) of the
# report's measured runs. [machine]: hardware and OS; [versions]: one line per tool; [server]: PostgreSQL
# settings as captured with the run. Shown settings: those [server].non_default names (pg_settings
# source <> 'default', written by tools/collect) plus any setting whose value differs between runs;
# without a non_default list, every captured setting. Keys below are not settings.
SERVER_META = {"conninfo", "version", "server_version", "config", "database", "non_default", "capture_error"}
SETTING_NOISE = {"application_name"}  # set by the collector's own connection
# [machine] keys in the order shown; their labels are the words env_field_<key>.
MACHINE_FIELDS = ["hostname", "cpu_model", "cpu_count", "nproc", "mem_total_kib", "swap_total_kib", "os", "kernel",
                  "virtualization", "filesystem", "disks"]


# [published.environment] keys in the order shown; their labels are the words env_pub_<key> (others: the key)
PUBLISHED_FIELDS = ["machine", "cpu", "cores", "memory", "storage", "os", "software", "scale", "duration_s", "runs",
                    "note", "source"]


def _words(v: Any) -> dict[str, str] | str:
    if isinstance(v, dict):
        return {lang: words.pick(v, lang) for lang in LANGS}
    return str(v)


def transcribed_environments(values: list[tuple]) -> tuple[list[dict[str, Any]], int]:
    """The environments the cited reports state for the transcribed runs (``values``: their parts of
    :func:`run_environments`, in run id order): one entry per distinct [published.environment], with the
    citations (report, table, section) of the tables that state it and their number of runs; and the number
    of transcribed runs whose transcription states none."""
    groups: dict[str, dict] = {}
    without = 0
    for _, env, cit in values:
        if not env:
            without += 1
            continue
        key = json.dumps(env, sort_keys=True, ensure_ascii=False)
        g = groups.setdefault(key, {"env": env, "citations": [], "runs": 0})
        g["runs"] += 1
        if cit and cit not in g["citations"]:
            g["citations"].append(cit)
    out = []
    for g in groups.values():
        env = g["env"]
        keys = [k for k in PUBLISHED_FIELDS if k in env] + sorted(set(env) - set(PUBLISHED_FIELDS))
        fields = [{"label": words.both(f"env_pub_{k}") if k in PUBLISHED_FIELDS else {lang: k for lang in LANGS},
                   "value": _words(env[k])} for k in keys]
        cits = {lang: words.t(lang, "env_values_separator").join(sorted({citation_text(c, lang) for c in g["citations"]}))
                for lang in LANGS}
        out.append({"citation": cits, "runs": g["runs"], "fields": fields,
                    "source": {lang: words.t(lang, "env_transcribed_source", cits[lang], n=g["runs"])
                               for lang in LANGS}})
    out.sort(key=lambda e: e["citation"]["en"])
    return out, without


def machine_value(key: str, v: Any, inv: dict[str, Any] | None = None) -> dict[str, str] | str:
    """One [machine] value as the appendix and a run page show it; ``inv``, the whole inventory (a disk's
    kind and the virtualisation read it: report/machines.py, the words a chapter's block uses too)."""
    inv = inv or {}
    if key == "virtualization":
        return machines.virtualisation(inv or {"virtualization": v})
    if key in ("mem_total_kib", "swap_total_kib") and isinstance(v, (int, float)):
        return human_size(int(v) * 1024)
    if key == "filesystem" and isinstance(v, dict):
        parts = [str(v.get("device", "")), str(v.get("fstype", ""))]
        s = " ".join(p for p in parts if p)
        if v.get("mount"):
            s += f" ({v['mount']})"
        return s
    if key == "disks" and isinstance(v, dict):
        items = []
        for name, d in sorted(v.items()):
            if not isinstance(d, dict):
                items.append({lang: f"{name}: {d}" for lang in LANGS})
                continue
            size = human_size(d.get("size_bytes")) if d.get("size_bytes") is not None else ""
            kind = machines.disk_kind(str(name), d, inv)
            items.append({lang: ", ".join(x for x in (f"{name}: {size}".rstrip(": "),
                                                     words.t(lang, f"env_disk_{kind}") if kind else "") if x)
                          for lang in LANGS})
        return {lang: "; ".join(i[lang] for i in items) for lang in LANGS}
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return str(v)


# What one run gives the appendix (:func:`run_environments`), tuples of plain values kept for every run of a
# campaign (report/cache.py ``ItemCache.per_run``) and read back each build:
# - a measured run: ("measured", captured (its run.toml has [machine], [versions] or [server]), [versions],
#   [server], its factors (sorted pairs), its own host's role, its other hosts' captures ((host_dir, role,
#   [versions], [server]), by host_dir));
# - a transcribed run: ("transcribed", [published.environment], [published.citation]); another: None.


def run_environments(store: Store, run_ids: list[str]) -> dict[str, tuple | None]:
    """Each run's part of the appendix, from its row in ``runs``, its factors and its hosts (``run_hosts``)
    alone: three statements for any number of runs. What several runs captured alike (the same settings, the
    same versions) is one object, held once in a pickle of them."""
    if not run_ids:
        return {}
    share: dict[Any, Any] = {}

    def one(x: Any) -> Any:
        key = (type(x).__name__, json.dumps(x, ensure_ascii=False) if isinstance(x, (dict, list)) else x)
        try:
            return share.setdefault(key, x)
        except TypeError:  # a tuple holding a dict (a host's captures): its parts are shared
            return x

    factors: dict[str, list[tuple[str, str]]] = {}
    for run_id, f, v in store.query(
            "SELECT run_id, factor, value FROM run_factors WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [run_ids]):
        factors.setdefault(run_id, []).append(one((one(f), one(v))))
    own_role: dict[str, str] = {}
    hosts: dict[str, list[tuple]] = {}
    for run_id, host_dir, role, ht in store.query(
            "SELECT run_id, host_dir, role, host_toml::VARCHAR FROM run_hosts WHERE run_id IN "
            "(SELECT unnest(?::VARCHAR[])) ORDER BY run_id, host_dir", [run_ids]):
        if host_dir == "":
            own_role[run_id] = role
            continue
        doc = json.loads(ht) if ht else {}
        if ht is not None and isinstance(doc, dict) and any(isinstance(doc.get(k), dict) for k in ("versions", "server")):
            hosts.setdefault(run_id, []).append(one((host_dir, role, one(doc.get("versions")), one(doc.get("server")))))
    out: dict[str, tuple | None] = {}
    for run_id, origin, rt in store.query(
            "SELECT run_id, origin, run_toml::VARCHAR FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
            "ORDER BY run_id", [run_ids]):
        doc = json.loads(rt) if rt else {}
        if origin == "transcribed":
            pub = doc.get("published") or {}
            out[run_id] = ("transcribed", one(pub.get("environment") or {}), one(pub.get("citation") or {}))
        elif origin != "measured":
            out[run_id] = None
        elif not any(isinstance(doc.get(k), dict) for k in ("machine", "versions", "server")):
            out[run_id] = ("measured", False, None, None, (), None, ())
        else:
            out[run_id] = ("measured", True, one(doc.get("versions")), one(doc.get("server")),
                           one(tuple(sorted(factors.get(run_id, [])))), own_role.get(run_id),
                           one(tuple(hosts.get(run_id, ()))))
    return out


def run_hosts_digests(store: Store, run_ids: list[str]) -> dict[str, str]:
    """The sha256 of what :func:`run_environments` reads of each run's hosts (``run_hosts``, which a run's
    fingerprint does not cover: report/cache.py RUN_FINGERPRINTS_SQL), by run."""
    return dict(store.query(
        "SELECT run_id, sha256(string_agg(concat_ws(chr(31), host_dir, role, coalesce(host_toml::VARCHAR, '')), "
        "chr(30) ORDER BY host_dir, role, host_toml::VARCHAR)) FROM run_hosts "
        "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY run_id", [run_ids])) if run_ids else {}


def environment(store: Store, run_ids: list[str], rm: "machines.RunMachines | None" = None,
                names: dict[str, dict[str, str]] | None = None,
                kept: Callable[..., dict[str, Any]] | None = None) -> Environment:
    """Hardware, software versions and PostgreSQL settings of the report's measured runs (see above). The
    machines are those of report/machines.py (every host's, by inventory), each column headed by its name.
    Each run's part is :func:`run_environments`' (``kept(name, runs, compute, extra)`` gives them as an earlier
    build kept them, computing those of new or changed runs alone: report/cache.py ``ItemCache.per_run``),
    combined here."""
    if rm is None:
        rm = machines.run_machines(store, run_ids)
        names = machines.machine_names(rm)
    ordered = sorted(set(run_ids))

    def compute(runs: list[str]) -> dict[str, Any]:
        return run_environments(store, runs)

    per_run = (kept("environment", ordered, compute, run_hosts_digests(store, ordered)) if kept is not None
               else compute(ordered))
    values = [(r, per_run.get(r)) for r in ordered]
    transcribed, transcribed_without = transcribed_environments(
        [v for _, v in values if v is not None and v[0] == "transcribed"])
    env = Environment(transcribed=transcribed, transcribed_without=transcribed_without)
    out: dict[str, Any] = {"transcribed": transcribed, "transcribed_without": transcribed_without, "runs": 0, "without_capture": 0, "machines": [], "machine_fields": [], "versions": [],
                           "settings": [], "settings_kind": "non_default"}
    if not run_ids:
        return env
    captured: dict[str, tuple] = {}
    factors: dict[str, dict[str, str]] = {}
    for run_id, v in values:
        if v is None or v[0] != "measured":
            continue
        if not v[1]:
            out["without_capture"] += 1
            continue
        captured[run_id] = v
        factors[run_id] = dict(v[4])
    out["runs"] = len(captured)
    if not captured:
        return Environment(**out)

    # machines: one column per machine (its inventory, report/machines.py), named as in the chapters; the
    # hostnames it had and the roles it played are rows of its own
    groups: dict[str, dict] = {}
    for run_id in captured:
        for role, host, mid in rm.hosts.get(run_id, []):
            g = groups.setdefault(mid, {"machine": dict(rm.inventory.get(mid, {})), "hosts": set(), "roles": set(),
                                        "ids": set()})
            if host:
                g["hosts"].add(str(host))
            g["roles"].add(role)
            g["ids"].add(run_id)
    for g in groups.values():
        if g["hosts"]:
            g["machine"]["hostname"] = ", ".join(sorted(g["hosts"]))
    with_roles = any(len(g["roles"]) > 1 for g in groups.values()) or len({r for g in groups.values()
                                                                           for r in g["roles"]}) > 1
    keys = list(MACHINE_FIELDS)
    # the virtualisation's layers are in its words (report/machines.py), not a column of their own
    extra = sorted({k for g in groups.values() for k in g["machine"]} - set(keys) - {"virtualization_layers"})
    fields = [(k, words.both(f"env_field_{k}")) for k in MACHINE_FIELDS] + [(k, {"ja": k, "en": k}) for k in extra]
    present = [(k, lab) for k, lab in fields if any(k in g["machine"] for g in groups.values())]
    out["machine_fields"] = ([words.both("env_field_role")] if with_roles else []) + [lab for _, lab in present]
    order = sorted(groups, key=lambda mid: (names.get(mid, {}).get("en", ""), mid))
    for mid in order:
        g = groups[mid]
        vals: list = []
        if with_roles:
            vals.append({lang: ", ".join(machines.role_label(r, lang) for r in sorted(g["roles"])) for lang in LANGS})
        for k, _ in present:
            v = g["machine"].get(k)
            vals.append("—" if v is None else machine_value(k, v, g["machine"]))
        out["machines"].append({"id": mid, "name": names.get(mid, {lang: mid for lang in LANGS}), "values": vals,
                                "runs": len(g["ids"]), "where": distinguishing(
                                    sorted(g["ids"]), list(captured), factors) if len(groups) > 1 else ""})

    # every host's captures: the run's own (run.toml) and each other host's (its host.toml), keyed by run for
    # the run's own host and by run#host= for the others, whose factors are the run's and the host's role
    docs: dict[str, dict] = {r: {"versions": v[2], "server": v[3]} for r, v in captured.items()}
    for run_id, v in captured.items():
        for host_dir, role, versions, server in v[6]:
            docs[f"{run_id}#{host_dir}"] = {"versions": versions, "server": server}
            factors[f"{run_id}#{host_dir}"] = {**factors.get(run_id, {}), "role": role}
    if len(docs) > len(captured):  # the run's own host's role too, so that every host's column says which
        for run_id, v in captured.items():
            if v[5] is not None:
                factors[run_id] = {**factors.get(run_id, {}), "role": v[5]}

    # versions: every distinct value per tool, with its number of runs (of hosts, in a run of several)
    vers: dict[str, dict[str, int]] = {}
    for doc in docs.values():
        for tool, v in (doc.get("versions") or {}).items():
            d = vers.setdefault(tool, {})
            d[str(v)] = d.get(str(v), 0) + 1
    out["versions"] = [{"tool": t, "values": [{"value": v, "runs": n} for v, n in sorted(vals.items())]}
                       for t, vals in sorted(vers.items())]

    # settings: hosts that captured no PostgreSQL server (a client, fio, pg_test_fsync) are left out and named
    # once; the settings that differ between the others group them into configurations (one column each)
    servers = {r: (doc.get("server") or {}) for r, doc in docs.items()}
    no_server = [r for r, sv in servers.items() if not set(sv) - SERVER_META - SETTING_NOISE]
    if no_server and len(no_server) < len(servers):
        out["settings_without_server"] = {"runs": len(no_server),
                                          "where": distinguishing(no_server, list(servers), factors)}
        servers = {r: sv for r, sv in servers.items() if r not in set(no_server)}
    listed = [set(s.get("non_default") or []) for s in servers.values() if s.get("non_default") is not None]
    all_keys = {k for s in servers.values() for k in s} - SERVER_META - SETTING_NOISE
    differing = {k for k in all_keys if len({str(s.get(k)) for s in servers.values()}) > 1}
    if listed:
        names = (set().union(*listed) | differing) & all_keys
    else:
        names = all_keys
        out["settings_kind"] = "captured"
    names -= SETTING_NOISE
    counts = factor_counts(list(servers), factors)
    varying = sorted(names & differing, key=str.lower)
    for name in sorted(names - differing, key=str.lower):
        v = next(iter(servers.values())).get(name)
        out["settings"].append({"name": name, "values": [{"value": "—" if v is None else str(v),
                                                          "runs": len(servers), "where": ""}]})
    configs: dict[tuple, list[str]] = {}
    for r, sv in servers.items():
        configs.setdefault(tuple("—" if sv.get(n) is None else str(sv.get(n)) for n in varying), []).append(r)
    if varying:
        ordered = sorted(configs.items(), key=lambda kv: (distinguishing(kv[1], list(servers), factors, counts), kv[0]))
        out["settings_configs"] = config_columns([runs for _, runs in ordered], list(servers), factors, counts)
        out["settings_varying"] = [{"name": n, "values": [key[i] for key, _ in ordered]}
                                   for i, n in enumerate(varying)]
    return Environment(**out)


def distinguishing(runs: list[str], all_runs: list[str], factors: dict[str, dict[str, str]],
                    counts: dict[tuple[str, str], int] | None = None) -> str:
    """Factor values shared by these runs and by no other run ('config=checksums-on').

    ``runs`` are distinct runs of ``all_runs``; ``counts`` (the number of runs of ``all_runs`` with each
    factor value, :func:`factor_counts`) may be given once for many calls: a value the runs share is held
    by no other run exactly when as many runs of ``all_runs`` hold it as there are ``runs``."""
    if counts is None:
        counts = factor_counts(all_runs, factors)
    shared = None
    for r in runs:
        fs = set(factors.get(r, {}).items())
        shared = fs if shared is None else shared & fs
    picked = sorted(fv for fv in (shared or set()) if counts.get(fv, 0) == len(runs))
    return ", ".join(f"{f}={v}" for f, v in picked[:2])


# factors that name no configuration: the repetition, the campaign, a host's role in its run
NOT_A_CONFIGURATION = {"rep", "campaign", "role"}


def covering_values(runs: list[str], all_runs: list[str], factors: dict[str, dict[str, str]],
                    most: int = 4) -> tuple[str, list[str]] | None:
    """A factor whose values among these runs are held by no other run ('pattern' none, async-1, async-2):
    the fewest values (at most ``most``) that name these runs and only them; None when no factor does."""
    mine = set(runs)
    best = None
    for f in sorted({f for r in runs for f in factors.get(r, {})} - NOT_A_CONFIGURATION):
        vals = {factors.get(r, {}).get(f) for r in runs}
        if None in vals or len(vals) > most or (best and len(vals) >= len(best[1])):
            continue
        if all(r in mine for r in all_runs if factors.get(r, {}).get(f) in vals):
            best = (f, sorted(vals))
    return best


def config_columns(groups: list[list[str]], all_runs: list[str], factors: dict[str, dict[str, str]],
                   counts: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    """The columns of the settings that differ, each named by what its runs are: the factor values only they
    share, else the values of one factor only they hold; a column neither names is 'the other runs' when it
    is the only one, else 'configuration N' (a column headed only by its number of runs named nothing)."""
    out = []
    for runs in groups:
        where = distinguishing(runs, all_runs, factors, counts)
        col: dict[str, Any] = {"runs": len(runs), "where": where}
        if not where:
            cover = covering_values(runs, all_runs, factors)
            if cover:
                col["where_pairs"] = [[cover[0], cover[1]]]
        out.append(col)
    unnamed = [c for c in out if not c["where"] and not c.get("where_pairs")]
    for i, c in enumerate(unnamed):
        c["label"] = words.both("env_config_rest") if len(unnamed) == 1 else words.both("env_config_no", i + 1)
    return out


def factor_counts(all_runs: list[str], factors: dict[str, dict[str, str]]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for r in set(all_runs):
        for fv in factors.get(r, {}).items():
            counts[fv] = counts.get(fv, 0) + 1
    return counts


def label_wheres(env: Environment, name: Any, value: Any) -> Environment:
    """Each ``where`` ('config=checksums-on, clients=8', the factors that single out a group of runs) also as
    the reader's words, ``where_text`` per language ('構成: チェックサム有効、クライアント数: 8'): ``name(f,
    lang)`` and ``value(f, v, lang)`` are the report's factor names and value labels. A column headed by
    ``key=value`` was factor syntax shown to a reader."""
    def add(d: dict | None) -> None:
        if not d:
            return
        if d.get("where_pairs"):  # one factor and the values only these runs hold
            d["where_text"] = {lang: words.t(lang, "list_separator").join(words.t(
                lang, "factor_value", name=name(f, lang), value=words.t(lang, "env_values_separator").join(
                    value(f, v, lang) for v in vs)) for f, vs in d["where_pairs"]) for lang in LANGS}
            return
        if not d.get("where"):
            if d.get("label"):  # a configuration column no factor names
                d["where_text"] = d["label"]
            return
        pairs = [kv.split("=", 1) for kv in d["where"].split(", ") if "=" in kv]
        d["where_text"] = {lang: words.t(lang, "list_separator").join(
            words.t(lang, "factor_value", name=name(f, lang), value=value(f, v, lang)) for f, v in pairs)
            for lang in LANGS}

    for m in env.machines:
        add(m)
    for st in env.settings:
        for v in st.get("values", []):
            add(v)
    for c in env.settings_configs:
        add(c)
    add(env.settings_without_server)
    return env
