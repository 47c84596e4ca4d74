"""The keys a report spec may hold, per section: what spec/model.py reads and spec/schema.py describes (a key
here that the schema does not describe yet still validates, and docs/spec.md says so)."""

REPORT_KEYS = {"id", "fiscal_year", "title", "subtitle", "organisation", "revision", "copyright", "license",
               "revision_history", "author", "themes", "note", "publish_raw",
               "site_url", "machines", "scope"}
TOP_KEYS = {"report", "factors", "metrics", "device_groups", "chapter", "compare"}
CHAPTER_KEYS = {"id", "number", "title", "table", "figure", "missing_figure"}
MISSING_FIGURE_KEYS = {"number", "caption", "reason", "note"}
# why a printed figure is not drawn (i18n: figure_missing_<reason>)
MISSING_REASONS = ("lost", "diagram", "no_data", "not_numeric")
FACTOR_KEYS = {"name", "order", "labels", "unit"}
METRIC_KEYS = {"label", "unit", "higher_is_better", "digits"}
SCOPE_KEYS = {"campaigns", "run_prefixes", "transcribed"}
COMPARE_KEYS = {"id", "title", "a", "b", "where", "metrics", "footnote"}
ITEM_KEYS = {"id", "number", "caption", "metric", "metrics", "where", "rows", "columns", "x", "series", "aggregate",
             "count", "companions", "baseline", "digits", "chart", "footnote", "options", "show_factors", "row_labels",
             "row_groups", "per_run", "number_format", "sum_column", "cell_notes",
             "spread", "machines", "key"}
BASELINE_KEYS = {"factor", "value", "row", "fixed", "compare", "format", "digits", "significant", "metric", "label",
                 "published", "show_published", "published_label", "show_baseline", "inline"}
