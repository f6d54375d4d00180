"""The generator: render the loaded catalog (modules, docs, dashboards, outputs), write it.

:mod:`codegen.generate.plan` is the one plan ``generate`` and ``check`` share; the
renderers and the transactional writer sit beside it, one module each.
Import from the modules themselves (``codegen.generate.plan``...): the package imports
nothing, so ``codegen.generate.manifest`` alone imports no Jinja.
"""

from __future__ import annotations

__all__: list[str] = []
