"""The public surface: `guide.__all__`, py.typed markers shipped as package data, no private reads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import guide

ROOT = Path(__file__).resolve().parents[2]


def test_all_names_resolve_and_star_import_matches():
    assert len(guide.__all__) == len(set(guide.__all__))
    for name in guide.__all__:
        assert getattr(guide, name) is not None, name
    namespace: dict = {}
    exec("from guide import *", namespace)
    assert set(guide.__all__) <= set(namespace)


def test_py_typed_markers_are_shipped():
    assert (ROOT / "guide" / "py.typed").is_file()
    assert (ROOT / "fsm" / "py.typed").is_file()
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["guide"] and "py.typed" in data["fsm"]


def test_guide_modules_read_no_private_names_of_other_objects():
    """``x._name`` only on ``self``/``cls`` (and torch's private ops, which have no public name)."""
    allowed_roots = {"self", "cls", "sys"}
    found = []
    for path in sorted((ROOT / "guide").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            if node.attr.startswith("__") or ast.unparse(node.value).startswith("torch.ops"):
                continue
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in allowed_roots and node.value is root):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
