"""Probe: what an off-the-shelf inference engine (astroid) finds of the metric keys a tree logs.

Issue 38 asks, before a general analysis is built for ``scan``, to measure what a well-kept
engine already does. This probe asks astroid (the engine pylint uses) for the keys handed to
the tracker calls ``scan`` knows (:data:`codegen.scan.calls.DEFAULT_SCAN_CALLS`), and writes a
report in the shape of ``metric-catalog scan --format json`` so one scorer counts both:

* the tracker APIs are modelled by small stub modules (:data:`_STUBS`, sinks in the sense of
  Pysa's models), cached before any analysis so the result does not depend on whether
  ``wandb`` or ``torch`` is installed; a call is a sink when astroid infers its callee to one
  of their functions (``wandb.log``, ``SummaryWriter.add_scalar`` on ``self.writer``, a
  subclass of ``Trainer``...); an entry with a bare name (``log_metrics``) matches by name;
* the metrics argument's keys come from astroid's inference (``node.infer()``: assignments,
  returns of called functions and methods, attributes set in ``__init__``, imports, dict
  displays with ``**`` merges, ``dict(...)``), with three small additions where astroid has no
  model: a dict's ``d[k] = v`` and ``d.update(...)`` in the scope it is assigned in, loops
  and comprehensions over a dict's keys, and ``%``/``str.format`` key templates;
* a function whose parameter reaches a sink (whole, as a dict's keys, or inside a key) is a
  wrapper: its callers are the calls astroid infers to it (prefiltered by name), and the
  caller's arguments are substituted, transitively (depth :data:`_MAX_WRAP`).

A key with a part astroid cannot infer is reported ``SCAN_UNRESOLVED`` with a ``{hole}``;
a whole key ``SCAN_UNDECLARED`` where its text is written. Usage::

    python -m bench.engine_probe report TREE [--out FILE]   # the JSON report
    python -m bench.engine_probe time TREE... [--runs 3]    # CPU: parse, scan, probe

Needs the optional ``engines`` extra (``pip install 'metric-catalog[engines]'``); not run by
``make bench``. Results and method: ``bench/ANALYSIS.md``, "Inference engines measured
against scan's".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from codegen.scan.calls import DEFAULT_SCAN_CALLS, Argument, ScanCall

if TYPE_CHECKING:
    from astroid import nodes

__all__ = ["main", "probe_tree"]

_MISSING: Final = (
    "engine_probe needs astroid, which the optional 'engines' extra installs: "
    "pip install 'metric-catalog[engines]' (or: pip install 'astroid>=3.3')"
)
_MAX_ALTERNATIVES: Final = 64
"""Alternatives kept per key (a product of f-string parts); past it a part is a hole."""
_MAX_DEPTH: Final = 16
"""Nested evaluations (a dict built from a call's returned dict built from ...)."""
_MAX_WRAP: Final = 6
"""Wrapper levels followed outward from a sink."""
_MAX_INFERRED: Final = 16
"""Values read from one ``infer()`` (astroid yields one per reaching definition)."""

# Models of the tracker APIs: the functions and methods scan's default entries name, with
# their real parameter names. ``init`` returns a run object whose ``log`` logs a dict.
_RUN: Final = """
class Run:
    def log(self, data, step=None, commit=None): ...
    def track(self, value, name=None, step=None, context=None): ...
run = Run()
def init(*args, **kwargs):
    return Run()
def finish(*args, **kwargs): ...
"""
_WRITER: Final = """
class SummaryWriter:
    def __init__(self, *args, **kwargs): ...
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None): ...
    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None): ...
    def flush(self): ...
    def close(self): ...
"""
_STUBS: Final[dict[str, str]] = {
    "wandb": _RUN + "def log(data, step=None, commit=None): ...\n",
    "swanlab": _RUN + "def log(data, step=None): ...\n",
    "trackio": _RUN + "def log(metrics, step=None): ...\n",
    "aim": _RUN,
    "mlflow": (
        "def log_metric(key, value, step=None): ...\n"
        "def log_metrics(metrics, step=None): ...\n"
        "def start_run(*args, **kwargs): ...\n"
    ),
    "torch.utils.tensorboard": _WRITER,
    "tensorboardX": _WRITER,
    "accelerate": (
        "class Accelerator:\n    def log(self, values, step=None, log_kwargs=None): ...\n"
    ),
    "comet_ml": (
        "class Experiment:\n"
        "    def log_metric(self, name, value, step=None): ...\n"
        "    def log_metrics(self, dic, prefix=None, step=None): ...\n"
    ),
    "clearml": (
        "class Logger:\n"
        "    def report_scalar(self, title, series, value, iteration=None): ...\n"
        "    @classmethod\n"
        "    def current_logger(cls):\n"
        "        return Logger()\n"
        "class Task:\n"
        "    def get_logger(self):\n"
        "        return Logger()\n"
    ),
    "transformers": "class Trainer:\n    def log(self, logs, start_time=None): ...\n",
    "lightning": (
        "class LightningModule:\n"
        "    def log(self, name, value, **kwargs): ...\n"
        "    def log_dict(self, dictionary, **kwargs): ...\n"
    ),
}
_STUBS["pytorch_lightning"] = _STUBS["lightning"]
_STUBS["lightning.pytorch"] = _STUBS["lightning"]
_RUN_MODULES: Final = frozenset({"wandb", "swanlab", "trackio"})
"""Modules whose ``init()`` returns a run: scan's ``init.log`` entry."""

_PERCENT: Final = re.compile(r"%(?:\((\w+)\))?[-+ #0]*\d*(?:\.\d+)?[sdifrgx]")
_FIELD: Final = re.compile(r"\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}")
_MARK: Final = "\x00"
_MARKER: Final = re.compile("\x00([ks]):([A-Za-z_][A-Za-z0-9_]*)\x00")
"""A parameter's part of a key in a wrapper: ``k`` a key of the dict passed, ``s`` its text."""


class ProbeError(RuntimeError):
    """The probe cannot run: astroid missing, or the tree unreadable (the message says which)."""


@dataclass(frozen=True, slots=True)
class Key:
    """A key shape (``{hole}`` for a part not inferred) and the node it is written at."""

    shape: str
    node: nodes.NodeNG | None


@dataclass(slots=True)
class Report:
    """What the probe found, in the shape of scan's JSON report."""

    files: int = 0
    calls: int = 0
    findings: dict[tuple[str, str, int], dict[str, object]] = field(default_factory=dict)

    def add(self, key: str, node: nodes.NodeNG, call: nodes.Call) -> None:
        """One key written at ``node`` and logged by ``call`` (the call it was handed to)."""
        resolved = "{" not in key
        path, line = _where(node)
        call_path, call_line = _where(call)
        code = "SCAN_UNDECLARED" if resolved else "SCAN_UNRESOLVED"
        self.findings.setdefault(
            (key, path, line),
            {
                "code": code,
                "severity": "error" if resolved else "warning",
                "key": key,
                "message": (
                    f"key '{key}' (logged by `{call.func.as_string()[:60]}` at "
                    f"{call_path}:{call_line}:{call.col_offset or 0}) found by astroid"
                ),
                "path": path,
                "line": line,
            },
        )

    def as_json(self) -> dict[str, object]:
        """``files``, ``calls``, ``keys`` and ``findings`` as scan writes them."""
        findings = sorted(
            self.findings.values(), key=lambda f: (str(f["path"]), int(str(f["line"])))
        )
        return {
            "files": self.files,
            "calls": self.calls,
            "keys": len({f["key"] for f in findings}),
            "findings": findings,
        }


def _where(node: nodes.NodeNG) -> tuple[str, int]:
    """The file and line of ``node``, or of its nearest ancestor that has one."""
    current: nodes.NodeNG | None = node
    while current is not None and not current.lineno:
        current = current.parent
    line = current.lineno if current is not None and current.lineno else 0
    return str(node.root().file or ""), line


def _hole(node: nodes.NodeNG) -> str:
    text = re.sub(r"[{}\s]+", "", node.as_string())[:40] or "?"
    return "{" + text + "}"


def _product(left: list[str], right: list[str]) -> list[str]:
    out = [a + b for a in left for b in right]
    return list(dict.fromkeys(out))[:_MAX_ALTERNATIVES]


class Probe:
    """One tree's modules built by astroid, its calls indexed by name, and the report."""

    def __init__(self, root: Path, *, glue: bool = True) -> None:
        import astroid
        from astroid import nodes as astroid_nodes

        self._astroid = astroid
        self._nodes = astroid_nodes
        self.root = root.resolve()
        self.glue = glue
        """Add the probe's own rules where astroid has no model (see the module docstring)."""
        self.manager = astroid.MANAGER
        self.report = Report()
        self.calls_by_name: dict[str, list[nodes.Call]] = defaultdict(list)
        self._callers: dict[nodes.FunctionDef, list[nodes.Call]] = {}
        self._seen: set[tuple[int, str, int]] = set()
        self.sinks: dict[str, list[ScanCall]] = defaultdict(list)
        self.through: dict[str, Argument] = {}
        for entry in DEFAULT_SCAN_CALLS:
            if entry.logs and entry.qualifier != "tee_wandb_log":
                self.sinks[entry.name].append(entry)
            elif entry.through is not None:
                self.through[entry.name] = entry.through

    # -- building ---------------------------------------------------------------------------

    def build(self) -> None:
        """Cache the tracker models, build every ``.py`` file of the tree, index its calls."""
        builder = self._astroid.builder.AstroidBuilder(self.manager)
        for name, source in _STUBS.items():
            self.manager.astroid_cache.pop(name, None)
            builder.string_build(source, modname=name)
        sys.path.insert(0, str(self.root))
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".py"):
                    self._build_file(Path(folder) / name)

    def _build_file(self, path: Path) -> None:
        modname = _module_name(path)
        try:
            module = self.manager.ast_from_file(str(path), modname, source=True)
        except (self._astroid.AstroidError, OSError, ValueError, RecursionError):
            return
        self.report.files += 1
        for call in module.nodes_of_class(self._nodes.Call):
            name = _called_name(call)
            if name:
                self.calls_by_name[name].append(call)

    # -- inference helpers ------------------------------------------------------------------

    def _infer(self, node: nodes.NodeNG, *, partial: bool = False) -> list[object]:
        """What astroid infers ``node`` to; nothing when a value is uninferable, unless
        ``partial`` (a dict some of whose definitions are known: keep the known ones)."""
        out: list[object] = []
        try:
            for value in node.infer():
                if value is self._astroid.Uninferable:
                    if partial:
                        continue
                    return []
                out.append(value)
                if len(out) >= _MAX_INFERRED:
                    break
        except (self._astroid.AstroidError, RecursionError, StopIteration):
            return []
        return out

    def _functions(self, node: nodes.NodeNG) -> list[nodes.FunctionDef]:
        """The functions a callee expression infers to (through bound methods)."""
        out: list[nodes.FunctionDef] = []
        methods = (self._astroid.bases.BoundMethod, self._astroid.bases.UnboundMethod)
        for value in self._infer(node, partial=True):
            target = value
            # A bound method proxies an unbound one, which proxies the function.
            while isinstance(target, methods):
                target = target._proxied
            if isinstance(target, self._nodes.FunctionDef) and target not in out:
                out.append(target)
        return out

    def _parameter(self, name: nodes.Name) -> nodes.FunctionDef | None:
        """The function ``name`` is a parameter of, when it is one (of its own frame)."""
        try:
            scope, assigns = name.lookup(name.name)
        except (self._astroid.AstroidError, RecursionError):
            return None
        if not isinstance(scope, self._nodes.FunctionDef):
            return None
        for assign in assigns:
            if isinstance(assign, self._nodes.AssignName) and isinstance(
                assign.parent, self._nodes.Arguments
            ):
                return scope
        return None

    # -- strings ----------------------------------------------------------------------------

    def strings(self, expr: nodes.NodeNG, env: dict[str, list[str]], depth: int = 0) -> list[str]:
        """The texts ``expr`` can be: literal parts, parameter markers, ``{hole}``s."""
        n = self._nodes
        if isinstance(expr, n.Const) and isinstance(expr.value, str):
            return [expr.value]
        if depth > _MAX_DEPTH:
            return [_hole(expr)]
        if isinstance(expr, n.JoinedStr):
            out = [""]
            for part in expr.values:
                if isinstance(part, n.Const):
                    out = _product(out, [str(part.value)])
                elif isinstance(part, n.FormattedValue) and part.format_spec is None:
                    out = _product(out, self.strings(part.value, env, depth + 1))
                else:
                    out = _product(out, [_hole(part)])
            return out
        if (
            self.glue
            and isinstance(expr, n.BinOp)
            and expr.op == "+"
            and not any(
                isinstance(side, n.Const) and not isinstance(side.value, str)
                for side in (expr.left, expr.right)
            )
        ):
            return _product(
                self.strings(expr.left, env, depth + 1), self.strings(expr.right, env, depth + 1)
            )
        if (
            self.glue
            and isinstance(expr, n.BinOp)
            and expr.op == "%"
            and isinstance(expr.left, n.Const)
            and isinstance(expr.left.value, str)
        ):
            items = expr.right.elts if isinstance(expr.right, n.Tuple) else [expr.right]
            return self._template(expr.left.value, _PERCENT, items, named={}, env=env, depth=depth)
        if (
            self.glue
            and isinstance(expr, n.Call)
            and isinstance(expr.func, n.Attribute)
            and expr.func.attrname == "format"
            and isinstance(expr.func.expr, n.Const)
            and isinstance(expr.func.expr.value, str)
        ):
            named = {kw.arg: kw.value for kw in expr.keywords or [] if kw.arg}
            return self._template(
                expr.func.expr.value, _FIELD, list(expr.args), named=named, env=env, depth=depth
            )
        if isinstance(expr, n.Name):
            if expr.name in env:
                return env[expr.name]
            if self._parameter(expr) is not None:
                return [f"{_MARK}s:{expr.name}{_MARK}"]
            bound = self._loop_keys(expr, depth) if self.glue else None
            if bound is not None:
                return [key.shape for key in bound]
        if self.glue and isinstance(expr, n.IfExp):
            return list(
                dict.fromkeys(
                    self.strings(expr.body, env, depth + 1)
                    + self.strings(expr.orelse, env, depth + 1)
                )
            )[:_MAX_ALTERNATIVES]
        values = self._infer(expr)
        texts = [v.value for v in values if isinstance(v, n.Const) and isinstance(v.value, str)]
        if values and len(texts) == len(values):
            return list(dict.fromkeys(texts))[:_MAX_ALTERNATIVES]
        if self.glue and isinstance(expr, n.Name):
            # astroid infers a value only when every part is known: read the assigned
            # expressions instead, keeping what is known of each (``f"{role}-"``).
            assigned: list[str] = []
            for value in self._assigned(expr):
                if value is not expr.parent:
                    assigned += self.strings(value, env, depth + 1)
            if assigned:
                return list(dict.fromkeys(assigned))[:_MAX_ALTERNATIVES]
        return [_hole(expr)]

    def _template(
        self,
        text: str,
        pattern: re.Pattern[str],
        items: Sequence[nodes.NodeNG],
        *,
        named: dict[str, nodes.NodeNG],
        env: dict[str, list[str]],
        depth: int,
    ) -> list[str]:
        out = [""]
        position = 0
        index = 0
        for match in pattern.finditer(text):
            out = _product(out, [text[position : match.start()]])
            label = match.group(1) or ""
            if label and not label.isdigit() and label in named:
                item: nodes.NodeNG | None = named[label]
            else:
                slot = int(label) if label.isdigit() else index
                item = items[slot] if slot < len(items) else None
                index += 1
            parts = ["{?}"] if item is None else self.strings(item, env, depth + 1)
            out = _product(out, parts)
            position = match.end()
        return _product(out, [text[position:]])

    # -- dict keys --------------------------------------------------------------------------

    def keys(self, expr: nodes.NodeNG, env: dict[str, list[str]], depth: int = 0) -> list[Key]:
        """The keys of the dict ``expr`` evaluates to, each at the node that writes it."""
        n = self._nodes
        if depth > _MAX_DEPTH:
            return [Key(_hole(expr), expr)]
        if isinstance(expr, n.Dict):
            out: list[Key] = []
            for key, value in expr.items:
                if isinstance(key, n.DictUnpack):
                    out += self.keys(value, env, depth + 1)
                else:
                    out += [Key(s, key) for s in self.strings(key, env, depth + 1)]
            return out + (self._mutations(expr, depth) if self.glue else [])
        if isinstance(expr, n.DictComp):
            return self._comprehension(expr, env, depth)
        if isinstance(expr, n.Call):
            known = self._call_keys(expr, env, depth)
            if known is not None:
                return known
        writes: list[Key] = []
        if isinstance(expr, n.Name):
            try:
                scope, assigns = expr.lookup(expr.name)
            except (self._astroid.AstroidError, RecursionError):
                scope, assigns = None, []
            # Writes between the assignment that reaches this read and the read.
            after = max(
                (a.statement().lineno or 0 for a in assigns if not a.statement().parent_of(expr)),
                default=0,
            )
            if scope is not None and self.glue:
                writes = self._writes(scope, expr.name, depth + 1, (after, expr.lineno))
            if self._parameter(expr) is not None:
                return [Key(f"{_MARK}k:{expr.name}{_MARK}", None), *writes]
        out = []
        if self.glue and isinstance(expr, n.Name):
            # The expressions assigned where the name is looked up, each evaluated (a call
            # is still inferred by astroid, below): astroid's own inference of the name goes
            # into pass-throughs (``all_reduce``) and infers no comprehension.
            for value in self._assigned(expr):
                if value is not expr.parent:
                    out += self.keys(value, env, depth + 1)
            if any("{" not in key.shape for key in out):
                return out + writes
            out = []
        values = self._infer(expr, partial=True)
        if self.glue and not values and isinstance(expr, n.Call):
            # astroid infers a dict display holding ``**`` only when every key and value is
            # inferable (a tensor's mean never is): read the callee's returns instead.
            for function in self._functions(expr.func)[:2]:
                for ret in function.nodes_of_class(n.Return):
                    if ret.value is not None and ret.frame() is function:
                        found = self.keys(ret.value, {}, depth + 1)
                        out += self._bind_returned(found, function, expr)
            if out:
                return out
        for value in values:
            if isinstance(value, n.Dict):
                found = self.keys(value, {}, depth + 1)
            elif isinstance(value, n.DictComp):
                found = self._comprehension(value, {}, depth + 1)
            else:
                continue
            out += self._bind_returned(found, value.frame(), expr)
        if not out:
            out = [Key(_hole(expr), expr)]
        return out + writes

    def _call_keys(
        self, expr: nodes.Call, env: dict[str, list[str]], depth: int
    ) -> list[Key] | None:
        """Keys of a pass-through, ``dict(...)`` or ``d.copy()``; ``None`` for another call."""
        n = self._nodes
        through = self.through.get(_called_name(expr) or "")
        if through is not None:
            arg = _argument(expr, through)
            return [] if arg is None else self.keys(arg, env, depth + 1)
        if self.glue and isinstance(expr.func, n.Name) and expr.func.name == "dict":
            out: list[Key] = []
            for arg in expr.args:
                out += self.keys(arg, env, depth + 1)
            for keyword in expr.keywords or []:
                if keyword.arg:
                    out.append(Key(keyword.arg, keyword))
                else:
                    out += self.keys(keyword.value, env, depth + 1)
            return out
        if self.glue and isinstance(expr.func, n.Attribute) and expr.func.attrname == "copy":
            return self.keys(expr.func.expr, env, depth + 1)
        return None

    def _bind_returned(self, keys: list[Key], owner: nodes.NodeNG, expr: nodes.NodeNG) -> list[Key]:
        """Bind the parameter markers of keys inferred in ``owner`` (a dict it builds).

        Markers of ``expr``'s own function stay (its callers bind them); a call's callee's
        are bound to the call's arguments; any other function's become holes.
        """
        if not any(_MARK in key.shape for key in keys) or owner is expr.frame():
            return keys
        callees: list[nodes.FunctionDef] = []
        if isinstance(expr, self._nodes.Call):
            callees = [f for f in self._functions(expr.func) if f is owner]
        out: list[Key] = []
        for key in keys:
            if _MARK not in key.shape:
                out.append(key)
            elif callees and isinstance(expr, self._nodes.Call):
                bound = self._substitute(callees[0], expr, key.shape, key.node)
                out += [Key(shape, node) for shape, node in bound]
            else:
                out.append(Key(_MARKER.sub(lambda m: "{" + m.group(2) + "}", key.shape), key.node))
        return out

    def _assigned(self, name: nodes.Name) -> list[nodes.NodeNG]:
        """The values ``name`` is assigned where it is looked up (``d = ...``)."""
        n = self._nodes
        try:
            _, assigns = name.lookup(name.name)
        except (self._astroid.AstroidError, RecursionError):
            return []
        return [
            a.parent.value
            for a in assigns
            if isinstance(a, n.AssignName)
            and isinstance(a.parent, n.Assign | n.AnnAssign)
            and a.parent.value is not None
        ]

    def _comprehension(
        self, expr: nodes.DictComp, env: dict[str, list[str]], depth: int
    ) -> list[Key]:
        generator = expr.generators[0]
        bound = self._bind_loop(generator.target, generator.iter, depth) if self.glue else None
        if bound is None:
            return [Key(s, expr.key) for s in self.strings(expr.key, env, depth + 1)]
        name, keys = bound
        out: list[Key] = []
        for key in keys:
            for shape in self.strings(expr.key, {**env, name: [key.shape]}, depth + 1):
                out.append(Key(shape, key.node))
        return out

    def _bind_loop(
        self, target: nodes.NodeNG, iterated: nodes.NodeNG, depth: int
    ) -> tuple[str, list[Key]] | None:
        """``k`` and the dict keys it takes in ``for k in d`` / ``for k, v in d.items()``."""
        n = self._nodes
        source: nodes.NodeNG = iterated
        method = ""
        if isinstance(iterated, n.Call) and isinstance(iterated.func, n.Attribute):
            method = iterated.func.attrname
            source = iterated.func.expr
        if isinstance(target, n.Tuple) and method == "items" and target.elts:
            first = target.elts[0]
        elif isinstance(target, n.AssignName) and method in ("", "keys"):
            first = target
        else:
            return None
        if not isinstance(first, n.AssignName):
            return None
        keys = self.keys(source, {}, depth + 1)
        if not keys or all("{" in k.shape and _MARK not in k.shape for k in keys):
            return None
        return first.name, keys

    def _loop_keys(self, name: nodes.Name, depth: int) -> list[Key] | None:
        """The keys a loop variable ranges over, when its loop is over a dict's keys."""
        n = self._nodes
        try:
            _, assigns = name.lookup(name.name)
        except (self._astroid.AstroidError, RecursionError):
            return None
        for assign in assigns:
            loop = assign.parent
            while isinstance(loop, n.Tuple):
                loop = loop.parent
            if isinstance(loop, n.For | n.Comprehension):
                bound = self._bind_loop(loop.target, loop.iter, depth)
                if bound is not None and bound[0] == name.name:
                    return bound[1]
        return None

    def _mutations(self, literal: nodes.Dict, depth: int) -> list[Key]:
        """Keys written into a dict after ``d = {...}``, in the scope ``d`` is assigned in."""
        n = self._nodes
        parent = literal.parent
        if not isinstance(parent, n.Assign | n.AnnAssign):
            return []
        targets = parent.targets if isinstance(parent, n.Assign) else [parent.target]
        names = [t.name for t in targets if isinstance(t, n.AssignName)]
        if not names:
            return []
        return self._writes(parent.scope(), names[0], depth)

    def _writes(
        self, scope: nodes.NodeNG, name: str, depth: int, lines: tuple[int, int] | None = None
    ) -> list[Key]:
        """Keys ``scope`` writes into the dict named ``name``: ``d[k] = v``, ``d.update``.

        With ``lines``, only the writes strictly between them (the assignment that reaches
        a read and the read): line order stands in for the control flow astroid lacks.
        """
        n = self._nodes
        out: list[Key] = []
        low, high = lines or (0, 1 << 30)
        for sub in scope.nodes_of_class(n.Subscript):
            if (
                low < (sub.lineno or 0) < high
                and isinstance(sub.value, n.Name)
                and sub.value.name == name
                and isinstance(sub.parent, n.Assign | n.AugAssign)
                and sub in (sub.parent.targets if isinstance(sub.parent, n.Assign) else [])
            ):
                out += [Key(s, sub.slice) for s in self.strings(sub.slice, {}, depth + 1)]
        for call in scope.nodes_of_class(n.Call):
            func = call.func
            if (
                low < (call.lineno or 0) < high
                and isinstance(func, n.Attribute)
                and func.attrname in ("update", "setdefault")
                and isinstance(func.expr, n.Name)
                and func.expr.name == name
            ):
                if func.attrname == "setdefault" and call.args:
                    out += [Key(s, call.args[0]) for s in self.strings(call.args[0], {}, depth)]
                    continue
                for arg in call.args:
                    out += self.keys(arg, {}, depth + 1)
                out += [Key(kw.arg, kw) for kw in call.keywords or [] if kw.arg]
        return out

    # -- sinks and wrappers -----------------------------------------------------------------

    def _sink(self, call: nodes.Call, name: str) -> ScanCall | None:
        entries = self.sinks.get(name)
        if not entries:
            return None
        for function in self._functions(call.func):
            frame = function.parent.frame() if function.parent is not None else None
            for entry in entries:
                if self._qualifies(entry, frame):
                    return entry
        for entry in entries:
            if entry.qualifier is None:
                return entry
            if (
                entry.qualifier == "self"
                and isinstance(call.func, self._nodes.Attribute)
                and isinstance(call.func.expr, self._nodes.Name)
                and call.func.expr.name == "self"
            ):
                return entry
        return None

    def _qualifies(self, entry: ScanCall, frame: nodes.NodeNG | None) -> bool:
        n = self._nodes
        qualifier = entry.qualifier
        if qualifier is None:
            return True
        last = qualifier.rpartition(".")[2]
        if isinstance(frame, n.ClassDef):
            if last == "init":
                module: str = frame.root().name
                return frame.name == "Run" and module in _RUN_MODULES
            try:
                names = {frame.name, *(a.name for a in frame.ancestors())}
            except (self._astroid.AstroidError, RecursionError):
                names = {frame.name}
            return last in names
        if isinstance(frame, n.Module):
            name: str = frame.name
            return name == qualifier or name.endswith("." + qualifier)
        return False

    def run(self) -> Report:
        """Find every sink call, its keys, and the keys reaching it through wrappers."""
        for name in list(self.sinks):
            for call in list(self.calls_by_name.get(name, ())):
                entry = self._sink(call, name)
                if entry is not None:
                    self.report.calls += 1
                    self._log(call, entry)
        return self.report

    def _log(self, call: nodes.Call, entry: ScanCall) -> None:
        n = self._nodes
        prefixes = [""]
        if entry.prefix is not None:
            arg = _argument(call, entry.prefix)
            if arg is not None and not (isinstance(arg, n.Const) and not arg.value):
                prefixes = [p + "/" if p else "" for p in self.strings(arg, {})]
        keys: list[Key] = []
        if entry.metrics is not None:
            arg = _argument(call, entry.metrics)
            if arg is not None:
                keys = self.keys(arg, {})
        elif entry.key is not None:
            arg = _argument(call, entry.key)
            if arg is not None:
                keys = [Key(s, arg) for s in self.strings(arg, {})]
        for key in keys:
            for prefix in prefixes:
                self._emit(call, entry.key_prefix + prefix + key.shape, key.node, call, 0)

    def _emit(
        self, where: nodes.Call, shape: str, node: nodes.NodeNG | None, call: nodes.Call, level: int
    ) -> None:
        """Report ``shape``, or substitute its parameter markers at each caller of the wrapper."""
        mark = (id(node), shape, id(call))
        if mark in self._seen:
            return
        self._seen.add(mark)
        function = where.frame()
        markers = list(_MARKER.finditer(shape))
        if markers and isinstance(function, self._nodes.FunctionDef) and level < _MAX_WRAP:
            callers = self.callers(function)
            if callers:
                for caller in callers:
                    for new_shape, new_node in self._substitute(function, caller, shape, node):
                        self._emit(caller, new_shape, new_node, caller, level + 1)
                return
        text = _MARKER.sub(lambda m: "{" + m.group(2) + "}", shape)
        self.report.add(text, node if node is not None else call, call)

    def callers(self, function: nodes.FunctionDef) -> list[nodes.Call]:
        """The calls astroid infers to ``function`` (among the calls of its name)."""
        known = self._callers.get(function)
        if known is None:
            known = [
                call
                for call in self.calls_by_name.get(function.name, ())
                if any(f is function for f in self._functions(call.func))
            ]
            self._callers[function] = known
            self.report.calls += len(known)
        return known

    def _substitute(
        self, function: nodes.FunctionDef, caller: nodes.Call, shape: str, node: nodes.NodeNG | None
    ) -> Iterator[tuple[str, nodes.NodeNG | None]]:
        results: list[tuple[str, nodes.NodeNG | None]] = [("", node)]
        position = 0
        for match in _MARKER.finditer(shape):
            literal = shape[position : match.start()]
            position = match.end()
            kind, param = match.group(1), match.group(2)
            options: list[tuple[str, nodes.NodeNG | None]]
            if kind == "k":
                options = [(k.shape, k.node) for k in self._bound_keys(function, caller, param)]
            else:
                arg = self._bound(function, caller, param)
                texts = ["{" + param + "}"] if arg is None else self.strings(arg, {})
                options = [(t, None) for t in texts]
            results = [
                (text + literal + option, option_node or result_node)
                for text, result_node in results
                for option, option_node in options
            ][: _MAX_ALTERNATIVES * 4]
        for text, result_node in results:
            yield text + shape[position:], result_node

    def _bound(
        self, function: nodes.FunctionDef, caller: nodes.Call, param: str
    ) -> nodes.NodeNG | None:
        """The caller's argument for ``param`` (by position or keyword), or its default."""
        n = self._nodes
        positional = [a.name for a in [*(function.args.posonlyargs or []), *function.args.args]]
        if (
            positional
            and function.type in ("method", "classmethod")
            and isinstance(caller.func, n.Attribute)
        ):
            positional = positional[1:]
        if param in positional:
            index = positional.index(param)
            args = caller.args
            if index < len(args) and not any(isinstance(a, n.Starred) for a in args[: index + 1]):
                return args[index]
        for keyword in caller.keywords or []:
            if keyword.arg == param:
                return keyword.value
        try:
            default: nodes.NodeNG | None = function.args.default_value(param)
        except self._astroid.AstroidError:
            default = None
        return default

    def _bound_keys(self, function: nodes.FunctionDef, caller: nodes.Call, param: str) -> list[Key]:
        if param == function.args.kwarg:
            named = {a.name for a in function.args.args} | {
                a.name for a in function.args.kwonlyargs
            }
            out: list[Key] = []
            for keyword in caller.keywords or []:
                if keyword.arg is None:
                    out += self.keys(keyword.value, {})
                elif keyword.arg not in named:
                    out.append(Key(keyword.arg, keyword))
            return out
        arg = self._bound(function, caller, param)
        if arg is None:
            return [Key("{" + param + "}", None)]
        return self.keys(arg, {})


