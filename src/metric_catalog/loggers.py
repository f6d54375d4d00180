"""Logger wrappers: tee any ``log_metrics`` logger, and a JSON Lines backend.

:class:`TeeLogger` wraps an object with the NeMo-RL ``Logger`` method
``log_metrics(metrics, step, prefix="", ...)`` and tees every call into
OpenTelemetry. :class:`JsonlLogger` is a backend that writes one JSON object
per call, so a run can be checked afterwards (``python -m codegen live-check
run.jsonl`` reads exactly this format)::

    {"step": 3, "prefix": "train", "metrics": {"loss": 0.41, "reward": NaN}}

With many workers, each writes its own file: a ``{worker}`` or ``{rank}``
placeholder in the path names it (``run-{worker}.jsonl`` -> ``run-rank3.jsonl``),
and each line of a worker whose rank is known carries a ``"worker"`` field
(``"rank3"``), so lines stay attributable when files are concatenated.
``python -m codegen live-check 'run-*.jsonl'`` checks them together, per worker.

A run names its training loop (a loop the catalog declares under ``loops:``,
e.g. ``grpo_sync``) with ``JsonlLogger(..., loop="grpo_sync")`` or the
``METRIC_CATALOG_LOOP`` environment variable; every line then carries
``"loop": "grpo_sync"`` and live-check judges the run as that loop instead of
inferring it from the logged keys. ``JsonlLogger(..., config=cfg)`` writes the
run's configuration first, as a header line ``{"config": {...}}``, for
presence conditions over it (``config.trainer.test_freq > 0``).

Attributes reach the log too, so live-check can judge their keys, values and
cardinality: a ``log_metrics`` call given ``attributes=`` (a
:class:`TeeLogger` with attributes passes its own to a ``JsonlLogger`` it
wraps) writes them on its line as ``"attributes": {...}``, and
:meth:`JsonlLogger.record_metrics` records ``RecordedMetric`` series like
:func:`metric_catalog.tee.record_metrics` and writes one *point line* per value::

    {"step": 3, "series": "rl.vllm.batch.duration", "value": 0.25}

(plus ``worker`` and ``loop`` when known, and ``"attributes"`` when given).
:meth:`JsonlLogger.log_point` writes one point line for any declared series.

Numbers are JSON numbers; NaN and infinities use Python's ``NaN``,
``Infinity`` and ``-Infinity`` tokens (``json.loads`` reads them back); bools,
strings and ``None`` are written as-is; numpy and torch scalars (0-d) become
numbers via :func:`~metric_catalog.vocabulary.as_scalar`; dicts (keys written
as ``str(key)``), lists and tuples are walked; other values become lists when
they have a ``tolist()``, and ``{"__type__": "<type name>"}`` otherwise.

The logger never raises over what it is handed (only a closed logger raises).
A value it cannot write becomes a *marker*, and each cause is warned once::

    {"__type__": "<type name>", "__unserializable__": "<reason>"}

with reason ``error`` (converting or walking it raised, e.g. a ``__float__``
or ``items()`` that raises), ``cycle`` (a container holding itself, directly or
deeper), ``too deep`` (nested past 32 levels) or ``too large`` (an int past
4096 bits). A key whose ``str()`` raises is written as ``"<unserializable
<type name>>"``, and so is a prefix; a step that is not an integer is written
as ``null``. One line visits at most :data:`MAX_LINE_VALUES` values
(containers and scalars alike), so shared references (a list holding the same
list twice, 30 levels down) cost bounded work: past the bound, the rest of a
dict becomes one ``"__truncated__": <entries left>`` entry and the rest of a
list one ``{"__truncated__": <items left>}`` item.
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Final, Protocol

from metric_catalog import identity
from metric_catalog._warn import describe_error, safe_repr, safe_text, type_name, warn_once
from metric_catalog.series_rules import namespace_prefix
from metric_catalog.tee import record_metrics, tee_metrics
from metric_catalog.vocabulary import RecordedMetric, as_scalar, recorded_metrics

if TYPE_CHECKING:
    from opentelemetry.util.types import Attributes

__all__ = [
    "ENV_LOOP",
    "MAX_LINE_VALUES",
    "PATH_PLACEHOLDERS",
    "JsonlLogger",
    "MetricsLogger",
    "TeeLogger",
    "to_json_value",
    "worker_path",
]

_MAX_DEPTH: Final = 32
_MAX_INT_BITS: Final = 4096  # well inside json's int-to-text limit (4300 digits)
_MAX_STEP_BITS: Final = 64

MAX_LINE_VALUES: Final = 100_000
"""Values (containers and scalars) one JSONL line visits at most; see the module docstring."""

ENV_LOOP: Final = "METRIC_CATALOG_LOOP"
"""Environment variable naming the run's training loop (``grpo_sync``) on every JSONL line."""


