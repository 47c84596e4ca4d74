"""The report spec's schema (JSON Schema, draft 2020-12): one place per key.

Every key of a spec is declared once below, with its type and its meaning. From this:

- ``spec.validate`` checks a spec before the model is built (every error in one run, with lines);
- ``docs/report-spec.schema.json`` is written for editors (taplo / Even Better TOML read the
  ``#:schema`` line at the top of a spec and complete and check keys as you type);
- the key tables of ``docs/spec.md`` are generated (between ``<!-- generated:NAME -->`` markers).

The chart kinds a figure may name are the chart registry's (``analysis.figures.KINDS``), which this stage
cannot import: the functions that write a document take them (``chart_kinds``), and
``python3 -m kansoku.analysis.spec_docs`` passes the registry's. Without them, ``chart`` is any name, which
the check against the store (``analysis/spec_check.py``) then tests against the registry.

To add a key: add one ``key(...)`` line to its section (``ITEM``, ``BASELINE``, ...), then run
``python3 -m kansoku.analysis.spec_docs`` to rewrite the two generated documents (a test checks they are current).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

from kansoku.spec import keys as model_keys
from kansoku.words import LANGS

REPO = Path(__file__).resolve().parents[3]
SCHEMA_JSON = REPO / "docs" / "report-spec.schema.json"
SPEC_DOC = REPO / "docs" / "spec.md"
SCHEMA_ID = "https://kansoku.invalid/report-spec.schema.json"

AGGREGATES = ["median", "mean", "min", "max", "single"]
COMPARES = ["ratio", "speedup", "change", "auto"]
FORMATS = ["percent", "times", "change", "number"]

# -- value types (the "type" column of the docs says the first element) ---------------------------
TEXT = ("text", {"$ref": "#/$defs/text"})
STRING = ("string", {"type": "string", "minLength": 1})
ANY_STRING = ("string", {"type": "string"})
INTEGER = ("integer", {"type": "integer"})
BOOL = ("true / false", {"type": "boolean"})
NUMBER = ("number", {"type": "number"})
NAMES = ("list of strings", {"type": "array", "items": {"type": "string", "minLength": 1}})
METRIC = ("metric name", {"type": "string", "minLength": 1})
FACTOR = ("factor name", {"type": "string", "minLength": 1})
SCALAR = ("string, number or boolean", {"type": ["string", "number", "boolean"]})
DIGITS = ("integer ≥ 0 or \"printed\"", {"$ref": "#/$defs/digits"})
FREE = ("any", {})


def one_of(*values: str) -> tuple[str, dict]:
    return (" | ".join(f"`{v}`" for v in values), {"enum": list(values)})


def table_of(label: str, schema: dict) -> tuple[str, dict]:
    return (label, {"type": "object", "additionalProperties": schema})


def array_of(label: str, schema: dict, min_items: int = 0) -> tuple[str, dict]:
    s: dict[str, Any] = {"type": "array", "items": schema}
    if min_items:
        s["minItems"] = min_items
    return (label, s)


def key(type_: tuple[str, dict], description: str, *, required: bool = False,
        **extra: Any) -> dict[str, Any]:
    """One key of a section: its value type, what it means, whether it must be given."""
    return {"type": type_, "description": description, "required": required, "extra": extra}


# -- sections: the keys, in the order the docs list them ------------------------------------------

REPORT = {
    "id": key(STRING, "report id (default: the file name); the content directory `content/reports/<id>/`",
              pattern="^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
    "fiscal_year": key(INTEGER, "the home page lists reports newest year first", required=True),
    "title": key(TEXT, "title of the report", required=True),
    "subtitle": key(TEXT, "optional subtitle"),
    "organisation": key(TEXT, "who publishes the report", required=True),
    "revision": key(("string", {"type": ["string", "number"]}), "revision shown on the cover (default `\"1.0\"`)"),
    "copyright": key(ANY_STRING, "copyright line"),
    "license": key(TEXT, "license text on the cover's back"),
    "revision_history": key(("list of tables", {"type": "array", "items": {"$ref": "#/$defs/revision"}}),
                            "`[[report.revision_history]]`: `{ revision, date, changes = {ja, en} }`"),
    "author": key(("list of tables", {"type": "array", "items": {"$ref": "#/$defs/author"}}),
                  "`[[report.author]]`: `{ name = {ja, en}, affiliation = {ja, en}, chapters = [...] }`"),
    "themes": key(FREE, "free, for the cover and the home page"),
    "note": key(FREE, "free, for the cover"),
    "site_url": key(("URL", {"type": "string", "pattern": "^https?://"}),
                    "the site's root address (`https://example.org/`): the PDF prints the report's web edition, `<site_url><lang>/reports/<id>/`"),
    "publish_raw": key(BOOL, "`true`: the runs' raw files are copied into the site and linked from the sources page"),
    "machines": key(one_of("one", "factor"), "the default of every table's and figure's `machines` (see there)"),
    "scope": key(("table", {"$ref": "#/$defs/scope"}),
                 "`[report.scope]`: the runs the report speaks for (see \"Report scope\"); every table, figure, "
                 "compare page, machine block and appendix selects within it"),
}

SCOPE = {
    "campaigns": key(NAMES, "measured runs whose `campaign` factor is one of these (`campaign=<name>/` in the run id)"),
    "run_prefixes": key(NAMES, "measured runs whose run id starts with one of these"),
    "transcribed": key(NAMES, "transcribed runs whose `published_table` matches one of these glob patterns "
                              "(`\"fy2017-*\"`)"),
}

REVISION = {
    "revision": key(("string", {"type": ["string", "number"]}), "revision", required=True),
    "date": key(STRING, "date of the revision (`\"2026-11-22\"` or a TOML date)"),
    "changes": key(TEXT, "what changed"),
}

AUTHOR = {
    "name": key(TEXT, "the author's name", required=True),
    "affiliation": key(TEXT, "affiliation or role"),
    "chapters": key(NAMES, "ids of the chapters the author wrote"),
}

FACTOR_DEF = {
    "name": key(TEXT, "column / axis title (default: the factor name)"),
    "order": key(("list of values", {"type": "array", "items": {"type": ["string", "number", "boolean"]}}),
                 "values in the order the report lists them (`[\"all-hdd\", \"wal-ssd\", …]`); values not "
                 "listed follow, numbers numerically, then text"),
    "labels": key(table_of("table of texts", {"$ref": "#/$defs/text"}),
                  "`labels.<value> = {ja, en}`: label of one value"),
    "unit": key(ANY_STRING, "reserved"),
}

METRIC_DEF = {
    "label": key(TEXT, "label of the metric"),
    "unit": key(ANY_STRING, "unit shown after the label, `\"\"` for none (`TPS (tps)` → `TPS`)"),
    "higher_is_better": key(BOOL, "the metric's direction (used by `compare = \"auto\"` and the `better` / "
                                  "`worse` cell flags); needed for metrics no parser defines, e.g. transcribed "
                                  "`elapsed_s`"),
    "digits": key(DIGITS, "decimals shown, or `\"printed\"`: a transcribed value exactly as printed "
                          "(`10247`, `2.7083`)"),
}

CHAPTER = {
    "id": key(STRING, "the chapter's prose page is `content/reports/<report>/<id>.<lang>.md`", required=True),
    "number": key(("integer", {"type": "integer", "minimum": 1}),
                  "chapter number (default: position); tables and figures are `number.n`"),
    "title": key(TEXT, "title of the chapter", required=True),
    "table": key(("list of tables", {"type": "array", "items": {"$ref": "#/$defs/table"}}),
                 "`[[chapter.table]]`: tables in reading order"),
    "figure": key(("list of tables", {"type": "array", "items": {"$ref": "#/$defs/figure"}}),
                  "`[[chapter.figure]]`: figures in reading order (numbered apart from tables)"),
    "missing_figure": key(("list of figures not drawn", {"type": "array", "items": {"$ref": "#/$defs/missing_figure"}}),
                          "`[[chapter.missing_figure]]`: a figure of the original that is not drawn, listed on the "
                          "chapter's page (site and PDF) with its reason: `number` (as printed, `\"3.4\"`), "
                          "`caption` (as printed), `reason` (`lost`: the image is lost and the text gives no numbers; "
                          "`diagram`: a drawing, not data; `no_data`: needs data the source does not give; "
                          "`not_numeric`: the source states only approximate or qualitative values), `note` (text)"),
}

MISSING_FIGURE = {
    "number": key(STRING, "the figure's number as printed (`\"3.4\"`)", required=True),
    "caption": key(TEXT, "the caption as printed", required=True),
    "reason": key(("string", {"enum": ["lost", "diagram", "no_data", "not_numeric"]}),
                  "why it is not drawn: `lost`, `diagram`, `no_data`, `not_numeric`", required=True),
    "note": key(TEXT, "what exactly is missing, for the reader"),
}

ITEM = {  # tables and figures
    "id": key(STRING, "unique per kind in the report; the shortcodes `{{< tbl \"id\" >}}` / `{{< fig \"id\" >}}`",
              required=True),
    "number": key(("integer or \"c.n\"", {"oneOf": [{"type": "integer", "minimum": 1},
                                                    {"type": "string", "pattern": r"^\d+\.\d+$"}]}),
                  "optional: `2` or `\"2.2\"` (must be this chapter) to keep a published report's numbering; "
                  "later items continue from it (`2.3`, …); numbers must increase"),
    "caption": key(TEXT, "caption", required=True),
    "footnote": key(TEXT, "footnote under the table or figure"),
    "metric": key(METRIC, "one metric (`tps`); names from `run_metrics` (parsers' `METRICS`, transcribed "
                          "values), `name[selection]` over devices or CPUs, `name[role]` (`cpu_idle_pct[server]`) "
                          "the host of that role for a metric measured per host, `name[role][selection]` both"),
    "metrics": key(array_of("list of metric names", {"type": "string", "minLength": 1}, 1),
                   "several metrics side by side (`[\"tps\", \"cpu_idle_pct\"]`)"),
    "where": key(table_of("table of conditions", {"$ref": "#/$defs/condition"}),
                 "selects runs by factor: `f = v` (equal), `f = [v1, v2]` (in), `f = { min = a, max = b }` "
                 "(numeric range, either bound optional); all conditions hold"),
    "aggregate": key(one_of(*AGGREGATES), "over the runs of a cell: `median` (default), `mean`, `min`, `max`, "
                                          "`single` (exactly one run, else an error)"),
    "machines": key(one_of("one", "factor"),
                    "`\"one\"` (default): the runs must have run on one machine (a machine is its inventory, "
                    "run.toml / host.toml `[machine]`), else the build stops (exit 3) naming the machines; "
                    "`\"factor\"`: the machine is a factor of this item, its runs may span machines"),
    "digits": key(table_of("table of digits", {"$ref": "#/$defs/digits"}),
                  "`{ metric = n | \"printed\", default = n }` decimals per metric (else `[metrics.X] digits`, "
                  "else 2)"),
}

TABLE = {  # tables only
    "rows": key(FACTOR, "factor whose values are the rows, or `\"metrics\"`: one row per metric of `metrics`, "
                        "`\"functions\"`: the top functions of a profile, `\"queries\"`: elapsed time per query "
                        "(see docs/spec.md)", required=True),
    "options": key(("table", {"type": "object"}), "options of `rows = \"functions\"`: `top` (10), `profile` "
                                                  "(`\"cpu\"`, `\"syscalls\"`), `rank_by` (`\"self\"`, `\"total\"`)"),
    "columns": key(FACTOR, "factor pivoted into column groups"),
    "count": key(BOOL, "`true` adds the number of runs after the first metric"),
    "companions": key(one_of("representative", "aggregate"),
                      "metrics after the first: `\"aggregate\"` (default; aggregated over the runs like the "
                      "first) or `\"representative\"` (the value of one run, the one whose first-metric value is "
                      "closest to the aggregate, i.e. the median run; its header then says so)"),
    "show_factors": key(array_of("list of factor names", {"type": "string", "minLength": 1}),
                        "extra columns after the row label showing other factors of each row's runs "
                        "(`[\"sync_standbys\", \"async_standbys\"]`)"),
    "row_labels": key(table_of("table of texts", {"$ref": "#/$defs/text"}),
                      "`row_labels.\"0\" = {ja, en}` labels of row values for this table only"),
    "baseline": key(("table", {"$ref": "#/$defs/baseline"}), "a comparison column, see below"),
    "row_groups": key(FACTOR, "a second factor on rows: one block of rows per value, labelled in a full-width row "
                              "(FY2013 tables 4.5/4.6)"),
    "per_run": key(BOOL, "`true`: each run's own value of the first metric in its own column before the aggregate"),
    "number_format": key(table_of("table of formats", {"enum": ["plain", "thousands", "exponent"]}),
                         "`{ metric = \"plain\" | \"thousands\" | \"exponent\", default = … }`: thousands "
                         "separators (`13,097.4`) or exponent form (`2.04E-05`)"),
    "sum_column": key(TEXT, "with `rows = \"metrics\"`: label of a derived column, the sum of the row's values"),
    "cell_notes": key(("list of cell notes", {"type": "array", "items": {"type": "object", "properties": {
        "row": {"type": ["string", "number"]}, "column": {"type": ["string", "number"]},
        "metric": {"type": "string"}, "group": {"type": ["string", "number"]},
        "note": {"$ref": "#/$defs/text"}, "mark": {"type": "string"}},
        "required": ["note"], "additionalProperties": False}}),
        "notes on cells: `[{ row, column, metric, group, note = { ja, en }, mark = \"*1\" }]` (see below)"),
    "key": key(("list of key results", {"type": "array", "minItems": 1, "items": {
        "type": "object", "properties": {
            "row": {"type": ["string", "number"]}, "column": {"type": ["string", "number"]},
            "metric": {"type": "string"}, "group": {"type": ["string", "number"]},
            "label": {"$ref": "#/$defs/text"}},
        "required": ["label"], "additionalProperties": False}}),
        "the table's key results, listed on the report's cover (site and PDF): `[{ row, column, metric, group, "
        "label = { ja, en } }]`, each cell named as in `cell_notes`; its value, comparison and verdict are "
        "printed from the data with a link to the table"),
    "spread": key(one_of("none", "range"),
                  "`\"range\"`: print each aggregated value's range over its runs under it (`842.61` "
                  "`[677.30–894.10]`) in the PDF and on the site; `\"none\"` (default): the range only on hover "
                  "(site) and in the CSV"),
}

FIGURE = {  # figures only
    "x": key(FACTOR, "factor on the x axis"),
    "series": key(FACTOR, "factor giving one trace per value"),
    "chart": key(STRING, "figure kind, `line` by default (see docs/charts.md)"),  # its kinds: chart_key
    "options": key(("table", {"type": "object"}),
                   "kind-specific options: `x_log`, `y_log` (log axes), `x_title`, `y_title` "
                   "(bilingual axis titles), `height`; `baseline = { factor, value }` (ratio), `metric_where` "
                   "(a metric's own selection), `rest` (stacked_shares), `theory = { divisor }` (theory), … "
                   "(see docs/charts.md)"),
}

BASELINE = {
    "factor": key(FACTOR, "the baseline is another value of this factor: the `columns` factor (each column "
                          "group is compared with the baseline group in the same row), the `rows` factor (each "
                          "row with the baseline row), or any other factor (the same cell computed with `where` "
                          "+ `factor = value`)"),
    "value": key(SCALAR, "the value of `factor` that is the baseline"),
    "row": key(("`\"first\"`", {"const": "first"}), "`\"first\"`: the first row (in display order)"),
    "fixed": key(("number ≠ 0", {"type": "number", "not": {"const": 0}}), "a fixed number"),
    "compare": key(one_of(*COMPARES), "`ratio` value / baseline (default), `speedup` baseline / value, "
                                      "`change` value / baseline − 1, `auto`: ratio when the metric is "
                                      "higher-is-better, speed-up when lower-is-better"),
    "format": key(one_of(*FORMATS), "`percent` `103.82 %`, `times` `×30.21`, `change` `▲92.3%` (ja) / "
                                    "`−92.3 %` (en) / `+5.0 %`, `number` `3783.6`"),
    "digits": key(("integer ≥ 0", {"type": "integer", "minimum": 0}), "decimals (default 2)"),
    "significant": key(("integer ≥ 1", {"type": "integer", "minimum": 1}),
                       "significant figures instead (speed-ups printed as `3783.6`, `0.93164`)"),
    "metric": key(METRIC, "which of the table's metrics is compared (default the first)"),
    "label": key(TEXT, "header of the comparison column"),
    "show_baseline": key(BOOL, "`false` leaves the baseline's column group out (the comparison still uses it)"),
    "published": key(METRIC, "a metric holding the report's printed derived value (transcribed): check it, "
                             "see below"),
    "inline": key(BOOL, "`true`: no comparison column; the comparison goes into the compared value's cell "
                        "(`9,928.0 (▲24.2%)`)"),
    "show_published": key(BOOL, "`true` (default): the printed value in its own column (`kind = 'published'`) "
                                "beside the computed one"),
    "published_label": key(TEXT, "header of that column (default: \"as published\", in each language)"),
}

SELECTION = ("table of values", {"$ref": "#/$defs/selection"})

COMPARE = {  # [[compare]]: two selections compared condition by condition (the page of tools/compare)
    "id": key(STRING, "unique in the report; the page is `compare-<id>` (its CSV `compare-<id>.csv`)",
              required=True, pattern="^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
    "title": key(TEXT, "title of the page (in the table of contents)", required=True),
    "a": key(SELECTION, "selection A, the baseline: `{ config = \"checksums-off\" }` (`f = v` or `f = [v1, v2]`)",
             required=True),
    "b": key(SELECTION, "selection B, compared with A: `{ config = \"checksums-on\" }`", required=True),
    "where": key(SELECTION, "conditions both sides share (`{ study = \"scaleup\" }`); a factor named here "
                            "cannot be named in `a` or `b`"),
    "metrics": key(array_of("list of metric names", {"type": "string", "minLength": 1}, 1),
                   "compare only these metrics (default: every metric both selections have); a metric measured "
                   "on several hosts of a run names the host by its role, `cpu_idle_pct[server]` (no [selection])"),
    "footnote": key(TEXT, "a note under the comparison"),
}

TOP = {
    "report": key(("table", {"$ref": "#/$defs/report"}), "`[report]`: the report itself", required=True),
    "factors": key(table_of("table of tables", {"$ref": "#/$defs/factor"}),
                   "`[factors.<name>]`: how a factor is shown"),
    "metrics": key(table_of("table of tables", {"$ref": "#/$defs/metric"}),
                   "`[metrics.<name>]`: how a metric is shown (overrides the parser's `MetricDef`)"),
    "device_groups": key(table_of("table of lists", {"type": "array", "minItems": 1, "title": "device group",
                                                     "items": {"type": "string", "minLength": 1}}),
                         "`[device_groups]`: `name = [\"sdb\", \"sdc\"]`, devices named together"),
    "chapter": key(("list of tables", {"type": "array", "items": {"$ref": "#/$defs/chapter"}}),
                   "`[[chapter]]`: chapters in order"),
    "compare": key(("list of tables", {"type": "array", "items": {"$ref": "#/$defs/compare"}}),
                   "`[[compare]]`: pages comparing two selections of runs, as `tools/compare` does (see below)"),
}

# name in docs markers -> (section keys, what the table is called in error messages)
SECTIONS: dict[str, dict[str, dict]] = {
    "top": TOP, "report": REPORT, "scope": SCOPE, "revision": REVISION, "author": AUTHOR, "factor": FACTOR_DEF,
    "metric": METRIC_DEF, "chapter": CHAPTER, "item": ITEM, "table": TABLE, "figure": FIGURE, "baseline": BASELINE,
    "compare": COMPARE, "missing_figure": MISSING_FIGURE,
}


def _model_keys() -> dict[str, set[str]]:
    """Keys spec/model.py accepts: a key added there before it is described here still validates
    (the docs then say so), so that the two never disagree at run time."""
    return {"report": set(model_keys.REPORT_KEYS), "scope": set(model_keys.SCOPE_KEYS), "top": set(model_keys.TOP_KEYS), "chapter": set(model_keys.CHAPTER_KEYS),
            "factor": set(model_keys.FACTOR_KEYS), "metric": set(model_keys.METRIC_KEYS), "item": set(model_keys.ITEM_KEYS),
            "baseline": set(model_keys.BASELINE_KEYS), "missing_figure": set(model_keys.MISSING_FIGURE_KEYS),
            "compare": set(model_keys.COMPARE_KEYS)}


def chart_key(chart_kinds: Iterable[str]) -> dict[str, Any]:
    """The figure's ``chart`` key, listing the registered chart kinds (none given: any name)."""
    kinds = sorted(chart_kinds)
    if not kinds:
        return FIGURE["chart"]
    return key(("chart kind", {"enum": kinds}), "figure kind, `line` by default: " + ", ".join(f"`{k}`" for k in kinds)
               + " (each described in docs/charts.md)")


