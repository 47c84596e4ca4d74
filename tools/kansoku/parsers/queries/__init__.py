"""Query studies (docs/formats.md §10): EXPLAIN (ANALYZE, FORMAT JSON) output and psql ``\\timing`` output."""
