"""No text from a plan, a factor or a file runs as shell code, here or on another host. Values that
reach a shell are quoted (the remote supervisor's strace line, setup commands) or passed as an argument
vector; a query list's psql meta-command (``\\!`` runs a shell) is refused wherever it stands. A real collect
over the tests' sshd (tests/test_collect_hosts.py) with ``$(…)``, backticks and ``;`` in every such value."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kansoku.collect.queries import QueryListError, read_list
from test_collect_hosts import (  # noqa: F401  (the fixtures; the lock: autouse)
    ALIAS,
    ROOT,
    SSH_HOSTS,
    _collect,
    _load,
    _one_test_of_this_module_at_a_time,
    _remote_leftovers,
    needs_ssh,
    sshd,
)
from test_collect_integration import _skip_reason as _no_server
from test_collect_integration import server  # noqa: F401  (the fixture: a throwaway cluster)

needs_server = pytest.mark.skipif(_no_server() is not None, reason=_no_server() or "")

# each value would create its own file if a shell ran it: in the shell's directory (the plan's, or the
# supervisor's temporary directory, fetched into the run) and at an absolute path
TAGS = ["d$(touch pwned_dollar)", "b`touch pwned_backtick`", "s;touch pwned_semicolon"]


def _pwned(*dirs: Path) -> list[Path]:
    found = []
    for d in dirs:
        found += [p for p in d.rglob("pwned*")] if d.is_dir() else []
    return found


PLAN = """\
root = "runs"
order = "listed"
settle_s = 0.2
monitors = false

[factors]
tag = {tags}

[run]
command = "echo {{tag}}"
output = "out_{{tag}}.log"
note = "{{tag}} $(touch pwned_note)"
server_log = "/nonexistent/{{tag}}$(touch pwned_log)"

[[setup]]
on = ["tag"]
command = "echo {{tag}} {{plan_dir}} >> setup.txt"

