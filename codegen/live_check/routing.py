"""Key routing: what each logged ``(prefix, key)`` means, decided once and cached.

A logged key is split at its prefix when logged flat, rewritten by the
``--key-rewrite`` rules (unless only the key as read is declared), matched to
the teed rows (as the backend would have spelled their keys, when it rewrites
keys), and its captured attribute values judged. The answer, a
:class:`KeyPlan`, is kept per ``(prefix, key, split)`` up to
:attr:`~codegen.runs.limits.Limits.max_family_keys` keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from metric_catalog.series_rules import (
    PREFIX_GLUE,
    ConfigChoice,
    MatchBudgetError,
    qualified_key,
)

from ..catalog.matching import KeyMatcher, Match
from ..catalog.precedence import row_choice
from ..runs.limits import Limits
from ..runs.rewrites import key_readings, rewrite_key
from .hints import known_spellings, spelling_hint, undeclared_hint
from .judges.attributes import AttributeRules
from .judges.loops import LoopJudge
from .judges.ranges import quiet_interval
from .report import LiveCheckReport
from .statistics import RowSummary

__all__ = ["TRAINING_AXIS", "KeyPlan", "KeyPlanner", "PlanKey"]

TRAINING_AXIS: Final[frozenset[str]] = frozenset({""})
"""The step axes of a key on the training step (``""``), or of a key no row takes."""

Memo = tuple[str, str, bool | str]
"""A plan's cache key: ``(prefix, logged key, split or the backend's rewrite rule)``."""

PlanKey = tuple[str, str, bool | str, str | None]
""":data:`Memo` and the loop the key was routed for (``None``: not known)."""


class KeyPlan(NamedTuple):
    """A logged key's meaning, decided once: where it splits, the rows it counts under, the
    captured values' problems (one per match), the rows' summaries, whether it is a loop's
    signature key, whether it takes the plain path (literal rows, no required attribute),
    and the key as read when a key rewrite changed it.
    """

    prefix: str
    key: str
    matches: tuple[Match, ...]
    problems: tuple[tuple[str, str] | None, ...]
    summaries: tuple[RowSummary, ...]
    signature: bool
    plain: bool
    axes: frozenset[str]
    """The step axes of the rows it counts under: ``TRAINING_AXIS`` when all are on the
    training step (also for a key no row takes), else their ``step_axis`` values."""
    read_as: str | None = None
    hint: str = ""
    ambiguous: tuple[str, ...] = ()
    """Rows of different loops that claim the key when its input's loop does not decide it
    (``matches`` is then empty): the ``ambiguous_key`` finding, never credited to a row."""
    bookkeeping: bool = False
    """The key is no metric (a ``bookkeeping:`` entry, or a backend's own key): left out."""
    readings: tuple[str, ...] = ()
    """Readings of the key under ``--key-rewrite`` that route it differently (``matches``
    is then empty): the ``ambiguous_rewrite`` finding, never credited to a row."""
    periodic: bool = False
    """Every row it counts under is periodic (``every``: evaluation, checkpoints): its steps
    are not training steps, so a final evaluation past the last step makes nothing due."""
    renames: str = ""
    """The literal row key (``prefix/key``) this key most likely misspells or renames, when
    only a family takes it, and only through an open or opened placeholder (``grad_nrom``
    beside a row ``grad_norm``): a family of its shape alone takes it, so it is undeclared
    (``matches`` empty); an open family takes it, so it is a rename if that row is never
    logged (decided at the end of the run)."""
    choices: tuple[ConfigChoice, ...] = ()
    """One per match when the key's rows share it under exclusive conditions (``critic/
    clipfrac``: a share with value clipping, a squared error without), the choice of each:
    the run's configuration picks the row that takes a value (see ``Checker._matched``)."""
    quiet: tuple[RowSummary, float, float] | None = None
    """The record loop's shortcut: the one row's summary and the interval of float values
    it only counts (:func:`~.judges.ranges.quiet_interval`), when the key is a plain
    literal row's on the training step and nothing else is done for it (no signature,
    rename, rewrite or schedule); ``None`` otherwise. Set by :meth:`KeyPlanner.planned`."""
    unjudged: bool = False
    """The check's budget of attempts on families no literal text indexes ran out before the
    key was routed (``matches`` is then empty): which row takes it is not known, so it is
    neither credited nor undeclared (see :data:`~codegen.runs.limits.MAX_UNINDEXED_ATTEMPTS`)."""


def _with_choices(plan: KeyPlan) -> KeyPlan:
    """``plan`` with :attr:`KeyPlan.choices` set when its rows are chosen by configuration."""
    if len(plan.matches) < 2:
        return plan
    choices = [row_choice(row) for row, _ in plan.matches]
    found = tuple(choice for choice in choices if choice is not None)
    if len(found) != len(choices):
        return plan
    return plan._replace(choices=found)


def _with_quiet(plan: KeyPlan) -> KeyPlan:
    """``plan`` with :attr:`KeyPlan.quiet` set when the record loop may take its shortcut."""
    if (
        len(plan.matches) != 1
        or not plan.plain
        or plan.problems[0] is not None
        or plan.signature
        or plan.periodic
        or plan.renames
        or plan.bookkeeping
        or plan.read_as is not None
        or plan.axes is not TRAINING_AXIS
    ):
        return plan
    summary = plan.summaries[0]
    interval = quiet_interval(summary)
    if interval is None:
        return plan
    return plan._replace(quiet=(summary, *interval))


class KeyPlanner:
    """Plans logged keys against the teed rows (see :class:`KeyPlan`), with a bounded cache."""

    def __init__(
        self,
        summaries: dict[str, RowSummary],
        with_required: frozenset[str],
        *,
        matcher: KeyMatcher,
        rules: AttributeRules,
        loops: LoopJudge,
        limits: Limits,
        report: LiveCheckReport,
        rewrites: tuple[tuple[str, str], ...],
        is_bookkeeping: Callable[[str], bool] | None = None,
    ) -> None:
        self.matcher = matcher
        self.is_bookkeeping = is_bookkeeping
        """Whether a logged key (``prefix/key``) is no metric (``Catalog.is_bookkeeping``)."""
        self.rules = rules
        self.loops = loops
        self.limits = limits
        self.report = report
        """The report: its ``key_prefix_rewrites`` and the rewritten-key counts."""
        self.summaries = summaries
        self.with_required = with_required
        """Rows with a required attribute: their points are checked even without attributes."""
        self.rewrites = rewrites
        """``--key-rewrite`` rules: applied to every logged key before it is matched."""
        self.rewritten: set[tuple[str, str]] = set()
        """Distinct ``(prefix, key)`` a rewrite changed (bounded by the plan cache)."""
        self.plans: dict[PlanKey, KeyPlan] = {}
        """What each logged ``(prefix, key, split, loop)`` means, decided once (bounded)."""

    def planned(
        self, prefix: str, logged: str, split: bool, rewrite: str | None, loop: str | None = None
    ) -> KeyPlan:
        """:meth:`plan`, kept in :attr:`plans` while the cache has room."""
        plan = _with_choices(_with_quiet(self.plan(prefix, logged, split, rewrite, loop)))
        if len(self.plans) < self.limits.max_family_keys:
            self.plans[(prefix, logged, split if rewrite is None else rewrite, loop)] = plan
        return plan

    def plan(
        self, prefix: str, logged: str, split: bool, rewrite: str | None, loop: str | None = None
    ) -> KeyPlan:
        """:meth:`_plan`, or an unjudged plan when the matcher's budget ran out on the key."""
        try:
            return self._plan(prefix, logged, split, rewrite, loop)
        except MatchBudgetError:
            return KeyPlan(prefix, logged, (), (), (), False, True, TRAINING_AXIS, unjudged=True)

    def _plan(
        self, prefix: str, logged: str, split: bool, rewrite: str | None, loop: str | None = None
    ) -> KeyPlan:
        """What a logged key means, decided once per ``(prefix, key)``: see :class:`KeyPlan`.

        A key a rewrite changes is judged as rewritten, unless only the key as
        read is declared (a key that merely contains the rewritten text, such as
        ``entropy_at_end`` under ``_at_ -> @``, keeps its meaning). ``rewrite``
        names the rule the record's backend rewrote keys by (see :meth:`_plan_key`).
        ``loop`` is the loop of the input the key was logged in (``None``: not known):
        a key rows of several loops share goes to that loop's row.
        """
        if self.is_bookkeeping is not None and self.is_bookkeeping(qualified_key(prefix, logged)):
            return KeyPlan(prefix, logged, (), (), (), False, True, TRAINING_AXIS, bookkeeping=True)
        plan = None
        if self.rewrites:
            rewritten = rewrite_key(logged, self.rewrites)
            if rewritten != logged:
                clash = self._clash(prefix, logged, split, rewrite, loop)
                if clash is not None:
                    return clash
                plan = self._plan_key(prefix, rewritten, split, rewrite, loop)
                if not _clean(plan):
                    # Segment by segment: a key may hold a mangled and a genuine spelling
                    # (eval/aime_at_2024/pass_at_1); the reading a row takes as it is wins,
                    # and the key as read before any rewrite comes last.
                    found = self._reading(prefix, logged, split, rewrite, loop, plan)
                    if found is not None:
                        return found
                plan = plan._replace(read_as=logged)
        if plan is None:
            plan = self._plan_key(prefix, logged, split, rewrite, loop)
        if plan.matches or plan.ambiguous:
            return plan
        tables = not self.report.key_prefix_rewrites
        for known, why, flag in known_spellings(logged, self.rewrites, prefix_tables=tables):
            other = self._plan_key(prefix, known, split, rewrite, loop)
            if other.matches:
                return plan._replace(hint=spelling_hint(why, flag, other.prefix, other.key))
        return plan

    def _clash(
        self, prefix: str, logged: str, split: bool, rewrite: str | None, loop: str | None
    ) -> KeyPlan | None:
        """The plan of a key whose readings under ``--key-rewrite`` rows take in different
        ways (other rows, or other captured values): credited to no row, as no reading is
        more right than another; ``None`` when at most one routing exists."""
        routes: dict[tuple[tuple[str, tuple[tuple[str, str], ...]], ...], str] = {}
        as_read: KeyPlan | None = None
        for reading in key_readings(logged, self.rewrites):
            plan = self._plan_key(prefix, reading, split, rewrite, loop)
            as_read = plan
            if _clean(plan):
                route = tuple(
                    (row.name, tuple(sorted((str(k), str(v)) for k, v in captures.items())))
                    for row, captures in plan.matches
                )
                routes.setdefault(route, f"{reading!r} -> {_describe(route)}")
        if len(routes) < 2 or as_read is None:
            return None
        return as_read._replace(
            matches=(), problems=(), summaries=(), plain=True, readings=tuple(routes.values())
        )

    def _reading(  # noqa: PLR0917 - plan()'s arguments, passed on
        self,
        prefix: str,
        logged: str,
        split: bool,
        rewrite: str | None,
        loop: str | None,
        whole: KeyPlan,
    ) -> KeyPlan | None:
        """The plan of the reading of ``logged`` a row takes as it is (else, when the whole
        rewrite matched nothing, the first reading any row takes); ``None``: keep ``whole``."""
        fallback: KeyPlan | None = None
        for reading in key_readings(logged, self.rewrites)[1:]:
            other = self._plan_key(prefix, reading, split, rewrite, loop)
            if reading != logged:
                other = other._replace(read_as=logged)
            if _clean(other):
                return other
            if fallback is None and other.matches and not whole.matches:
                fallback = other
        return fallback

    def _plan_key(
        self, prefix: str, logged: str, split: bool, rewrite: str | None, loop: str | None
    ) -> KeyPlan:
        """:meth:`plan` of a key as given (no ``--key-rewrite``).

        A key no row takes as logged, read from a backend that rewrites keys
        (``rewrite``: TensorBoard writes '@' as '_'), is matched against the rows'
        keys as that backend would have written them.
        """
        signature_keys = self.loops.signature_keys
        signature = bool(signature_keys) and (prefix, logged) in signature_keys
        prefix, key, matches, ambiguous, shaped = self._match(prefix, logged, split, rewrite, loop)
        renames = self._renames(prefix, key, matches, shaped)
        if renames and shaped:
            matches = ()  # a misspelt literal key, not a family's value outside its enum
        problems = tuple(
            self.rules.judge_captures(captures, row) if captures else None
            for row, captures in matches
        )
        # The plain path: literal rows only, no attribute the row requires on every point.
        plain = all(not captures for _, captures in matches) and not any(
            row.name in self.with_required for row, _ in matches
        )
        summaries = tuple(self.summaries[row.name] for row, _ in matches)
        axes = frozenset(row.step_axis for row, _ in matches)
        if not axes or axes == TRAINING_AXIS:
            axes = TRAINING_AXIS  # one shared object: the record loop tests it by identity
        periodic = bool(matches) and all(
            row.every is not None or row.every_config is not None for row, _ in matches
        )
        return KeyPlan(
            prefix,
            key,
            matches,
            problems,
            summaries,
            signature,
            plain,
            axes,
            ambiguous=ambiguous,
            periodic=periodic,
            renames=renames,
        )

    def _renames(self, prefix: str, key: str, matches: tuple[Match, ...], shaped: bool) -> str:
        """:attr:`KeyPlan.renames`: the literal row key a family-only key most likely renames
        (``""``: a literal row takes it, an enumeration fits it, or no row key is close)."""
        if not matches or not all(match.captures for match in matches):
            return ""
        matcher = self.matcher
        if not shaped and not all(matcher.open_capture(match) for match in matches):
            return ""
        rows = (match.row for match in matches)
        return matcher.renamed(qualified_key(prefix, key), rows) or ""

    def _match(
        self, prefix: str, logged: str, split: bool, rewrite: str | None, loop: str | None
    ) -> tuple[str, str, tuple[Match, ...], tuple[str, ...], bool]:
        """``(prefix, key, matches, ambiguous, shaped)`` of a logged key: split, bare-split or
        as the backend would have written the rows' keys, whichever first finds a row (or
        rows of several loops, when ``loop`` does not decide between them); ``shaped``: only
        families of its shape take it (:attr:`~codegen.catalog.matching.LoopRoute.shaped`)."""
        matcher = self.matcher
        given, key = prefix, logged
        if split:
            prefix, key = matcher.split(logged, loop)
        found = matcher.match_in(prefix, key, loop)
        bare = not prefix and ("/" in logged or PREFIX_GLUE in logged)
        if not found.matches and not found.ambiguous and bare:
            # A flat key logged bare (a tracker's dict through adapters.tee_flat, written
            # under the empty prefix): split as the adapter does, at the longest prefix.
            prefix, key = matcher.split(logged, loop)
            found = matcher.match_in(prefix, key, loop)
        if not found.matches and not found.ambiguous and rewrite is not None:
            # The backend rewrote the key (TensorBoard: '@' to '_'): match the rows' keys
            # as it would have written them.
            other = matcher.rewritten(rewrite)
            pair = other.split(logged) if split or not given else (given, logged)
            rewritten = other.match_in(*pair, loop)
            if rewritten.matches or rewritten.ambiguous:
                (prefix, key), found = pair, rewritten
        return prefix, key, found.matches, found.ambiguous, found.shaped

    def undeclared_hint(self, plan: KeyPlan) -> str:
        """What an undeclared key's finding adds (see :mod:`~codegen.live_check.hints`)."""
        elsewhere = self.matcher.declared_prefixes(plan.key)
        return undeclared_hint(elsewhere, plan.read_as, plan.hint)

    def note_rewrite(self, prefix: str, logged: str) -> None:
        """Count a value whose key a rewrite changed (and the key, once)."""
        self.report.rewritten_values += 1
        pair = (prefix, logged)
        if pair not in self.rewritten and len(self.rewritten) < self.limits.max_family_keys:
            self.rewritten.add(pair)
            self.report.rewritten_keys += 1


def _describe(route: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]) -> str:
    """``rl.eval.pass_at_1 (rl.source=aime@2024)``: the rows a reading routes to."""
    return ", ".join(
        name + (f" ({', '.join(f'{k}={v}' for k, v in captures)})" if captures else "")
        for name, captures in route
    )


def _clean(plan: KeyPlan) -> bool:
    """Whether a row takes the key as it is (no captured value outside its attribute)."""
    return bool(plan.matches) and all(problem is None for problem in plan.problems)
