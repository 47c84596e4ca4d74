"""Machines of a report: which machine each run ran on, their names, the per-chapter machines block, and the
rule that a table or figure does not mix machines unless its spec declares the machine a factor.

A machine is its inventory (run.toml / host.toml ``[machine]`` without ``hostname``), stored once in the
``machines`` table under its fingerprint; ``run_hosts`` says which machine each host of a run was on
(docs/ingest.md, "Hosts in a run"). A run's *machine set* is its hosts' (role, machine) pairs: a single-host
run has one. Names are given per report, in the order the machines were first used (their earliest run):
"Machine A", "Machine B" (words ``machine_name``), so that the chapters and the appendix call a machine the
same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kansoku import words
from kansoku.analysis.tables import role_label
from kansoku.ingest.runs import machine_fingerprint
from kansoku.spec.model import LANGS, Item, Report
from kansoku.store.db import Store


@dataclass
class RunMachines:
    """Per run: its hosts' (role, host, machine id); the inventories by machine id."""

    hosts: dict[str, list[tuple[str, str | None, str]]] = field(default_factory=dict)
    inventory: dict[str, dict[str, Any]] = field(default_factory=dict)
    first_used: dict[str, str] = field(default_factory=dict)  # machine id -> earliest start time of its runs

    def signature(self, run_id: str) -> tuple[tuple[str, str], ...]:
        """The (role, machine) pairs of a run: two runs with the same signature ran on the same machines."""
        return tuple(sorted({(role, mid) for role, _, mid in self.hosts.get(run_id, [])}))


def run_machines(store: Store, run_ids: list[str]) -> RunMachines:
    """The machines of these runs (measured runs with a captured [machine]; others have none). Read from
    ``run_hosts`` and ``machines``; a store made before hosts were kept falls back to run.toml [machine]."""
    out = RunMachines()
    if not run_ids:
        return out
    try:
        rows = store.query(
            "SELECT h.run_id, h.role, h.host, h.machine_id, m.inventory::VARCHAR, r.start_time::VARCHAR "
            "FROM run_hosts h JOIN runs r USING (run_id) LEFT JOIN machines m USING (machine_id) "
            "WHERE h.machine_id IS NOT NULL AND h.run_id IN (SELECT unnest(?::VARCHAR[]))", [run_ids])
    except Exception:  # a store without run_hosts
        rows = []
    seen = {r[0] for r in rows}
    for run_id, role, host, mid, inv, start in rows:
        out.hosts.setdefault(run_id, []).append((role, host, mid))
        if inv and mid not in out.inventory:
            out.inventory[mid] = json.loads(inv)
        if start and (mid not in out.first_used or start < out.first_used[mid]):
            out.first_used[mid] = start
    missing = [r for r in run_ids if r not in seen]
    if missing:
        for run_id, doc, start in store.query(
                "SELECT run_id, run_toml::VARCHAR, start_time::VARCHAR FROM runs WHERE origin = 'measured' "
                "AND run_id IN (SELECT unnest(?::VARCHAR[]))", [missing]):
            d = json.loads(doc) if doc else {}
            m = d.get("machine") if isinstance(d.get("machine"), dict) else {}
            mid = machine_fingerprint(m)
            if mid is None:
                continue
            out.hosts[run_id] = [(str(d.get("role") or "server"), d.get("hostname") or m.get("hostname"), mid)]
            out.inventory.setdefault(mid, {k: v for k, v in m.items() if k != "hostname"})
            if start and (mid not in out.first_used or start < out.first_used[mid]):
                out.first_used[mid] = start
    return out


def machine_names(rm: RunMachines) -> dict[str, dict[str, str]]:
    """machine id -> its name in this report ({ja, en}): A, B, ... in the order the machines were first used."""
    order = sorted(rm.inventory, key=lambda mid: (rm.first_used.get(mid, "~"), mid))
    out = {}
    for i, mid in enumerate(order):
        letter = _letters(i)
        out[mid] = {lang: words.t(lang, "machine_name", letter) for lang in LANGS}
    return out


