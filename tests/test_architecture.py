"""The import rules of docs/architecture.md, checked on the source.

1. Layers: a module imports only modules of lower layers (function-level
   imports included).
2. Only the layers that launch compiled loops import ``sketchlab._jit``: the
   operators, the kernel-matrix oracles, the input checks and the norm pass
   of ``_linalg``.  Algorithms
   reach compiled code only through operators' public methods.
3. No module imports another module's underscore names (``from ._x import
   _name``, or ``_x._name`` on an imported module): what a module shares is a
   name without an underscore, in a private module.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sketchlab"

LAYERS = {
    "_config": 0,
    "_hash": 0,
    "_results": 0,
    "_jit": 1,
    "_validation": 2,
    "_operators": 3,
    "_registry": 4,
    "_leverage": 4,
    "_kernel_matrices": 4,
    "_linalg": 5,
    "_errors": 6,
    "_sketch_state": 7,
    "_gmr": 7,
    "_krylov": 7,
    "_residuals": 8,
    "_spsd": 8,
    "_svd": 8,
    "_selection": 7,
    "_cur": 9,
    "_estimators": 10,
    "_estimators_svd": 10,
    "dask": 10,
    "__init__": 11,
}
# (_linalg: the compiled norm pass of squared_frobenius, a whole-array reduction
# like the finiteness check)
MAY_IMPORT_JIT = {"_jit", "_validation", "_operators", "_kernel_matrices", "_linalg"}
# the only imports up the layers, each inside a function, with its reason
UPWARD = {
    ("_operators", "_leverage"): "LeverageScoreSampler.from_matrix computes the scores it "
                                 "samples from (and the sketched scores use operators)",
    ("_leverage", "_linalg"): "the exact scores of a matrix clearly of full rank come from "
                              "the Cholesky QR the GMR core uses",
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        top = rel.parts[0]
        yield top, path


def _imports(path, top):
    """(imported sketchlab module, names, line) for every import in the file,
    and the aliases under which sketchlab modules are bound."""
    tree = ast.parse(path.read_text())
    inside_jit = top == "_jit"
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = node.module.split(".")[0] if node.module else None
            if inside_jit and node.level == 1:
                base = "_jit"  # a sibling inside the _jit package
            if base is None:  # from . import _svd
                for alias in node.names:
                    found.append((alias.name, [], node.lineno))
                    aliases[alias.asname or alias.name] = alias.name
            else:
                found.append((base, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sketchlab"):
            parts = node.module.split(".")
            if len(parts) > 1:
                found.append((parts[1], [a.name for a in node.names], node.lineno))
    return tree, found, aliases


def test_every_module_has_a_layer():
    missing = {top for top, _ in _modules()} - set(LAYERS)
    assert not missing, f"add these modules to LAYERS (and docs/architecture.md): {missing}"


@pytest.mark.parametrize("top, path", list(_modules()), ids=lambda x: str(x))
def test_import_rules(top, path):
    tree, found, aliases = _imports(path, top)
    for module, names, line in found:
        where = f"{path.relative_to(PACKAGE)}:{line}"
        if module == top:
            continue
        assert module in LAYERS, f"{where}: unknown module {module}"
        if top != "__init__" and (top, module) not in UPWARD:
            assert LAYERS[module] < LAYERS[top], (
                f"{where}: {top} (layer {LAYERS[top]}) imports {module} (layer "
                f"{LAYERS[module]}): imports go down the layers only"
            )
        if module == "_jit":
            assert top in MAY_IMPORT_JIT, (
                f"{where}: {top} imports the compiled loops; algorithms use operators' "
                "public methods"
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
