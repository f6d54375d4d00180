"""Every template, built-in or a project's, renders here: in Jinja's sandbox, errors positioned.

A project's ``templates-dir`` (overrides of the built-in templates and the
templates of its ``outputs``) is code someone else may have written, and
``generate`` runs in CI and on laptops. So every template renders in
:class:`jinja2.sandbox.ImmutableSandboxedEnvironment`: no attribute that
starts with ``_`` (``cycler.__init__.__globals__``, ``''.__class__.__mro__``),
no method that changes a list, dict or set (``rows.append``), no
``str.format`` escape hatch, ``range`` capped. What a template may reach is
what it is handed: the variables of its renderer, the escaping filters and
helpers listed in ``docs/guide/adopt.md``, and Jinja's own filters, tests and
globals, all under the same rules.

:func:`render` turns every failure into a :class:`TemplateOutputError` naming
the template file (and line) and the fix; a sandbox violation is a
:class:`TemplateSandboxError`, which ``generate`` and ``check`` refuse with
exit 2 before anything is written.
"""

from __future__ import annotations

import os
import posixpath
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..config import ConfigError
from ..safe_fs import read_regular
from ..safe_text import shown

__all__ = [
    "TemplateOutputError",
    "TemplateSandboxError",
    "render",
    "sandboxed_environment",
]

_SANDBOX_HELP: Final = (
    "templates are sandboxed: they see only the variables and filters they are given "
    "(docs/guide/adopt.md lists them), no attribute starting with '_' and no method that "
    "changes a value; remove that expression from the template"
)


class TemplateOutputError(ValueError):
    """A project's template is missing, invalid, or uses a variable it does not get."""


class TemplateSandboxError(TemplateOutputError, ConfigError):
    """A template reached for something outside the sandbox (an unsafe attribute or call).

    A :class:`~codegen.config.ConfigError` too: the project's templates are part of
    its configuration, and the commands refuse them with exit 2, writing nothing.
    """


class _Sandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, stricter: an unsafe attribute fails where it is reached.

    Jinja hands back an undefined value for it, which a filter such as ``attr``
    may turn into a plain "no attribute" error; raising here keeps every escape
    attempt a :class:`SecurityError` (exit 2), whatever comes after it.
    """

    def unsafe_undefined(self, obj: object, attribute: str) -> jinja2.Undefined:
        """Raise :class:`SecurityError` for an attribute the sandbox refuses."""
        msg = f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe."
        raise SecurityError(msg)


_TEMPLATE_BYTES: Final = 4 * 1024 * 1024
"""Largest template read (the built-in ones are a few KiB)."""


class _ContainedLoader(jinja2.FileSystemLoader):
    """A file loader that reads, through :mod:`codegen.safe_fs`, only templates inside ``within``.

    Template names cannot climb out of their folder (Jinja refuses ``..``), but a
    symbolic link can point anywhere: ``templates/t.j2 -> ~/.ssh/id_rsa`` would
    render that file into a generated one. The link is refused before a byte of
    its target is read, and a template swapped for a FIFO or a device, or larger
    than :data:`_TEMPLATE_BYTES`, is refused instead of waited on or read whole.
    """

    def __init__(self, folders: Sequence[Path], within: Sequence[Path]) -> None:
        super().__init__(list(folders))
        self.within = tuple(Path(os.path.realpath(folder)) for folder in within)

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        """The template's source, or :class:`TemplateSandboxError` when it is not readable
        as one (outside the project, not a regular file, too large, not UTF-8)."""
        pieces = split_template_path(template)
        found = (posixpath.join(folder, *pieces) for folder in self.searchpath)
        filename = next((name for name in found if os.path.isfile(name)), None)
        if filename is None:
            # Jinja's own message lists the folders searched.
            return super().get_source(environment, template)
        real = Path(os.path.realpath(filename))
        if not any(real.is_relative_to(folder) for folder in self.within):
            msg = (
                f"template {shown(template)!r} ({shown(filename)}) is a link to "
                f"{shown(str(real))}, outside the project; templates are read only from "
                "inside it: replace the link by the file itself"
            )
            raise TemplateSandboxError(msg)
        try:
            mtime = os.stat(real).st_mtime_ns
            source = read_regular(real, _TEMPLATE_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.reason if isinstance(exc, UnicodeDecodeError) else exc.strerror or exc
            msg = (
                f"template {shown(template)!r} ({shown(filename)}) cannot be read ({reason}); "
                f"a template is a UTF-8 regular file of at most {_TEMPLATE_BYTES} bytes"
            )
            raise TemplateSandboxError(msg) from None

        def uptodate() -> bool:
            try:
                return os.stat(real).st_mtime_ns == mtime
            except OSError:
                return False

        return source, os.path.normpath(filename), uptodate


def sandboxed_environment(
    folders: Sequence[Path],
    *,
    within: Sequence[Path],
    autoescape: bool | Callable[[str | None], bool],
    filters: Mapping[str, Callable[..., object]],
    globals_: Mapping[str, object],
) -> jinja2.Environment:
    """A sandboxed environment loading from ``folders`` (first match wins).

    A template file must resolve (links followed) inside one of ``within``: the
    built-in templates' folder and the project root. Undefined names fail
    (``StrictUndefined``); blocks trim their newlines and the file's trailing
    newline is kept, as every built-in template expects.
    """
    env = _Sandbox(
        loader=_ContainedLoader(folders, within),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(filters)
    env.globals.update(globals_)
    return env


def _shown(filename: str | None, root: Path | None) -> str:
    """A template's file as errors name it: relative to the project root when inside it."""
    if filename is None:
        return "<template>"
    path = Path(filename)
    if root is not None:
        try:
            return shown(path.relative_to(root).as_posix())
        except ValueError:
            pass
    return shown(path.as_posix())


