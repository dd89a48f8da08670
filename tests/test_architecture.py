"""The import rules of docs/architecture.md, read from the page and checked
on the source, so that the two cannot drift apart.

From the page: the layer table (a module imports only modules of lower
layers, function-level imports included), the order of the modules inside
``_operators/``, the modules that may import the compiled loops
(``sketchlab._engine._jit``), the imports up the layers with their reasons, the
modules that call scipy.linalg and those that set the BLAS-thread policy
(``serial_blas``) themselves rather than through ``_linalg``'s entry points.
Also: no module imports another module's underscore names (``from ._x import
_name``, or ``_x._name`` on an imported module): what a module shares is a
name without an underscore, in a private module.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sketchlab"
PAGE = ROOT / "docs" / "architecture.md"


def _section(text, heading):
    """The lines of a section of the page, from its heading to the next one
    of the same or a higher level."""
    lines = text.splitlines()
    level = heading.split(" ", 1)[0]
    start = lines.index(heading) + 1
    for end in range(start, len(lines)):
        marks = lines[end].split(" ", 1)[0]
        if set(marks) == {"#"} and len(marks) <= len(level):
            return lines[start:end]
    return lines[start:]


def _table(lines):
    """Rows of the first markdown table in ``lines`` (header and rule
    skipped), as lists of cells."""
    rows = []
    for line in lines:
        if line.startswith("|"):
            rows.append(line)
        elif rows:  # the end of the first table
            break
    assert len(rows) > 2, "no table found"
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def _names(cell):
    """Module names written in backticks in a cell (a trailing / marks a package)."""
    return [name.rstrip("/") for name in re.findall(r"`([^`]+)`", cell)]


TEXT = PAGE.read_text()
LAYERS = {name: int(row[0]) for row in _table(_section(TEXT, "## Layers"))
          for name in _names(row[1])}
OPERATOR_ORDER = {name: int(row[0]) for row in _table(_section(TEXT, "### Inside `_operators/`"))
                  for name in _names(row[1])}
ENGINE_ORDER = {name: int(row[0]) for row in _table(_section(TEXT, "### Inside `_engine/`"))
                for name in _names(row[1])}
# the packages whose modules import each other in the order of their table
ORDERS = {"_operators": OPERATOR_ORDER, "_engine": ENGINE_ORDER}
MAY_IMPORT_JIT = {_names(row[0])[0] for row in _table(_section(TEXT, "## Compiled code"))}
UPWARD = {(_names(row[0])[0], _names(row[1])[0]): row[2]
          for row in _table(_section(TEXT, "## Imports up the layers"))}
MAY_CALL_LAPACK = {_names(row[0])[0]
                   for row in _table(_section(TEXT, "## Dense linear algebra outside `_linalg`"))}
MAY_SET_BLAS_THREADS = {_names(row[0])[0] for row in
                        _table(_section(TEXT, "## The BLAS-thread policy at call sites"))}


def _modules():
    """(top-level module, dotted name inside the package, path) of every file."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield parts[0], ".".join(parts), path