""" + SSH_HOSTS + """\
identity = "{identity}"
monitors = ["vmstat"]
strace_pidfile = "/nonexistent/x{{tag}}$(touch pwned_pidfile)`touch pwned_pidfile2`;touch pwned_pidfile3"
conninfo = "dbname={{tag}}$(touch pwned_conninfo)"
"""


@needs_ssh
def test_shell_text_in_a_plan_runs_nowhere(sshd, tmp_path):  # noqa: F811
    import json

    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(tags=json.dumps(TAGS), alias=ALIAS, config=sshd["ssh_config"],
                                identity=sshd["base"] / "user_key"))
    p = _collect("--plan", plan, timeout=300)
    tmp = Path(tempfile.gettempdir())
    assert not _pwned(tmp_path, ROOT) and not list(tmp.glob("pwned*")) and not list(tmp.glob("kansoku-collect.*/pwned*")), \
        p.stderr
    assert p.returncode == 0, p.stderr
    # the setup received each value as one word, as written
    assert (tmp_path / "setup.txt").read_text().splitlines() == [f"{t} {tmp_path}" for t in TAGS]
    for t in TAGS:
        run = tmp_path / "runs" / f"tag={t}"
        host = _load(run / "host=dbserver" / "host.toml")
        # the supervisor said it found no PID in the file, named as it is
        assert any("no PID in /nonexistent/x" + t in e for e in host["collect"].get("errors", [])), host["collect"]
    assert not _remote_leftovers()


def test_a_psql_meta_command_inside_a_statement_is_refused_with_its_line(tmp_path):
    f = tmp_path / "q.sql"
    f.write_text("-- query: a\nSELECT 1;\n-- query: b\nSELECT 'x\\y', $$ \\ $$, E'\\'' \n  FROM t \\! touch pwned\n;\n")
    with pytest.raises(QueryListError, match=r"q.sql:5: .*meta-command '\\\\! touch pwned'"):
        read_list(f)
    # backslashes inside strings, quoted names, dollar quotes and comments are SQL's own
    f.write_text("SELECT 'a\\b', \"c\\d\", $x$ \\ $x$, E'\\'\\\\' /* \\ */ -- \\\n;\n")
    assert len(read_list(f)) == 1


# psql's shell escape where psql's lexer, not a reader of lines, meets it: each list ran `touch pwned` in psql's
# directory before the list's reader lexed statements as psql does (the line: the one the refusal names)
PSQL_ESCAPES = {
    "a dollar quote left open": ("-- query: a\nSELECT $$x;\n-- query: b\nSELECT $$ \\! touch pwned $$;\n", 2),
    "a comment left open": ("-- query: a\nSELECT 1 /* ;\n-- query: b\nSELECT $q$ */ \\! touch pwned $q$;\n", 2),
    "a quoted name left open": ("-- query: a\nSELECT \"a;\n-- query: b\nSELECT $$\" \\! touch pwned $$;\n", 2),
    "a dollar quote after a name": ("-- query: a\nSELECT a$$b$ \\! touch pwned $b$;\n", 2),
    "a variable holding the server's text": ("DO $$BEGIN RAISE EXCEPTION '\\! touch pwned'; END$$;\n"
                                             "SELECT 1,\n :LAST_ERROR_MESSAGE;\n", 3),
    "standard_conforming_strings off": ("SET standard_conforming_strings = off;\n"
                                        "SELECT 'a\\' x' \\! touch pwned #';\n", 2),
    "an escape string continued on a new line": ("SELECT 1;\nSELECT E'x'\n'a\\'' \\! touch pwned #';\n", 3),
    "a number run into a string prefix": ("SELECT 1e'\\' x' \\! touch pwned #';\n", 1),
    "two statements on one line": ("SELECT 1; SELECT 2;\n", 1),
}


@pytest.mark.parametrize("case", sorted(PSQL_ESCAPES))
def test_a_statement_psql_would_lex_otherwise_is_refused_with_its_line(tmp_path, case):
    """Collect and ingest read a list the same way (parsers/queries/statement_list.py): refused at its line."""
    from kansoku.errors import ParseError
    from sys_helpers import parse

    text, line = PSQL_ESCAPES[case]
    f = tmp_path / "q.sql"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(QueryListError, match=rf"q.sql:{line}: expected "):
        read_list(f)
    (tmp_path / "queries.sql").write_text("-- query: named\n" + text, encoding="utf-8")
    with pytest.raises(ParseError) as exc:
        parse("query-list", tmp_path / "queries.sql")
    assert exc.value.line == line + 1


def test_sql_psql_sends_as_written_is_still_read(tmp_path):
    """What psql lexes as the list's reader does stays accepted: casts, slices with a space, nested comments,
    rules with several actions, strings continued on a new line, backslashes inside quotes."""
    f = tmp_path / "q.sql"
    f.write_text("SELECT x::int, a[1: n], $tag$ \\ $tag$ FROM t /* a /* b */ \\ */;\n"
                 "CREATE RULE r AS ON INSERT TO t DO (INSERT INTO a VALUES (1); INSERT INTO b VALUES (2));\n"
                 "SELECT 'a'\n  'b', E'\\'', '`touch pwned`', $$; touch pwned$$;\n", encoding="utf-8")
    assert [s.line for s in read_list(f)] == [1, 2, 3]


def test_a_query_list_over_the_size_limit_is_refused_at_the_line_passing_it(tmp_path):
    """Ingest reads no list over 1 MiB back as the run's: collect refuses it, naming the line where 1 MiB is
    passed (a giant line pasted into a real list)."""
    text = (ROOT / "data" / "runs" / "example" / "queries" / "parallel.sql").read_text(encoding="utf-8")
    f = tmp_path / "q.sql"
    f.write_text(text + "-- " + "x" * (1 << 20) + "\n" + text, encoding="utf-8")
    line = text.count("\n") + 1
    with pytest.raises(QueryListError, match=rf"q.sql:{line}: expected a query list of at most 1 MiB, found "
                                             rf"{f.stat().st_size:,} bytes, the limit passed on line {line}$"):
        read_list(f)


def test_a_query_list_not_utf8_is_refused_with_its_line(tmp_path):
    f = tmp_path / "q.sql"
    f.write_bytes(b"SELECT 1;\nSELECT '\xff';\n")
    with pytest.raises(QueryListError, match=r"q.sql:2: expected UTF-8 text"):
        read_list(f)


@needs_server
def test_a_setting_value_is_never_read_by_psql_as_a_meta_command(server, tmp_path):  # noqa: F811
    """`--set NAME=VALUE` (a factor value can fill it) becomes an escape string in the psql script: with
    standard_conforming_strings off, a plain string ended at `\\'` and the rest of the line ran as `\\!`."""
    (tmp_path / "q.sql").write_text("-- query: a\nSELECT current_setting('application_name');\n")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "collect"), "queries", "--conninfo",
                           f"host=127.0.0.1 port={server['port']} user=postgres dbname=bench", "--mode", "timing",
                           "--set", "standard_conforming_strings=off", "--set",
                           "application_name=\\' \\! touch pwned #", str(tmp_path / "q.sql")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert not _pwned(tmp_path)
    assert proc.returncode == 0, proc.stderr