def _letters(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def _human_kib(v: Any) -> str:
    if not isinstance(v, (int, float)):
        return "—"
    n = int(v) * 1024
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def _kernel(v: Any) -> str:
    """'Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0 x86_64' -> 'Linux 6.18.44-fc-v669' (the appendix has it all)."""
    return " ".join(str(v).split()[:2]) if v else ""


# systemd-detect-virt's names (its --list): the hypervisors, and the containers it names instead when a
# container runs inside a virtual machine (it prints the innermost layer only)
HYPERVISORS = {"qemu", "kvm", "amazon", "zvm", "vmware", "microsoft", "oracle", "powervm", "xen", "bochs", "uml",
               "parallels", "bhyve", "qnx", "acrn", "apple", "sre", "google"}
CONTAINERS = {"openvz", "lxc", "lxc-libvirt", "systemd-nspawn", "docker", "podman", "rkt", "wsl", "proot", "pouch"}
# a disk whose name says it is a paravirtual device: the guest sees the hypervisor's device, not a drive
VIRTUAL_DISKS = (("vd", "virtio"), ("xvd", "xen"))


def _virtual_disk(name: str) -> str | None:
    for prefix, kind in VIRTUAL_DISKS:
        if name.startswith(prefix) and name[len(prefix):].isalpha():
            return kind
    return None


def _layers(inv: dict[str, Any]) -> tuple[str, str]:
    """(hypervisor, container) as collect recorded both layers (systemd-detect-virt --vm, --container), each
    '' when absent or 'none'."""
    layers = inv.get("virtualization_layers") if isinstance(inv.get("virtualization_layers"), dict) else {}
    vm, container = (str(layers.get(k) or "") for k in ("vm", "container"))
    return (vm if vm in HYPERVISORS else "", container if container in CONTAINERS else "")


def in_vm(inv: dict[str, Any]) -> bool:
    """The machine is a virtual machine: its detected virtualisation (either layer) is a hypervisor, or one of
    its disks is a paravirtual device (a container inside a virtual machine is detected as the container)."""
    disks = inv.get("disks") if isinstance(inv.get("disks"), dict) else {}
    return str(inv.get("virtualization") or "") in HYPERVISORS or bool(_layers(inv)[0]) or \
        any(_virtual_disk(str(n)) for n in disks)


def disk_kind(name: str, d: dict[str, Any], inv: dict[str, Any]) -> str | None:
    """A disk's kind, the words ``env_disk_<kind>``: a paravirtual device by its name (virtio, xen); on a
    virtual machine a disk its hypervisor reports as rotational is a virtual disk (the flag is the
    hypervisor's default, not a spinning drive); else rotational or not as the kernel says."""
    virtual = _virtual_disk(name)
    if virtual:
        return virtual
    rot = d.get("rotational")
    if rot is True and in_vm(inv):
        return "virtual"
    return {True: "rotational", False: "non_rotational"}.get(rot)


def virtualisation(inv: dict[str, Any]) -> dict[str, str] | str:
    """The detected virtualisation in words, the same in a chapter's block, the appendix and a run page:
    'docker container in a virtual machine' when a container runs on a machine with virtio disks, 'docker
    container in a virtual machine (kvm)' when both layers were recorded."""
    hypervisor, container = _layers(inv)
    if hypervisor and container:
        return {lang: words.t(lang, "virt_container_in_named_vm", container=container, vm=hypervisor)
                for lang in LANGS}
    v = str(inv.get("virtualization") or "")
    vm = in_vm(inv)
    if v in CONTAINERS:
        return words.both("virt_container_in_vm" if vm else "virt_container", v)
    if v in HYPERVISORS:
        return words.both("virt_vm", v)
    if v == "none":
        return words.both("virt_vm_disks" if vm else "virt_none")
    if vm:
        return words.both("virt_vm_disks")
    return v or "—"


def cpus(inv: dict[str, Any]) -> dict[str, str] | str:
    """'2 vCPUs (AMD EPYC)': the CPUs the machine has, virtual ones on a virtual machine, and their model
    ('AMD EPYC × 2' read as two sockets)."""
    model = str(inv.get("cpu_model") or "")
    n = inv.get("cpu_count") or inv.get("nproc")
    if not isinstance(n, int):
        return model or "—"
    key = "machine_vcpus" if in_vm(inv) else "machine_cpus"
    return {lang: words.t(lang, key, n) + (f" ({model})" if model else "") for lang in LANGS}


def describe(inv: dict[str, Any]) -> dict[str, Any]:
    """A machine's short description, the cells of a chapter's machines block (strings, or {ja, en})."""
    storage = []
    fs = inv.get("filesystem")
    disks = inv.get("disks")
    if isinstance(disks, dict):
        for name, d in sorted(disks.items()):
            if isinstance(d, dict):
                size = d.get("size_bytes")
                storage.append((name, f"{int(size) / (1 << 30):.0f} GiB" if isinstance(size, (int, float)) else "",
                                disk_kind(str(name), d, inv)))
    if isinstance(fs, dict):
        fs_text = " ".join(x for x in (str(fs.get("fstype") or ""), f"({fs['mount']})" if fs.get("mount") else "") if x)
    else:
        fs_text = ""
    store_text = {}
    for lang in LANGS:
        parts = [", ".join(x for x in (f"{name} {size}".strip(), words.t(lang, f"env_disk_{kind}") if kind else "")
                           if x) for name, size, kind in storage]
        store_text[lang] = "; ".join(parts + ([fs_text] if fs_text else [])) or "—"
    return {
        "cpu": cpus(inv),
        "memory": _human_kib(inv.get("mem_total_kib")),
        "os": " / ".join(x for x in (str(inv.get("os") or ""), _kernel(inv.get("kernel"))) if x) or "—",
        "virtualization": virtualisation(inv),
        "storage": store_text,
    }


def chapter_machines(rm: RunMachines, names: dict[str, dict[str, str]], run_ids: list[str]) -> dict[str, Any]:
    """The machines block of a chapter: one row per (machine, role) its runs used, with the number of runs;
    ``span`` when the runs ran on more than one machine set; ``unknown`` runs without a captured machine."""
    rows: dict[tuple[str, str], set[str]] = {}
    unknown = 0
    for r in run_ids:
        hosts = rm.hosts.get(r)
        if not hosts:
            unknown += 1
            continue
        for role, _, mid in hosts:
            rows.setdefault((mid, role), set()).add(r)
    roles = {role for _, role in rows}
    sigs = {rm.signature(r) for r in run_ids if rm.hosts.get(r)}
    out_rows = []
    for (mid, role), runs in sorted(rows.items(), key=lambda kv: (names.get(kv[0][0], {}).get("en", ""), kv[0][1])):
        out_rows.append({"id": mid, "name": names.get(mid, {lang: mid for lang in LANGS}),
                         "role": {lang: role_label(role, lang) for lang in LANGS} if len(roles) > 1 else None,
                         "runs": len(runs), **describe(rm.inventory.get(mid, {}))})
    count = len({mid for mid, _ in rows})
    if not out_rows:
        summary = None
    elif len(sigs) > 1:
        summary = words.both("machines_span", count)
    elif count > 1:
        summary = words.both("machines_same_set", count)
    elif len(names) > 1:
        summary = {lang: words.t(lang, "machines_one_of", name=out_rows[0]["name"][lang], count=len(names))
                   for lang in LANGS}
    else:
        summary = words.both("machines_one")
    return {"machines": out_rows, "span": len(sigs) > 1, "machine_count": count, "summary": summary,
            "unknown": unknown, "with_roles": len(roles) > 1}


def check_item(report: Report, item: Item, rm: RunMachines, names: dict[str, dict[str, str]],
               run_ids: list[str]) -> None:
    """A table or figure whose runs ran on different machines is a spec error (exit 3), unless the spec
    declares the machine a factor of it: ``machines = "factor"`` on the item (or in [report])."""
    sigs: dict[tuple, list[str]] = {}
    for r in sorted(run_ids):
        if rm.hosts.get(r):
            sigs.setdefault(rm.signature(r), []).append(r)
    if len(sigs) < 2:
        return
    declared = item.raw.get("machines") or report.raw.get("report", {}).get("machines")
    if declared == "factor":
        return
    parts = []
    for sig, runs in sigs.items():
        desc = ", ".join(f"{names.get(mid, {}).get('en', mid)} ({rm.inventory.get(mid, {}).get('cpu_model', '?')}"
                         f"{', ' + role if len(sig) > 1 else ''})" for role, mid in sig)
        parts.append(f"{desc}: {len(runs)} run{'s' if len(runs) != 1 else ''} such as {runs[0]!r}")
    raise item.error(f"its runs ran on {len(sigs)} different machines ({'; '.join(parts)}); a {item.kind} does not "
                     f"mix machines unless the spec says the machine is a factor of it: narrow `where` to one "
                     f"machine, or add machines = \"factor\" to the {item.kind} (docs/spec.md, \"Machines\")")