class MetricsLogger(Protocol):
    """Anything with NeMo-RL's ``Logger.log_metrics`` shape."""

    def log_metrics(self, metrics: dict[str, Any], step: int, prefix: str = "") -> Any:
        """Log ``metrics`` for ``step`` under ``prefix``."""


class TeeLogger:
    """Wrap a logger so every ``log_metrics`` call is also teed into OpenTelemetry.

    The wrapped logger runs first and its exceptions propagate (it is the
    caller's logger); the tee runs even then and never raises. Extra keyword
    arguments (``step_metric``, ``step_finished``) pass through, and any other
    attribute is looked up on the wrapped logger, so the wrapper is a drop-in.
    A wrapped :class:`JsonlLogger` also gets ``attributes``, so its lines
    carry them. A prefix ending in ``/`` (``"train_rollouts/"``, which
    NeMo-Aligner's logger wrapper joins to each key as written) is teed as the
    prefix without it (:func:`~metric_catalog.series_rules.namespace_prefix`).
    """

    def __init__(
        self,
        inner: Any,
        *,
        attributes: Attributes = None,
        strict: bool | None = None,
        loop: str | None = None,
    ) -> None:
        """Wrap ``inner``; ``attributes``, ``strict`` and ``loop`` are passed to every tee.

        ``loop`` names the training loop (``"sft"``) whose rows take keys that rows
        of several loops share; ``None``: a wrapped :class:`JsonlLogger`'s loop, else
        ``METRIC_CATALOG_LOOP``.
        """
        if not callable(getattr(inner, "log_metrics", None)):
            msg = f"TeeLogger needs an object with a log_metrics method, got {type(inner).__name__}"
            raise TypeError(msg)
        self.inner = inner
        """The wrapped logger."""
        self.attributes = attributes
        """OpenTelemetry attributes attached to every teed point."""
        self.strict = strict
        """Strict mode for the tee; ``None`` reads ``METRIC_CATALOG_STRICT``."""
        if loop is None and isinstance(inner, JsonlLogger):
            loop = inner.loop
        self.loop = loop
        """The loop shared keys are routed by; ``None`` reads ``METRIC_CATALOG_LOOP``."""

    def log_metrics(
        self, metrics: dict[str, Any], step: int, prefix: str = "", **kwargs: Any
    ) -> Any:
        """Call the wrapped ``log_metrics``, then tee ``metrics`` under ``prefix``."""
        try:
            if self.attributes is not None and isinstance(self.inner, JsonlLogger):
                # The JSONL line carries what the tee's points carry, for live-check.
                kwargs = {"attributes": self.attributes, **kwargs}
            return self.inner.log_metrics(metrics, step, prefix=prefix, **kwargs)
        finally:
            if type(prefix) is str and prefix[-1:] == "/":
                # A prefix given with its separator, which the wrapped logger joins to each
                # key as written (NeMo-Aligner's "train_rollouts/"), names "train_rollouts".
                prefix = namespace_prefix(prefix)
            tee_metrics(
                metrics, prefix, attributes=self.attributes, strict=self.strict, loop=self.loop
            )

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the wrapper lacks: log_hyperparams, finish, ... Not for
        # dunders (copy/pickle probe __deepcopy__, __reduce_ex__: those are the wrapper's)
        # nor before __init__ has set inner.
        if name in {"inner", "loop"} or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        return getattr(self.inner, name)