def _template_frame(
    tb: types.TracebackType | None, env: jinja2.Environment
) -> tuple[str, int] | None:
    """The innermost traceback frame inside a template file: (file name, template line).

    Jinja rewrites a render's traceback so each template frame carries the
    template's file name and line.
    """
    loader = env.loader
    folders = (
        tuple(str(Path(p)) for p in loader.searchpath)
        if isinstance(loader, jinja2.FileSystemLoader)
        else ()
    )
    found: tuple[str, int] | None = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(folders) and tb.tb_lineno is not None:
            found = (filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def render(
    env: jinja2.Environment,
    name: str,
    values: Mapping[str, object],
    *,
    root: Path | None,
    variables: Iterable[str],
    missing: str | None = None,
) -> str:
    """``name`` rendered with ``values``; any failure as a positioned :class:`TemplateOutputError`.

    ``root`` is the project root the message names files relative to;
    ``variables`` are the names the template sees (listed when it uses
    another); ``missing`` is what to say when ``name`` itself is not found.

    Raises:
        TemplateSandboxError: The template reached outside the sandbox.
        TemplateOutputError: The template is missing, invalid or failed.
    """
    try:
        template = env.get_template(name)
        return template.render(values)
    except TemplateOutputError:
        raise  # already says where and what (a template link out of the project)
    except jinja2.TemplateNotFound as exc:
        if missing is not None and exc.name == name:
            raise TemplateOutputError(missing) from None
        msg = (
            f"template {exc.name!r} (used by {name!r}) is not in the template folders; "
            "create it or fix the include"
        )
        raise TemplateOutputError(msg) from None
    except jinja2.TemplateSyntaxError as exc:
        where = f"{_shown(exc.filename, root)}:{exc.lineno}"
        raise TemplateOutputError(f"{where}: {exc.message}; fix the template") from None
    except SecurityError as exc:
        frame = _template_frame(exc.__traceback__, env)
        where = f"{_shown(frame[0], root)}:{frame[1]}" if frame else name
        raise TemplateSandboxError(f"{where}: {exc}; {_SANDBOX_HELP}") from None
    except jinja2.UndefinedError as exc:
        frame = _template_frame(exc.__traceback__, env)
        where = f"{_shown(frame[0], root)}:{frame[1]}" if frame else name
        msg = f"{where}: {exc.message}; a template sees {', '.join(variables)}"
        raise TemplateOutputError(msg) from None
    except Exception as exc:  # noqa: BLE001 - a template's own failure, whatever it is
        frame = _template_frame(exc.__traceback__, env)
        where = f"{_shown(frame[0], root)}:{frame[1]}" if frame else name
        msg = f"{where}: {type(exc).__name__}: {exc}; fix the template"
        raise TemplateOutputError(msg) from None
