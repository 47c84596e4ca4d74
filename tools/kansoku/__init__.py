"""kansoku: PostgreSQL benchmark campaign results -> DuckDB -> bilingual Hugo site and PDF.

Pipeline (one direction of flow):

    runs.py / detect.py -> parsers/ -> store/ (DuckDB) -> analysis.py (SQL)
        -> figures.py / site.py (Hugo) and pdf.py (pandoc + typst)
"""

__version__ = "0.1.0"
