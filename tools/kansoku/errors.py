"""Errors users see. Every message names the file (and line when known) and what was expected."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

# What a terminal acts on rather than shows: C0 and C1 controls (a newline would forge a line of its own, ESC
# starts an escape sequence), DEL, and the marks that reorder text (bidirectional overrides).
_MARKS = "\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
_ANY_CONTROL = re.compile("[\x00-\x1f" + _MARKS + "]")
_CONTROL_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f" + _MARKS + "]")  # the message's own newlines and tabs kept
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def last_line(text: str) -> int:
    """The number of a text's last line (1 for an empty text): the line a refusal names when what was looked for
    in the whole text is not there (a parser stopped at the end of the file)."""
    return max(1, len(text.splitlines()))


# What a refusal says in place of a line when the path it names has none: a refusal of a text file names its line.
BINARY_FILE = "a binary file, no lines"
DIRECTORY = "a directory, no lines"


def lineless(path: str | Path, why: str) -> str:
    """How a refusal names a path that has no lines (``why``: ``BINARY_FILE``, ``DIRECTORY``), so that a reader
    sees why no line is given: ``path (a binary file, no lines)``."""
    return f"{path} ({why})"


def _escaped(m: re.Match) -> str:
    c = m.group()
    return _SHORT.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def quoted_name(name: str) -> str:
    """A file name or path as a terminal may show it: each control character written as its escape (``\\n``,
    ``\\x1b``), everything else as it is (a Japanese name stays readable)."""
    return _ANY_CONTROL.sub(_escaped, name)


def names_to_quote(paths: Iterable[str | Path]) -> set[str]:
    """The parts of these paths that hold a control character (a name with a newline, an escape sequence)."""
    return {part for p in paths for part in Path(p).parts if _ANY_CONTROL.search(part)}


def for_terminal(text: str, names: Iterable[str] = ()) -> str:
    """A message as the error and warning printers show it: the ``names`` in it (``names_to_quote``: file names
    the message may quote, newlines included) quoted, and any other control character but the message's own
    line ends and tabs escaped."""
    for name in sorted(set(names), key=len, reverse=True):
        text = text.replace(name, quoted_name(name))
    return _CONTROL_BUT_LINES.sub(_escaped, text)


class KansokuError(Exception):
    """Base class: a problem to report to the user, never a traceback."""

    exit_code = 1

    def __reduce__(self):
        # pickled as it is, whatever its constructor asks for: the build's computation hands its errors back
        # from a child process (app/forked.py)
        return (_rebuilt, (type(self), self.args, self.__dict__))


def _rebuilt(kind: type, args: tuple, state: dict) -> KansokuError:
    err = kind.__new__(kind)
    err.args = args
    err.__dict__.update(state)
    return err


class ParseError(KansokuError):
    """A file could not be read as the format it was detected as."""

    exit_code = 2

    def __init__(self, path: str | Path, line: int | None, expected: str, found: str | None = None, *,
                 no_line: str | None = None):
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.found = found
        # no_line: why a file without a line to name has none (BINARY_FILE)
        where = f"{self.path}:{line}" if line else lineless(self.path, no_line) if no_line else self.path
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
