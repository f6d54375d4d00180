"""``frozen_record``: ``@dataclass(frozen=True, slots=True)`` without importing ``dataclasses``.

Importing :mod:`dataclasses` pulls in :mod:`inspect` (and with it ``ast``,
``dis``, ``tokenize``, ``enum``, ...), which cost more than the rest of
:mod:`metric_catalog.vocabulary` and every generated module's rows together.
The vocabulary's three row classes only need what ``dataclass(frozen=True,
slots=True)`` generates, so this module writes the same methods itself:

* ``__init__`` with the fields as parameters in declaration order (defaults
  from the class body, annotations as written), setting each slot through
  ``object.__setattr__`` and then calling ``__post_init__``;
* ``__repr__``, ``__eq__`` (same class only) and ``__hash__`` over the
  fields' tuple, ``__match_args__``, ``__slots__``;
* ``__setattr__``/``__delattr__`` raising
  :class:`dataclasses.FrozenInstanceError` (imported when one is raised);
* ``__getstate__``/``__setstate__``, so rows pickle as a slotted frozen
  dataclass does (Ray ships them to workers), and ``__replace__``
  (``copy.replace``, as Python 3.13's dataclasses add).

The classes stay dataclasses for every caller: ``__dataclass_fields__`` and
``__dataclass_params__`` are computed on first access (importing
:mod:`dataclasses` then), so :func:`dataclasses.fields`,
:func:`dataclasses.replace`, :func:`dataclasses.asdict` and
:func:`dataclasses.is_dataclass` behave as before. Type checkers see
``dataclass_transform`` (frozen by default), so constructor calls are
checked as before.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy: True)

if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform

    _C = TypeVar("_C", bound=type)

__all__ = ["frozen_record"]

_MISSING = object()
# Names a class body defines that must not be copied onto the slotted class.
_SKIPPED = frozenset({"__dict__", "__weakref__"})


class _LazyDataclassFields:
    """Class attribute standing for ``__dataclass_fields__``/``__dataclass_params__``.

    On first access it builds the real values with :mod:`dataclasses` (from a
    plain twin of the class with the same annotations and defaults) and
    replaces itself on the class with them.
    """

    __slots__ = ("attribute",)

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, instance: object, owner: type) -> Any:
        import dataclasses  # noqa: PLC0415 - the point of this module is not importing it eagerly

        spec: dict[str, Any] = owner.__dict__["__record_spec__"]
        twin_body: dict[str, Any] = {
            "__annotations__": dict(spec["annotations"]),
            "__module__": owner.__module__,
            "__qualname__": owner.__qualname__,
        }
        twin_body.update(spec["defaults"])
        twin: Any = dataclasses.dataclass(frozen=True)(type(owner.__name__, (), twin_body))
        type.__setattr__(owner, "__dataclass_fields__", twin.__dataclass_fields__)
        type.__setattr__(owner, "__dataclass_params__", twin.__dataclass_params__)
        return owner.__dict__[self.attribute]


def _frozen_error(message: str) -> AttributeError:
    import dataclasses  # noqa: PLC0415 - only on the error path

    return dataclasses.FrozenInstanceError(message)


def _build(cls: type) -> type:
    body = dict(cls.__dict__)
    annotations: dict[str, Any] = body.get("__annotations__", {})
    names = tuple(annotations)
    defaults = {name: body[name] for name in names if name in body}
    seen_default = False
    params: list[str] = []
    for name in names:
        if name in defaults:
            seen_default = True
            params.append(f"{name}: __annotation_{name} = __default_{name}")
        elif seen_default:
            msg = f"non-default argument {name!r} follows default argument"
            raise TypeError(msg)
        else:
            params.append(f"{name}: __annotation_{name}")
    # Each slot is set through its own descriptor's __set__ (bound once the class
    # exists), which skips the name lookup object.__setattr__ makes per field.
    assigns = "".join(f"    __set_{name}(self, {name})\n" for name in names)
    post_init = "    self.__post_init__()\n" if "__post_init__" in body else ""
    fields_tuple = "".join(f"self.{name}, " for name in names)
    other_tuple = "".join(f"other.{name}, " for name in names)
    shown = ", ".join(f"{name}={{self.{name}!r}}" for name in names)
    source = (
        f"def __init__(self, {', '.join(params)}) -> __return:\n{assigns}{post_init}"
        "    return None\n"
        "def __repr__(self):\n"
        f'    return self.__class__.__qualname__ + f"({shown})"\n'
        "def __eq__(self, other):\n"
        "    if other.__class__ is self.__class__:\n"
        f"        return ({fields_tuple}) == ({other_tuple})\n"
        "    return NotImplemented\n"
        "def __hash__(self):\n"
        f"    return hash(({fields_tuple}))\n"
        "def __getstate__(self):\n"
        f"    return [{fields_tuple}]\n"
        "def __setstate__(self, state):\n"
        "    for name, value in zip(__names, state):\n"
        "        __setattr(self, name, value)\n"
    )
    namespace: dict[str, Any] = {
        "__setattr": object.__setattr__,
        "__return": None,
        "__names": names,
    }
    for name in names:
        namespace[f"__annotation_{name}"] = annotations[name]
        if name in defaults:
            namespace[f"__default_{name}"] = defaults[name]
    # Not inheriting this module's `from __future__ import annotations`: the
    # annotations must be the field annotations themselves, as dataclass sets them.
    code = compile(source, f"<frozen_record {cls.__qualname__}>", "exec", dont_inherit=True)
    exec(code, namespace)  # source built above from the class's own field names

    def frozen_setattr(self: object, name: str, value: object) -> None:
        raise _frozen_error(f"cannot assign to field {name!r}")

    def frozen_delattr(self: object, name: str) -> None:
        raise _frozen_error(f"cannot delete field {name!r}")

    for name in (*names, *_SKIPPED):
        body.pop(name, None)
    body["__slots__"] = names
    body["__match_args__"] = names
    body["__record_spec__"] = {"annotations": annotations, "defaults": defaults}
    body["__dataclass_fields__"] = _LazyDataclassFields("__dataclass_fields__")
    body["__dataclass_params__"] = _LazyDataclassFields("__dataclass_params__")
    qualname = cls.__qualname__

    def replace(self: object, /, **changes: object) -> object:
        import dataclasses  # noqa: PLC0415 - only when a copy is asked for

        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    methods: dict[str, Any] = {
        "__setattr__": frozen_setattr,
        "__delattr__": frozen_delattr,
        "__replace__": replace,  # copy.replace (Python 3.13+ dataclasses define it too)
    }
    for method in ("__init__", "__repr__", "__eq__", "__hash__", "__getstate__", "__setstate__"):
        methods[method] = namespace[method]
    for method, function in methods.items():
        if method in body and method not in ("__init__", "__hash__"):
            continue  # a method the class writes itself wins, as with dataclass
        function.__qualname__ = f"{qualname}.{method}"
        function.__module__ = cls.__module__
        body[method] = function
    new = type(cls)(cls.__name__, cls.__bases__, body)
    new.__qualname__ = qualname
    for name in names:
        namespace[f"__set_{name}"] = new.__dict__[name].__set__
    return new


if TYPE_CHECKING:

    @dataclass_transform(frozen_default=True)
    def frozen_record(cls: _C) -> _C:
        """Type checkers: a frozen dataclass."""

else:

    def frozen_record(cls: type) -> type:
        """Turn ``cls`` into what ``@dataclass(frozen=True, slots=True)`` would make of it."""
        return _build(cls)
