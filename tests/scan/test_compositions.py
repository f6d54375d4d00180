"""Property: a key built by any composition of the supported patterns is found, at its line.

A generated module writes one key (``head/tail``) in one of the ways keys are written (a
literal, an f-string of a constant, ``%``, ``str.format``, a loop over a literal tuple, a
loop unpacking the rows of a literal table, a nested function's string parameter given a
literal) and hands the dict to ``wandb.log`` along one of the ways dicts travel (directly,
returned by a helper, returned in a tuple, filled by a callee through its parameter, through
a pass-through call, through a wrapper that adds ``head/`` to every key of its parameter, to
a Ray actor's method, to a logger the config picks among a family of classes, returned by
Ray workers and re-keyed by the driver, through a filter dropping other keys by prefix,
through a chain of wrappers whatever their name, passed as ``**`` into a wrapper's
``**kwargs``, kept on ``self`` by one method and logged by another, in a field of a returned
record, from a record a function passed as an argument returns, from what a function a
factory returns gives back, added to a collector object by one of its methods and handed
back by its getter, kept per group in a collector's field of dicts, logged through the sink
a factory builds, returned by a method of an object held in ``self`` and unpacked into
``self``, merged into a key-value logger's field that its dump hands to a writer looping the
keys into a sink, nested under ``head`` and flattened by a recursive helper joining keys with
``/``, recorded as keywords on a module-level tracker inside its ``head`` scope, kept under
``head`` in another dict and looped over from there, in the function or in a method that dict
is handed to). Scan must report exactly that key, undeclared, on the line the key is written.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.catalog.pipeline import load_and_check
from codegen.scan.scanner import scan

CATALOG = """\
owner: tests.compositions
module: compositions
description: A row no generated module logs.
prefix: ""
teed:
  - logger_key: zz_not_generated
    name: rl.compositions.unused
    kind: gauge
    unit: "1"
    description: A row the generated modules never log.