def section_keys(name: str, chart_kinds: Iterable[str] = ()) -> dict[str, dict]:
    keys = dict(SECTIONS[name])
    if name == "figure":
        keys["chart"] = chart_key(chart_kinds)
    described = set(keys) | (set(TABLE) | set(FIGURE) if name == "item" else set())
    for k in sorted(_model_keys().get(name, set()) - described):
        keys[k] = key(FREE, "(accepted by spec/model.py; not described in spec/schema.py yet)")
    return keys


def _object(names: str | list[str], title: str, chart_kinds: Iterable[str] = (), **extra: Any) -> dict[str, Any]:
    keys: dict[str, dict] = {}
    for name in [names] if isinstance(names, str) else names:
        keys.update(section_keys(name, chart_kinds))
    props = {}
    for k, d in keys.items():
        props[k] = {**d["type"][1], **d["extra"], "description": d["description"]}
    out: dict[str, Any] = {"type": "object", "title": title, "properties": props, "additionalProperties": False}
    required = [k for k, d in keys.items() if d["required"]]
    if required:
        out["required"] = required
    out.update(extra)
    return out


def schema(chart_kinds: Iterable[str] = ()) -> dict[str, Any]:
    """The JSON Schema of a report spec; ``chart_kinds``: the names a figure's ``chart`` may take."""
    one_metric = [{"required": ["metric"]}, {"required": ["metrics"]}]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "kansoku report spec (data/reports/<id>.toml)",
        "description": "Generated from tools/kansoku/spec/schema.py; docs/spec.md describes every key.",
        **_object("top", "report spec"),
        "$defs": {
            "text": {
                "title": "bilingual text",
                "description": "{ " + ", ".join(f'{x} = \"…\"' for x in LANGS) + " } or one string for "
                               + ("both" if len(LANGS) == 2 else "all") + "; a missing language falls back to "
                               + ("the other" if len(LANGS) == 2 else "another"),
                "anyOf": [{"type": "string", "minLength": 1},
                          {"type": "object", "additionalProperties": False,
                           "properties": {x: {"type": "string"} for x in LANGS},
                           "title": "non-empty text",
                           "anyOf": [{"required": [x], "properties": {x: {"minLength": 1}}} for x in LANGS]}],
            },
            "digits": {"title": "digits", "description": "decimals (0, 1, 2, …) or \"printed\"",
                       "anyOf": [{"type": "integer", "minimum": 0}, {"const": "printed"}]},
            "condition": {
                "title": "condition",
                "description": "v (equal), [v1, v2] (in), { min = a, max = b } (numeric range)",
                "anyOf": [{"type": ["string", "number", "boolean"]},
                          {"type": "array", "items": {"type": ["string", "number", "boolean"]}},
                          {"type": "object", "minProperties": 1, "additionalProperties": False,
                           "properties": {"min": {"type": "number"}, "max": {"type": "number"}}}],
            },
            "selection": {
                "title": "selection",
                "description": "factor = value or factor = [values]: the runs whose factors have these values",
                "type": "object", "minProperties": 1,
                "additionalProperties": {"anyOf": [
                    {"type": ["string", "number", "boolean"]},
                    {"type": "array", "minItems": 1, "items": {"type": ["string", "number", "boolean"]}}]},
            },
            "report": _object("report", "[report]"),
            "scope": _object("scope", "[report.scope]", minProperties=1),
            "revision": _object("revision", "[[report.revision_history]]"),
            "author": _object("author", "[[report.author]]"),
            "factor": _object("factor", "[factors.<name>]"),
            "metric": _object("metric", "[metrics.<name>]"),
            "chapter": _object("chapter", "[[chapter]]"),
            "missing_figure": _object("missing_figure", "[[chapter.missing_figure]]"),
            "table": _object(["item", "table"], "[[chapter.table]]", anyOf=one_metric),
            "figure": _object(["item", "figure"], "[[chapter.figure]]", tuple(chart_kinds), anyOf=one_metric),
            "compare": _object("compare", "[[compare]]"),
            "baseline": _object(
                "baseline", "baseline = { … }",
                oneOf=[{"required": ["factor"]}, {"required": ["row"]}, {"required": ["fixed"]}],
                dependentRequired={"factor": ["value"], "value": ["factor"]}),
        },
    }


