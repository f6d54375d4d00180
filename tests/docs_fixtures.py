"""Catalogs for the docs tests, built directly from the model (no YAML, no loader).

Series names all start with ``rl.fixture.`` and modules with ``fixture_`` so the
fixture can be merged into the real catalog without clashing.
"""

from __future__ import annotations

from typing import Final

from codegen.catalog.diagnostics import Position
from codegen.catalog.model import Catalog, CatalogFile, Deprecation, MetricRow

__all__ = [
    "HOSTILE_DESCRIPTIONS",
    "SCRIPT_DESCRIPTION",
    "SEARCH_WORD",
    "fixture_catalog",
    "merged_catalog",
    "row",
]

SCRIPT_DESCRIPTION: Final = "Injected <script>alert(1)</script> payload"
"""A description that would run if any page pasted YAML text as HTML."""

SEARCH_WORD: Final = "quokkaboost"
"""Appears in exactly one description, so search must find exactly that owner page."""

HOSTILE_DESCRIPTIONS: Final[dict[str, str]] = {
    "pipe": "left | right",
    "script": SCRIPT_DESCRIPTION,
    "backticks": "a `code` span and ``` fence",
    "emphasis": "*not bold* and _not italic_ and **nor this**",
    "jinja": "{{ not_a_substitution }} and {% raw %}",
    "link": "[click](https://example.invalid) and ![img](x.png)",
    "newline": "first line\nsecond line",
    "heading": "# not a heading",
    "ordered_list": "1. not a list",
    "bullet": "- not a bullet",
    "myst_target": "(not-a-target)=",
    "myst_comment": "% not a comment",
    "colon_fence": ":::{note} not a directive",
    "role": "{math}`x^2` and $x$ and $$y$$",
    "html_entity": "AT&amp;T & <b>bold</b> &lt;",
    "backslash": "C:\\path\\ and trailing \\",
    "quotes": "\"double\" 'single' -- dash ... ellipsis",
    "unicode": "≈1 is ideal — naïve 🙂",
}
"""Descriptions that must render as exactly their own text, keyed by a short id."""


def row(
    name: str,
    *,
    line: int,
    path: str,
    kind: str = "gauge",
    unit: str = "",
    description: str = "A fixture series.",
    stability: str = "beta",
    logger_key: str | None = None,
    prefix: str | None = "train",
    deprecated: Deprecation | None = None,
) -> MetricRow:
    """A teed row when ``logger_key`` is given, otherwise a recorded one."""
    return MetricRow(
        section="teed" if logger_key is not None else "recorded",
        name=name,
        kind=kind,
        unit=unit,
        description=description,
        stability=stability,
        position=Position(path, line, 3),
        logger_key=logger_key,
        prefix=prefix if logger_key is not None else None,
        deprecated=deprecated,
    )


def _alpha() -> CatalogFile:
    path = "catalog/fixture_alpha.yaml"
    return CatalogFile(
        path=path,
        owner="examples.fixture_alpha",
        module="fixture_alpha",
        description="A well-behaved owner for the docs tests.",
        teed=(
            row(
                "rl.fixture.reward.mean",
                line=5,
                path=path,
                logger_key="reward",
                description="Mean rollout reward over the batch.",
                stability="stable",
            ),
            row(
                "rl.fixture.tokens",
                line=11,
                path=path,
                kind="counter",
                unit="{token}",
                logger_key="num_tokens",
                description=f"Tokens generated this step ({SEARCH_WORD}).",
            ),
            row(
                "rl.fixture.old_reward",
                line=18,
                path=path,
                logger_key="old_reward",
                prefix="",
                description="The reward before renaming.",
                deprecated=Deprecation(
                    since="0.2", replaced_by="rl.fixture.reward.mean", note="Same value."
                ),
            ),
        ),
        recorded=(
            row(
                "rl.fixture.batch.duration",
                line=26,
                path=path,
                kind="histogram",
                unit="s",
                description="Wall clock of one batched generate().",
                stability="alpha",
            ),
        ),
    )


def _hostile() -> CatalogFile:
    path = "catalog/fixture_hostile.yaml"
    rows = tuple(
        row(
            f"rl.fixture.hostile.{key}",
            line=4 + 6 * i,
            path=path,
            unit="{item}/s" if key == "pipe" else "",
            description=text,
            stability="development",
        )
        for i, (key, text) in enumerate(HOSTILE_DESCRIPTIONS.items())
    )
    deprecated = row(
        "rl.fixture.hostile.renamed",
        line=200,
        path=path,
        description="Moved to another owner.",
        deprecated=Deprecation(
            since="0.3 <b>", replaced_by="rl.fixture.tokens", note="Use the | other one."
        ),
    )
    return CatalogFile(
        path=path,
        owner="fixture-hostile <i>",
        module="fixture_hostile",
        description="Owner whose text tries to break out: <script>alert(2)</script> | `x`",
        teed=(),
        recorded=(*rows, deprecated),
    )


def fixture_catalog() -> Catalog:
    """Two owners: one ordinary, one whose YAML text is all injection attempts."""
    return Catalog((_hostile(), _alpha()))


def merged_catalog(base: Catalog | None) -> Catalog:
    """``base`` (the repo's real catalog, when it loads) plus the fixture owners."""
    extra = fixture_catalog().files
    return Catalog(extra if base is None else (*base.files, *extra))
