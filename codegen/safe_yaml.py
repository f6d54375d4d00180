"""YAML that cannot explode: the one loader every reader of YAML builds on.

A 500-byte document of nested aliases (``a: &a [x, x]``, ``b: &b [*a, *a]``, ...)
is a few hundred nodes as PyYAML composes it, but billions once anything walks
the value it constructs (a configuration flattened, compared or rendered). Two
readers share what is here:

- the catalog loader (:mod:`codegen.catalog.loader`) composes with
  :data:`Loader` and refuses aliases outright, with a position;
- a run's configuration files (Lightning's ``hparams.yaml``, ``--run-config``)
  are loaded with :func:`load_bounded`, which counts the nodes the document
  stands for with every alias expanded and refuses it past :data:`MAX_NODES`
  (or :data:`MAX_DEPTH` levels, or an alias of its own ancestor) before a
  Python value is built.

This module imports only PyYAML: the catalog front end and the run readers
both sit above it.
"""

from __future__ import annotations

from typing import Final

import yaml

__all__ = ["MAX_DEPTH", "MAX_NODES", "YamlBombError", "load_bounded"]

Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
"""libyaml's safe loader when PyYAML was built with it (several times faster), else PyYAML's."""
try:
    Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML without libyaml
    Loader = yaml.SafeLoader

MAX_NODES: Final = 100_000
"""Most nodes a configuration document may stand for, every alias expanded."""

MAX_DEPTH: Final = 64
"""Deepest nesting of mappings and sequences a configuration document may have."""


class YamlBombError(ValueError):
    """A YAML document stands for more than :data:`MAX_NODES` nodes, nests deeper than
    :data:`MAX_DEPTH` or holds an alias of its own ancestor (a recursive value)."""


def _expanded_size(root: yaml.Node, max_nodes: int, max_depth: int) -> int:
    """Nodes ``root`` stands for with aliases expanded (shared nodes counted once each use).

    Iterative, so a deep document cannot exhaust the stack; each distinct node is
    sized once (memoized), so the count costs the composed document's size.

    Raises:
        YamlBombError: past ``max_nodes`` or ``max_depth``, or a recursive alias.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    depth = 0
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            depth -= 1
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > max_nodes:
                msg = f"it stands for over {max_nodes} values once its aliases are expanded"
                raise YamlBombError(msg)
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            msg = "an alias refers to a value that holds it (a recursive value)"
            raise YamlBombError(msg)
        children = _children(node)
        if not children:
            sizes[key] = 1
            continue
        depth += 1
        if depth > max_depth:
            msg = f"it nests deeper than {max_depth} levels"
            raise YamlBombError(msg)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def load_bounded(text: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> object:
    """The value of the single YAML document ``text`` (safe tags only), bounded.

    Raises:
        YamlBombError: the document is too large once expanded, too deep or recursive.
        yaml.YAMLError: it is not YAML, holds a tag the safe loader refuses, or a
            value it cannot build (an integer past Python's digits limit).
    """
    loader = Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, max_nodes, max_depth)
        try:
            return loader.construct_document(node)
        except ValueError as exc:  # an integer past Python's digits limit, a bad date
            msg = f"a value cannot be read ({exc})"
            raise yaml.constructor.ConstructorError(None, None, msg, node.start_mark) from None
    finally:
        loader.dispose()