def _module_name(path: Path) -> str:
    """``a.b.c`` for ``.../a/b/c.py`` where ``a`` and ``b`` are packages (``__init__.py``)."""
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or path.stem


def _called_name(call: nodes.Call) -> str | None:
    func = call.func
    name = getattr(func, "attrname", None) or getattr(func, "name", None)
    return name if isinstance(name, str) else None


def _argument(call: nodes.Call, where: Argument) -> nodes.NodeNG | None:
    """The argument passed at ``where`` (position, keyword or an alias), if any."""
    for keyword in call.keywords or []:
        if keyword.arg is not None and keyword.arg in where.keywords:
            value: nodes.NodeNG = keyword.value
            return value
    args = call.args
    if where.position is not None and where.position < len(args):
        if any(type(a).__name__ == "Starred" for a in args[: where.position + 1]):
            return None
        found: nodes.NodeNG = args[where.position]
        return found
    return None


def probe_tree(root: Path, *, glue: bool = True) -> dict[str, object]:
    """Scan-shaped JSON report of the keys astroid finds handed to tracker calls under ``root``.

    Raises:
        ProbeError: astroid is not installed, or ``root`` is not a folder.
    """
    try:
        import astroid  # noqa: F401
    except ImportError as exc:
        raise ProbeError(_MISSING) from exc
    if not root.is_dir():
        raise ProbeError(f"{root}: not a folder; pass the root of a source tree to probe")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        probe = Probe(root, glue=glue)
        probe.build()
        return probe.run().as_json()
    finally:
        sys.setrecursionlimit(limit)


