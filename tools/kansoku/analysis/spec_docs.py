"""Writes the report spec's generated documents (docs/report-spec.schema.json, the key tables of docs/spec.md)
with the chart kinds of the registry, which ``spec/schema.py`` lists but cannot import:

    python3 -m kansoku.analysis.spec_docs   (run from tools/, or with tools/ on sys.path)
"""

from __future__ import annotations

import sys

from kansoku.analysis.figures import KINDS
from kansoku.spec import schema


def main(argv: list[str] | None = None) -> int:
    written = schema.write_docs(KINDS)
    print("wrote " + " and ".join(str(p.relative_to(schema.REPO)) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
