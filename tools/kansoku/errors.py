"""Errors users see. Every message names the file (and line when known) and what was expected."""

from __future__ import annotations

from pathlib import Path


class KansokuError(Exception):
    """Base class: a problem to report to the user, never a traceback."""

    exit_code = 1


class ParseError(KansokuError):
    """A file could not be read as the format it was detected as."""

    exit_code = 2

    def __init__(self, path: str | Path, line: int | None, expected: str, found: str | None = None):
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.found = found
        where = f"{self.path}:{line}" if line else self.path
        msg = f"{where}: expected {expected}"
        if found is not None:
            shown = found if len(found) <= 80 else found[:77] + "..."
            msg += f", found {shown!r}"
        super().__init__(msg)


class UnusableFile(ParseError):
    """A file recognised as its format that cannot be used (a statistics snapshot with no time): the ingest
    skips it with the reason and stores the rest of its run; one file never loses a run."""


class RunError(KansokuError):
    """Run metadata is inconsistent (e.g. path factors disagree with run.toml)."""

    exit_code = 2


class SiteLinkError(KansokuError):
    """A file or directory a build reads is a symbolic link, or the site's tree leads out through one
    (kansoku/site_links.py): refused before anything is read or written."""

    exit_code = 2


class SpecError(KansokuError):
    """A report spec is invalid. The message names the spec file and the item."""

    exit_code = 3

    def __init__(self, spec_file: str | Path, item: str | None, message: str):
        self.spec_file = str(spec_file)
        self.item = item
        where = f"{self.spec_file}: {item}" if item else self.spec_file
        super().__init__(f"{where}: {message}")


class StoreBusyError(KansokuError):
    """Another process holds the database."""

    exit_code = 4


class MissingToolError(KansokuError):
    """An external program (chromium, sadf, a font, ...) is missing. Says what to install."""

    exit_code = 5