"""

WRITERS = ("literal", "fstring", "percent", "format", "loop", "table", "closure")
CARRIERS = (
    "direct",
    "helper",
    "tuple",
    "filled",
    "through",
    "wrapper",
    "filter",
    "attribute",
    "record",
    "callable",
    "factory",
    "named-wrapper",
    "keywords-wrapper",
    "rewriting-wrapper",
    "rewriting-decorator",
    "collector",
    "collector-group",
    "factory-sink",
    "actor",
    "config-logger",
    "gathered",
    "member",
    "kv-logger",
    "flattened",
    "scoped-tracker",
    "inner",
    "inner-method",
)
_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """A catalog declaring no generated key."""
    folder = tmp_path_factory.mktemp("compositions")
    (folder / "c.yaml").write_text(CATALOG, encoding="utf-8")
    result = load_and_check([folder / "c.yaml"], root=folder, lint=False)
    assert result.ok, result.diagnostics
    return result.catalog


def _key_expression(writer: str, head: str, tail: str) -> tuple[list[str], str]:
    """Lines before, and the expression of the key ``head/tail`` (``head`` may be empty)."""
    full = f"{head}/{tail}" if head else tail
    lead = f"{head}/" if head else ""
    if writer == "literal":
        return [], repr(full)
    if writer == "fstring":
        return [f"TAIL = {tail!r}"], f'f"{lead}{{TAIL}}"'
    if writer == "percent":
        return [f"TAIL = {tail!r}"], f'"{lead}%s" % TAIL'
    if writer == "format":
        return [f"TAIL = {tail!r}"], f'"{lead}{{}}".format(TAIL)'
    if writer == "closure":  # inside ``def put(part)``, called ``put(part=<tail>)``
        return [], f'f"{lead}{{part}}"'
    if writer == "table":  # inside ``for name, source in ROWS``
        return [f"ROWS = (({tail!r}, 'src'),)"], f'f"{lead}{{name}}"'
    return [f"NAMES = ({tail!r},)"], f'f"{lead}{{name}}"'  # inside ``for name in NAMES``


def _module(writer: str, carrier: str, head: str, tail: str) -> tuple[str, int]:
    """The source and the 1-based line where the key is written."""
    wrapped = carrier in {
        "wrapper",
        "collector-group",
        "flattened",
        "scoped-tracker",
        "inner",
        "inner-method",
    }
    constants, key = _key_expression(writer, "" if wrapped else head, tail)
    lines = ["import ray", "import wandb", "from dataclasses import dataclass", *constants]
    body: list[str] = []
    if writer == "loop":
        body += ["    for name in NAMES:", f"        d[{key}] = 1"]
    elif writer == "table":
        body += ["    for name, source in ROWS:", f"        d[{key}] = source"]
    elif writer == "closure":
        body += ["    out = {}", "    def put(part):", f"        out[{key}] = 1"]
        body += [f"    put(part={tail!r})", "    d.update(out)"]
    else:
        body += [f"    d[{key}] = 1"]
    # the key's line within ``build``'s body
    key_offset = 2 if writer == "closure" else len(body) - 1
    lines += ["def build(d):", *body, "    return d"]
    key_line = len(lines) - 1 - (len(body) - 1 - key_offset)
    if carrier == "direct":
        lines += ["def run():", "    wandb.log(build({}))"]
    elif carrier == "helper":
        lines += ["def helper():", "    return build({})", "def run():", "    m = {}"]
        lines += ["    m.update(helper())", "    wandb.log(m)"]
    elif carrier == "tuple":
        lines += ["def helper():", "    return 1, build({})", "def run():"]
        lines += ["    _, m = helper()", "    wandb.log(m)"]
    elif carrier == "filled":
        lines += ["def fill(metrics):", "    metrics.update(build({}))", "def run():"]
        lines += ["    m = {}", "    fill(metrics=m)", "    wandb.log(m)"]
    elif carrier == "through":
        lines += ["def run(strategy):", "    m = strategy.all_reduce(build({}))"]
        lines += ["    wandb.log(m)"]
    elif carrier == "filter":
        lines += ["def keep(metrics):", "    out = {}", "    for k, v in metrics.items():"]
        lines += ['        if k.startswith("_drop/") or k == "_step":', "            continue"]
        lines += ["        out[k] = v", "    return out", "def run():"]
        lines += ["    wandb.log(keep(build({})))"]
    elif carrier in {"record", "callable", "factory"}:
        lines += _object_carrier(carrier)
    elif carrier in {"collector", "collector-group", "factory-sink"}:
        lines += _collector_carrier(carrier, head)
    elif carrier == "named-wrapper":  # a chain of two wrappers, the inner named ``log``
        lines += ["def log(args, metrics, step_key):", "    wandb.log(metrics)"]
        lines += ["def emit(m):", '    log(None, m, step_key="s")']
        lines += ["def run():", "    emit(build({}))"]
    elif carrier == "rewriting-wrapper":  # a wrapper stripping a tag from each key
        untag = 'k.rsplit("@", 1)[0] if "@" in k else k'
        lines += ["def emit(d):", f"    wandb.log({{{untag}: v for k, v in d.items()}})"]
        lines += ["def run():", "    emit(build({}))"]
    elif carrier == "rewriting-decorator":  # a decorator handing the method untagged keys
        lines += ["def untag(k):", '    return k.partition("@")[0]', "def clean(stats):"]
        lines += ["    out = {}", "    for k, v in stats.items():", "        out[untag(k)] = v"]
        lines += ["    return out", "def cleaned(fn):", "    def inner(self, stats):"]
        lines += ["        return fn(self, clean(stats))", "    return inner", "class Sink:"]
        lines += ["    @cleaned", "    def record(self, stats):", "        wandb.log(stats)"]
        lines += ["def run(sink: Sink):", "    sink.record(build({}))"]
    elif carrier == "keywords-wrapper":  # handed on as ``**`` into a ``**stats`` parameter
        lines += ["def scalar(step, **stats):", "    wandb.log(stats, step=step)"]
        lines += ["def run():", "    scalar(1, **build({}))"]
    elif carrier == "actor":  # a Ray actor's method handing its dict to wandb
        lines += ["@ray.remote", "class Sink:", "    def record(self, payload, step=None):"]
        lines += ["        wandb.log(payload)", "def run(handle):"]
        lines += ["    ray.get(handle.record.remote(build({}), step=1))"]
    elif carrier == "config-logger":  # an object the config picks among a logger family
        write = "    def write(self, payload):"
        lines += ["class Base:", write, "        raise NotImplementedError"]
        lines += ["class Console(Base):", write, "        print(payload)"]
        lines += ["class Wandb(Base):", write, "        wandb.log(payload)"]
        lines += ["class Loop:", "    def __init__(self, cfg):", "        self.out = make(cfg)"]
        lines += ["    def run(self):", "        self.out.write(build({}))"]
    elif carrier == "gathered":  # worker dicts over ray.get, re-keyed by the driver
        lines += ["@ray.remote", "class Worker:", "    def step(self):", "        return build({})"]
        lines += ["def run(workers):", "    results = ray.get([w.step.remote() for w in workers])"]
        lines += ["    wandb.log({k: sum(r[k] for r in results) for k in results[0]})"]
    elif carrier == "member":  # a method of an object held in ``self``, unpacked into ``self``
        lines += ["class Source:", "    def collect(self):", "        return 1, build({})"]
        lines += ["class Trainer:", "    def __init__(self):", "        self.source = Source()"]
        lines += ["    def step(self):", "        _, self.info = self.source.collect()"]
        lines += ["    def run(self):", "        wandb.log({**self.info})"]
    elif carrier == "kv-logger":  # merged into a logger's field, dumped to a key sink
        lines += ["from torch.utils.tensorboard import SummaryWriter", "class Board:"]
        lines += ["    def __init__(self):", "        self.w = SummaryWriter()"]
        lines += ["    def write(self, kv, step):"]
        lines += [
            "        for k, v in sorted(kv.items()):",
            "            self.w.add_scalar(k, v, step)",
        ]
        lines += ["class Ledger:", "    def merge(self, d):", "        self.values.update(d)"]
        lines += ["    def dump(self, step):", "        for out in self.outs:"]
        lines += ["            out.write(self.values, step)", "def run(ledger):"]
        lines += ["    ledger.merge(build({}))"]
    elif carrier == "flattened":  # nested under ``head`` and flattened by a recursive helper
        lines += ["def flat(d, parent='', sep='/'):", "    out = {}", "    for k, v in d.items():"]
        lines += [
            "        path = parent + sep + k if parent else k",
            "        if isinstance(v, dict):",
        ]
        lines += ["            out.update(flat(v, path, sep=sep))", "        else:"]
        lines += ["            out[path] = v", "    return out", "def run():"]
        lines += [f"    stats = {{{head!r}: build({{}})}}", "    wandb.log(flat(stats))"]
    elif carrier == "scoped-tracker":  # recorded in a module-level tracker's scope
        lines += _scoped_tracker(head)
    elif carrier == "inner":  # kept under ``head`` in another dict, looped over from there
        lines += ["def run():", "    data = {'step': 1}", f"    data[{head!r}] = build({{}})"]
        lines += [f"    for k, v in data[{head!r}].items():"]
        lines += [f'        wandb.log({{f"{head}/{{k}}": v}})']
    elif carrier == "inner-method":  # the same, looped over by a method it is handed to
        lines += ["class Trainer:", "    def update(self, data):"]
        lines += [f"        for k, v in data[{head!r}].items():"]
        lines += [f'            self.m[f"{head}/{{k}}"] = v']
        lines += [
            "    def step(self):",
            "        data = {}",
            f"        data[{head!r}] = build({{}})",
        ]
        lines += [
            "        self.update(data)",
            "    def run(self):",
            "        wandb.log({**self.m})",
        ]
    elif carrier == "attribute":
        lines += ["class Trainer:", "    def fill(self):", "        self.m.update(build({}))"]
        lines += ["    def run(self):", "        wandb.log({**self.m})"]
    else:
        lines += ["def log_train(step, logs):"]
        lines += [f'    wandb.log({{"{head}/%s" % k: v for k, v in logs.items()}})']
        lines += ["def run():", "    log_train(1, build({}))"]
    return "\n".join(lines) + "\n", key_line


def _collector_carrier(carrier: str, head: str) -> list[str]:
    """The dict is added to a collector object (through a method calling another, or per
    group), handed back by its getter, and logged directly or by a factory's sink."""
    lines = ["class Tally:", "    def __init__(self):", "        self.stats = {}"]
    lines += ["        self.groups = {}", "    def merge(self, d):", "        self.stats.update(d)"]
    lines += ["    def add(self, d):", "        self.merge(d)", "    def group(self, g, d):"]
    lines += ["        self.groups.setdefault(g, {}).update(d)", "    def get(self):"]
    lines += ["        out = self.stats.copy()", "        for g, d in self.groups.items():"]
    lines += ["            for k, v in d.items():", '                out[f"{g}/{k}"] = v']
    lines += ["        return out"]
    if carrier == "collector":
        return [
            *lines,
            "def run():",
            "    t = Tally()",
            "    t.add(build({}))",
            "    wandb.log(t.get())",
        ]
    if carrier == "collector-group":
        return [
            *lines,
            "def run():",
            "    t = Tally()",
            f"    t.group({head!r}, build({{}}))",
            "    wandb.log(t.get())",
        ]
    lines += ["class Sink:", "    def log(self, values):", "        return None"]
    lines += ["class WandbSink(Sink):", "    def log(self, values):", "        wandb.log(values)"]
    lines += ["SINKS = {}", "def make_sink(kind) -> Sink:", "    return SINKS[kind]()"]
    lines += ["class Loop:", "    def __init__(self):", '        self.sink = make_sink("w")']
    return [*lines, "    def run(self):", "        self.sink.log(build({}))"]