def _imports(path, top):
    """(imported top-level module, submodule inside a package or None,
    names, line) for every import of sketchlab modules in the file, and the
    aliases under which sketchlab modules are bound; and the imports of the
    compiled loops (``_engine._jit``) by their line."""
    tree = ast.parse(path.read_text())
    inside_package = path.parent != PACKAGE  # _engine/, _operators/: one module of the rules
    depth = len(path.relative_to(PACKAGE).parts) - 1  # 1 in a package, 2 in _engine/_jit/
    found, aliases, jit = [], {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            parts = node.module.split(".") if node.module else []
            # the absolute path of what is imported, inside the package
            here = list(path.relative_to(PACKAGE).parts[:-1])
            base = here[:len(here) - (node.level - 1)] if node.level - 1 <= len(here) else []
            target = base + parts
            names = [a.name for a in node.names]
            if target[:2] == ["_engine", "_jit"] or (target == ["_engine"] and "_jit" in names):
                jit.append(node.lineno)
            if depth == 2 and node.level == 1:  # compiled code importing compiled code
                continue
            if inside_package and node.level == 1:  # a sibling inside the package
                sub = parts[0] if parts else None
                if sub is None:  # from . import _engine
                    for alias in node.names:
                        found.append((top, alias.name, [], node.lineno))
                else:
                    found.append((top, sub, [a.name for a in node.names], node.lineno))
            elif parts:
                found.append((parts[0], None, [a.name for a in node.names], node.lineno))
            else:  # from . import _svd (or from .. import _jit)
                for alias in node.names:
                    found.append((alias.name, None, [], node.lineno))
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sketchlab"):
            parts = node.module.split(".")
            if parts[1:3] == ["_engine", "_jit"]:
                jit.append(node.lineno)
            if len(parts) > 1:
                found.append((parts[1], None, [a.name for a in node.names], node.lineno))
    return tree, found, aliases, jit


def test_the_page_has_its_tables():
    assert LAYERS["_operators"] < LAYERS["_registry"] and LAYERS["_engine"] == 1
    assert MAY_IMPORT_JIT == {"_engine"}  # one row: the engine alone runs compiled code
    assert OPERATOR_ORDER["_base"] < OPERATOR_ORDER["_compose"]
    assert ENGINE_ORDER["_jit"] < ENGINE_ORDER["threads"] < ENGINE_ORDER["operators"]
    assert all(reason for reason in UPWARD.values())


def test_every_module_has_a_layer_and_every_layer_a_module():
    tops = {top for top, _, _ in _modules()}
    assert not tops - set(LAYERS), (
        f"add these modules to the layer table of docs/architecture.md: {tops - set(LAYERS)}")
    assert not set(LAYERS) - tops, (
        f"the layer table names modules that do not exist: {set(LAYERS) - tops}")
    for package, order in ORDERS.items():
        inside = {dotted.split(".")[1] for top, dotted, _ in _modules()
                  if top == package and "." in dotted}
        assert inside == set(order), (
            f"the table of {package}/ and its files differ: {inside ^ set(order)}")
    for name in MAY_IMPORT_JIT:
        assert (PACKAGE / name).is_dir() or (PACKAGE / (name + ".py")).exists(), name


@pytest.mark.parametrize("top, dotted, path", list(_modules()), ids=lambda x: str(x))
def test_import_rules(top, dotted, path):
    tree, found, aliases, jit = _imports(path, top)
    order = ORDERS.get(top)
    own = dotted.split(".")[1] if "." in dotted and order is not None else None
    if top not in MAY_IMPORT_JIT:
        assert not jit, (
            f"{path.relative_to(PACKAGE)}:{jit[0]}: {dotted} imports the compiled loops, which "
            "docs/architecture.md allows only to " + ", ".join(sorted(MAY_IMPORT_JIT)))
    for module, sub, names, line in found:
        where = f"{path.relative_to(PACKAGE)}:{line}"
        if module == top:
            if own is not None and sub is not None:  # inside a package: its own order
                assert sub in order, f"{where}: unknown module {top}.{sub}"
                if own != "__init__" and (dotted, f"{top}.{sub}") not in UPWARD:
                    assert order[sub] < order[own], (
                        f"{where}: {top}.{own} imports {top}.{sub}, which comes "
                        "after it in docs/architecture.md")
            continue
        assert module in LAYERS, f"{where}: unknown module {module}"
        if top != "__init__" and (top, module) not in UPWARD:
            assert LAYERS[module] < LAYERS[top], (
                f"{where}: {top} (layer {LAYERS[top]}) imports {module} (layer "
                f"{LAYERS[module]}): imports go down the layers only"
            )
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{where}: imports another module's private names {private}"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            raise AssertionError(
                f"{path.relative_to(PACKAGE)}:{node.lineno}: uses {node.value.id}.{node.attr}, "
                "a private name of another module"
            )


def test_upward_imports_are_inside_functions():
    """Each import up the layers of the page's table sits in a function body."""
    for top, dotted, path in _modules():
        tree = ast.parse(path.read_text())
        module_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level or not node.module:
                continue
            source, target = top, node.module.split(".")[0]
            if node.level == 1 and path.parent != PACKAGE:  # a sibling inside a package
                source, target = dotted, f"{top}.{target}"
            if (source, target) in UPWARD:
                assert id(node) not in module_level, (
                    f"{path.relative_to(PACKAGE)}:{node.lineno}: the upward import of {target} "
                    "must sit inside the function that needs it")


