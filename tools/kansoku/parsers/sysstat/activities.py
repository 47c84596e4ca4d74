"""sar activities: which activity a header (or a sadf -j key) names, shared by the sar text, sadf -d,
sadf -j and sa-file readers (docs/formats.md §2.4)."""

from __future__ import annotations

# -- activities ----------------------------------------------------------------------

# Header columns that name the item a row is about (docs/formats.md §2.4): they make the instance.
INSTANCE_COLS = {"CPU", "INTR", "DEV", "IFACE", "TTY", "FILESYSTEM", "MOUNTPOINT", "BUS", "FAN", "TEMP",
                 "IN", "DEVICE", "FCHOST", "BAT"}

# First metric column of a header -> activity name (sadf -j names, shortened).
SIGNATURES = {
    "%usr": "cpu", "%user": "cpu", "proc/s": "task", "pswpin/s": "swapping", "pgpgin/s": "paging",
    "tps": "io", "frmpg/s": "memory-rate", "kbmemfree": "memory", "kbswpfree": "swap", "kbhugfree": "hugepages",
    "dentunusd": "kernel", "runq-sz": "queue", "call/s": "net-nfs", "scall/s": "net-nfsd", "totsck": "net-sock",
    "irec/s": "net-ip", "ihdrerr/s": "net-eip", "imsg/s": "net-icmp", "ierr/s": "net-eicmp", "active/s": "net-tcp",
    "atmptf/s": "net-etcp", "idgm/s": "net-udp", "tcp6sck": "net-sock6", "irec6/s": "net-ip6",
    "ihdrer6/s": "net-eip6", "imsg6/s": "net-icmp6", "ierr6/s": "net-eicmp6", "idgm6/s": "net-udp6",
    "%scpu-10": "psi-cpu", "%sio-10": "psi-io", "%smem-10": "psi-mem", "MBfsfree": "filesystems",
}


def activity_of(cols: list[str]) -> str:
    inst = [c for c in cols if c in INSTANCE_COLS]
    metrics = [c for c in cols if c not in INSTANCE_COLS]
    first = metrics[0] if metrics else ""
    if "DEV" in inst:
        return "disk"
    if "IFACE" in inst:
        return "net-dev" if "rxpck/s" in metrics else "net-edev" if "rxerr/s" in metrics else f"net-{first}"
    if "INTR" in inst:
        return "intr"
    if "TTY" in inst:
        return "serial"
    if "FILESYSTEM" in inst or "MOUNTPOINT" in inst:
        return "filesystems"
    for k, a in (("FAN", "fan"), ("TEMP", "temp"), ("IN", "in"), ("BUS", "usb"), ("FCHOST", "fchost"),
                 ("BAT", "battery")):
        if k in inst:
            return a
    if "CPU" in inst:
        if first in ("%usr", "%user"):
            return "cpu"
        return {"MHz": "cpu-frequency", "wghMHz": "cpu-frequency", "total/s": "softnet",
                "intr/s": "intr"}.get(first, f"cpu-{first}")
    return SIGNATURES.get(first, f"other:{first}")


KNOWN_ACTIVITIES = set(SIGNATURES.values()) | {
    "disk", "net-dev", "net-edev", "intr", "serial", "filesystems", "fan", "temp", "in", "usb", "cpu",
    "cpu-frequency", "softnet", "fchost", "battery"}

# Activities whose values are strings (sar -m USB lists devices): not stored.
TEXT_ACTIVITIES = {"usb"}
# Columns holding text inside numeric activities (sar -m BAT 'status'): skipped.
TEXT_COLUMNS = {"status"}


def norm_instance(activity: str, inst: str | None) -> str | None:
    if inst is None:
        return None
    if activity in ("cpu", "softnet", "cpu-frequency") and inst in ("-1", "all"):
        return "all"
    return inst
