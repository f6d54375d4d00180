"""Behaviour of codegen.generate.python: string helpers, module layout, name checks."""

from __future__ import annotations

import ast
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.diagnostics import Position
from codegen.catalog.model import Catalog, CatalogFile, Deprecation, MetricRow
from codegen.generate.python import (
    LINE_LENGTH,
    py_assign,
    py_docstring,
    py_kwarg,
    py_str,
    py_tuple,
    python_name_diagnostics,
    render_python_module,
    render_python_modules,
)

# Text that breaks naive generators, and arbitrary Unicode (minus surrogates,
# which YAML cannot carry either).
TRICKY = st.lists(
    st.one_of(
        st.sampled_from(['"', "'", "\\", "\n", "\r", "\t", " ", '"""', "'''", "{{ x }}", "\x00"]),
        st.sampled_from(["\u2028", "{%", "#}", "`", "%s", "\u00e9", "\u4e2d", "\U0001f600"]),
        st.characters(exclude_categories=["Cs"]),
        st.text(min_size=1, max_size=12),
    ),
    max_size=40,
).map("".join)


def teed(name: str, key: str = "k", description: str = "A value.", **fields: object) -> MetricRow:
    """A teed row with defaults for what the test does not care about."""
    return MetricRow(
        section="teed",
        name=name,
        kind=str(fields.pop("kind", "gauge")),
        unit=str(fields.pop("unit", "1")),
        description=description,
        stability=str(fields.pop("stability", "development")),
        position=Position("catalog/owner.yaml", 5, 5),
        logger_key=key,
        prefix=str(fields.pop("prefix", "train")),
        **fields,  # type: ignore[arg-type]
    )


def recorded(name: str, description: str = "A value.", **fields: object) -> MetricRow:
    """A recorded row with defaults for what the test does not care about."""
    return MetricRow(
        section="recorded",
        name=name,
        kind=str(fields.pop("kind", "histogram")),
        unit=str(fields.pop("unit", "s")),
        description=description,
        stability=str(fields.pop("stability", "development")),
        position=Position("catalog/owner.yaml", 9, 5),
        **fields,  # type: ignore[arg-type]
    )


def owner_file(
    teed_rows: Sequence[MetricRow] = (),
    recorded_rows: Sequence[MetricRow] = (),
    *,
    module: str = "owner",
    path: str = "catalog/owner.yaml",
    description: str = "Rows of a test owner.",
) -> CatalogFile:
    """A catalog file holding the given rows."""
    return CatalogFile(
        path=path,
        owner="tests.owner",
        module=module,
        description=description,
        teed=tuple(teed_rows),
        recorded=tuple(recorded_rows),
    )


def module_values(source: str) -> dict[str, object]:
    """Every ``NAME: Final = <literal or call>`` of a module, literal arguments evaluated."""
    values: dict[str, object] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            value = node.value
            if isinstance(value, ast.Call):
                values[node.target.id] = {
                    kw.arg: ast.literal_eval(kw.value) for kw in value.keywords
                }
            elif value is not None and not isinstance(value, ast.Tuple):
                values[node.target.id] = ast.literal_eval(value)
    return values


def module_values_all(source: str) -> list[str]:
    """A module's ``__all__``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            return list(ast.literal_eval(node.value))
    return []


# --- string helpers -------------------------------------------------------------------------


@given(TRICKY)
def test_py_str_round_trips_any_text(text: str) -> None:
    """Any text becomes an ASCII literal that evaluates back to the same text."""
    literal = py_str(text)
    assert literal.isascii()
    assert ast.literal_eval(literal) == text


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("plain", '"plain"'),
        ("it's", '"it\'s"'),  # one single quote: ruff keeps double quotes
        ('say "hi"', "'say \"hi\"'"),  # more double than single quotes: ruff picks single
        ("a\\b", '"a\\\\b"'),
        ("line\nbreak", '"line\\nbreak"'),
        ("caf\u00e9 \U0001f600", '"caf\\xe9 \\U0001f600"'),
        ("", '""'),
    ],
)
def test_py_str_picks_ruffs_quotes_and_escapes(text: str, literal: str) -> None:
    """Quotes follow ruff's preference; escapes are the lower-case ones repr writes."""
    assert py_str(text) == literal


