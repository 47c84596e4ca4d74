"""The store's limits that the command line shows in its --help: here, not in store/db.py, so that parsing a
command's options (--help, --version) does not load DuckDB."""

# DuckDB's memory in a build (its read-only connection): unlimited, DuckDB caches every block it reads of the
# store (80 % of the machine's memory by default), so a build's memory grew with the store; what
# does not fit is spilled to disk. The largest statement of a build, every run's metrics (the run_metrics
# view, a branch per metric), fits in this limit at the sizes docs/performance.md measures.
BUILD_MEMORY_LIMIT = "500MB"
