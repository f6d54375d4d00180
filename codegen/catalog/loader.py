"""Strict YAML loading: a tree of nodes that remember where they came from.

libyaml (through PyYAML's ``CSafeLoader`` when available) does all the parsing;
this module only composes its event stream into :class:`YMap`, :class:`YSeq`
and :class:`YScalar` nodes with 1-based positions, refusing what a catalog never
needs and what makes YAML surprising:

* bytes that are not UTF-8, a byte-order mark, files over :data:`MAX_FILE_BYTES`,
  empty files and more than one document;
* duplicate mapping keys (PyYAML silently keeps the last one);
* tags other than the core ``str``/``map``/``seq`` family (``!!python/...``,
  ``!custom``, ``!!binary``, ``!!timestamp``...);
* anchors and aliases (no billion-laughs expansion is possible: nothing expands);
* keys that are not strings, and nesting deeper than :data:`MAX_DEPTH`.

Plain scalars that YAML 1.1 resolves to something other than a string (``no``,
``on``, ``1e3``, ``null``, ``2024-01-01``) are kept as :class:`NonString` so the
schema check can say "quote it" exactly where a string is required. Composing
is iterative, so no input can exhaust the Python stack.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol, TypeAlias

import yaml

from ..safe_fs import MAX_CATALOG_FILE_BYTES, NotRegularFileError, read_head
from ..safe_yaml import Loader
from .diagnostics import Diagnostic, Position, Severity
from .yaml_errors import explain_syntax_error

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "LoadedFile",
    "NonString",
    "Plain",
    "YMap",
    "YNode",
    "YScalar",
    "YSeq",
    "iter_path",
    "load_bytes",
    "load_file",
    "load_text",
    "subtree_bad",
    "to_plain",
]

MAX_FILE_BYTES: Final = MAX_CATALOG_FILE_BYTES
"""Catalog files larger than this (4 MiB) are refused unread."""

MAX_DEPTH: Final = 16
"""Deepest nesting accepted; a catalog needs 4 (file, list, row, deprecated)."""

_Loader = Loader  # the shared choice of libyaml's or PyYAML's safe loader

_CORE_PREFIX: Final = "tag:yaml.org,2002:"
_TAG_STR: Final = "tag:yaml.org,2002:str"
_TAG_MAP: Final = "tag:yaml.org,2002:map"
_TAG_SEQ: Final = "tag:yaml.org,2002:seq"
# Explicit core scalar tags are accepted (``!!str 1e3`` is a way of quoting);
# the non-string ones simply yield a NonString the schema then rejects.
_CORE_SCALAR_TAGS: Final = frozenset(
    {
        _TAG_STR,
        "tag:yaml.org,2002:null",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
    }
)
_BOMS: Final = (
    (b"\xef\xbb\xbf", "UTF-8"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_TYPE_WORDS: Final = {
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:bool": "boolean",
    "tag:yaml.org,2002:int": "integer",
    "tag:yaml.org,2002:float": "number",
    "tag:yaml.org,2002:timestamp": "date",
    "tag:yaml.org,2002:merge": "merge key",
    "tag:yaml.org,2002:value": "value key",
}


@dataclass(frozen=True, slots=True)
class NonString:
    """A plain scalar YAML resolves to a non-string (``no``, ``1e3``, ``null``).

    Kept as its source text; it is no JSON type, so any schema place that wants
    a string, list or mapping rejects it.
    """

    text: str
    tag: str

    @property
    def type_word(self) -> str:
        """What YAML reads the text as, with an article: ``a boolean``, ``an integer``..."""
        word = _TYPE_WORDS.get(self.tag, self.tag.rsplit(":", 1)[-1])
        return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


@dataclass(slots=True, eq=False)
class YScalar:
    """A scalar with its value (``str`` or :class:`NonString`) and position.

    The position is kept as its parts (file, 1-based line and column) and
    :attr:`position` builds the :class:`Position` when asked: most nodes of a
    clean file never need one.
    """

    value: str | NonString
    path: str
    line: int
    column: int
    quoted: bool = False
    bad: bool = False
    """A load error was reported at this node; later stages stay silent here."""

    @property
    def position(self) -> Position:
        """Where the scalar starts."""
        return Position(self.path, self.line, self.column)


@dataclass(slots=True, eq=False)
class YSeq:
    """A sequence of nodes with its position."""

    items: list[YNode]
    path: str
    line: int
    column: int
    bad: bool = False

    @property
    def position(self) -> Position:
        """Where the sequence starts."""
        return Position(self.path, self.line, self.column)


@dataclass(slots=True, eq=False)
class YMap:
    """A mapping from string keys to nodes, remembering each key's position.

    Keys keep their first occurrence; duplicates are reported by the loader.
    """

    values: dict[str, YNode]
    key_marks: dict[str, tuple[int, int]]
    """Each key's 1-based (line, column)."""
    path: str
    line: int
    column: int
    bad: bool = False
    refused_keys: bool = False
    """A key was refused (not a string, tagged, aliased); required-field checks stay silent."""

    @property
    def position(self) -> Position:
        """Where the mapping starts."""
        return Position(self.path, self.line, self.column)

    @property
    def key_positions(self) -> dict[str, Position]:
        """Where each key starts (built on each access)."""
        path = self.path
        return {key: Position(path, line, col) for key, (line, col) in self.key_marks.items()}


