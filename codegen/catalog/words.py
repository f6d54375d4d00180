"""Word tables shared by the naming lints and ``metric-catalog infer``: one source.

The lints refuse a name that spells a unit or a metric type, or ends with a suffix
Prometheus reserves; ``infer`` drafts names that pass them, and reads units, kinds,
statistics and bookkeeping keys from the words real trainers put in their keys
(OpenRLHF, verl, prime-rl, NeMo-RL: ``perf/throughput``, ``perf/mfu``,
``timing_s/gen``, ``system/ckpt_disk_free_gib``, ``entropy/all/mean``).
Both read the tables here, so a word added for one is known to the other.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

from metric_catalog.series_rules import PREFIX_GLUE

__all__ = [
    "ANNOTATIONS",
    "BOOKKEEPING_KEYS",
    "CALL_COUNTER_KEYS",
    "CAMEL_BOUNDARY",
    "CONTAINER_WORDS",
    "COUNT_WORDS",
    "DURATION_WORDS",
    "END_MARKER_WORDS",
    "EPISODE_WORDS",
    "ESTIMATOR_WORDS",
    "FLOP_PREFIXES",
    "INDICATOR_WORDS",
    "MEMORY_UNITS",
    "MEMORY_WORDS",
    "NON_FINITE_WORDS",
    "NOT_SHARE_WORDS",
    "OUTCOME_WORDS",
    "PERCENT_WORDS",
    "PROMETHEUS_SUFFIXES",
    "QUOTIENT_WORDS",
    "RATIO_WORDS",
    "SECOND_WORDS",
    "SHARE_WORDS",
    "SPLIT_GLUES",
    "STATISTICS",
    "STEP_AXIS_KEYS",
    "STEP_AXIS_WORDS",
    "STEP_RATE_WORDS",
    "THROUGHPUT_WORDS",
    "TIMER_WORDS",
    "TIME_WORDS",
    "TOTAL_WORDS",
    "TRAINER_BOOKKEEPING_KEYS",
    "TYPE_WORDS",
    "UNIT_SPELLINGS",
    "UNIT_WORDS",
    "UTILIZATION_ACRONYM",
    "UTILIZATION_WORDS",
    "key_words",
    "share_word",
    "table",
]


def table(text: str) -> frozenset[str]:
    """A word table written as one space-separated string (keeps long tables compact)."""
    return frozenset(text.split())


CAMEL_BOUNDARY: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
"""Word boundaries inside camelCase: "policyEntropy", "HTTPServer", "gpu2Util"."""

_NOT_WORD: Final = re.compile(r"[^a-z0-9]+")


def key_words(text: str) -> list[str]:
    """Lowercase words of a logged key or segment, split on any punctuation (``/``, ``_``,
    ``-``, ``.``, ``(``...) and at camelCase boundaries (``perf/tokPerSec`` -> perf, tok,
    per, sec). The one tokeniser ``infer`` reads units, kinds and step axes with."""
    return list(_key_words(text))


@functools.lru_cache(maxsize=1 << 16)
def _key_words(text: str) -> tuple[str, ...]:
    # infer reads each key's words many times (units, families, names): once per key here.
    spaced = CAMEL_BOUNDARY.sub(" ", text).lower()
    return tuple(word for word in _NOT_WORD.split(spaced) if word)


UNIT_WORDS: Final = table(
    "ms msec millis millisecond milliseconds s sec secs second seconds us usec "
    "microseconds ns nanoseconds mins minutes hours hrs bytes kb mb gb tb kib mib gib tib "
    "kilobytes megabytes gigabytes mebibytes gibibytes percent pct"
)
"""Name components that spell a unit (the unit belongs in ``unit``). Not "min" (minimum)."""


UNIT_SPELLINGS: Final[dict[str, str]] = {
    **dict.fromkeys(table("sec secs second seconds"), "s"),
    **dict.fromkeys(table("msec msecs millis millisecond milliseconds"), "ms"),
    **dict.fromkeys(table("usec usecs microsecond microseconds"), "us"),
    **dict.fromkeys(table("nsec nsecs nanosecond nanoseconds"), "ns"),
    **dict.fromkeys(table("mins minute minutes"), "min"),
    **dict.fromkeys(table("hr hrs hour hours"), "h"),
    **dict.fromkeys(table("day days"), "d"),
    **dict.fromkeys(table("b B byte bytes"), "By"),
    **dict.fromkeys(table("KB kB KBy"), "kBy"),
    **{f"{p}B": f"{p}By" for p in table("M G T Ki Mi Gi Ti")},
    **dict.fromkeys(table("% percent pct"), "%"),
    **dict.fromkeys(table("ratio ratios fraction"), "1"),
    **dict.fromkeys(table("bits"), "bit"),
    **{f"{p}b": f"{p}bit" for p in table("k M G Ki Mi Gi")},
    "Kbit": "kbit",
}
"""Common non-UCUM spellings -> the UCUM unit of the same quantity: what the unit lint
suggests for a row's ``unit`` and the time words ``infer`` reads in keys (prefixed
units such as ms and GiBy are UCUM: the code may log them and the tee scales to s, By)."""

TYPE_WORDS: Final = table("counter gauge histogram summary")
"""Name components that spell a metric type."""

PROMETHEUS_SUFFIXES: Final = ("bucket", "sum", "count", "total")
"""Last name components Prometheus reserves (only a counter may end in ``total``)."""

DURATION_WORDS: Final = table("duration latency elapsed")
"""Words that make a name a duration, exported in seconds."""

STATISTICS: Final = table(
    "mean avg average max min std stddev var median sum last first p50 p90 p95 p99 p999"
)
"""Statistics of one quantity: the segments a family varies over (``loss/{statistic}``)."""

COUNT_WORDS: Final = table(
    "num count tokens toks samples seqs sequences turns steps episodes trajectories"
)
"""Words of a count (a per-step integer is a counter)."""

TOTAL_WORDS: Final = table("total cumulative consumed global overall")
"""Words of a running total."""

RATIO_WORDS: Final = table(
    "ratio rate fraction frac accuracy acc utilization utilisation clipfrac share"
)
"""Words of a dimensionless fraction (unit ``1``, at most 1)."""

SHARE_WORDS: Final = table(
    "ratio fraction frac accuracy acc utilization utilisation util mfu hfu clipfrac share rate"
)
"""Words of a share (unit ``1``, in [0, 1]) among a name's last two words: ``perf/mfu``,
``clip_frac``, ``eval/accuracy``, ``stop_rate``. ``RANGE_SUGGESTED`` asks such a row for a
range; live-check judges one that declares none against [0, 1] (``unit_suspect``).
Plurals (``clip_fractions``, a count of them) are not shares."""

OUTCOME_WORDS: Final = table("success successes succeeded pass passed correct solved win wins")
"""Words of a 0/1 outcome (a sample passed, an answer was correct): logged as a mean over a
batch, a share (unit ``1``) when every value lies in [0, 1]; ``num_correct`` counts them."""

NOT_SHARE_WORDS: Final = table("learning lr")
"""Words that make a ``rate`` no share: a learning rate."""

QUOTIENT_WORDS: Final = table("importance kl prob probs likelihood compression")
"""Words of a ratio that is a quotient and may exceed 1 (importance or probability ratio)."""

INDICATOR_WORDS: Final = table("is has did")
"""First words of a 0/1 indicator whose mean is a fraction (``is_masked/mean``: unit ``1``)."""

PERCENT_WORDS: Final = table("pct percent percentage")
"""Words of a percentage (unit ``%``)."""

UTILIZATION_WORDS: Final = table("mfu hfu util utilization utilisation")
"""Model/hardware FLOPs utilization: ``%`` when the values exceed 1, else ``1``."""

UTILIZATION_ACRONYM: Final = re.compile(r"[a-z]{1,2}[fb]u")
"""The acronyms of a utilization: model or hardware FLOPs (``mfu``, ``hfu``) or memory
bandwidth (``mbu``) utilization, ``%`` or ``1`` by the values as :data:`UTILIZATION_WORDS`
(``gpu``, ``cpu`` name no utilization: the letter before ``u`` is ``f`` or ``b``)."""

THROUGHPUT_WORDS: Final = table("throughput tps tokens_per_sec tokens_per_second")
"""Words of a token rate (``{token}/s``): prime-rl's and verl's ``perf/throughput``."""

STEP_RATE_WORDS: Final = table("fps sps")
"""Words of an environment step rate (``{step}/s``): RL loggers' ``fps`` (frames, one per
environment step) and ``sps`` (steps per second), in any case (``charts/SPS``)."""

MEMORY_WORDS: Final = table("memory mem vram")
"""Words of a memory amount; the unit comes from a unit word, else from the values'
magnitude (GiB, MiB past a few thousand, bytes past ten million: see infer)."""

CONTAINER_WORDS: Final = table("buffer dataset queue list str string batch data cache pool")
"""Words of a container: its ``len`` is a count of items, not of tokens
(``pi_buffer_len``, ``prompt_dataset_len``; ``response_len`` counts tokens)."""

NON_FINITE_WORDS: Final = table("nan nans inf infs")
"""Last words of a count of non-finite values (``grad_norm_nan``): no unit of the quantity."""

MEMORY_UNITS: Final[dict[str, str]] = {
    "gb": "GBy",
    "gib": "GiBy",
    "mb": "MBy",
    "mib": "MiBy",
    "kb": "kBy",
    "kib": "KiBy",
    "tb": "TBy",
    "tib": "TiBy",
    "bytes": "By",
}
"""A key's memory unit word -> its UCUM unit (``_gb`` is decimal, ``_gib`` binary)."""

