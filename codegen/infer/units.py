"""Units for ``infer``: read from the whole key and its values together.

A key is cut into words (:func:`~codegen.catalog.words.key_words`: ``/``, ``_``, ``-``,
camelCase). The words of its *subject* (the last segment that is not a statistic:
``clip_ratio`` of ``actor/clip_ratio/mean``) are read first, then every word of the key
(``timing/``, ``time/``, ``memory_gb/``: a context sets the unit of what it holds). Each
cue proposes a unit that the values must allow, else it is vetoed: a share lies in
[0, 1], a percentage in [0, 100], a duration or an amount is never negative. The word
tables are the lints' (:mod:`codegen.catalog.words`), so a drafted unit and name pass them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from ..catalog.words import (
    ANNOTATIONS,
    CONTAINER_WORDS,
    COUNT_WORDS,
    DURATION_WORDS,
    END_MARKER_WORDS,
    EPISODE_WORDS,
    ESTIMATOR_WORDS,
    FLOP_PREFIXES,
    INDICATOR_WORDS,
    MEMORY_UNITS,
    MEMORY_WORDS,
    NON_FINITE_WORDS,
    NOT_SHARE_WORDS,
    OUTCOME_WORDS,
    PERCENT_WORDS,
    QUOTIENT_WORDS,
    RATIO_WORDS,
    SECOND_WORDS,
    SHARE_WORDS,
    STATISTICS,
    STEP_RATE_WORDS,
    THROUGHPUT_WORDS,
    TIME_WORDS,
    TIMER_WORDS,
    UNIT_SPELLINGS,
    UTILIZATION_ACRONYM,
    UTILIZATION_WORDS,
    key_words,
    table,
)

__all__ = ["Values", "key_unit", "subject_words"]


@dataclass(frozen=True, slots=True)
class Values:
    """What the values of a key showed: their bounds (``None``: no number was logged)."""

    low: float | None = None
    high: float | None = None
    whole: bool = False
    """The key is one of siblings whose values sum to 1 in every record: a share."""

    @property
    def share(self) -> bool:
        """Every value in [0, 1] (or none known)."""
        return self.low is None or self.high is None or (self.low >= 0 and self.high <= 1)

    @property
    def percent(self) -> bool:
        """Every value in [0, 100], and one above 1 (a share would not reach it)."""
        low, high = self.low, self.high
        return low is not None and high is not None and low >= 0 and 1 < high <= 100

    @property
    def nonnegative(self) -> bool:
        """No value below 0 (or none known)."""
        return self.low is None or self.low >= 0


_COUNTED: Final = COUNT_WORDS - {"tokens", "toks", "samples", "seqs", "sequences", "turns"}
"""Words that make a key a count of something (``time/request_count``): never a duration."""
_FRACTION_WORDS: Final = table("rate fraction frac accuracy acc clipfrac share")
"""Share words a percentage is also written with (a ``rate`` of 37.5 is a percentage)."""
_AT_K: Final = re.compile(r"[A-Za-z]@\d+\b")
"""An at-k metric (``pass@4``, ``recall@10``): a share when its values lie in [0, 1]."""
_SAME_UNIT: Final = STATISTICS | table("diff delta")
"""Statistics and differences of a quantity: in its unit (``response_length/diff``)."""
_TIMER_STEMS: Final = ("time", "timing", "timer", "latency", "duration", "elapsed")
"""Words a context compound may start with (``timeperf/``)."""
_TIME_UNITS: Final[dict[str, str]] = {
    **{w: u for w, u in UNIT_SPELLINGS.items() if u in {"s", "ms", "us", "ns", "min", "h"}},
    **dict.fromkeys(TIME_WORDS | TIMER_WORDS | DURATION_WORDS, "s"),
    **{unit: unit for unit in ("ms", "us", "ns")},
}
"""Words of a duration -> its unit: the lint's spellings (``msec`` -> ms, ``mins`` -> min),
timers (``_s``, ``_time``, ``timing/``, ``latency``: seconds)."""


def subject_words(segments: Sequence[str]) -> list[str]:
    """Words of the segment naming the quantity: the last one not a statistic or a difference.

    ``kl_ent_ratio/mean`` measures ``kl_ent_ratio``; ``entropy/{env}/{statistic}`` (its
    literal segments) measures ``entropy``.
    """
    return key_words(_subject_segment(segments))


def _subject_segment(segments: Sequence[str]) -> str:
    """The segment :func:`subject_words` reads (``""``: none)."""
    for segment in reversed(segments):
        if not _statistic_segment(segment):
            return segment
    return ""


@functools.lru_cache(maxsize=1 << 16)
def _statistic_segment(segment: str) -> bool:
    """:func:`_statistic` of a segment's words (infer reads each key's unit many times)."""
    words = key_words(segment)
    return not words or _statistic(words)


def _statistic(words: Sequence[str]) -> bool:
    """Whether a segment's words name a statistic of the quantity before it: statistics and
    differences (``max``, ``minmax_diff``), qualified by a participle (``balanced_max``)."""
    return all(w in _SAME_UNIT or _participle(w) or _statistics_compound(w) for w in words) and (
        not all(_participle(w) for w in words)
    )


def _statistics_compound(word: str) -> bool:
    """A word of two statistics run together (``minmax``, ``maxmin``)."""
    return any(word[:i] in _SAME_UNIT and word[i:] in _SAME_UNIT for i in range(2, len(word) - 1))


@functools.lru_cache(maxsize=1 << 16)
def _head(segment: str) -> str:
    """The word a segment is about: its last but a statistic (``successes_mean``)."""
    words = key_words(segment)
    while len(words) > 1 and words[-1] in _SAME_UNIT:
        words.pop()
    return words[-1] if words else ""


def key_unit(prefix: str, segments: Sequence[str], values: Values | None = None) -> str:
    """The unit a key's words and values agree on (``""``: dimensionless or unknown).

    The subject's words are read from its last word back, as an English compound names
    its kind last (``wait_time_ratio`` is a ratio, ``ratio_wait_time`` a time); a count
    word (``request_count``) ends the reading: a count under ``time/`` is no duration.
    Then the context's words (``timing/step``, ``clip_ratio/high``), then the count the
    subject names (``response_length`` -> ``{token}``).
    """
    values = values or Values()
    segment = _subject_segment(segments)
    spelled = _spelled(segment, values)
    if spelled is not None:
        return spelled  # ``pct_time_weight_sync (%)``: the key writes its unit out
    if values.whole and values.high is not None and values.share:
        return "1"  # error_cat/correct, error_cat/wrong: parts of one whole, summing to 1
    subject = key_words(segment)
    at_k = any(_AT_K.search(s) for s in segments[-1:]) or _at_k(subject)
    if values.high is not None and values.share and at_k:
        return "1"  # pass@k, pass_at_4, recall@5: the share of the top k, in [0, 1]
    if subject and subject[-1] in NON_FINITE_WORDS:
        return ""  # grad_norm_nan counts the non-finite values, not in the norm's unit
    # A statistic of many (no_eos_ratios/avg, ratios_mean) is one of them: a plural share
    # word is a share; alone (clip_fractions) it may count them.
    many = subject[-1:] != key_words(segments[-1])[-1:] if segments else False
    while len(subject) > 1 and subject[-1] in _SAME_UNIT:
        subject, many = subject[:-1], True
    if len(subject) == 1 and _participle(subject[0]) and _varying_share(values):
        return "1"  # rollout/truncated: a state of each sample, its mean a share of them
    if subject and subject[0] in PERCENT_WORDS:
        return _scaled(values, "%")  # pct_time_waiting: a percentage of time, not a time
    if "per" in subject:
        head = subject[: subject.index("per")]
        pairs = pairwise(subject)
        if any(a == "per" and b in SECOND_WORDS for a, b in pairs):
            return _rate(head)  # tok_per_s, tokens_per_gpu_per_sec
        subject = head  # "tokens per sample" counts tokens; "time per token (ms)" is a time
    # An outcome word says "share" only as the head of its segment (``val_correct/...``,
    # ``successes_mean``), not as a qualifier (``correct_answer_reward``: a reward).
    heads = frozenset(_head(part) for part in (prefix, *segments))
    found = _read(subject, values, many=many, heads=heads)
    if found is None and not _COUNTED.intersection(subject):
        context = [w for part in (prefix, *segments) for w in _compounds(key_words(part))]
        found = _read(context, values, many=many, heads=heads)
    if found is not None:
        return found
    return _annotation(subject, _word_before(prefix, segments), values)


def _word_before(prefix: str, segments: Sequence[str]) -> str:
    """The last word before the subject's segment (``episode`` of ``episode/length``): what
    a one-word subject qualifies."""
    parts = [prefix, *segments]
    for index in range(len(parts) - 1, -1, -1):
        if not _statistic_segment(parts[index]):
            earlier = [w for part in parts[:index] for w in key_words(part)]
            return earlier[-1] if earlier else ""
    return ""


_SPELLED: Final = re.compile(r"[(\[]\s*([A-Za-z%]{1,6})\s*[)\]]\s*$")
"""A unit written out after a name, in parentheses or brackets: ``weight_sync (s)``,
``pct_time_waiting (%)``, ``peak_memory [GiB]``."""
_SPELLED_UNITS: Final = frozenset(UNIT_SPELLINGS.values())
"""What a written-out unit may be: a spelling the unit lint knows (``sec``, ``GB``) or
the UCUM unit it stands for (``s``, ``ms``, ``%``, ``GiBy``)."""


def _spelled(segment: str, values: Values) -> str | None:
    """The unit a segment writes out (``time (s)``), if the values allow it, else ``None``."""
    found = _SPELLED.search(segment)
    if found is None:
        return None
    text = found.group(1)
    unit = UNIT_SPELLINGS.get(text) or (text if text in _SPELLED_UNITS else None)
    if unit is None or not values.nonnegative:
        return None  # an unknown word, or a negative amount: read the name as usual
    return _scaled(values, "%") if unit == "%" else unit


def _varying_share(values: Values) -> bool:
    """Values that vary within [0, 1]: the mean of a 0/1 state over a batch (a constant
    1.0 is an event marker's average, not a share)."""
    low, high = values.low, values.high
    return low is not None and high is not None and 0 <= low < high <= 1


def _at_k(words: Sequence[str]) -> bool:
    """An at-k metric written in words (``pass_at_4``, ``pass_at_4_unbiased``): a word, then
    ``at`` and a number."""
    return any(
        a == "at" and b.isdigit() and index > 0 for index, (a, b) in enumerate(pairwise(words))
    )


def _scaled(values: Values, named: str) -> str:
    """A percentage or utilization by its name: the values say which scale the code logs.

    Past 1 and within 100 it is ``%``; within [0, 1] (one value above 0) a share, ``1``
    (``filtered_prompts_pct`` logged as 0.2); beyond 100 or negative neither, ``""``.
    With no values (or only zeros) the name's own scale, ``named``, stands.
    """
    low, high = values.low, values.high
    if low is None or high is None or high == 0:
        return named
    if low < 0 or high > 100:
        return ""
    return "%" if high > 1 else "1"


def _compounds(words: Sequence[str]) -> list[str]:
    """Context words with the timer word a compound starts with (``timeperf`` -> timeperf,
    time): a section named for timings holds durations."""
    out: list[str] = []
    for word in words:
        out.append(word)
        out.extend(cue for cue in _TIMER_STEMS if word.startswith(cue) and word != cue)
    return out


def _read(
    words: Sequence[str],
    values: Values,
    *,
    many: bool = False,
    heads: frozenset[str] = frozenset(),
) -> str | None:
    """The unit of the last word of ``words`` that names one, else ``None`` (``many``: a
    statistic of many values, whose plural share word is a share; ``heads``: the words
    the key's segments are about, the only outcome words read)."""
    for index in range(len(words) - 1, -1, -1):
        word = words[index]
        if word in _COUNTED:
            return None
        if word in OUTCOME_WORDS and (word not in heads or _COUNTED.intersection(words)):
            continue  # num_correct counts the outcomes; correct_answer_reward is a reward
        found = _unit_of(word, values)
        if found is None and many and word.endswith("s") and word[:-1] in RATIO_WORDS:
            found = _SHARE
        if found is None and index == 0 and word in INDICATOR_WORDS:
            found = _share(words, values)  # is_truncated: a 0/1 flag, its mean a share
        if found == _SHARE:
            return _share(words, values)
        if found == "{token}/s" and "samples" in words:
            return "{sample}/s"  # samples_throughput
        if found is not None:
            return found
    return None


_SHARE: Final = "\x00share"
"""What :func:`_unit_of` says of a share word: the whole name and the values decide."""


def _unit_of(word: str, values: Values) -> str | None:
    """The unit one word names (``_SHARE`` for a share word), given what the values allow."""
    if word in FLOP_PREFIXES:
        return f"{FLOP_PREFIXES[word]}{{FLOP}}/s"
    if word in THROUGHPUT_WORDS:
        return "{token}/s"
    if word in STEP_RATE_WORDS and values.nonnegative:
        return "{step}/s"  # charts/SPS, time/fps: environment steps (frames) per second
    if (word in UTILIZATION_WORDS or UTILIZATION_ACRONYM.fullmatch(word)) and values.nonnegative:
        # prime-rl logs mfu in percent, others as a share; past 100 it is neither.
        return _scaled(values, "1")
    if word in PERCENT_WORDS:
        return _scaled(values, "%")  # a percentage lies in [0, 100]; in [0, 1], a share
    if word in OUTCOME_WORDS:
        # A mean of 0/1 outcomes (passed, correct) is a share; else it says nothing.
        return "1" if values.high is not None and values.share else None
    if word in MEMORY_UNITS and values.nonnegative:
        return MEMORY_UNITS[word]
    if word in MEMORY_WORDS and values.nonnegative:
        return _memory(values)
    if word in RATIO_WORDS or word in SHARE_WORDS:
        return _SHARE
    if not values.nonnegative:
        return None  # a duration is never negative
    return _TIME_UNITS.get(word)


def _share(words: Sequence[str], values: Values) -> str:
    """``"1"`` for a share whose values lie in [0, 1], ``"%"`` for one written in percent,
    ``""`` for a quotient (an importance ratio: values around 1, past it)."""
    if NOT_SHARE_WORDS.intersection(words):
        return ""  # a learning rate is no share
    if list(words) == ["ratio"]:
        return ""  # a bare ratio names nothing it is a share of: PPO's probability ratio
    quotient = QUOTIENT_WORDS.intersection(words) or (words[0] == "is" and "ratio" in words)
    if quotient and (values.high is None or values.high > 1):
        return ""  # importance_ratio, is_ratio: a quotient around 1, not a share
    if values.share:
        return "1"
    if values.percent and _FRACTION_WORDS.intersection(words):
        return "%"
    return ""  # a ratio beyond 1 is a plain quotient, dimensionless


def _rate(head: Sequence[str]) -> str:
    """The unit of ``<head> per second``: ``{token}/s``, ``10*12{FLOP}/s``, else ``1/s``."""
    for word in reversed(head):
        if word in FLOP_PREFIXES:
            return f"{FLOP_PREFIXES[word]}{{FLOP}}/s"
        if word in ANNOTATIONS:
            return f"{ANNOTATIONS[word]}/s"
    return "1/s"


def _annotation(subject: Sequence[str], before: str = "", values: Values | None = None) -> str:
    """The count a subject's head word names (``response_length`` -> ``{token}``), else
    ``""``: ``sample_staleness`` measures staleness, not samples; ``buffer_len`` counts
    items.

    The head is the last word but a participle after it (``sequence_lengths_solved``: the
    lengths of solved ones); a compound ending in a length word (``seqlen``) is a length;
    a count of end markers (``num_stop_tokens``) counts the sequences that ended. The word
    the head qualifies is the one before it (``before``, the key's previous word, for a
    one-word subject): an episode's length counts environment steps (``ep_len_mean``,
    ``episode/length``), and a level word after an estimator (``kl_token``) names no count.
    Gymnasium's episode statistics (``episode/l``, ``episode/t_mean``) are one letter each.
    """
    words = list(subject)
    while len(words) > 1 and _participle(words[-1]):
        words.pop()
    if not words or (len(words) > 1 and words[-2] in CONTAINER_WORDS):
        return ""
    head = words[-1]
    found = ANNOTATIONS.get(head) or next(
        (
            ANNOTATIONS[end]
            for end in _LENGTH_ENDINGS
            if head.endswith(end) and len(head) > len(end) + 1
        ),
        "",
    )
    if found == "{token}" and len(words) > 1 and words[-2] in END_MARKER_WORDS:
        return "{sequence}"  # each stop token ends one sequence
    qualifier = words[-2] if len(words) > 1 else before
    if qualifier in EPISODE_WORDS and head in _EPISODE_LETTERS:
        # RecordEpisodeStatistics' r, l, t: return, length in steps, elapsed seconds
        return _EPISODE_LETTERS[head] if (values or Values()).nonnegative else ""
    if qualifier in EPISODE_WORDS and head.endswith(_EPISODE_LENGTHS):
        return "{step}"  # an episode lasts environment steps; a sequence, tokens
    if head in _LEVEL_WORDS and qualifier in ESTIMATOR_WORDS:
        return ""  # kl_token, chi2_token_mean: the estimator at the token level
    return found


_EPISODE_LENGTHS: Final = ("lengths", "length", "len")
"""Ends of a word that, after an episode word, names the steps an episode took."""
_EPISODE_LETTERS: Final[dict[str, str]] = {"r": "", "l": "{step}", "t": "s"}
"""One-letter episode statistics (gymnasium's ``info["episode"]``) -> their units."""
_LEVEL_WORDS: Final = frozenset(("token", "tok", "sequence", "seq", "sample"))
"""Singular words that name the level a statistic is taken at (``kl_token``,
``loss_sample``), not a count: a count is plural (``tokens``) or numbered (``num_token``)."""


_LENGTH_ENDINGS: Final = ("lengths", "length", "len", "tokens", "toks")
"""Ends of a compound word that names a token count (``seqlen``, ``ntokens``)."""


def _participle(word: str) -> bool:
    """Whether a word is a participle qualifying the noun before it (``solved``,
    ``unsolved``, ``clipped``), not a noun (``seed``, ``speed``: too short to tell)."""
    return len(word) > 5 and word.endswith("ed") and word not in ANNOTATIONS


_MIB_FROM: Final = 4096.0
"""A bare memory amount past this is not GiB (no device has 4 TiB): MiB."""
_BYTES_FROM: Final = 1e7
"""... and past this (ten million) not MiB either: bytes."""


def _memory(values: Values) -> str:
    """The unit of a memory amount no unit word names, from its magnitude: trainers log
    ``torch.cuda.max_memory_allocated() / 1024**3`` (GiB), ``/ 2**20`` (MiB) or bytes."""
    high = values.high or 0.0
    if high >= _BYTES_FROM:
        return "By"
    return "MiBy" if high >= _MIB_FROM else "GiBy"