def schema_json(chart_kinds: Iterable[str]) -> str:
    return json.dumps(schema(chart_kinds), ensure_ascii=False, indent=2) + "\n"


# -- docs/spec.md ----------------------------------------------------------------------------------

_MARKER = re.compile(r"(<!-- generated:(?P<name>\w+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)


def key_table(name: str, chart_kinds: Iterable[str] = ()) -> str:
    rows = ["| key | type | meaning |", "|---|---|---|"]
    for k, d in section_keys(name, chart_kinds).items():
        req = " **(required)**" if d["required"] else ""
        cells = [f"`{k}`", d["type"][0], d["description"] + req]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def spec_doc(text: str, chart_kinds: Iterable[str]) -> str:
    """docs/spec.md with every generated key table rewritten from the schema; the prose is kept."""
    kinds = tuple(chart_kinds)

    def sub(m: re.Match) -> str:
        if m.group("name") not in SECTIONS:
            raise KeyError(f"docs/spec.md: unknown generated section {m.group('name')!r}")
        return m.group(1) + "<!-- written by python3 -m kansoku.analysis.spec_docs; do not edit -->\n" + \
            key_table(m.group("name"), kinds) + m.group(4)
    return _MARKER.sub(sub, text)


def write_docs(chart_kinds: Iterable[str]) -> list[Path]:
    """Rewrite docs/report-spec.schema.json and the key tables of docs/spec.md; the files written."""
    kinds = tuple(chart_kinds)
    SCHEMA_JSON.write_text(schema_json(kinds), encoding="utf-8")
    SPEC_DOC.write_text(spec_doc(SPEC_DOC.read_text(encoding="utf-8"), kinds), encoding="utf-8")
    return [SCHEMA_JSON, SPEC_DOC]
