"""``metric-catalog infer RUN... [--out FILE | --out-dir DIR]``: draft rows from logged runs.

Each RUN is one run: a log file, a run folder, or a quoted glob of one run's
worker files; every format live-check reads works (see :mod:`codegen.infer`).
Keys the catalog already declares are left alone. The draft goes to stdout
(one YAML document per proposed owner file), to ``--out FILE`` (every row in
one owner file) or to ``--out-dir DIR`` (one file per proposed owner); an
existing file is never overwritten (exit 2, nothing written).
"""

from __future__ import annotations

import argparse
import glob
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..config import NoCatalogError
from . import add_root_argument, config_from_args, load_or_report, refuse_swallowed_paths

if TYPE_CHECKING:
    from ..catalog.model import Catalog

__all__ = ["HELP", "configure", "run"]

HELP: Final = (
    "Draft catalog rows (families, units, kinds, presence, loops) for the keys a run's logs "
    "hold that the catalog does not declare."
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add RUN..., ``--out``, ``--out-dir``, ``--input-format`` and the catalog location."""
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help=(
            "one run each: a log file or run folder in any format live-check reads, or a "
            "quoted glob of one run's worker files ('logs/run1-rank*.jsonl')"
        ),
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write every row to FILE, one new file (--out-dir: a folder)",
    )
    where.add_argument(
        "--out-dir", type=Path, metavar="DIR", help="write one new file per proposed owner"
    )
    parser.add_argument(
        "--input-format",
        metavar="FORMAT",
        help="read the runs as this format instead of detecting it (see live-check)",
    )
    add_root_argument(parser)


def _empty_catalog() -> Catalog:
    from ..catalog.model import Catalog  # noqa: PLC0415

    return Catalog(())


def _runs(given: list[str]) -> list[list[str]] | str:
    runs: list[list[str]] = []
    for item in given:
        if glob.has_magic(item):
            paths = sorted(glob.glob(item))
            if not paths:
                return f"{item!r} matches no file"
            runs.append(paths)
        elif not Path(item).exists():
            return f"no such file or folder: {item}"
        else:
            runs.append([item])
    return runs


def run(args: argparse.Namespace) -> int:
    """Draft and write (or print) the rows; 0 done, 1 catalog errors, 2 bad arguments or input."""
    from ..infer import infer, iter_texts, render, single_file  # noqa: PLC0415

    runs = _runs(args.runs)
    if isinstance(runs, str):
        print(f"error: {runs}", file=sys.stderr)
        return 2
    config = config_from_args(args)
    refuse_swallowed_paths(args, "RUN")
    try:
        catalog = load_or_report(config, warnings=False)
    except NoCatalogError:
        catalog = _empty_catalog()  # no catalog yet: everything logged is undeclared
        print("infer: no catalog files yet; drafting every logged key", file=sys.stderr)
    if catalog is None:
        print("error: the catalog has errors; fix them before drafting rows", file=sys.stderr)
        return 1
    try:
        draft = infer(runs, catalog, input_format=args.input_format)
    except ValueError as exc:
        print(f"error: --input-format: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot read {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for note in draft.notes():
        print(f"infer: {note}", file=sys.stderr)
    if not draft.files:
        print("infer: every logged key is declared; nothing to draft", file=sys.stderr)
        return 0
    if args.out is not None:
        try:
            merged = single_file(draft, args.out.stem, catalog)
        except ValueError as exc:
            print(f"error: --out {args.out}: {exc}", file=sys.stderr)
            return 2
        outputs = [(args.out, render(merged, draft.observations.runs))]
    elif args.out_dir is not None:
        outputs = [(args.out_dir / f.file_name, text) for f, text in iter_texts(draft)]
    else:
        print("\n---\n".join(text for _, text in iter_texts(draft)), end="")
        print(f"infer: {draft.rows} row(s) in {len(draft.files)} file(s)", file=sys.stderr)
        return 0
    existing = [str(path) for path, _ in outputs if path.exists() or path.is_symlink()]
    if existing:
        print(
            f"error: will not overwrite {', '.join(existing)}; choose another --out/--out-dir "
            "(nothing was written)",
            file=sys.stderr,
        )
        return 2
    for path, text in outputs:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:  # "x": never over a file
            handle.write(text)
        print(f"infer: wrote {path}", file=sys.stderr)
    print(f"infer: {draft.rows} row(s) in {len(outputs)} file(s)", file=sys.stderr)
    return 0