YNode: TypeAlias = YScalar | YSeq | YMap
"""Any node of the tree."""

Plain: TypeAlias = "str | NonString | list[Plain] | dict[str, Plain]"
"""A node as plain data, what jsonschema validates."""


def to_plain(node: YNode) -> Plain:
    """The node as plain Python data for jsonschema (dict, list, str, NonString)."""
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [to_plain(item) for item in node.items]
    return {key: to_plain(value) for key, value in node.values.items()}


def subtree_bad(node: YNode) -> bool:
    """True when a load error was reported anywhere under ``node``."""
    stack: list[YNode] = [node]
    while stack:
        current = stack.pop()
        if current.bad:
            return True
        if isinstance(current, YSeq):
            stack.extend(current.items)
        elif isinstance(current, YMap):
            stack.extend(current.values.values())
    return False


def iter_path(root: YNode, path: Iterator[str | int]) -> Iterator[YNode]:
    """The nodes along a jsonschema ``absolute_path``, root first."""
    node: YNode = root
    yield node
    for step in path:
        if isinstance(node, YMap) and isinstance(step, str) and step in node.values:
            node = node.values[step]
        elif isinstance(node, YSeq) and isinstance(step, int) and 0 <= step < len(node.items):
            node = node.items[step]
        else:
            return
        yield node


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """The outcome of loading one file: its tree (``None`` if unusable) and findings."""

    path: str
    root: YNode | None
    diagnostics: tuple[Diagnostic, ...] = field(default=())


def _error(code: str, message: str, position: Position) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, position)


def _short_tag(tag: str | None) -> str:
    """``tag:yaml.org,2002:binary`` -> ``!!binary``, as the file spells it."""
    text = tag or ""
    return "!!" + text.removeprefix(_CORE_PREFIX) if text.startswith(_CORE_PREFIX) else text


def _position_of_offset(data: bytes, offset: int, path: str) -> Position:
    line = data.count(b"\n", 0, offset) + 1
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return Position(path, line, column)


def load_file(path: Path, display: str) -> LoadedFile:
    """Read and load ``path``; diagnostics name it as ``display``.

    Never raises for bad input: unreadable files, bad bytes and bad YAML all
    come back as diagnostics.
    """
    try:
        # Never blocks: a FIFO or a device is refused before anything is read.
        data = read_head(path, MAX_FILE_BYTES + 1)
    except NotRegularFileError as exc:
        msg = (
            f"the catalog path {exc.strerror}; a catalog file must be a regular file: "
            "remove it, or rename it so it does not end in .yaml."
        )
        return LoadedFile(display, None, (_error("FILE_UNREADABLE", msg, Position(display)),))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            msg = "the file is a symlink loop; point the link at a catalog file or remove it."
        else:
            reason = exc.strerror or type(exc).__name__
            msg = f"cannot read the file ({reason}); check the path and its permissions."
        return LoadedFile(display, None, (_error("FILE_UNREADABLE", msg, Position(display)),))
    return load_bytes(data, display)