@given(TRICKY)
def test_py_kwarg_keeps_value_and_line_length(text: str) -> None:
    """A keyword argument of any text evaluates to the text and stays within the line length."""
    rendered = py_kwarg("description", text)
    call = ast.parse(f"f(\n{rendered}\n)").body[0]
    assert isinstance(call, ast.Expr)
    assert isinstance(call.value, ast.Call)
    assert ast.literal_eval(call.value.keywords[0].value) == text
    assert all(len(line) <= LINE_LENGTH for line in rendered.splitlines())


@pytest.mark.parametrize(
    ("length", "lines"),
    [
        (60, 1),  # fits on the keyword line
        (85, 3),  # fits only alone inside parentheses
        (300, 6),  # split into pieces that each fit
    ],
)
def test_py_kwarg_layout_by_length(length: int, lines: int) -> None:
    """Short values stay flat, then get parentheses, then split, as ruff would lay them out."""
    text = ("word " * 80)[:length]
    assert len(py_kwarg("description", text).splitlines()) == lines


@given(st.lists(TRICKY, min_size=1, max_size=3))
def test_py_docstring_cannot_be_broken_out_of(paragraphs: list[str]) -> None:
    """A docstring of any text parses as one string whose words are the text's words."""
    doc = py_docstring(paragraphs)
    value = ast.literal_eval(doc)
    assert isinstance(value, str)
    expected = [word for paragraph in paragraphs for word in paragraph.split()]
    if not expected:
        assert value == "."  # a docstring is never empty
    else:
        # Whitespace is re-flowed, so compare the non-whitespace text.
        assert "".join(value.split()) == "".join(expected)


def test_py_docstring_wraps_long_paragraphs() -> None:
    """Long prose wraps inside the line length; paragraphs stay separated by a blank line."""
    doc = py_docstring(["word " * 60, "Kind: gauge\nUnit: s"])
    lines = doc.splitlines()
    assert all(len(line) <= LINE_LENGTH for line in lines)
    assert lines[-3:] == ["Kind: gauge", "Unit: s", '"""']
    assert "" in lines


@pytest.mark.parametrize(
    ("target", "value", "expected_lines"),
    [
        ("REWARD_MEAN_KEY", "reward", 1),
        ("A" * 60 + "_KEY", "k" * 50, 3),  # ruff parenthesizes when that makes it fit
        ("A" * 60 + "_KEY", "k" * 120, 1),  # ...and leaves it flat when nothing fits
    ],
)
def test_py_assign_parenthesizes_only_when_it_helps(
    target: str, value: str, expected_lines: int
) -> None:
    """A key constant is laid out as ruff format would."""
    rendered = py_assign(target, value)
    assert len(rendered.splitlines()) == expected_lines
    assert ast.literal_eval(rendered.split("=", 1)[1].strip()) == value


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ((), "T: Final[tuple[X, ...]] = ()"),
        (("A",), "T: Final[tuple[X, ...]] = (A,)"),
        (("A", "B"), "T: Final[tuple[X, ...]] = (\n    A,\n    B,\n)"),
    ],
)
def test_py_tuple_layout(names: tuple[str, ...], expected: str) -> None:
    """Empty and single tuples stay flat; longer ones keep ruff's magic trailing comma."""
    assert py_tuple("T", "X", names) == expected


# --- module layout --------------------------------------------------------------------------


def test_module_starts_with_the_generated_header_and_owner_docstring() -> None:
    """First line names the source file and says DO NOT EDIT; the docstring names the owner."""
    text = render_python_module(owner_file([teed("rl.reward.mean", "reward")]))
    first, rest = text.split("\n", 1)
    assert first == (
        "# Code generated by metric-catalog generate from catalog/owner.yaml. DO NOT EDIT."
    )
    doc = ast.get_docstring(ast.parse(text))
    assert doc is not None
    assert "tests.owner" in doc
    assert "Rows of a test owner." in doc
    assert rest.endswith(
        "register_teed_metrics(TEED, owner=__name__)\n"
        "register_recorded_metrics(RECORDED, owner=__name__)\n"
    )


def test_module_constants_carry_every_field() -> None:
    """Each row becomes a constant with all its fields, and teed rows get a _KEY constant."""
    text = render_python_module(
        owner_file(
            [teed("rl.reward.mean", "reward", "Mean reward.", unit="{token}", prefix="")],
            [recorded("rl.batch.duration", "Batch time.")],
        )
    )
    values = module_values(text)
    assert values["REWARD_MEAN"] == {
        "logger_key": "reward",
        "name": "rl.reward.mean",
        "kind": "gauge",
        "unit": "{token}",
        "description": "Mean reward.",
        "prefix": "",
    }
    assert values["REWARD_MEAN_KEY"] == "reward"
    assert values["BATCH_DURATION"] == {
        "name": "rl.batch.duration",
        "kind": "histogram",
        "unit": "s",
        "description": "Batch time.",
    }
    assert "BATCH_DURATION_KEY" not in values


