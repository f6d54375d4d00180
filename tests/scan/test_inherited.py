"""Which receivers a bare scanned name skips: functions of numeric packages (``math.log``)."""

from __future__ import annotations

import pytest

from codegen.scan.numeric import module_function

Imports = dict[str, tuple[str, str | None, int]]


@pytest.mark.parametrize(
    ("imports", "receiver", "skipped"),
    [
        ({"math": ("math", None, 0)}, "math", True),
        ({"np": ("numpy", None, 0)}, "np", True),
        ({"torch": ("torch", None, 0)}, "torch.special", True),
        ({"jnp": ("jax", "numpy", 0)}, "jnp", True),
        ({"wandb": ("wandb", None, 0)}, "wandb", False),
        ({"monitors": ("pkg", "monitors", 0)}, "monitors", False),
        ({"math": ("", "math", 1)}, "math", False),  # the project's own module
        ({}, "self.logger", False),
        ({"math": ("math", None, 0)}, None, False),  # a bare call: log(...)
    ],
)
def test_a_bare_name_skips_only_numeric_packages_functions(
    imports: Imports, receiver: str | None, skipped: bool
) -> None:
    assert module_function(imports, receiver) is skipped