SECOND_WORDS: Final = table("s sec secs second seconds")
"""Words of the second, as the divisor of a rate (``tok_per_s``, ``tokens_per_sec``)."""

FLOP_PREFIXES: Final[dict[str, str]] = {
    "flops": "",
    "kflops": "10*3",
    "mflops": "10*6",
    "gflops": "10*9",
    "tflops": "10*12",
    "pflops": "10*15",
}
"""A key's FLOP-rate word -> the UCUM power of ten before ``{FLOP}/s`` (``tflops`` ->
``10*12{FLOP}/s``, as torchtitan's row declares it; the tee scales the power away)."""

STEP_AXIS_WORDS: Final = table("step global_step iteration iter global_iteration")
"""Last segments of a key that may carry the step (``train/step``, ``rollout/global_step``,
``_step``): a step axis when its values are whole, never negative and never decreasing.
A qualified step (``query_step``, ``policy_sgd_step``) counts something else."""

TIME_WORDS: Final = table("s sec secs seconds time duration latency elapsed runtime")
"""Last words of a duration in seconds."""

TIMER_WORDS: Final = table("timing time timer timers duration latency elapsed elapse")
"""Context words of timers (``timing_s/``, ``timers/``, ``time/``): seconds."""

ANNOTATIONS: Final[dict[str, str]] = {
    "tokens": "{token}",
    "toks": "{token}",
    "tok": "{token}",
    "token": "{token}",
    "length": "{token}",
    "lengths": "{token}",
    "len": "{token}",
    "samples": "{sample}",
    "sample": "{sample}",
    "seqs": "{sequence}",
    "sequences": "{sequence}",
    "turns": "{turn}",
    "step": "{step}",
    "steps": "{step}",
    "epoch": "{epoch}",
    "epochs": "{epoch}",
}
"""Words of a count -> its UCUM annotation (``{token}``)."""

