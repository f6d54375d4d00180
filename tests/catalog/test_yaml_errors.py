"""YAML syntax errors a person hits are said in plain words, at the line and column to fix.

Each input is a real malformed catalog fragment; the message must name what is
wrong and the fix (not "did not find expected '-' indicator"), with both
libyaml and PyYAML's pure-Python parser.
"""

from __future__ import annotations

import pytest
import yaml

from codegen.catalog import loader
from codegen.catalog.loader import load_text

HEAD = "owner: nemo_rl.grpo\nmodule: grpo\ndescription: GRPO metrics.\nteed:\n"

# (id, text, line, column, phrases the message must contain)
CASES: list[tuple[str, str, int, int, tuple[str, ...]]] = [
    (
        "key indented less than its siblings",
        HEAD + "  - logger_key: reward\n    name: rl.reward.mean\n   kind: gauge\n",
        7,
        4,
        ("line 7 is indented 3 spaces", "lines up with no block above it", "indent it 4 spaces"),
    ),
    (
        "key indented more than its siblings",
        HEAD + "  - logger_key: reward\n    name: rl.reward.mean\n      kind: gauge\n",
        7,
        7,
        ("line 7 is indented 6 spaces", "deeper than the key on line 6", "indent it 4 spaces"),
    ),
    (
        "list item dash indented to no level",
        HEAD + "  - logger_key: a\n    name: rl.a\n - logger_key: b\n    name: rl.b\n",
        7,
        2,
        ("line 7 is indented 1 space", "indent it 2 spaces like the '- ' on line 5"),
    ),
    (
        "tab used for indentation",
        HEAD + "  - logger_key: reward\n    name: rl.reward.mean\n\tkind: gauge\n",
        7,
        1,
        ("indented with a tab character", "spaces only", "4 spaces"),
    ),
    (
        "double quote never closed",
        HEAD + '  - logger_key: reward\n    unit: "1\n    kind: gauge\n',
        6,
        11,
        ('the value quoted with " at line 6 is never closed', 'add the closing "'),
    ),
    (
        "single quote never closed",
        "owner: nemo_rl.grpo\nmodule: grpo\ndescription: 'GRPO metrics.\nteed: []\n",
        3,
        14,
        ("quoted with ' at line 3 is never closed",),
    ),
    (
        "key without a colon",
        HEAD + "  - logger_key: reward\n    name rl.reward.mean\n    kind: gauge\n",
        6,
        5,
        ("line 6 ('name rl.reward.mean') has no ':' after its key", "'name: rl.reward.mean'"),
    ),
    (
        "value holding colon space",
        HEAD + "  - logger_key: reward\n    description: Reward: mean of the batch.\n",
        6,
        24,
        ("contains ': '", 'quote the value: description: "Reward: mean of the batch."'),
    ),
    (
        "unit starting with a brace",
        HEAD + "  - logger_key: tps\n    name: rl.tps\n    unit: {token}/s\n",
        7,
        11,
        ("starts with '{'", "inline mapping", 'quote it: unit: "{token}/s"'),
    ),
    (
        "inline mapping never closed",
        HEAD + "  - {logger_key: reward, name: rl.reward.mean\n",
        5,
        5,
        ("inline mapping that starts at line 5 is not closed", "close it with '}'"),
    ),
    (
        "list item dash at the keys' level of the row above",
        HEAD + "- logger_key: a\n  name: rl.a\n  - logger_key: b\n    name: rl.b\n",
        7,
        3,
        ("line 7 starts a list item ('- ') at 2 spaces", "line the '- ' up with the one on line 5"),
    ),
    (
        "dash without a space",
        HEAD + "  -logger_key: a\n    name: rl.a\n",
        5,
        3,
        ("without a space after '-' it is a key, not a list item", "write '- logger_key: a'"),
    ),
    (
        "text after a closing quote",
        HEAD + '  - logger_key: a\n    description: "Say "hi" now."\n',
        6,
        24,
        ('text follows its closing "', "description: 'Say \"hi\" now.'"),
    ),
    (
        "top-level key indented",
        "owner: nemo_rl.grpo\n module: grpo\ndescription: GRPO metrics.\n",
        2,
        2,
        ("line 2 is indented 1 space, deeper than the key on line 1", "indent it 0 spaces"),
    ),
    (
        "value starting with a reserved character",
        HEAD + "  - logger_key: reward\n    description: @mean reward.\n",
        6,
        18,
        ("cannot start with '@'", 'quote the value: description: "@mean reward."'),
    ),
]


@pytest.fixture(params=["libyaml", "pure-python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each case with libyaml (when built in) and with PyYAML's pure-Python parser."""
    if request.param == "pure-python":
        monkeypatch.setattr(loader, "_Loader", yaml.SafeLoader)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML is built without libyaml")
    return str(request.param)


@pytest.mark.parametrize(
    ("text", "line", "column", "phrases"),
    [pytest.param(t, ln, col, p, id=i) for i, t, ln, col, p in CASES],
)
def test_syntax_error_says_what_is_wrong_and_the_fix_at_its_position(
    parser: str, text: str, line: int, column: int, phrases: tuple[str, ...]
) -> None:
    """One YAML_SYNTAX diagnostic, at the fix's line and column, in plain words."""
    (diagnostic,) = load_text(text, "catalog/grpo.yaml").diagnostics
    assert diagnostic.code == "YAML_SYNTAX"
    assert diagnostic.position is not None
    assert (diagnostic.position.line, diagnostic.position.column) == (line, column)
    for phrase in phrases:
        assert phrase in diagnostic.message
    # The parser's jargon is not the message.
    for jargon in ("expected <block end>", "indicator", "while parsing", "while scanning"):
        assert jargon not in diagnostic.message
    assert "\n" not in diagnostic.message
    assert ";" in diagnostic.message


def test_unrecognised_syntax_error_keeps_the_parser_words_and_a_hint() -> None:
    """An error no rule explains still names the problem, its place and what to check."""
    (diagnostic,) = load_text("a: b\n? c\n: d\n---x: [\n", "x.yaml").diagnostics
    assert diagnostic.code == "YAML_SYNTAX"
    assert diagnostic.message.startswith("YAML syntax error: ")
    assert "check the indentation (spaces only)" in diagnostic.message


@pytest.mark.parametrize("cut", range(1, 60, 3))
def test_truncated_catalog_never_reports_past_the_last_line(cut: int) -> None:
    """Whatever is cut off, the position lies inside the text and the message is one line."""
    text = HEAD + '  - logger_key: reward\n    name: rl.reward.mean\n    unit: "1"\n'
    lines = text[: len(text) - cut].split("\n")
    for diagnostic in load_text("\n".join(lines), "t.yaml").diagnostics:
        assert diagnostic.position is not None
        assert 1 <= diagnostic.position.line <= len(lines)
        assert 1 <= diagnostic.position.column <= len(lines[diagnostic.position.line - 1]) + 1
        assert "\n" not in diagnostic.message
