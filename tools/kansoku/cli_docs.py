"""The command reference of ``docs/cli.md``, generated from the commands' own argument parsers: each
command's ``--help``, as its parser formats it, between the page's ``<!-- generated:commands -->`` markers
(the prose around them is kept). ``python3 -m kansoku.cli_docs`` rewrites the page; a test checks it is current."""

from __future__ import annotations

import argparse
import functools
import re
import sys
from unittest import mock

from kansoku import resources

PAGE = resources.PACKAGE.parents[1] / "docs" / "cli.md"
WIDTH = 110  # the help as a wide terminal shows it, the same on every machine
_MARKER = re.compile(r"(<!-- generated:commands -->\n)(.*?)(<!-- /generated -->)", re.S)


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


def parser_of(main, argv: list[str], prog: str) -> argparse.ArgumentParser:
    """The parser ``main`` builds, caught as it is asked to parse (so that nothing else of the command runs)."""
    def caught(self, *args, **kwargs):
        raise _Parsed(self)

    with mock.patch.object(argparse.ArgumentParser, "parse_args", caught):
        try:
            main(argv, prog=prog)
        except _Parsed as parsed:
            return parsed.parser
    raise RuntimeError(f"{prog} parsed no options")


def _portable(text: str | None) -> str | None:
    """A help text with the manual's directory (a checkout's or an installed package's) spelt ``$MANUAL``."""
    for path, name in ((resources.EXAMPLES_DIR, "$MANUAL/examples"), (resources.DOCS_DIR, "$MANUAL")):
        text = text.replace(str(path), name) if text else text
    return text


def help_text(parser: argparse.ArgumentParser) -> str:
    """``--help`` at a fixed width, with the manual's directory spelt ``$MANUAL`` before the lines are wrapped."""
    parser.description, parser.epilog = _portable(parser.description), _portable(parser.epilog)
    for action in parser._actions:
        action.help = _portable(action.help)
    parser.formatter_class = functools.partial(parser.formatter_class, width=WIDTH)
    return parser.format_help().rstrip() + "\n"


def commands() -> list[tuple[str, str, argparse.ArgumentParser]]:
    """Every command as ``kansoku`` spells it, with its one-line summary and its parser."""
    from kansoku.cli import COMMANDS, collect_main, main  # kansoku.cli imports this module

    top = parser_of(lambda argv, prog: main(argv), [], "kansoku")
    out = [("kansoku", "the command and its subcommands", top)]
    for name, (run, summary) in COMMANDS.items():
        out.append((f"kansoku {name}", summary, parser_of(run, [], f"kansoku {name}")))
        if name == "collect":
            out.append(("kansoku collect queries", "the benchmark of a query study: statements timed, EXPLAIN",
                        parser_of(collect_main, ["queries"], "kansoku collect")))
    return out


def anchor(title: str) -> str:
    return title.replace(" ", "-")


def render() -> str:
    """The generated part of docs/cli.md: a table of the commands, then each command's --help."""
    cmds = commands()
    lines = ["<!-- written by python3 -m kansoku.cli_docs; do not edit -->", "", "| command | what it does |",
             "|---|---|"]
    lines += [f"| [`{title}`](#{anchor(title)}) | {summary} |" for title, summary, _ in cmds]
    for title, _, parser in cmds:
        lines += ["", f"### {title}", "", "```text", help_text(parser).rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def page(text: str) -> str:
    """docs/cli.md with its generated part rewritten; the prose around it is kept."""
    if not _MARKER.search(text):
        raise ValueError(f"{PAGE}: no <!-- generated:commands --> … <!-- /generated --> section")
    return _MARKER.sub(lambda m: m.group(1) + render() + m.group(3), text, count=1)


def main(argv: list[str] | None = None) -> int:
    PAGE.write_text(page(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the command reference of {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
