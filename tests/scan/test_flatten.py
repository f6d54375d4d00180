"""Flattening helpers, recognised by what they do: a nested dict's leaf paths are its keys."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.catalog.model import Catalog
from codegen.scan.flatten import flattener, separator
from codegen.scan.scanner import scan

_PLUS = """\
def flatten_dict(d, parent_key="", sep="/"):
    items = []
    for k, v in d.items():
        new_key = parent_key + sep + k if parent_key else k
        if isinstance(v, dict):
            items.extend(flatten_dict(v, new_key, sep=sep).items())
        else:
            items.append((new_key, v))
    return dict(items)
"""
_FSTRING = """\
def nested_to_flat(tree, prefix=""):
    out = {}
    for name, value in tree.items():
        path = f"{prefix}.{name}" if prefix else name
        if isinstance(value, dict):
            out.update(nested_to_flat(value, path))
        else:
            out[path] = value
    return out
"""
_JOIN = """\
class Flattener:
    def run(self, mapping, parents=(), joiner=":"):
        out = {}
        for key, value in mapping.items():
            if isinstance(value, dict):
                out.update(self.run(value, (*parents, key), joiner))
            else:
                out[joiner.join((*parents, key))] = value
        return out
"""
_NOT_JOINING = """\
def to_cpu(d, depth=0):
    out = {}
    for k, v in d.items():
        out[k] = to_cpu(v, depth + 1) if isinstance(v, dict) else v
    return out
"""
_NOT_RECURSIVE = """\
def prefixed(d, sep="/"):
    return {"train" + sep + k: v for k, v in d.items()}
"""


def _func(source: str) -> ast.FunctionDef:
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    return found[0]


@pytest.mark.parametrize(
    ("source", "call", "sep"),
    [
        (_PLUS, "flatten_dict(s)", "/"),
        (_PLUS, 'flatten_dict(s, sep=".")', "."),
        (_PLUS, 'flatten_dict(s, "", "_")', "_"),
        (_FSTRING, "nested_to_flat(s)", "."),
        (_JOIN, "f.run(s)", ":"),
        (_JOIN, 'f.run(s, joiner="|")', "|"),
    ],
)
def test_a_recursive_function_joining_keys_is_a_flattener_with_its_separator(
    source: str, call: str, sep: str
) -> None:
    found = flattener(_func(source))
    assert found is not None
    node = ast.parse(call).body[0]
    assert isinstance(node, ast.Expr)
    assert isinstance(node.value, ast.Call)
    assert separator(found, node.value) == sep


@pytest.mark.parametrize("source", [_NOT_JOINING, _NOT_RECURSIVE])
def test_a_function_not_joining_keys_in_a_recursion_is_no_flattener(source: str) -> None:
    assert flattener(_func(source)) is None


_LOSS = """\
import wandb

from .util import {helper}


def tensor_stats(xs):
    return dict(mean=xs.mean(), max=xs.max())


def loss(values, heads):
    stats = dict(
        losses=dict(total=1.0, policy=2.0),
        values=dict(tensor_stats(values), error=0.1),
        qvalues={{name: tensor_stats(heads[name]) for name in ("first", "second")}},
        ratio=0.5,
    )
    return 0.0, {helper}(stats)


def step(values, heads):
    _, stats = loss(values, heads)
    wandb.log({{k: v / 2 for k, v in stats.items()}})
"""


def _scan_keys(tmp_path: Path, catalog: Catalog, util: str, helper: str) -> set[str]:
    root = tmp_path / "src" / "pkg"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "util.py").write_text(util, encoding="utf-8")
    (root / "train.py").write_text(_LOSS.format(helper=helper), encoding="utf-8")
    report = scan([tmp_path / "src"], catalog, cwd=tmp_path, unlogged=False)
    return {d.message.split("'")[1] for d in report.diagnostics if d.code == "SCAN_UNDECLARED"}


def test_a_flattened_nested_literal_logs_its_leaf_paths(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    keys = _scan_keys(tmp_path, repo_catalog, _PLUS, "flatten_dict")

    assert keys == {
        "losses/total",
        "losses/policy",
        "values/mean",
        "values/max",
        "values/error",
        "qvalues/first/mean",
        "qvalues/first/max",
        "qvalues/second/mean",
        "qvalues/second/max",
        "ratio",
    }


def test_a_nested_literal_handed_to_a_function_not_flattening_logs_no_leaf_path(
    tmp_path: Path, repo_catalog: Catalog
) -> None:
    keys = _scan_keys(tmp_path, repo_catalog, _NOT_JOINING, "to_cpu")

    assert not {key for key in keys if "/" in key}