def test_module_tuples_keep_declaration_order_and_all_is_sorted() -> None:
    """TEED/RECORDED follow the YAML order; __all__ lists every public name, sorted."""
    rows = [teed("rl.zeta", "z"), teed("rl.alpha", "a"), teed("rl.mid", "m")]
    tree = ast.parse(render_python_module(owner_file(rows, [recorded("rl.b.rec")])))
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            assert node.value is not None
            names[node.target.id] = node.value
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    teed_tuple = names["TEED"]
    assert isinstance(teed_tuple, ast.Tuple)
    assert [elt.id for elt in teed_tuple.elts if isinstance(elt, ast.Name)] == [
        "ZETA",
        "ALPHA",
        "MID",
    ]
    exported = ast.literal_eval(names["__all__"])
    assert exported == sorted(exported)
    # Module dunders (__all__, __catalog_owner__) are not exported names.
    assert set(exported) == {n for n in names if not n.startswith("__")}


@pytest.mark.parametrize(
    ("deprecation", "expected"),
    [
        (
            Deprecation("0.2.0", "rl.new", "Old one."),
            "Deprecated: use rl.new (since 0.2.0). Old one.",
        ),
        (Deprecation("1.0"), "Deprecated (since 1.0)."),
    ],
)
def test_row_docstring_states_kind_unit_key_stability_and_deprecation(
    deprecation: Deprecation, expected: str
) -> None:
    """The docstring after a constant carries its description and the facts about the row."""
    row = teed("rl.old", "old", "Old value.", stability="beta", deprecated=deprecation)
    text = render_python_module(owner_file([row]))
    doc_start = text.index('"""Old value.')
    doc = text[doc_start : text.index('"""', doc_start + 3) + 3]
    facts = [
        "Kind: gauge",
        "Unit: 1",
        "Logged key: train/old",
        "Logger key: old (under prefix train)",
    ]
    for fact in [*facts, "Stability: beta", expected]:
        assert fact in doc


def test_a_teed_row_gets_its_whole_logged_key_as_a_constant() -> None:
    """A flat-dict stack writes ``{X_LOGGED_KEY: v}``: the prefix and key joined, in __all__."""
    source = render_python_module(owner_file([teed("rl.loss", "loss")]))
    values = module_values(source)
    assert values["LOSS_LOGGED_KEY"] == "train/loss"
    assert values["LOSS_KEY"] == "loss"
    assert "LOSS_LOGGED_KEY" in module_values_all(source)


def test_render_is_independent_of_input_order() -> None:
    """The same files in another order render byte-identical output."""
    first = owner_file([teed("rl.a", "a")], module="first", path="catalog/first.yaml")
    second = owner_file([teed("rl.b", "b")], module="second", path="catalog/second.yaml")
    assert render_python_modules(Catalog((first, second))) == render_python_modules(
        Catalog((second, first))
    )
    assert list(render_python_modules(Catalog((second, first)))) == [
        "src/metric_catalog/generated/first.py",
        "src/metric_catalog/generated/second.py",
    ]


def test_module_size_grows_linearly_with_rows() -> None:
    """Doubling the rows about doubles the module (no per-row repetition of other rows)."""

    def size(count: int) -> int:
        rows = [teed(f"rl.series.n{i}", f"k{i}") for i in range(count)]
        return len(render_python_module(owner_file(rows)))

    small, large = size(200), size(400)
    assert 1.9 < large / small < 2.1


def test_template_output_has_no_timestamps_or_versions() -> None:
    """Rendering twice gives the same bytes, and nothing in them looks like a version or date."""
    catalog_file = owner_file([teed("rl.reward.mean", "reward")])
    text = render_python_module(catalog_file)
    assert text == render_python_module(catalog_file)
    assert "version" not in text.lower()
    assert "20" + "26" not in text