def to_json_value(value: Any, _depth: int = 0) -> Any:
    """``value`` as something ``json.dumps`` writes, following the module's rules.

    Never raises: what cannot be written becomes a marker (module docstring).
    """
    return _Encoder().value(value, _depth)


class _Encoder:
    """One line's walk: the visit budget, the containers on the path, the problems met."""

    __slots__ = ("budget", "path", "problems", "truncated")

    def __init__(self) -> None:
        self.budget = MAX_LINE_VALUES
        self.truncated = False
        self.path: set[int] = set()  # ids of the containers being walked (cycle check)
        self.problems: dict[tuple[str, str], str] = {}  # (type, reason) -> example

    def marker(self, value: object, reason: str) -> dict[str, str]:
        name = type_name(value)
        self.problems.setdefault((name, reason), safe_repr(value))
        return {"__type__": name, "__unserializable__": reason}

    def key(self, key: object) -> str:
        text = safe_text(key)
        if text is not None:
            return text
        try:
            text = safe_text(str(key))
        except Exception:  # noqa: BLE001 - a key whose __str__ raises
            text = None
        if text is None:
            name = type_name(key)
            self.problems.setdefault((name, "key"), f"<{name} object>")
            return f"<unserializable {name}>"
        return text

    def value(self, value: Any, depth: int = 0) -> Any:
        self.budget -= 1
        kind = type(value)
        if kind is float or kind is str or kind is bool or value is None:
            return value
        if kind is int:
            return value if value.bit_length() <= _MAX_INT_BITS else self.marker(value, "too large")
        try:
            return self._compound(value, depth)
        except Exception:  # noqa: BLE001 - any of value's methods may raise anything
            return self.marker(value, "error")

    def _compound(self, value: Any, depth: int) -> Any:
        text = safe_text(value)
        if text is not None:
            return text
        scalar = as_scalar(value)
        if scalar is not None:
            return scalar
        if isinstance(value, (int, float)):  # a number subclass whose conversion raised
            return self.marker(value, "error")
        if isinstance(value, (Mapping, list, tuple)):
            if depth >= _MAX_DEPTH:
                return self.marker(value, "too deep")
            if id(value) in self.path:
                return self.marker(value, "cycle")
            self.path.add(id(value))
            try:
                if isinstance(value, Mapping):
                    return self._mapping(value, depth)
                return self._sequence(value, depth)
            finally:
                self.path.discard(id(value))
        tolist = getattr(value, "tolist", None)
        if callable(tolist):
            converted = tolist()
            if converted is not value:
                return self.value(converted, depth + 1)
        return {"__type__": type_name(value)}

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        items = list(dict.items(value) if isinstance(value, dict) else value.items())
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(items):
            if self.budget <= 0:
                out["__truncated__"] = len(items) - index
                self.truncated = True
                break
            out[self.key(key)] = self.value(item, depth + 1)
        return out

    def _sequence(self, value: list[Any] | tuple[Any, ...], depth: int) -> list[Any]:
        items = list(value)
        out: list[Any] = []
        for index, item in enumerate(items):
            if self.budget <= 0:
                out.append({"__truncated__": len(items) - index})
                self.truncated = True
                break
            out.append(self.value(item, depth + 1))
        return out

    def warn(self, path: Path) -> None:
        """Warn once per file, type and reason for what this walk could not write."""
        for (name, reason), example in self.problems.items():
            what = {
                "error": "raised while being converted",
                "cycle": "holds itself (a cycle)",
                "too deep": f"is nested past {_MAX_DEPTH} levels",
                "too large": f"is an int past {_MAX_INT_BITS} bits",
                "key": "is a key whose str() raised",
            }.get(reason, reason)
            warn_once(
                ("jsonl-unserializable", str(path), name, reason),
                f"JsonlLogger({str(path)!r}): a {name} value ({example}) {what}; it is "
                "written as a marker (see metric_catalog.loggers) (warned once per file, "
                "type and reason)",
                family="jsonl-unserializable",
            )
        if self.truncated:
            warn_once(
                ("jsonl-truncated", str(path)),
                f"JsonlLogger({str(path)!r}): a line held more than {MAX_LINE_VALUES} "
                "values; the rest is written as '__truncated__' counts (warned once per file)",
                family="jsonl-unserializable",
            )


