"""The names each generated output binds, and the one check that none collide.

Every output that writes Python (:mod:`.python`'s owner modules, :mod:`.wandb`'s
definitions), and the docs pages (:mod:`.docs`), list what they bind as :class:`Claim`
rows: their own names (imports, tables, functions, the index page) and the names the
catalog makes them generate (a row's constant, a loop's ``define_<loop>``, a module's
page), plus the module file each writes into the package. The outputs render from the
same lists, and :func:`name_clashes` (run by ``validate``, ``lint`` and ``generate``)
reads them, so a generated name can never silently replace another: a loop named
``loops`` would rebind the module's own ``LOOPS`` table, a loop named ``loop`` its
``define_loop`` function, an attribute ``final`` the imported ``Final``, a module
``index`` the docs index page.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ..catalog.diagnostics import Diagnostic, Position, Severity

__all__ = ["DOCS_SITE", "PACKAGE", "Claim", "name_clashes", "own_names"]

PACKAGE: Final = ""
"""The :attr:`Claim.module` of a module file itself: the generated package's namespace."""

DOCS_SITE: Final = "<docs site>"
"""The :attr:`Claim.module` of a docs page (``<module>.md`` beside ``index.md``)."""

_CODE: Final = "GENERATED_NAME_CLASH"


@dataclass(frozen=True, slots=True)
class Claim:
    """One name a generated module binds at its top level (or a module in the package)."""

    module: str
    """The generated module (``grpo``, ``wandb_metrics``); :data:`PACKAGE` for a module file."""
    name: str
    """The name bound (``REWARD_MEAN``, ``define_grpo``; the module's name for a file)."""
    origin: str
    """What generates it, as a message names it (``series 'rl.reward.mean'``); for the
    output's own names, what the name is (``its table of loops``)."""
    position: Position | None = None
    """Where the catalog writes the origin; ``None``: a name the output itself defines."""
    exported: bool = True
    """Whether the module lists the name in ``__all__`` (imports are not)."""


def own_names(module: str, names: Iterable[tuple[str, str]], *, exported: bool) -> list[Claim]:
    """Claims of names ``module`` defines itself, each ``(name, what it is)``."""
    return [Claim(module, name, what, None, exported) for name, what in names]


def _where(module: str) -> str:
    if module == PACKAGE:
        return "the generated package"
    if module == DOCS_SITE:
        return "the docs site's pages"
    return f"generated module {module!r}"


def _invalid(claim: Claim) -> Diagnostic | None:
    """A finding when the claimed name is no Python name (``None`` from an attribute
    ``none``), else ``None``."""
    if claim.module == DOCS_SITE or (
        claim.name.isidentifier() and not keyword.iskeyword(claim.name)
    ):
        return None
    message = (
        f"{claim.origin} would generate {claim.name!r} in {_where(claim.module)}, which "
        "Python cannot bind (a keyword or no identifier); rename it."
    )
    return Diagnostic(_CODE, Severity.ERROR, message, claim.position)


def name_clashes(claims: Iterable[Claim]) -> list[Diagnostic]:
    """A ``GENERATED_NAME_CLASH`` per claim whose name its module already binds, or that is
    no Python name, at the later claim's position. The outputs' own names come first
    (whichever output listed them), then the catalog's in the order given."""
    found: list[Diagnostic] = []
    first: dict[tuple[str, str], Claim] = {}
    for claim in sorted(claims, key=lambda claim: claim.position is not None):
        if claim.position is not None:
            invalid = _invalid(claim)
            if invalid is not None:
                found.append(invalid)
                continue
        slot = (claim.module, claim.name)
        other = first.get(slot)
        if other is None:
            first[slot] = claim
            continue
        if claim.position is None:
            # Two outputs' own names meet only when the modules share a name, which the
            # package's claims (a module file each) report once, at the catalog's module.
            continue
        if other.position is None:
            message = (
                f"{claim.origin} would generate {claim.name}, which {_where(claim.module)} "
                f"already uses for {other.origin}; rename it."
            )
        else:
            message = (
                f"{claim.origin} would generate {claim.name}, which {other.origin} (at "
                f"{other.position}) generates too in {_where(claim.module)}; rename one of them."
            )
        found.append(Diagnostic(_CODE, Severity.ERROR, message, claim.position or other.position))
    return found
