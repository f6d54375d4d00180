"""A run's configuration from the flat parameters a tracker logged (MLflow's params,
TensorBoard's hparams).

Trainers log their configuration to MLflow as params: Lightning's ``MLFlowLogger``
(``log_hyperparams``, which NeMo and NeMo-Aligner call with the whole Hydra config)
flattens it with ``/`` (``trainer/ppo/gradient_clip_val``) and logs ``str(value)``;
``mlflow.log_params`` and Hugging Face's ``MLflowCallback`` log flat keys the same way.
:func:`configuration` turns them back into the nested mapping a condition reads
(``config.trainer.ppo.gradient_clip_val > 0``): keys are split at ``/``, and each value
is read back from the text Python's ``str`` gave it (:func:`param_value`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "MAX_KEY_PARTS",
    "MAX_PARAMS",
    "MAX_PARAM_BYTES",
    "configuration",
    "nested",
    "param_value",
]

MAX_PARAMS: Final = 10_000
"""Most params read of one run (MLflow's own limit per ``log_batch`` call is 100)."""

MAX_PARAM_BYTES: Final = 64 * 1024
"""Most bytes of one param value read (MLflow 3 stores at most 6000 characters)."""

MAX_KEY_PARTS: Final = 32
"""Most ``/``-separated parts a key is nested by; a longer key stays whole (a hostile
``a/a/a/...`` cannot build a mapping thousands of levels deep)."""

_INT: Final = re.compile(r"[+-]?[0-9]+")
_FLOAT: Final = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WORDS: Final[dict[str, object]] = {
    "True": True,
    "true": True,
    "False": False,
    "false": False,
    "None": None,
    "null": None,
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
}


def param_value(text: str) -> object:
    """The value ``str(value)`` wrote: a bool, ``None``, an int, a float, else the text.

    ``"True"`` and ``"true"`` are ``True``, ``"None"`` and ``"null"`` are ``None``,
    ``"16"`` is ``16``, ``"9e-07"`` and ``"0.01"`` are floats (``nan`` and ``inf`` too);
    anything else (``"[0.9, 0.98]"``, ``"bf16"``, an integer of more digits than
    Python converts) stays the text.
    """
    stripped = text.strip()
    if stripped in _WORDS:
        return _WORDS[stripped]
    if _INT.fullmatch(stripped):
        try:
            return int(stripped)
        except ValueError:  # past Python's integer-digits limit: kept as the text logged
            return text
    if _FLOAT.fullmatch(stripped):
        return float(stripped)
    return text


def configuration(params: Iterable[tuple[str, str]]) -> dict[str, object]:
    """The nested configuration of ``(key, text)`` params: :func:`nested` of
    :func:`param_value` of each text."""
    return nested((key, param_value(text)) for key, text in params)


def nested(items: Iterable[tuple[str, object]]) -> dict[str, object]:
    """The nested configuration of flat ``(key, value)`` items, keys split at ``/``.

    ``trainer/ppo/gradient_clip_val = 1.0`` is ``{"trainer": {"ppo":
    {"gradient_clip_val": 1.0}}}``. A key with an empty part (``a//b``), or whose
    parts meet a value another key put there (``a/b`` beside ``a = 1``), or that has
    more than :data:`MAX_KEY_PARTS` parts, is kept whole at the top instead
    (``config["a/b"]`` reads it), unless a table holds that name: the first key (in
    sorted order) keeps its place.
    """
    found: dict[str, object] = {}
    for key, value in sorted(items, key=lambda item: item[0]):
        parts = key.split("/", MAX_KEY_PARTS)
        if len(parts) <= MAX_KEY_PARTS and all(parts):
            node: dict[str, object] = found
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    break
                node = child
            else:
                if parts[-1] not in node:
                    node[parts[-1]] = value
                    continue
        found.setdefault(key, value)
    return found
