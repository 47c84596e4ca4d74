"""The house rules of docs/ARCHITECTURE.md, checked on the source: stages as folders with no import circle,
SQL against stored tables only in store/, renderers that never see the store, words only in i18n."""

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "tools" / "kansoku"
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """kansoku modules imported at module level (imports inside functions are deferred, not circles)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kansoku"):
            for a in node.names:
                full = f"{node.module}.{a.name}"
                found.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("kansoku")}
    return {m for m in found if m in known and m != name}


def test_stages_are_folders():
    for stage in ("ingest", "parsers", "store", "spec", "analysis", "report", "render", "collect"):
        assert (PKG / stage / "__init__.py").is_file(), stage
    assert (ROOT / "docs" / "ARCHITECTURE.md").is_file()


def test_no_import_circle():
    mods = modules()
    graph = {m: imports(m, p, set(mods)) for m, p in mods.items()}
    # a package's __init__ importing its own submodules is registration, not a circle between stages
    graph = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_sql_against_stored_tables_only_in_store():
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in PKG.rglob("*.py") if "store" not in p.relative_to(PKG).parts[:1]
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if ".execute(" in line]
    assert offenders == []


def test_renderers_never_see_the_store_the_spec_or_the_analysis():
    mods = modules()
    for name, path in mods.items():
        if name.startswith("kansoku.render"):
            deps = imports(name, path, set(mods))
            bad = {d for d in deps if d.startswith(("kansoku.store", "kansoku.analysis", "kansoku.spec"))}
            assert not bad, (name, bad)


def _string_literals(path: Path):
    """(line, text) of every string literal that is not a docstring."""
    src = path.read_text(encoding="utf-8")
    docstrings = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.add(first.lineno)
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.STRING and tok.start[0] not in docstrings:
            yield tok.start[0], tok.string


def test_no_japanese_word_in_python_code():
    """Every Japanese word a reader sees lives in i18n/ja.toml. Parsers may *recognise* Japanese tool output
    (a sar report in the ja_JP locale prints 午前/午後): those patterns are input, not words shown, and are
    allowed in parsers/ only."""
    offenders = []
    for p in PKG.rglob("*.py"):
        rel = p.relative_to(PKG)
        if rel.parts[0] == "parsers":
            continue
        for line, text in _string_literals(p):
            if CJK.search(text):
                offenders.append(f"{rel}:{line}: {text[:40]}")
    assert offenders == []
