"""Inline code in prose breaks only after ``.``, ``_`` and ``/``, as in the catalog tables.

Sphinx writes inline code (MyST backticks, ``:code:``, cross-reference
literals) as ``<code class="literal"><span class="pre">word</span> ...</code>``.
Themes such as furo let a long word there wrap anywhere (``overflow-wrap:
break-word`` on the article) and after every hyphen, so ``--dashboards-dir``
or ``validation-{rl.dataset}`` broke mid-word in the guides. This post-transform
splits each inline literal's text after ``.``, ``_`` and ``/`` and puts a
``<wbr>`` there; the stylesheet keeps each ``span.pre`` on one line, so those
points (and spaces) are the only places it can wrap. The text, and so the search
index and copy-paste, are unchanged.
"""

from __future__ import annotations

import re
from typing import Any, Final

from docutils import nodes  # type: ignore[import-untyped]
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["BreakAfterSeparators", "split_points"]

_BREAK_AFTER: Final = re.compile(r"(?<=[^\s._/])[._/]+(?=[^\s._/])")
"""A run of separators after a word character and before the next one (not before a space)."""


def split_points(text: str) -> list[str]:
    """``text`` cut after each run of ``.``, ``_`` or ``/`` between two word characters.

    A leading run (``__init__``, ``../``) stays with the word it starts, and a
    separator before a space leaves the break to the space.

    >>> split_points("metric_catalog.generated/x")
    ['metric_', 'catalog.', 'generated/', 'x']
    """
    parts = []
    start = 0
    for match in _BREAK_AFTER.finditer(text):
        parts.append(text[start : match.end()])
        start = match.end()
    parts.append(text[start:])
    return parts


class BreakAfterSeparators(SphinxPostTransform):
    """Add ``<wbr>`` after ``.``, ``_`` and ``/`` inside inline literals (HTML builders only)."""

    default_priority = 900
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        """Split the text of every inline literal that is not a keyboard key or highlighted."""
        for literal in self.document.findall(nodes.literal):
            classes = literal["classes"]
            if "kbd" in classes or ("code" in classes and literal.get("language")):
                continue
            for child in list(literal.children):
                if not isinstance(child, nodes.Text):
                    continue
                parts = split_points(str(child))
                if len(parts) == 1:  # no break point
                    continue
                replacement: list[nodes.Node] = []
                for index, part in enumerate(parts):
                    if index:
                        replacement.append(nodes.raw("", "<wbr>", format="html"))
                    replacement.append(nodes.Text(part))
                literal.replace(child, replacement)
