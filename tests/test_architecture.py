"""The house rules of docs/ARCHITECTURE.md, checked on the source: stages as folders with no import circle and
no import against the stage order (imports inside functions counted), SQL against stored tables only in store/,
renderers that see only the computed report, words only in i18n, functions a reader can hold."""

import ast
import functools
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


@functools.cache
def nodes(path: Path) -> tuple:
    """Every node of a module's syntax tree, parsed once a test process (each rule below walks every module)."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def import_nodes(path: Path):
    """Every import statement of a module: at module level and inside functions (a deferred import is still a
    dependency: it hides a circle, it does not remove it)."""
    return [n for n in nodes(path) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _absolute(name: str, node: ast.ImportFrom) -> str | None:
    if not node.level:
        return node.module
    base = name.split(".")[: -node.level] if not name.endswith("__init__") else name.split(".")
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """kansoku modules a module imports, wherever the import statement is."""
    found = set()
    for node in import_nodes(path):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(name, node)
            if not module or not module.startswith("kansoku"):
                continue
            for a in node.names:
                full = f"{module}.{a.name}"
                found.add(full if full in known else module)
        else:
            found |= {a.name for a in node.names if a.name.startswith("kansoku")}
    return {m for m in found if m in known and m != name}


# The stages from the ground floor up (docs/ARCHITECTURE.md): a module imports its own stage and the
# stages below it, never a stage above it nor a sibling of the same floor.
FLOORS = [
    {"kansoku", "kansoku.words", "kansoku.errors", "kansoku.interrupts", "kansoku.model", "kansoku.front_matter",
     "kansoku.languages", "kansoku.resources", "kansoku.pickle_entries"},
    {"kansoku.parsers"},
    {"kansoku.store"},
    {"kansoku.ingest", "kansoku.spec"},
    {"kansoku.analysis"},
    {"kansoku.report"},
    {"kansoku.render", "kansoku.collect"},
    {"kansoku.app"},
    {"kansoku.cli", "kansoku.cli_compare"},
]


def stage(module: str) -> str:
    """A module's stage: its folder (kansoku.report), the ground floor (kansoku) or the command line (kansoku.cli)."""
    if module in FLOORS[0]:
        return "kansoku"
    if module.startswith("kansoku.cli"):
        return "kansoku.cli"
    parts = module.split(".")
    for n in (2, 1):
        name = ".".join(parts[:n])
        if any(name in floor for floor in FLOORS):
            return name
    raise AssertionError(f"{module}: in no stage of FLOORS (add it to tests/test_architecture.py and the docs)")


def floor(module: str) -> int:
    s = stage(module)
    return next(i for i, f in enumerate(FLOORS) if s in f)


def test_every_import_follows_the_stage_order():
    mods = modules()
    wrong = []
    for name, path in mods.items():
        for dep in imports(name, path, set(mods)):
            if stage(dep) != stage(name) and floor(dep) >= floor(name):
                wrong.append(f"{name} -> {dep}")
    assert wrong == []


def test_no_module_imports_another_modules_private_names():
    mods = modules()
    wrong = []
    for name, path in mods.items():
        for node in import_nodes(path):
            if isinstance(node, ast.ImportFrom) and (module := _absolute(name, node)) and module.startswith("kansoku"):
                private = [a.name for a in node.names if a.name.startswith("_") and f"{module}.{a.name}" not in mods]
                if private and module != name:
                    wrong.append(f"{name}: from {module} import {', '.join(private)}")
    assert wrong == []


def test_no_module_is_loaded_by_name():
    """A module loaded by its name is an import the stage and circle tests cannot see. The one exception is the
    parsers' registry, which finds every module of its package (a new format is a new module)."""
    allowed = {PKG / "parsers" / "__init__.py"}
    by_name = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in sorted(PKG.rglob("*.py")) if p not in allowed
               for n in nodes(p)
               if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) == "import_module"
                                               or getattr(n.func, "id", None) in ("import_module", "__import__"))
               and not (n.args and isinstance(n.args[0], ast.Constant) and not str(n.args[0].value).startswith("kansoku"))]
    assert by_name == []


# A function longer than this is split into named steps, so that a reader can hold each in mind.
MAX_FUNCTION_LINES = 150


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """The functions and methods (nested ones too) of a module's source longer than ``limit`` lines, from their
    ``def`` to their last line: (name, first line, length)."""
    return _long(ast.walk(ast.parse(source)), limit)


def _long(walked, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    return [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in walked
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > limit]


def test_no_function_is_longer_than_150_lines():
    long = [f"{p.relative_to(ROOT)}:{line}: {name} ({length} lines)" for p in sorted(PKG.rglob("*.py"))
            for name, line, length in _long(nodes(p))]
    assert long == []


def _function_of(lines: int, name: str = "f", indent: str = "") -> str:
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))
    return f"{indent}def {name}():\n{body}"


def test_a_function_of_151_lines_is_long_and_one_of_150_is_not():
    assert long_functions(_function_of(150)) == []
    assert long_functions(_function_of(151)) == [("f", 1, 151)]


def test_a_long_method_or_nested_function_is_found():
    method = "class C:\n" + _function_of(151, "m", "    ")
    nested = "def outer():\n" + _function_of(151, "inner", "    ") + "    return inner\n"
    assert long_functions(method) == [("m", 2, 151)]
    assert [name for name, _, _ in long_functions(nested)] == ["outer", "inner"]


def test_stages_are_folders():
    for stage in ("ingest", "parsers", "store", "spec", "analysis", "report", "render", "collect"):
        assert (PKG / stage / "__init__.py").is_file(), stage
    assert (ROOT / "docs" / "ARCHITECTURE.md").is_file()


def test_no_import_circle():
    mods = modules()
    graph = {m: imports(m, p, set(mods)) for m, p in mods.items()}
    # a package's __init__ importing its own submodules is registration, not a circle between stages
    graph = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in graph.items()}
    # ... and a submodule importing its package means the package's own names (kansoku.words, kansoku.model)
    graph = {m: {d for d in deps if not (m.startswith(d + ".") and mods[d].name == "__init__.py"
                                         and d != "kansoku" and stage(d) == stage(m))}
             for m, deps in graph.items()}
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


# Modules with a database of their own, not the store: the build caches' entries (one SQLite file each)
OWN_DATABASES = {"pickle_entries.py"}


def test_sql_against_stored_tables_only_in_store():
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in PKG.rglob("*.py") if "store" not in p.relative_to(PKG).parts[:1]
                 and p.relative_to(PKG).as_posix() not in OWN_DATABASES
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if ".execute(" in line]
    assert offenders == []


def test_renderers_see_the_computed_report_and_nothing_else():
    """render/ imports the ground floor (the model, words, errors) and itself: never the store, a spec, the
    analysis, the report stage (which computes) or the orchestrator."""
    mods = modules()
    for name, path in mods.items():
        if name.startswith("kansoku.render"):
            deps = imports(name, path, set(mods))
            bad = {d for d in deps if floor(d) != 0 and stage(d) != "kansoku.render"}
            assert not bad, (name, bad)


def _string_literals(path: Path):
    """(line, text) of every string literal that is not a docstring."""
    src = path.read_text(encoding="utf-8")
    docstrings = set()
    for node in nodes(path):
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
