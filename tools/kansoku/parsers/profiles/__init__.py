"""CPU profiles and stacks (docs/formats.md §9): ``perf script`` (plain or gzip), folded stacks, ``strace -k``."""