EPISODE_WORDS: Final = table("episode episodes episodic ep eps trajectory trajectories traj")
"""Words of an episode: the length of one (``ep_len_mean``, ``episodic_length``) counts the
environment steps it took (``{step}``), not tokens as a sequence's length does."""

ESTIMATOR_WORDS: Final = table(
    "kl chi2 entropy ent ratio loss logprob logprobs logp nll ppl perplexity advantage adv"
)
"""Words of a statistic estimated per token or per sequence: a level word after one
(``kl_token``, ``chi2_token_mean``) says at what level, and the estimator sets the unit."""

END_MARKER_WORDS: Final = table("stop eos eot")
"""Words of a token that ends a sequence: a count of them (``num_stop_tokens``) counts the
sequences that ended (``{sequence}``), not tokens of text."""

STEP_AXIS_KEYS: Final = table(
    "step _step global_step train/global_step eval/global_step training/global_step "
    "trainer/global_step epoch"
)
"""Keys that carry the step a record was logged at: a step axis, not a metric (``epoch``:
the fractional epoch a Hugging Face ``Trainer`` adds to every record it logs)."""

CALL_COUNTER_KEYS: Final = table("_step")
"""Step keys a tracker writes by counting its own log calls (W&B's ``_step``): a run's
step axis only when it logs no other (``train/step`` is the training step)."""

BOOKKEEPING_KEYS: Final = table("time _timestamp timestamp _runtime wall_time walltime")
"""Keys a logger adds for its own bookkeeping (prime-rl's file logger writes ``time``)."""

TRAINER_BOOKKEEPING_KEYS: Final = table("total_flos")
"""Keys a training framework logs from its own state, whatever their values: a Hugging
Face ``Trainer``'s ``total_flos`` (its FLOP estimate, logged once when training ends)."""

SPLIT_GLUES: Final = tuple(
    f"{split}{PREFIX_GLUE}" for split in ("eval", "train", "test", "validation", "val")
)
"""Prefixes a framework glues to a key for the pass that logged it: Hugging Face's
``metric_key_prefix`` (``eval_loss``, ``train_runtime``), Keras's ``val_``."""


def share_word(words: Sequence[str], *, quotients: bool = True) -> str | None:
    """The share word (:data:`SHARE_WORDS`) among a name's last two ``words``, else ``None``.

    A learning rate is no share; with ``quotients=False`` neither is a ratio that may
    exceed 1 by design (``importance_ratio``): live-check only judges what is surely
    a share, while lint suggests a range for every ratio.
    """
    if not words or NOT_SHARE_WORDS.intersection(words):
        return None
    if not quotients and QUOTIENT_WORDS.intersection(words):
        return None
    hits = sorted(SHARE_WORDS.intersection(words[-2:]))
    return hits[0] if hits else None
