"""Binary sa data files, read with the installed sadf -j (docs/formats.md §2.7)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from kansoku.errors import ParseError
from kansoku.parsers.base import FileHead, Sink
from kansoku.parsers.sysstat.sadf_json import parse_sadf_json


# -- sa binary ----------------------------------------------------------------------------

SA_MAGIC = (b"\x96\xd5", b"\xd5\x96")  # SYSSTAT_MAGIC 0xd596, either byte order


def sniff_sa_binary(head: FileHead) -> bool:
    return head.raw[:2] in SA_MAGIC and head.size_bytes >= 64


def _readable_rendering_beside(path: Path) -> Path | None:
    """A sar text / sadf -d / sadf -j file in the same directory (detected by content), or None."""
    from kansoku.ingest.detect import detect

    for p in sorted(path.parent.iterdir()):
        if p == path or not p.is_file():
            continue
        d = detect(p)
        if d.format is not None and d.format.name in ("sadf-json", "sadf-csv", "sar-text"):
            return p
    return None


def parse_sa_binary(path: Path, sink: Sink) -> None:
    sadf = shutil.which("sadf")
    if sadf is None:
        sink.warn(None, "binary sa file not read: 'sadf' is not installed (apt-get install sysstat, or "
                        "dnf install sysstat); render it with 'sadf -j FILE -- -A > sadf.json' elsewhere")
        return
    try:
        proc = subprocess.run([sadf, "-j", str(path), "--", "-A"], capture_output=True, text=True, timeout=120,
                              env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    except subprocess.TimeoutExpired:
        raise ParseError(path, None, "sadf -j to finish within 120 s", "timeout") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        # sadf's own words, without the file name it repeats and its conversion hint (given below)
        said = [l.strip() for l in proc.stderr.splitlines() if l.strip() and str(path) not in l
                and not l.startswith(("Try to convert", "You should then"))]
        msg = "; ".join(said)
        readable = _readable_rendering_beside(path)
        if readable is not None:
            # the same data rendered as text beside the sa file (sar -A / sadf -d / sadf -j of it): that
            # file is read instead; an old binary format must not stop the run
            sink.warn(None, f"sa file not readable by the installed sadf (sadf says: {msg or proc.returncode}); "
                            f"the run's {readable.name} holds the same data and is used instead")
            return
        ver = subprocess.run([sadf, "-V"], capture_output=True, text=True).stdout.split("\n")[0].strip() or \
            subprocess.run([sadf, "-V"], capture_output=True, text=True).stderr.split("\n")[0].strip()
        raise ParseError(path, None, f"a sa data file the installed sadf ({ver}) can read; sadf says: "
                         f"{msg or f'exit status {proc.returncode}'}. Convert it with 'sadf -c OLDFILE > NEWFILE', "
                         "render it with the sysstat that wrote it (sar -A -f / sadf -d), or keep that rendering "
                         "beside it (it is then used instead)", "an sa file this sadf cannot read")
    m = re.search(r"File created by sar/sadc from sysstat version (\S+)",
                  subprocess.run([sadf, "-H", str(path)], capture_output=True, text=True,
                                 env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}).stdout)
    if m:
        sink.set_tool_version(m.group(1))
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise ParseError(path, None, "sadf -j to print JSON", f"{exc.msg} at line {exc.lineno}") from None
    parse_sadf_json(path, sink, fmt="sa-binary", doc=doc)
