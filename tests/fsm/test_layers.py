"""The layers of `fsm`, checked from the source: one import direction, no cycles, no hidden imports.

An `ast` scan of every module under fsm/, imports written inside functions included (they are how
cycles used to hide). Imports under ``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "fsm"
FOUNDATION = ("fsm.errors", "fsm.limits", "fsm.vocabulary")
# What each lower layer may import besides itself: automata knows no spec and no vocabulary; the
# index layer knows automata and vocabularies but no spec front end (fsm.regex, fsm.json, fsm.grammar).
MAY_IMPORT = {
    "fsm.automata": ("fsm.errors", "fsm.limits"),
    "fsm.index": ("fsm.automata", *FOUNDATION),
    # the spec algebra sits beside the compiler: it compiles its parts through it, and runs their
    # automata through the index layer; it knows no front end's insides
    "fsm.compose": ("fsm.compiler", "fsm.index", "fsm.automata", "fsm.spec", *FOUNDATION),
}
NEVER_IN_FSM = ("torch", "transformers", "guide")
MAX_MODULE_LINES = 450


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module (fsm.* resolved; external as written)
    line: int
    in_function: bool
    commented: bool  # a comment on the line or just above says why


def _modules() -> dict[str, tuple[Path, bool]]:
    mods = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ["fsm", *path.relative_to(ROOT).with_suffix("").parts]
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return mods


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def _imports(name: str, path: Path, is_pkg: bool, mods) -> list[Import]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text)
    skip = _type_checking_nodes(tree)
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        around = lines[max(0, node.lineno - 3) : node.lineno]
        commented = any("#" in ln for ln in around)
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif node.level == 0:
            targets = [node.module or ""]
            targets += [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in mods]
        else:
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
            targets = [module] + [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in mods]
        for t in targets:
            if t and t != name:
                out.append(Import(name, t, node.lineno, id(node) in in_function, commented))
    return out


def _all_imports() -> list[Import]:
    mods = _modules()
    return [imp for name, (path, is_pkg) in mods.items() for imp in _imports(name, path, is_pkg, mods)]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_cycle_in_fsm_function_level_imports_included():
    mods = _modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for imp in _all_imports():
        if imp.target in mods:
            edges[imp.source].add(imp.target)
    assert _cycles(edges) == []


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_lower_layers_import_only_what_is_below_them(layer):
    """fsm.automata imports only errors and limits; fsm.index only automata and the foundation;
    fsm.compose only the compiler, the index layer, automata, the Spec protocol and the foundation."""
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in _all_imports()
        if _within(imp.source, layer)
        and _within(imp.target, "fsm")
        and not _within(imp.target, layer)
        and not any(_within(imp.target, allowed) for allowed in MAY_IMPORT[layer])
    ]
    assert wrong == []


def test_fsm_never_imports_torch_transformers_or_guide():
    wrong = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in _all_imports()
        if imp.target.split(".")[0] in NEVER_IN_FSM
    ]
    assert wrong == []


def test_function_level_imports_in_fsm_say_why():
    """Only deliberate lazy loads (optional or heavy work) are written inside functions, each with a comment."""
    hidden = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in _all_imports()
        if imp.in_function and imp.target.startswith("fsm") and not imp.commented
    ]
    assert hidden == []


def test_modules_stay_small():
    """One concept per module: none over ~450 lines (`MAX_MODULE_LINES`)."""
    big = {
        str(path.relative_to(ROOT.parent)): n
        for path, _ in _modules().values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert big == {}