def load_bytes(data: bytes, display: str) -> LoadedFile:
    """Decode ``data`` strictly as UTF-8 and load it; see :func:`load_text`."""
    start = Position(display, 1, 1)
    if len(data) > MAX_FILE_BYTES:
        msg = (
            f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; "
            "split it into several owner files."
        )
        return LoadedFile(display, None, (_error("FILE_TOO_LARGE", msg, Position(display)),))
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            msg = (
                f"the file starts with a {encoding} byte-order mark; save it as UTF-8 without BOM."
            )
            return LoadedFile(display, None, (_error("BYTE_ORDER_MARK", msg, start),))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = _position_of_offset(data, exc.start, display)
        msg = (
            f"byte 0x{data[exc.start]:02x} is not valid UTF-8; "
            "save the file as UTF-8 (catalog files are UTF-8 only)."
        )
        return LoadedFile(display, None, (_error("NOT_UTF8", msg, where),))
    return load_text(text, display)


def load_text(text: str, display: str) -> LoadedFile:
    """Compose one YAML document from ``text`` into a positioned node tree."""
    if not text.strip():
        msg = "the file is empty; write at least 'owner', 'module' and 'description'."
        return LoadedFile(display, None, (_error("EMPTY_FILE", msg, Position(display, 1, 1)),))
    composer = _Composer(text, display)
    try:
        root = composer.compose()
    except yaml.MarkedYAMLError as exc:
        where, msg = explain_syntax_error(exc, display, text)
        return LoadedFile(display, None, (*composer.diagnostics, _error("YAML_SYNTAX", msg, where)))
    except yaml.YAMLError as exc:
        # Reader errors (control characters) carry a byte offset, not a mark.
        offset = getattr(exc, "position", 0)
        where = _position_of_offset(text.encode("utf-8"), int(offset), display)
        reason = getattr(exc, "reason", "unreadable character")
        character = getattr(exc, "character", None)
        shown = f" #x{ord(character):04x}" if isinstance(character, str) else ""
        if isinstance(character, int):
            shown = f" #x{character:04x}"
        msg = f"YAML error: {reason} (character{shown}); remove it."
        return LoadedFile(display, None, (_error("YAML_SYNTAX", msg, where),))
    # A document of only markers (`---`, `...`) composes to an empty null scalar: as
    # empty as a comment-only file, so the same finding.
    if root is None or (
        isinstance(root, YScalar) and isinstance(root.value, NonString) and not root.value.text
    ):
        msg = "the file holds no YAML document; write at least 'owner', 'module' and 'description'."
        return LoadedFile(display, None, (_error("EMPTY_FILE", msg, Position(display, 1, 1)),))
    diagnostics = list(composer.diagnostics)
    if not isinstance(root, YMap):
        what = "a list" if isinstance(root, YSeq) else "a scalar"
        msg = (
            f"the top level is {what}, not a mapping; a catalog file is a mapping with "
            "'owner', 'module', 'description', 'teed' and 'recorded'."
        )
        diagnostics.append(_error("TOP_LEVEL_NOT_MAPPING", msg, root.position))
        return LoadedFile(display, None, tuple(diagnostics))
    return LoadedFile(display, root, tuple(diagnostics))


class _Mark(Protocol):
    """What a PyYAML or libyaml mark offers: 0-based line and column."""

    line: int
    column: int


# Event classes to what the composer does with them (dispatch on ``type(event)``).
_SCALAR: Final = 0
_MAPPING: Final = 1
_SEQUENCE: Final = 2
_END: Final = 3
_ALIAS: Final = 4
_DOCUMENT: Final = 5
_SKIP: Final = 6
_STREAM_END: Final = 7
_EVENT_KINDS: Final[dict[type, int]] = {
    yaml.ScalarEvent: _SCALAR,
    yaml.MappingStartEvent: _MAPPING,
    yaml.SequenceStartEvent: _SEQUENCE,
    yaml.MappingEndEvent: _END,
    yaml.SequenceEndEvent: _END,
    yaml.AliasEvent: _ALIAS,
    yaml.DocumentStartEvent: _DOCUMENT,
    yaml.StreamStartEvent: _SKIP,
    yaml.DocumentEndEvent: _SKIP,
    yaml.StreamEndEvent: _STREAM_END,
}
_QUOTED_STYLES: Final = frozenset({"'", '"', "|", ">"})


