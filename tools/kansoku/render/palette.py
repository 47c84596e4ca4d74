"""The colours a reader must tell apart in a table, defined once for both outputs: the site's stylesheet reads
them as CSS custom properties (``--<name>``, set by ``layouts/_default/baseof.html`` from the Hugo config's
``params.palette``, render/hugo.py) and the PDF's typst tables as cell fills (``templates/macros.typ.j2``).

A verdict's fill stands apart from the baseline column's (a contrast ratio of at least 1.5, computed as WCAG
does) and the text keeps 4.5:1 on either; ``tests/test_reader_checks.py`` measures both in the browser. Blue
and orange stay apart for the common colour-vision deficiencies, and the symbol beside the value says the
same for a black-and-white print."""

PALETTE = {
    "base": "#eef4fb",          # the baseline column (and the current page in the contents)
    "better-bg": "#a6c8ee",     # a verdict: better than the baseline
    "worse-bg": "#f4b57c",      # a verdict: worse than the baseline
    "bad-bg": "#ffebe9",        # a printed value that disagrees with the data
    "better-ink": "#1f4e79",    # a verdict's symbol, on its fill
    "worse-ink": "#5c2c00",
    "muted-on-fill": "#3b3f44",  # secondary text (a cell's range, its runs) on a verdict's fill
}

# the fill of a table cell by its view's ``fill`` (render/views.py ViewCell.fill)
CELL_FILLS = {"better": PALETTE["better-bg"], "worse": PALETTE["worse-bg"], "mismatch": PALETTE["bad-bg"],
              "baseline": PALETTE["base"]}
