"""Judges: one module per finding family.

- :mod:`.values`: ``non_scalar`` and ``non_finite`` (what the tee can export);
- :mod:`.counters`: ``counter_decrease``;
- :mod:`.ranges`: ``out_of_range`` and ``not_integer`` (a value its row's range refuses),
  ``unit_suspect`` (a share by its name in unit ``1`` logged above 1, :mod:`.shares`);
- :mod:`.attributes`: ``attribute_value``, ``undeclared_attribute``,
  ``missing_attribute`` and ``attribute_budget`` (keys, values and budgets);
- :mod:`.loops`: ``unknown_loop``, ``loop_conflict`` and the run's loop;
- :mod:`.presence`: ``missing`` and every row's presence state.

``undeclared`` and ``undeclared_series`` come from matching itself
(:mod:`codegen.catalog.matching`). The checker
(:mod:`codegen.live_check.checker`) routes each record to them.
"""

__all__: list[str] = []
