"""Writes docs/report_model.md: every record of the computed report, with its fields, from the code.

    python -m kansoku.report.model_doc > docs/report_model.md   (run from tools/, or with tools/ on sys.path)

Each field's comment in ``model.py`` (``# ...`` after it, continued on the following comment-only
lines) is carried into the document, so the model is documented where it is defined and the document
cannot drift (tests/test_report_model.py compares them).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys

from kansoku import model

_FIELD = re.compile(r"^    (\w+): (.+?)(?:\s+=\s+(?:field\(.*?\)|[^#]+?))?\s*(?:#\s?(.*))?$")
_MORE = re.compile(r"^\s+#\s?(.*)$")


def field_comments(cls: type) -> dict[str, tuple[str, str]]:
    """field name -> (type as written, comment)."""
    out: dict[str, tuple[str, str]] = {}
    last = None
    for line in inspect.getsource(cls).splitlines()[1:]:
        m = _FIELD.match(line)
        if m and not line.strip().startswith(("def ", "@", '"""')):
            last = m.group(1)
            out[last] = (m.group(2), (m.group(3) or "").strip())
            continue
        mm = _MORE.match(line)
        if mm and last is not None and line.startswith(" " * 20):  # a comment continued under the field's
            t, c = out[last]
            out[last] = (t, (c + " " + mm.group(1).strip()).strip())
            continue
        if line.strip().startswith(("def ", "@property")):
            break
        last = None
    return out


def records() -> list[type]:
    classes = [c for _, c in inspect.getmembers(model, inspect.isclass)
               if dataclasses.is_dataclass(c) and c.__module__ == model.__name__]
    return sorted(classes, key=lambda c: inspect.getsourcelines(c)[1])


def render() -> str:
    out = ["# The computed report (`kansoku.model`)", "",
           "Generated from `tools/kansoku/model.py` by `python -m kansoku.report.model_doc`; do not edit.",
           "", inspect.getdoc(model) or "", "",
           "`Words` is text per language: `{\"ja\": \"…\", \"en\": \"…\"}`.", ""]
    for cls in records():
        out += [f"## {cls.__name__}", ""]
        doc = inspect.getdoc(cls)
        if doc and not doc.startswith(cls.__name__ + "("):
            out += [doc, ""]
        comments = field_comments(cls)
        out += ["| field | type | meaning |", "|---|---|---|"]
        for f in dataclasses.fields(cls):
            t, c = comments.get(f.name, (str(f.type), ""))
            out.append(f"| `{f.name}` | `{t.replace('|', chr(92) + '|')}` | {c.replace('|', chr(92) + '|')} |")
        out += [""]
    return "\n".join(line for i, line in enumerate(out) if not (line == "" and i and out[i - 1] == "")) .rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
