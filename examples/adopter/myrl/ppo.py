"""The PPO loop's logging, as an owner: it imports its generated module.

Importing ``myrl.telemetry.generated.ppo`` declares the rows; the dict handed
to ``log_metrics`` is built from the generated ``*_KEY`` constants, so a key
renamed in the YAML fails ``mypy`` here instead of drifting.
"""

from __future__ import annotations

from myrl.telemetry.generated import ppo

__all__ = ["PREFIX", "step_metrics"]

PREFIX = ppo.VALUE_LOSS.prefix
"""The ``log_metrics`` prefix the PPO rows are teed under."""


def step_metrics(value_loss: float, clip_fraction: float, reward: float) -> dict[str, float]:
    """The metrics dict of one PPO step, keyed by the catalog's logger keys."""
    return {
        ppo.VALUE_LOSS_KEY: value_loss,
        ppo.PPO_CLIP_FRACTION_KEY: clip_fraction,
        ppo.PPO_REWARD_MEAN_KEY: reward,
    }