def test_workqueue_layer_guard_is_in_the_launch_door():
    # the concurrent-call test itself is in test_determinism.py; here, every
    # parallel loop of the package is launched through threads_for
    root = PACKAGE
    parallel = set()
    for path in (root / "_engine" / "_jit").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and any(
                        isinstance(a, ast.Starred) and getattr(a.value, "id", "") == "PJIT"
                        for a in d.args) or
                    isinstance(d, ast.Call) and any(
                        isinstance(k.value, ast.Name) and k.value.id == "PJIT" for k in d.keywords
                        if k.arg is None)
                    for d in node.decorator_list):
                parallel.add(node.name)
    assert {"left_csr", "both_csr_chunks_hash", "count_nonfinite"} <= parallel
    for path in root.rglob("*.py"):  # the operators' package included
        if "_jit" in path.relative_to(root).parts:
            continue  # compiled code calling compiled code
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            guarded = any(isinstance(w, ast.With) and "threads_for" in ast.unparse(w)
                          for w in ast.walk(func))
            for call in ast.walk(func):
                if isinstance(call, ast.Call):
                    name = ast.unparse(call.func).split(".")[-1]
                    if name in parallel and not name.startswith("_"):
                        assert guarded or func.name.endswith("_loops"), (
                            f"{path.name}:{call.lineno}: {name} launched outside threads_for")


def test_library_tests_do_not_import_the_experiments():
    # the experiments' tests live beside them (experiments/tests/); the
    # library's tests and their conftest stand without the experiments package
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            assert not any(n.split(".")[0] == "experiments" for n in names), (
                f"tests/{path.name}:{node.lineno} imports the experiments package")


def _uses(path, name):
    """Lines of the file where ``name`` is imported, read or called (not in strings)."""
    tree = ast.parse(path.read_text())
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name.split(".")[-1] == name for alias in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == name:
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == name:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_lapack_only_where_the_page_says():
    """scipy.linalg (and numpy.linalg's factorizations) only in ``_linalg``
    and the modules of the page's table."""
    assert MAY_CALL_LAPACK >= {"_linalg"}
    for top, dotted, path in _modules():
        if top in MAY_CALL_LAPACK or dotted in MAY_CALL_LAPACK:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            bad = None
            if isinstance(node, ast.Import):
                bad = [a.name for a in node.names if a.name.startswith("scipy.linalg")]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                module = node.module or ""
                if module.startswith("scipy.linalg") or (
                        module == "scipy" and any(a.name == "linalg" for a in node.names)):
                    bad = [module]
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                  and node.value.attr == "linalg" and isinstance(node.value.value, ast.Name)
                  and node.value.value.id in ("np", "numpy")
                  and node.attr not in ("norm", "LinAlgError")):
                bad = [f"numpy.linalg.{node.attr}"]
            assert not bad, (
                f"{path.relative_to(PACKAGE)}:{node.lineno}: {bad} is dense linear algebra: "
                "call a _linalg function (or list the module in docs/architecture.md)")


def test_blas_threads_set_only_where_the_page_says():
    """``serial_blas`` named only in ``_config``, ``_linalg`` and the modules
    of the page's table; every module of the table does use it."""
    users = set()
    for top, dotted, path in _modules():
        if _uses(path, "serial_blas"):
            users.add(dotted if top == "_operators" else top)
    allowed = MAY_SET_BLAS_THREADS | {"_config", "_linalg"}
    assert users <= allowed, (
        f"{sorted(users - allowed)} set the BLAS threads themselves: use a _linalg entry "
        "point (one_blas_thread), or list the module in docs/architecture.md")
    assert MAY_SET_BLAS_THREADS <= users, (
        f"docs/architecture.md lists {sorted(MAY_SET_BLAS_THREADS - users)}, which no longer "
        "set the BLAS threads: remove them from its table")