def _scoped_tracker(head: str) -> list[str]:
    """The dict's keys are recorded as keywords on a module-level tracker's bound method,
    inside ``with`` its scope named ``head``, and logged from its getter."""
    lines = ["from contextlib import contextmanager", "class Stats:", "    def __init__(self):"]
    lines += ["        self.stack = []", "        self.values = {}", "    @contextmanager"]
    lines += ["    def scope(self, name):", "        self.stack.append(name)", "        yield"]
    lines += ["        self.stack.pop()", "    def _key(self, key):"]
    lines += ['        return "/".join([*self.stack, key])', "    def put(self, **kw):"]
    lines += ["        for k, v in kw.items():", "            self.values[self._key(k)] = v"]
    lines += ["    def dump(self):", "        return dict(self.values)", "STATS = Stats()"]
    lines += ["put = STATS.put", "def run():", f"    with STATS.scope({head!r}):"]
    return [*lines, "        put(**build({}))", "    wandb.log(STATS.dump())"]


def _object_carrier(carrier: str) -> list[str]:
    """The dict travels in a record's field: returned, returned by a function passed as an
    argument, or by the nested function a factory returns."""
    lines = ["@dataclass", "class Out:", "    loss: float", "    stats: dict"]
    lines += ["def make():", "    return Out(0.0, build({}))"]
    if carrier == "record":
        return [*lines, "def run():", "    wandb.log(make().stats)"]
    lines += ["def collect(fn):", "    out = fn()", "    return out.stats"]
    if carrier == "callable":
        return [*lines, "def run():", "    wandb.log(collect(make))"]
    lines += [
        "def pick(kind):",
        "    if kind:",
        "        def inner():",
        "            return make()",
    ]
    lines += ["    else:", "        def inner():", "            return Out(loss=1.0, stats={})"]
    return [*lines, "    return inner", "def run(kind):", "    wandb.log(collect(pick(kind)))"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.tuples(st.sampled_from(WRITERS), st.sampled_from(CARRIERS)),
    words=st.tuples(_WORD, _WORD),
)
def test_a_key_built_by_any_composition_is_found_at_its_line(
    tmp_path_factory: pytest.TempPathFactory,
    catalog: Catalog,
    shape: tuple[str, str],
    words: tuple[str, str],
) -> None:
    folder = tmp_path_factory.mktemp("module")
    (writer, carrier), (head, tail) = shape, words
    source, line = _module(writer, carrier, head, tail)
    (folder / "m.py").write_text(source, encoding="utf-8")
    report = scan([folder / "m.py"], catalog, cwd=folder, unlogged=False)
    found = [(d.code, d.position.line if d.position else 0) for d in report.diagnostics]
    assert found == [("SCAN_UNDECLARED", line)], source
    assert f"key '{head}/{tail}'" in report.diagnostics[0].message, source