_EMPTY_PROJECT: Final = (
    '[tool.metric-catalog]\ncatalog = ["catalog/*.yaml"]\n',
    "owner: newuser.train\nmodule: empty\ndescription: Nothing declared yet.\n",
)


def _time(trees: Sequence[Path], runs: int) -> int:
    """CPU seconds (best of ``runs``, interleaved) of a bare parse, scan and the probe."""
    from bench.measure import child_env, python, run_child
    from bench.scan_bench import _PARSE

    env = child_env()
    print("| tree | bare ast.parse | scan (zero configuration) | astroid probe | probe / scan |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "catalog").mkdir()
        (project / "pyproject.toml").write_text(_EMPTY_PROJECT[0], encoding="utf-8")
        (project / "catalog" / "empty.yaml").write_text(_EMPTY_PROJECT[1], encoding="utf-8")
        for tree in trees:
            argvs = {
                "parse": [python(), "-c", _PARSE, str(tree)],
                "scan": [python(), "-m", "codegen", "scan", "--format", "json", str(tree)],
                "probe": [python(), "-m", "bench.engine_probe", "report", str(tree)],
            }
            best = dict.fromkeys(argvs, float("inf"))
            for _ in range(runs):
                for label, argv in argvs.items():
                    sample = run_child(argv, cwd=project, env=env, timeout_s=1800)
                    if sample.returncode not in (0, 1):
                        print(f"{label} failed on {tree}: {sample.stderr[-400:]}", file=sys.stderr)
                        return 1
                    best[label] = min(best[label], sample.cpu_s)
            label = tree.parent.name if tree.name == "src" else tree.name
            print(
                f"| {label} | {best['parse']:.2f} s | {best['scan']:.2f} s | "
                f"{best['probe']:.2f} s | {best['probe'] / best['scan']:.1f}x |",
                flush=True,
            )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``report TREE [--out FILE]`` or ``time TREE... [--runs N]``; 2 when astroid is missing."""
    parser = argparse.ArgumentParser(prog="python -m bench.engine_probe", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="scan-shaped JSON report of one tree")
    report.add_argument("tree", type=Path)
    report.add_argument("--out", type=Path, help="write the report here (default: stdout)")
    report.add_argument(
        "--astroid-only",
        action="store_true",
        help="only what astroid infers: no writes d[k] = v, no loops over keys, no templates",
    )
    timing = commands.add_parser("time", help="CPU of parse, scan and the probe, best of N")
    timing.add_argument("trees", type=Path, nargs="+")
    timing.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        import astroid  # noqa: F401
    except ImportError:
        print(f"error: {_MISSING}", file=sys.stderr)
        return 2
    if args.command == "time":
        return _time([Path(t).resolve() for t in args.trees], max(1, args.runs))
    try:
        result = probe_tree(args.tree, glue=not args.astroid_only)
    except ProbeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(result, indent=1)
    if args.out is None:
        print(text)
    else:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
