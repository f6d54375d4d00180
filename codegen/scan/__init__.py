"""``metric-catalog scan``: compare what the source code logs with the catalog, statically.

:func:`codegen.scan.scanner.scan` walks the given files and folders for Python sources, parses each
with :mod:`ast` (never importing or running it), finds the calls that log
metrics (:mod:`codegen.scan.calls`), follows the dict each one logs back to
the keys written in the code (:mod:`codegen.scan.extract`), and judges them
against the catalog's teed rows (:mod:`codegen.scan.compare`):

* ``SCAN_UNDECLARED`` (error): a key the code logs that no row declares;
* ``SCAN_UNRESOLVED`` (warning): something logged the scanner cannot follow,
  with what it is (``a dict built by a call to `reduce_metrics(...)```);
* ``SCAN_UNLOGGED`` (warning): a row whose key no scanned code logs;
* ``SCAN_SYNTAX`` (error): a file that does not parse; the others are scanned;
* ``SCAN_UNREADABLE`` (warning): a file that cannot be read or is too large.

A finding on a line holding ``# metric-catalog: ignore`` is dropped. The walk
follows symbolic links but enters each real folder once (a link loop cannot
hang it) and reads each real file once. What a scan learns is kept in the project's
``cache-dir`` (:mod:`codegen.scan.cache`): a re-run over unchanged inputs parses nothing.

The modules import in one direction (``tests/layout/test_scan_layout.py`` and the
``scan-layers`` contract of ``lint-imports`` in ``pyproject.toml`` hold it), from the top:

* :mod:`.scanner` (the command; :mod:`.cache`, what a re-run reuses) -> :mod:`.compare`
  (the judgement) -> :mod:`.extract` (:class:`~codegen.scan.extract.Project`: the files,
  the waves of wrappers, the function summaries; and the per-module analysis assembled
  from its parts) -> :mod:`.basebound` (receivers a base class binds, handed to its
  subclasses' files);
* the parts of that analysis: :mod:`.statements` (scopes and statements),
  :mod:`.dictvalues` (dicts and the calls building them), :mod:`.keyexpr` (key
  expressions), :mod:`.logcalls` (the logging calls), :mod:`.objectflow` (objects and
  callables), :mod:`.collectors` (collector objects, trackers a factory builds), on
  :mod:`.state` (what they share);
* the shapes they follow: :mod:`.timers`, :mod:`.accumulators`, :mod:`.own_writes`,
  :mod:`.dispatch`, :mod:`.inherited`, :mod:`.kvfields` (key-value loggers: keys recorded
  into a dict field that a dump hands to a writer looping them into a sink), :mod:`.nested`
  (nested literals a flattening helper, :mod:`.flatten`, turns into leaf paths),
  :mod:`.inner` (dicts held under a literal key of a dict, looped over later);
* the model below them all: :mod:`.model` (function summaries, logging calls found, the
  project's interface), :mod:`.objects`, :mod:`.sources` (one source file),
  :mod:`.records`, :mod:`.flatten`, :mod:`.numeric`, :mod:`.values`, :mod:`.keyfilter`,
  :mod:`.syntax`, :mod:`.calls`.
"""

from __future__ import annotations

__all__: list[str] = []
