"""Generated registration modules, one per catalog owner.

This package deliberately imports none of them: an owner declares its rows by
importing its own module, so an owner that never runs (PPO in a GRPO run)
declares nothing.
"""

__all__: list[str] = []