PATH_PLACEHOLDERS: Final[tuple[str, ...]] = ("worker", "rank", "local_rank", "host", "pid")
"""Placeholders a :class:`JsonlLogger` path may hold, filled from the worker identity."""


def worker_path(path: str | os.PathLike[str]) -> Path:
    """``path`` with its placeholders filled from this process's worker identity.

    ``{worker}``: ``rank<RANK>`` when the launcher (or
    :func:`~metric_catalog.identity.set_worker_identity`) gives a rank, else
    ``<host>-<pid>``; ``{rank}`` / ``{local_rank}``: those ranks, ``0`` without
    a launcher (a single process is rank 0); ``{host}``; ``{pid}``.

    Raises:
        ValueError: The path has another placeholder, or a stray brace.
    """
    text = os.fspath(path)
    if "{" not in text and "}" not in text:
        return Path(text)
    worker = identity.resource_attributes()
    fields = {
        "worker": identity.worker_label(worker),
        "rank": worker.get("rank", 0),
        "local_rank": worker.get("local_rank", 0),
        "host": re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname()) or "host",
        "pid": os.getpid(),
    }
    try:
        return Path(text.format_map(fields))
    except (KeyError, IndexError, ValueError) as exc:
        allowed = ", ".join("{" + name + "}" for name in PATH_PLACEHOLDERS)
        msg = (
            f"JsonlLogger path {text!r}: cannot fill placeholder {exc}; a path may hold "
            f"{allowed} (double a literal brace: {{{{ }}}})"
        )
        raise ValueError(msg) from None