# --- name checks ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("teed_names", "recorded_names", "clash"),
    [
        (["rl.teed"], [], "TEED"),
        ([], ["rl.recorded"], "RECORDED"),
        (["rl.foo"], ["rl.foo.key"], "FOO_KEY"),
        (["rl.foo"], ["rl.foo.logged.key"], "FOO_LOGGED_KEY"),
    ],
)
def test_names_that_would_clash_in_python_are_reported(
    teed_names: list[str], recorded_names: list[str], clash: str
) -> None:
    """A row whose constant collides with a generated name is an error naming the constant."""
    catalog_file = owner_file(
        [teed(name, f"k{i}") for i, name in enumerate(teed_names)],
        [recorded(name) for name in recorded_names],
    )
    found = python_name_diagnostics(Catalog((catalog_file,)))
    assert [d.code for d in found] == ["GENERATED_NAME_CLASH"]
    assert clash in found[0].message
    assert found[0].position is not None
    assert found[0].position.path == "catalog/owner.yaml"
    with pytest.raises(ValueError, match=clash):
        render_python_module(catalog_file)


def test_distinct_names_are_not_reported() -> None:
    """Rows whose constants and key constants differ produce no finding."""
    catalog_file = owner_file([teed("rl.foo", "a"), teed("rl.foo.keys", "b")])
    assert python_name_diagnostics(Catalog((catalog_file,))) == []


def test_all_follows_ruffs_natural_order() -> None:
    """__all__ sorts digit runs as numbers, 0-led runs digit by digit, one-letter names last."""
    rows = [recorded(name) for name in ["rl.x", "rl.n10", "rl.n2", "rl.n015", "rl.n12"]]
    tree = ast.parse(render_python_module(owner_file([], rows)))
    exported = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    assert exported == ["N015", "N2", "N10", "N12", "RECORDED", "TEED", "X"]


def test_deprecated_teed_row_names_its_replacement_in_the_constant() -> None:
    """The old row of a rename carries ``replaced_by``; its replacement and others do not."""
    old = teed(
        "rl.kl.divergence",
        "kl",
        deprecated=Deprecation(since="0.2.0", replaced_by="rl.kl.reference"),
    )
    gone = teed("rl.kl.old", "kl_old", deprecated=Deprecation(since="0.2.0"))
    values = module_values(
        render_python_module(owner_file([old, teed("rl.kl.reference", "kl"), gone]))
    )
    assert values["KL_DIVERGENCE"] == {
        "logger_key": "kl",
        "name": "rl.kl.divergence",
        "kind": "gauge",
        "unit": "1",
        "description": "A value.",
        "prefix": "train",
        "replaced_by": "rl.kl.reference",
    }
    assert "replaced_by" not in values["KL_REFERENCE"]  # type: ignore[operator]
    assert "replaced_by" not in values["KL_OLD"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("prefix", "other_prefixes", "facts"),
    [
        ("train", ("",), ["Also under prefixes: the empty prefix (the key is logged bare)"]),
        ("train", ("eval", ""), ["Also under prefixes: eval, the empty prefix"]),
        ("", (), ["log its value bare, under the empty prefix."]),
        ("train", (), ["log its value under prefix train."]),
    ],
)
def test_the_empty_prefix_is_named_not_shown_as_none(
    prefix: str, other_prefixes: tuple[str, ...], facts: list[str]
) -> None:
    """A row teed bare says so; '(none)' read as 'no other prefixes' to a user."""
    row = teed("rl.bare", "bare", prefix=prefix, other_prefixes=other_prefixes)
    text = render_python_module(owner_file([row]))
    for fact in facts:
        assert fact in text
    assert "(none)" not in text
    assert "under prefix the empty prefix" not in text


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({"every": 5}, {"every": "5"}, id="every"),
        pytest.param({"first_step": 10}, {"first_step": "10"}, id="first-step"),
        pytest.param(
            {"every_config": "config.trainer.test_freq"},
            {"every": "config.trainer.test_freq"},
            id="every-from-config",
        ),
        pytest.param({}, {}, id="every-step"),
    ],
)
def test_a_rows_schedule_reaches_the_generated_row_for_checkers(
    fields: dict[str, object], expected: dict[str, str]
) -> None:
    """metric_catalog.testing reads it: a one-step block is not missing an every-5 row."""
    source = render_python_module(owner_file([teed("rl.val.acc", "acc", **fields)]))
    row = module_values(source)["VAL_ACC"]
    assert isinstance(row, dict)
    assert {k: v for k, v in row.items() if k in ("every", "first_step")} == expected