def _event_kind(event: yaml.Event) -> int:
    """What to do with an event of a class not in :data:`_EVENT_KINDS` (a subclass)."""
    for cls, kind in _EVENT_KINDS.items():
        if isinstance(event, cls):
            return kind
    return _SKIP


@dataclass(slots=True)
class _Frame:
    node: YMap | YSeq
    pending_key: YScalar | None = None
    skip_next: bool = False
    """The next value belongs to a refused key and is dropped."""


class _Composer:
    """Builds the node tree from libyaml's events, collecting load diagnostics."""

    def __init__(self, text: str, display: str) -> None:
        self.text = text
        self.display = display
        self.diagnostics: list[Diagnostic] = []
        self.too_deep = False

    def _pos(self, mark: _Mark | None) -> Position:
        if mark is None:
            return Position(self.display, 1, 1)
        return Position(self.display, mark.line + 1, mark.column + 1)

    def _report(self, code: str, message: str, mark: _Mark | None) -> None:
        self.diagnostics.append(_error(code, message, self._pos(mark)))

    def compose(self) -> YNode | None:
        """Consume the whole stream; return the single document's root or ``None``."""
        loader = _Loader(self.text)
        try:
            return self._compose(loader)
        finally:
            loader.dispose()

    def _compose(self, loader: yaml.SafeLoader | yaml.CSafeLoader) -> YNode | None:
        root: YNode | None = None
        documents = 0
        stack: list[_Frame] = []
        get_event = loader.get_event
        kinds = _EVENT_KINDS
        quoted_styles = _QUOTED_STYLES
        display = self.display
        attach = self._attach
        # Plain scalars resolve by their text alone (SafeLoader has no path
        # resolvers), so each distinct text is resolved once per file.
        resolved_tags: dict[str, str] = {}
        resolve = loader.resolve
        path_resolvers = bool(loader.yaml_path_resolvers)
        while True:
            event: Any = get_event()
            if event is None:
                return root
            kind = kinds.get(type(event))
            if kind is None:
                kind = _event_kind(event)
            node: YNode
            if kind == _SCALAR and (
                event.tag is None
                and event.anchor is None
                and not self.too_deep
                and len(stack) < MAX_DEPTH
            ):
                # The common case, inline: an untagged, unanchored scalar.
                mark = event.start_mark
                value = event.value
                scalar: str | NonString = value
                if event.implicit[0] or path_resolvers:
                    tag = resolved_tags.get(value)
                    if tag is None:
                        tag = resolve(yaml.ScalarNode, value, event.implicit)  # type: ignore[no-untyped-call]
                        if not path_resolvers:
                            resolved_tags[value] = tag
                    if tag != _TAG_STR:
                        scalar = NonString(value, tag)
                node = YScalar(
                    scalar, display, mark.line + 1, mark.column + 1, event.style in quoted_styles
                )
            elif kind == _END:
                node = stack.pop().node
            elif kind == _DOCUMENT:
                documents += 1
                if documents == 2:
                    self._report(
                        "MULTIPLE_DOCUMENTS",
                        "the file holds more than one YAML document ('---'); "
                        "keep one document per catalog file.",
                        event.start_mark,
                    )
                continue
            elif kind == _STREAM_END:
                return root
            elif kind == _SKIP:
                continue
            else:
                node = self._node_for(event, loader, depth=len(stack))
                if self.too_deep and stack:
                    # One report, and nothing else checked: the whole file is suspect.
                    stack[0].node.bad = True
                if kind != _SCALAR and (type(node) is YMap or type(node) is YSeq):
                    stack.append(_Frame(node))
                    continue
            # A finished node: into its parent, or the document's root.
            if stack:
                attach(stack[-1], node)
            elif documents == 1:
                root = node

    def _node_for(
        self, event: yaml.Event, loader: yaml.SafeLoader | yaml.CSafeLoader, depth: int
    ) -> YNode:
        mark = event.start_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        if isinstance(event, yaml.AliasEvent):
            self._report(
                "YAML_ALIAS",
                f"alias '*{event.anchor}' is not allowed; write the value out in full "
                "(catalog files use no anchors or aliases).",
                mark,
            )
            return YScalar("", self.display, line, column, bad=True)
        bad = False
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._report(
                "YAML_ANCHOR",
                f"anchor '&{anchor}' is not allowed; remove it and write values out in full.",
                mark,
            )
            bad = True
        if depth >= MAX_DEPTH:
            if not self.too_deep:
                self._report(
                    "TOO_DEEP",
                    f"nesting is deeper than {MAX_DEPTH} levels; a catalog row is a flat mapping.",
                    mark,
                )
            self.too_deep = True
            bad = True
        tag: str | None = getattr(event, "tag", None)
        if isinstance(event, yaml.ScalarEvent):
            return self._scalar(event, loader, line, column, tag, bad=bad)
        expected = _TAG_MAP if isinstance(event, yaml.MappingStartEvent) else _TAG_SEQ
        if tag not in (None, "!", expected):
            self._report_tag(tag, mark)
            bad = True
        if isinstance(event, yaml.MappingStartEvent):
            return YMap({}, {}, self.display, line, column, bad=bad)
        return YSeq([], self.display, line, column, bad=bad)

    def _scalar(
        self,
        event: yaml.ScalarEvent,
        loader: yaml.SafeLoader | yaml.CSafeLoader,
        line: int,
        column: int,
        tag: str | None,
        *,
        bad: bool,
    ) -> YScalar:
        quoted = event.style in _QUOTED_STYLES
        if tag in (None, "!"):
            # The resolver applies YAML 1.1's implicit types, as the safe loader would.
            resolved: str = loader.resolve(  # type: ignore[no-untyped-call]
                yaml.ScalarNode, event.value, event.implicit
            )
        elif tag in _CORE_SCALAR_TAGS:
            resolved = tag
        else:
            self._report_tag(tag, event.start_mark)
            return YScalar("", self.display, line, column, quoted=quoted, bad=True)
        value = event.value if resolved == _TAG_STR else NonString(event.value, resolved)
        return YScalar(value, self.display, line, column, quoted=quoted, bad=bad)

    def _report_tag(self, tag: str | None, mark: _Mark | None) -> None:
        self._report(
            "FORBIDDEN_TAG",
            f"tag '{_short_tag(tag)}' is not allowed; remove it (catalog values are plain strings, "
            "lists and mappings).",
            mark,
        )

    def _attach(self, frame: _Frame, node: YNode) -> None:
        parent = frame.node
        if isinstance(parent, YSeq):
            parent.items.append(node)
            return
        key = frame.pending_key
        if key is not None:
            # A value: its key was accepted (a string, not yet in the mapping).
            frame.pending_key = None
            name = key.value
            if type(name) is str:  # always true: _check_key
                parent.values[name] = node
                parent.key_marks[name] = (key.line, key.column)
            return
        if frame.skip_next:
            frame.skip_next = False
            return
        key_ok = self._check_key(parent, node)
        if key_ok is None:
            frame.skip_next = True
            if not (type(node) is YScalar and node.value in parent.values):
                parent.refused_keys = True
        else:
            frame.pending_key = key_ok

    def _check_key(self, parent: YMap, key: YNode) -> YScalar | None:
        """The key if usable; otherwise report why and return ``None``."""
        if (
            type(key) is YScalar
            and not key.bad
            and type(key.value) is str
            and key.value not in parent.values
        ):
            return key
        where = key.position
        if key.bad:
            return None
        if not isinstance(key, YScalar):
            msg = "a mapping key must be a plain string, not a list or mapping; rename the key."
            self.diagnostics.append(_error("NON_STRING_KEY", msg, where))
            return None
        if isinstance(key.value, NonString):
            text = key.value.text
            msg = (
                f"key {text!r} is read by YAML as {key.value.type_word}, not a string; "
                f"quote it ('{text}':) or use a field name."
            )
            code = "IMPLICIT_NON_STRING"
            if key.value.tag == _CORE_PREFIX + "merge":
                code = "YAML_MERGE_KEY"
                msg = "merge keys ('<<') are not allowed; write the fields out in full."
            self.diagnostics.append(_error(code, msg, where))
            return None
        first_line, first_column = parent.key_marks[key.value]
        msg = (
            f"key {key.value!r} is already set at line {first_line} column "
            f"{first_column} of this mapping; keep one of them."
        )
        self.diagnostics.append(_error("DUPLICATE_KEY", msg, where))
        return None