class JsonlLogger:
    """A ``log_metrics`` backend writing one JSON line per call to ``path``.

    Each line is ``{"step": int, "prefix": str, "worker": str, "loop": str,
    "metrics": {...}}`` (see the module docstring for the value encoding;
    ``worker`` and ``loop`` only when known) and is flushed as it is
    written, so a crashed run leaves every logged step on disk. Thread-safe;
    use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        append: bool = False,
        worker: str | None = None,
        loop: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        """Open ``path`` for writing (truncating unless ``append``), creating parent dirs.

        ``path`` may hold placeholders (:func:`worker_path`), so each worker of a
        run writes its own file. ``worker`` names the worker on every line;
        default: ``rank<RANK>`` when the process has a rank, else no field.
        ``loop`` names the run's training loop on every line (a loop declared
        in the catalog, e.g. ``"grpo_sync"``); default: the
        ``METRIC_CATALOG_LOOP`` environment variable, else no field (``""``
        writes none either). live-check judges the run as the logged loop.
        ``config`` is the run's configuration (a dict, or an OmegaConf/Hydra
        config as a mapping): written first as a header line
        ``{"config": {...}, "loop": ..., "worker": ...}``, so live-check can
        decide the presence of rows whose condition or ``first_step`` names a
        configuration value (``config.trainer.test_freq > 0``).

        Raises:
            ValueError: ``path`` holds an unknown placeholder.
            TypeError: ``loop`` is not a string.
        """
        if loop is None:
            loop = os.environ.get(ENV_LOOP, "")
        elif not isinstance(loop, str):
            msg = f"JsonlLogger: loop must be a str such as 'grpo_sync', got {type(loop).__name__}"
            raise TypeError(msg)
        self.loop: str | None = loop.strip() or None
        """The ``loop`` field of every line, or ``None`` when lines carry none."""
        self.path = worker_path(path)
        """Where the lines go (placeholders filled)."""
        if worker is None:
            ranked = identity.resource_attributes()
            worker = identity.worker_label(ranked) if "rank" in ranked else None
        self.worker = worker
        """The ``worker`` field of every line, or ``None`` when lines carry none."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._last_step = 0
        self._series: tuple[tuple[RecordedMetric, ...], dict[str, str]] = ((), {})
        self._file: IO[str] | None = self.path.open(
            "a" if append else "w", encoding="utf-8", newline="\n"
        )
        if config is not None:
            self._write_config(config)

    def log_metrics(
        self,
        metrics: Mapping[str, Any],
        step: int,
        prefix: str = "",
        *,
        attributes: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Append one line for this call; other keyword arguments are ignored.

        ``attributes``, when not empty, are written on the line as
        ``"attributes"``: the attributes the tee records every point of this
        call with (live-check checks them against each matched row).

        Raises:
            ValueError: The logger is closed.
        """
        encoder = _Encoder()
        record = self._head(step, encoder.key(prefix))
        written = encoder.value(metrics)
        if not isinstance(written, dict):
            warn_once(
                ("jsonl-not-a-mapping", str(self.path), type_name(metrics)),
                f"JsonlLogger({str(self.path)!r}).log_metrics got a {type_name(metrics)}, not "
                "a mapping of key -> value; its line holds it under the key '' (warned once "
                "per file and type)",
                family="jsonl-unserializable",
            )
            written = {"": written}
        record["metrics"] = written
        if attributes is not None:
            self._attributes(record, attributes, encoder)
        encoder.warn(self.path)
        self._write(record)

    @staticmethod
    def _attributes(record: dict[str, Any], attributes: object, encoder: _Encoder) -> None:
        """Write non-empty ``attributes`` on ``record`` (a hostile ``bool()`` counts as some)."""
        try:
            empty = not attributes
        except Exception:  # noqa: BLE001 - its __len__/__bool__ raise: write what there is
            empty = False
        if not empty:
            written = encoder.value(attributes)
            record["attributes"] = written if isinstance(written, dict) else {"": written}

    def log_point(
        self,
        series: str,
        value: Any,
        step: int | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> None:
        """Append one point line ``{"step", "series", "value", "attributes"}``.

        ``series`` is a declared series name (``rl.vllm.batch.duration``);
        ``step`` defaults to the last step this logger wrote (0 before any).
        Nothing is recorded: this only writes the line (see :meth:`record_metrics`).

        Raises:
            ValueError: The logger is closed.
        """
        encoder = _Encoder()
        record = self._head(self._last_step if step is None else step, None)
        record["series"] = encoder.key(series)
        record["value"] = encoder.value(value)
        if attributes is not None:
            self._attributes(record, attributes, encoder)
        encoder.warn(self.path)
        self._write(record)

    def record_metrics(
        self,
        values: Mapping[str, Any],
        attributes: Mapping[str, Any] | None = None,
        *,
        step: int | None = None,
    ) -> None:
        """Record like :func:`metric_catalog.tee.record_metrics`, and write each value's point line.

        ``values`` maps registry keys (``vllm_batch_duration``) to values; each
        line names the series (``rl.vllm.batch.duration``; a key no declared
        row has is written as given, for live-check to report). ``step``
        defaults to the last step this logger wrote. Like the runtime's
        ``record_metrics``, it never raises: a closed logger or a write error
        is one warning per cause, and the values are still recorded.
        """
        try:
            names = self._series_names()
            for key, value in values.items():
                if value is None:
                    continue  # record_metrics skips it too: nothing to record
                self.log_point(names.get(str(key), str(key)), value, step, attributes)
        except Exception as exc:  # noqa: BLE001 - a recording call never raises into training
            warn_once(
                ("jsonl-record", str(self.path), type_name(exc)),
                f"JsonlLogger({str(self.path)!r}).record_metrics could not write its point "
                f"lines: {describe_error(exc)}; the values are still recorded (warned "
                "once per file and error)",
            )
        record_metrics(values, attributes)

    def _series_names(self) -> dict[str, str]:
        """Registry key -> series name of the recorded rows declared so far (cached)."""
        rows = recorded_metrics()
        cached_rows, names = self._series
        if cached_rows is not rows:
            names = {row.key: row.name for row in rows}
            self._series = (rows, names)
        return names

    def _head(self, step: int, prefix: str | None) -> dict[str, Any]:
        """The fields every line starts with: step, prefix (log_metrics lines), worker, loop."""
        record: dict[str, Any] = {"step": self._step(step)}
        if prefix is not None:
            record["prefix"] = prefix
        if self.worker is not None:
            record["worker"] = self.worker
        if self.loop is not None:
            record["loop"] = self.loop
        return record

    def _step(self, step: object) -> int | None:
        """``step`` as an int for the line, or None (written ``null``) after warning once."""
        if type(step) is int and step.bit_length() <= _MAX_STEP_BITS:
            return step
        number: int | None = None
        try:
            if isinstance(step, int):  # bool, IntEnum, ...: its value, not its methods
                number = int.__index__(step)
            elif isinstance(step, float):
                exact = float.__float__(step)
                number = int(exact) if math.isfinite(exact) else None
            else:
                index = operator.index(step)  # type: ignore[arg-type] # numpy, torch ints
                number = int.__index__(index) if isinstance(index, int) else None
        except Exception:  # noqa: BLE001 - any of the step's methods may raise
            number = None
        if number is not None and number.bit_length() <= _MAX_STEP_BITS:
            return number
        warn_once(
            ("jsonl-step", str(self.path), type_name(step)),
            f"JsonlLogger({str(self.path)!r}): step {safe_repr(step)} is not an integer of at "
            f'most {_MAX_STEP_BITS} bits; the line says "step": null (warned once per file '
            "and type)",
            family="jsonl-unserializable",
        )
        return None

    def _write_config(self, config: Mapping[str, Any]) -> None:
        """The header line: the run's configuration, with the loop and worker when known."""
        header: dict[str, Any] = {"config": to_json_value(config)}
        if not isinstance(header["config"], dict):
            header["config"] = {}  # not a mapping: an empty configuration decides nothing
        if self.worker is not None:
            header["worker"] = self.worker
        if self.loop is not None:
            header["loop"] = self.loop
        line = json.dumps(header, allow_nan=True, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is not None:
                self._file.write(line)
                self._file.flush()

    def _write(self, record: dict[str, Any]) -> None:
        failure: Exception | None = None
        try:
            line = json.dumps(record, allow_nan=True, separators=(",", ":")) + "\n"
        except Exception as exc:  # noqa: BLE001 - the encoder leaves nothing json refuses
            line, failure = "", exc
        with self._lock:
            if self._file is None:
                msg = f"JsonlLogger({str(self.path)!r}) is closed"
                raise ValueError(msg)
            if line:
                try:
                    self._file.write(line)
                    self._file.flush()
                except OSError as exc:  # disk full, file system gone: telemetry never raises
                    failure = exc
                else:
                    if record["step"] is not None:
                        self._last_step = record["step"]
        if failure is not None:
            warn_once(
                ("jsonl-write", str(self.path), type_name(failure)),
                f"JsonlLogger({str(self.path)!r}) could not write a line: "
                f"{describe_error(failure)}; the line is lost (warned once per file and error)",
            )

    def close(self) -> None:
        """Close the file; later calls are no-ops."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> JsonlLogger:
        """Return the logger itself."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the file."""
        self.close()
