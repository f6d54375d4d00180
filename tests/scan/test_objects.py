"""How scan reads a record class's constructor: which argument fills which field, and which
fields it follows at all (a field typed as no dict is never a dict of metrics)."""

from __future__ import annotations

import ast

import pytest

from codegen.scan.records import Record, record_of


def _record(source: str) -> Record | None:
    tree = ast.parse(source)
    node = tree.body[-1]
    assert isinstance(node, ast.ClassDef)
    return record_of(node)


@pytest.mark.parametrize(
    ("source", "positional", "keywords"),
    [
        (
            "@dataclass\nclass Out:\n    loss: float\n    metrics: dict[str, float]\n",
            ("", "metrics"),
            {"metrics": "metrics"},
        ),
        (
            "@dataclasses.dataclass(frozen=True)\nclass Out:\n    stats: Mapping[str, Any]\n",
            ("stats",),
            {"stats": "stats"},
        ),
        (
            "class Out(NamedTuple):\n    loss: Tensor\n    info: Optional[dict]\n",
            ("", "info"),
            {"info": "info"},
        ),
        (
            '@dataclass\nclass Out:\n    loss: "Tensor"\n    stats: "dict[str, float]"\n',
            ("", "stats"),
            {"stats": "stats"},
        ),
        (
            "@dataclass(kw_only=True)\nclass Out:\n    metrics: dict\n",
            (),
            {"metrics": "metrics"},
        ),
        (
            "@dataclass\nclass Out(Base):\n    metrics: dict\n",
            (),
            {"metrics": "metrics"},
        ),
        (
            "@dataclass\nclass Out:\n    metrics: dict\n"
            "    N: ClassVar[int] = 1\n    extra: dict\n    _: KW_ONLY\n    late: dict\n",
            ("metrics", "extra"),
            {"metrics": "metrics", "extra": "extra", "late": "late"},
        ),
        (
            "class Out:\n    def __init__(self, loss, stats):\n"
            "        self.loss = loss\n        self.stats = stats\n",
            ("loss", "stats"),
            {"loss": "loss", "stats": "stats"},
        ),
        (
            "class Out:\n    def __init__(self, loss: Tensor, info: dict):\n"
            "        self.loss = loss\n        self.details = info\n",
            ("", "details"),
            {"info": "details"},
        ),
    ],
    ids=[
        "dataclass-tensor-field-skipped",
        "frozen-dataclass-mapping",
        "namedtuple-optional-dict",
        "string-annotations",
        "keyword-only-no-positions",
        "inherited-fields-no-positions",
        "classvar-skipped-kw-only-sentinel-ends-positions",
        "init-stores-its-arguments",
        "init-renames-an-annotated-argument",
    ],
)
def test_a_record_constructor_fills_the_fields_that_may_hold_a_dict(
    source: str, positional: tuple[str, ...], keywords: dict[str, str]
) -> None:
    record = _record(source)
    assert record is not None
    assert record.positional == positional
    assert record.keywords == keywords


@pytest.mark.parametrize(
    "source",
    [
        "@dataclass\nclass Out:\n    loss: Tensor\n    count: int\n",
        "class Plain:\n    pass\n",
        "class Computed:\n    def __init__(self, x):\n        self.total = x + 1\n",
    ],
    ids=["no-field-may-hold-a-dict", "no-constructor", "init-stores-no-argument-as-is"],
)
def test_a_class_whose_fields_hold_no_dict_is_no_record(source: str) -> None:
    assert _record(source) is None
