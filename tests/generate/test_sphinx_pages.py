"""metric_catalog.sphinx without Sphinx: owner page HTML, index data and per-page hashes.

The resolved catalog of the docs fixtures (one owner full of injection attempts)
is rendered the way ``generate`` writes it and loaded the way the extension
reads it; the HTML is parsed back so each check sees what a reader gets.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.catalog.model import Catalog, CatalogFile
from codegen.generate.docs import render_catalog_data
from metric_catalog.sphinx import _data, _html, index_data
from tests.docs_fixtures import HOSTILE_DESCRIPTIONS, SCRIPT_DESCRIPTION, fixture_catalog

ROOT = Path(__file__).resolve().parents[2]
ALPHA = "catalog/fixture_alpha.yaml"
HOSTILE = "catalog/fixture_hostile.yaml"
_ALLOWED_TAGS = {
    *("div", "p", "a", "code", "wbr", "table", "colgroup", "col", "thead", "tbody"),
    *("tr", "th", "td", "small", "span", "em", "ul", "li", "br", "details", "summary"),
}


class _Page(HTMLParser):
    """Rows of the owner table by id: cell texts; every tag and href seen."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.hrefs: list[str] = []
        self.rows: dict[str, list[str]] = {}
        self.paragraphs: dict[str, list[str]] = {}
        self._row: str | None = None
        self._cell: list[str] | None = None
        self._in_p = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "a" and values.get("href") is not None:
            self.hrefs.append(str(values["href"]))
        if tag == "tr" and values.get("id"):
            self._row = str(values["id"])
            self.rows[self._row] = []
            self.paragraphs[self._row] = []
        elif tag == "td" and self._row is not None:
            self._cell = []
            self.rows[self._row].append("")
        elif tag == "p" and self._row is not None:
            self._in_p = True
            self.paragraphs[self._row].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None
        elif tag == "p":
            self._in_p = False

    def handle_data(self, data: str) -> None:
        if self._row is not None and self.rows[self._row]:
            self.rows[self._row][-1] += data
            if self._in_p:
                self.paragraphs[self._row][-1] += data


def _href(target: str) -> str:
    kind, _, path = target.partition(":")
    name = Path(path).name
    return f"{Path(path).stem}.html" if kind == "page" else f"../catalog-source/{name}.html"


def _load(tmp_path: Path, catalog: Catalog) -> _data.CatalogData:
    path = tmp_path / f"catalog-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(render_catalog_data(catalog), encoding="utf-8")
    return _data.load(path)


@pytest.fixture
def data(tmp_path: Path) -> _data.CatalogData:
    """The fixture catalog as the extension loads it."""
    return _load(tmp_path, fixture_catalog())


def _page(data: _data.CatalogData, path: str) -> _Page:
    parser = _Page()
    parser.feed(_html.owner_page_html(data, path, _href))
    return parser


def _files() -> tuple[CatalogFile, CatalogFile]:
    """(alpha, hostile) fixture files."""
    files = {f.path: f for f in fixture_catalog().files}
    return files[ALPHA], files[HOSTILE]


def _flat(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


@pytest.mark.parametrize("key", sorted(HOSTILE_DESCRIPTIONS))
def test_hostile_description_is_its_own_text(data: _data.CatalogData, key: str) -> None:
    """Each injection attempt shows as exactly its text in the series' description."""
    page = _page(data, HOSTILE)
    anchor = _data.series_anchor(f"rl.fixture.hostile.{key}")
    assert page.paragraphs[anchor][0] == _flat(HOSTILE_DESCRIPTIONS[key])


@pytest.mark.parametrize("path", [ALPHA, HOSTILE])
def test_no_markup_leaks_from_yaml(data: _data.CatalogData, path: str) -> None:
    """Only the extension's own tags appear; YAML text never opens a tag or a link."""
    page = _page(data, path)
    assert set(page.tags) <= _ALLOWED_TAGS
    assert all(re.fullmatch(r"(#|\.\./catalog-source/|fixture_)[\w./#-]*", h) for h in page.hrefs)


def test_owner_description_and_name_are_text(data: _data.CatalogData) -> None:
    """The owner's name and description reach the intro as text."""
    body = _html.owner_page_html(data, HOSTILE, _href)
    assert "<script>" not in body
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body
    assert html.escape(SCRIPT_DESCRIPTION) in body


@pytest.mark.parametrize("path", [ALPHA, HOSTILE])
def test_each_row_is_an_entry_with_its_anchor_in_declaration_order(
    data: _data.CatalogData, path: str
) -> None:
    """Row ids are the series anchors, in the order the YAML declares them."""
    catalog_file = next(f for f in fixture_catalog().files if f.path == path)
    expected = [_data.series_anchor(r.name) for r in sorted(catalog_file.rows, key=_line)]
    assert list(_page(data, path).rows) == expected


def _line(row: object) -> int:
    return int(row.position.line)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "logger_key"),
    [
        ("rl.fixture.reward.mean", "train/reward"),
        ("rl.fixture.old_reward", "old_reward (no prefix)"),
        ("rl.fixture.batch.duration", "recorded"),
    ],
)
def test_logger_key_column_shows_the_prefix(
    data: _data.CatalogData, name: str, logger_key: str
) -> None:
    """The logger-key cell is the key as logged (prefix/key), or says the row is recorded."""
    assert _page(data, ALPHA).rows[_data.series_anchor(name)][1] == logger_key


def test_entry_names_constant_registry_key_and_source(data: _data.CatalogData) -> None:
    """The description cell ends with the Python constant, registry key and YAML line link."""
    page = _page(data, ALPHA)
    cell = page.rows["rl-fixture-tokens"][4]
    assert "metric_catalog.generated.fixture_alpha.FIXTURE_TOKENS" in cell
    assert "registry key fixture_tokens" in cell
    assert cell.endswith("catalog/fixture_alpha.yaml:11")
    assert "../catalog-source/fixture_alpha.yaml.html#L11" in page.hrefs


def test_histogram_names_its_scraped_series(data: _data.CatalogData) -> None:
    """A histogram's Prometheus cell adds the _bucket, _count and _sum suffixes (after the
    series' name and stability)."""
    cell = _page(data, ALPHA).rows["rl-fixture-batch-duration"][0]
    prometheus = "rl_fixture_batch_duration_seconds (_bucket, _count, _sum)"
    assert cell == f"rl.fixture.batch.duration alpha{prometheus}"


class TestDeprecation:
    """A deprecated row is tagged and its notice links the replacement's entry."""

    def test_same_page_replacement(self, data: _data.CatalogData) -> None:
        """The notice names the version and links the replacement on the same page."""
        body = _html.owner_page_html(data, ALPHA, _href)
        assert "Deprecated since 0.2</p>" in body
        assert '<a href="#rl-fixture-reward-mean"><code>rl.<wbr>fixture.' in body
        assert "<p>Same value.</p>" in body

    def test_other_page_replacement_and_escaped_version(self, data: _data.CatalogData) -> None:
        """A replacement owned elsewhere links that page; the version is text."""
        body = _html.owner_page_html(data, HOSTILE, _href)
        assert 'href="fixture_alpha.html#rl-fixture-tokens"' in body
        assert "Deprecated since 0.3 &lt;b&gt;" in body

    def test_replacement_outside_catalog_is_named_not_linked(self, tmp_path: Path) -> None:
        """A replaced_by no row declares is named as text, never a dead link."""
        alpha = _files()[0]
        old = alpha.teed[2]
        assert old.deprecated is not None
        gone = replace(old, deprecated=replace(old.deprecated, replaced_by="rl.gone.away"))
        data = _load(tmp_path, Catalog((replace(alpha, teed=(alpha.teed[0], gone)),)))
        body = _html.owner_page_html(data, ALPHA, _href)
        assert "which is not in the catalog" in body
        assert "#rl-gone-away" not in body

    def test_a_deprecation_without_release_says_deprecated(self, tmp_path: Path) -> None:
        """``since`` is optional: the notice then says "Deprecated", never "since " alone."""
        alpha = _files()[0]
        old = alpha.teed[2]
        assert old.deprecated is not None
        undated = replace(old, deprecated=replace(old.deprecated, since=""))
        data = _load(tmp_path, Catalog((replace(alpha, teed=(alpha.teed[0], undated)),)))
        body = _html.owner_page_html(data, ALPHA, _href)
        assert '<p class="admonition-title">Deprecated</p>' in body
        assert "Deprecated since" not in body


def test_empty_owner_says_so(tmp_path: Path) -> None:
    """A file without rows gets a sentence saying so and no empty table."""
    alpha = _files()[0]
    data = _load(tmp_path, Catalog((replace(alpha, teed=(), recorded=()),)))
    body = _html.owner_page_html(data, ALPHA, _href)
    assert "This owner declares no series." in body
    assert "<table" not in body


@pytest.mark.parametrize(
    ("value", "markup"),
    [
        ("rl.kl.divergence", "<code>rl.<wbr>kl.<wbr>divergence</code>"),
        ("train/kl_penalty", "<code>train/<wbr>kl_<wbr>penalty</code>"),
        ("a<b>&\"'", "<code>a&lt;b&gt;&amp;&quot;&#x27;</code>"),
        ("validation-{x}/k", '<code><span class="mc-nb">validation-{x}/</span><wbr>k</code>'),
        ("trailing.", "<code>trailing.</code>"),
    ],
)
def test_identifier_breaks_only_after_dot_underscore_slash(value: str, markup: str) -> None:
    """<wbr> goes after ".", "_" and "/" (not at the end); everything is escaped."""
    assert _html.ident(value) == markup


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_identifier_markup_is_the_escaped_text_plus_break_points(value: str) -> None:
    """Whatever the text, removing the <wbr>s gives it back, and each follows . _ or /."""
    markup = _html.ident(value)
    inner = markup.removeprefix("<code>").removesuffix("</code>")
    inner = inner.replace('<span class="mc-nb">', "").replace("</span>", "")
    assert html.unescape(inner.replace("<wbr>", "")) == " ".join(value.split())
    assert all(inner[i - 1] in "._/" for i in (m.start() for m in re.finditer("<wbr>", inner)))
    assert "<" not in inner.replace("<wbr>", "")


class TestPageHash:
    """A page's hash changes exactly when what it shows changes."""

    def test_a_row_change_changes_only_its_owner_page(self, tmp_path: Path) -> None:
        """Editing one alpha row leaves the hostile page's hash alone."""
        before = _load(tmp_path, fixture_catalog())
        alpha, hostile = _files()
        edited = replace(alpha, teed=(replace(alpha.teed[0], description="New."), *alpha.teed[1:]))
        after = _load(tmp_path, Catalog((hostile, edited)))
        assert before.page_hash(ALPHA) != after.page_hash(ALPHA)
        assert before.page_hash(HOSTILE) == after.page_hash(HOSTILE)

    def test_a_moved_replacement_changes_the_deprecated_rows_page(self, tmp_path: Path) -> None:
        """The hostile page links rl.fixture.tokens; dropping that row changes its hash."""
        before = _load(tmp_path, fixture_catalog())
        alpha, hostile = _files()
        without = replace(alpha, teed=(alpha.teed[0], alpha.teed[2]))
        after = _load(tmp_path, Catalog((hostile, without)))
        assert before.page_hash(HOSTILE) != after.page_hash(HOSTILE)

    def test_unknown_file_has_no_hash(self, data: _data.CatalogData) -> None:
        """A page whose file left the catalog hashes to "" (so it is outdated)."""
        assert data.page_hash("catalog/gone.yaml") == ""


def test_index_data_is_columnar_and_sorted(data: _data.CatalogData) -> None:
    """One short list per row, sorted by name; tables hold kinds, units, stabilities, files."""
    pages = {ALPHA: "metrics/fixture_alpha.html", HOSTILE: "metrics/fixture_hostile.html"}
    index = index_data(data, pages)
    json.dumps(index)  # plain JSON
    names = [row[0] for row in index["rows"]]
    assert names == sorted(r.name for _, r in fixture_catalog().rows())
    by_name = {row[0]: row for row in index["rows"]}
    tokens = by_name["rl.fixture.tokens"]
    assert index["files"][tokens[1]] == {
        "owner": "examples.fixture_alpha",
        "module": "fixture_alpha",
        "page": "metrics/fixture_alpha.html",
    }
    assert index["kinds"][tokens[2]] == "counter"
    assert index["units"][tokens[3]] == "{token}"
    assert index["stabilities"][tokens[4]] == "beta"
    assert tokens[5:9] == ["rl_fixture_tokens_total", "train/num_tokens", 0, tokens[8]]
    assert by_name["rl.fixture.batch.duration"][6] == ""
    assert by_name["rl.fixture.old_reward"][7] == 1


def test_attributes_show_on_the_entry_and_in_the_index(tmp_path: Path) -> None:
    """Rows with attributes list them on their entry and index them for the filter."""
    path = tmp_path / "catalog.json"
    document = json.loads(render_catalog_data(fixture_catalog()))
    for row in document["rows"]:
        if row["name"] == "rl.fixture.tokens":
            row["attributes"] = [
                {"name": "rl.worker", "type": "string", "requirement_level": "required"},
                {"name": "rl.phase", "type": "string", "values": ["train", "<eval>"]},
            ]
    path.write_text(json.dumps(document), encoding="utf-8")
    data = _data.load(path)
    body = _html.owner_page_html(data, ALPHA, _href)
    assert "<code>rl.<wbr>worker</code> (string; required)" in body
    assert "values <code>train</code>, <code>&lt;eval&gt;</code>" in body
    index = index_data(data, {})
    tokens = next(row for row in index["rows"] if row[0] == "rl.fixture.tokens")
    assert [index["attributes"][i] for i in tokens[9]] == ["rl.worker", "rl.phase"]


def test_a_row_teed_under_several_prefixes_lists_each_key(tmp_path: Path) -> None:
    """prefixes [train, ""]: the logger-key cell and the index data hold both keys."""
    path = tmp_path / "catalog.json"
    document = json.loads(render_catalog_data(fixture_catalog()))
    for row in document["rows"]:
        if row["name"] == "rl.fixture.reward.mean":
            row["prefixes"] = ["train", ""]
    path.write_text(json.dumps(document), encoding="utf-8")
    data = _data.load(path)
    page = _Page()
    page.feed(_html.owner_page_html(data, ALPHA, _href))
    assert page.rows["rl-fixture-reward-mean"][1] == "train/rewardreward (no prefix)"
    index = index_data(data, {})
    reward = next(row for row in index["rows"] if row[0] == "rl.fixture.reward.mean")
    assert reward[6] == "train/reward\nreward"


def test_an_entrys_attribute_links_to_its_declaration_and_shows_its_label(
    tmp_path: Path,
) -> None:
    """The attribute on a series links to the row declaring it and names its Prometheus label.

    Declared in another file, the link goes to that file's page; a change to where an
    attribute is declared changes the hash of every page that links to it.
    """
    path = tmp_path / "catalog.json"
    document = json.loads(render_catalog_data(fixture_catalog()))
    document["attributes"] = [
        {"name": "rl.worker", "type": "string", "label": "rl_worker", "file": HOSTILE},
        {"name": "rl.phase", "type": "string", "label": "rl_phase", "file": ALPHA},
    ]
    for row in document["rows"]:
        if row["name"] == "rl.fixture.tokens":
            row["attributes"] = [
                {"name": "rl.worker", "label": "rl_worker", "requirement_level": "required"},
                {"name": "rl.phase", "label": "rl_phase", "requirement_level": "opt_in"},
                {"name": "rl.unknown", "requirement_level": "opt_in"},
            ]
    path.write_text(json.dumps(document), encoding="utf-8")
    data = _data.load(path)
    body = _html.owner_page_html(data, ALPHA, _href)
    page = _Page()
    page.feed(body)
    assert f"{_href('page:' + HOSTILE)}#attr-rl-worker" in page.hrefs
    assert "#attr-rl-phase" in page.hrefs  # declared on this very page: a local anchor
    assert not any(h.endswith("#attr-rl-unknown") for h in page.hrefs)
    assert '<span class="mc-label">label <code>rl_<wbr>worker</code></span>' in body
    before = data.page_hash(ALPHA)
    document["attributes"][0]["file"] = ALPHA
    path.write_text(json.dumps(document), encoding="utf-8")
    assert _data.load(path).page_hash(ALPHA) != before


FULL_TABLE = {"train": "a", "<eval>": "b"}


@pytest.mark.parametrize(
    ("table", "default", "other_row"),
    [
        (FULL_TABLE, None, None),
        ({"train": "a"}, None, "<em>unset</em>"),
        ({"train": "a"}, "z", "<code>z</code>"),
        (None, None, None),
    ],
)
def test_a_derived_attribute_shows_its_source_and_table(
    tmp_path: Path, table: dict[str, str] | None, default: str | None, other_row: str | None
) -> None:
    """ "derived from <source>" with the table (escaped); an "any other" row only when a
    source value can miss the table; nothing for an attribute that is not derived."""
    path = tmp_path / "catalog.json"
    document = json.loads(render_catalog_data(fixture_catalog()))
    values = [{"value": v, "description": "."} for v in ("train", "<eval>")]
    document["attributes"] = [
        {"name": "rl.phase", "type": "string", "label": "rl_phase", "file": ALPHA, "values": values}
    ]
    derive = None if table is None else {"from": "rl.phase", "map": table, "default": default}
    for row in document["rows"]:
        if row["name"] == "rl.fixture.tokens":
            row["attributes"] = [
                {"name": "rl.phase", "requirement_level": "required", "derive": None},
                {"name": "rl.kind", "requirement_level": "required", "derive": derive},
            ]
    path.write_text(json.dumps(document), encoding="utf-8")
    body = _html.owner_page_html(_data.load(path), ALPHA, _href)
    if table is None:
        assert "mc-derive" not in body
        return
    assert body.count('<details class="mc-derive">') == 1
    assert '<summary>derived from <a href="#attr-rl-phase"><code>rl.<wbr>phase</code></a>' in body
    assert "<tr><td><code>train</code></td><td><code>a</code></td></tr>" in body
    if table is FULL_TABLE:
        assert "<tr><td><code>&lt;eval&gt;</code></td><td><code>b</code></td></tr>" in body
    if other_row is None:
        assert "any other" not in body
    else:
        assert f"<tr><td><em>any other</em></td><td>{other_row}</td></tr>" in body


SHADOWED = """\
owner: verl.trainer
module: timing
description: Timers of the trainer.
prefix: ""
attributes:
  - name: rl.stage
    type: string
    description: A timed stage.
    max_cardinality: "64"
teed:
  - logger_key: "timing_s/{rl.stage}"
    name: rl.timing.stage
    kind: gauge
    unit: s
    description: Wall clock of one stage.
    attributes:
      - ref: rl.stage
  - logger_key: timing_s/generate_max
    name: rl.timing.generate_max
    kind: gauge
    unit: s
    description: Slowest generation call.
"""


def test_a_family_entry_links_the_literal_rows_that_shadow_it(tmp_path: Path) -> None:
    """The most specific row takes a key: the family's entry says which literal rows do."""
    from codegen.catalog.pipeline import load_and_check

    root = tmp_path / "project"
    (root / "catalog").mkdir(parents=True)
    (root / "catalog" / "timing.yaml").write_text(SHADOWED, encoding="utf-8")
    result = load_and_check(root=root)
    assert list(result.diagnostics) == []
    page = _page(_load(tmp_path, result.catalog), "catalog/timing.yaml")
    family = " ".join(page.paragraphs["rl-timing-stage"])
    assert "the most specific: rl.timing.generate_max" in family
    assert "#rl-timing-generate-max" in page.hrefs
    assert not any("most specific" in p for p in page.paragraphs["rl-timing-generate-max"])


SHOWN: Final = {
    "attributes": ("rl-demo-seen-tokens", "demo.phase"),
    "cardinality_limit": ("rl-demo-seen-tokens", "at most 50 attribute sets"),
    "condition": ("rl-demo-seen-tokens", "config.count_tokens"),
    "deprecated": ("rl-demo-seen-tokens", "Deprecated since 0.2"),
    "description": ("rl-demo-seen-tokens", "Seen tokens."),
    "emitted_by": ("rl-demo-seen-tokens", "logged by train"),
    "every": ("rl-demo-seen-tokens", "every 5 steps"),
    "phase": ("rl-demo-seen-tokens", "every 5 steps (phase -1)"),
    "at_last_step": ("rl-demo-seen-tokens", "and at the last step"),
    "non_finite": ("rl-demo-seen-tokens", "NaN and infinities are legitimate values"),
    "first_step": ("rl-demo-seen-tokens", "from step 10"),
    "goal": ("rl-demo-seen-tokens", "bigger is better"),
    "kind": ("rl-demo-seen-tokens", "counter"),
    "logger_key": ("rl-demo-seen-tokens", "train/seen_tokens"),
    "name": ("rl-demo-seen-tokens", "rl.demo.seen_tokens"),
    "no_lint": ("rl-demo-seen-tokens", "DESCRIPTION_REPEATS_NAME"),
    "note": ("rl-demo-seen-tokens", "Counted after padding is removed."),
    "annotations": ("rl-demo-seen-tokens", 'annotations {"dashboard": {"folder": "throughput"}}'),
    "prefix": ("rl-demo-seen-tokens", "train/seen_tokens"),
    "prefixes": ("rl-demo-all-tokens", "eval/total"),
    "range": ("rl-demo-seen-tokens", "values in"),
    "requirement_level": ("rl-demo-seen-tokens", "conditionally required"),
    "stability": ("rl-demo-seen-tokens", "beta"),
    "step_axis": ("rl-demo-seen-tokens", "on the samples axis"),
    "sum_of": ("rl-demo-all-tokens", "sum of rl.demo.seen_tokens"),
    "temporality": ("rl-demo-seen-tokens", "running total"),
    "unit": ("rl-demo-seen-tokens", "{token}"),
    "value_type": ("rl-demo-seen-tokens", "integers"),
}
"""Each field of a teed row, the entry that sets it in tests/fixtures/docs/every_field.yaml,
and the text its owner page shows for it."""


def test_every_field_a_user_writes_on_a_teed_row_has_a_shown_text() -> None:
    """A field added to the schema must be added here, with what its page shows."""
    schema = json.loads((ROOT / "codegen" / "schema" / "catalog.schema.json").read_text())
    assert set(schema["$defs"]["teedRow"]["properties"]) == set(SHOWN)


@pytest.mark.parametrize("field", sorted(SHOWN))
def test_every_field_a_user_writes_appears_on_the_owner_page(tmp_path: Path, field: str) -> None:
    from tests.catalog_projects import loaded_catalog

    text = (ROOT / "tests" / "fixtures" / "docs" / "every_field.yaml").read_text()
    catalog = loaded_catalog(tmp_path / "project", text, "fields.yaml")
    page = _page(_load(tmp_path, catalog), "catalog/fields.yaml")
    anchor, shown = SHOWN[field]
    assert shown in " ".join(page.rows[anchor]), (field, page.rows[anchor])


def test_an_attributes_note_and_examples_are_shown_under_its_description(tmp_path: Path) -> None:
    from tests.catalog_projects import loaded_catalog

    text = """\
owner: pkg.evals
module: evals
description: Evaluations.
attributes:
  - name: rl.dataset
    type: string
    description: Validation dataset.
    note: As the config names it.
    max_cardinality: "32"
    examples: [math500, openai/gsm8k]
"""
    catalog = loaded_catalog(tmp_path / "project", text, "evals.yaml")
    body = _html.owner_page_html(_load(tmp_path, catalog), "catalog/evals.yaml", _href)
    assert '<div class="mc-note"><p>As the config names it.</p></div>' in body
    assert "For example <code>math500</code>, <code>openai/<wbr>gsm8k</code>." in body


def test_an_open_enum_and_an_attributes_annotations_are_shown_in_its_row(
    tmp_path: Path,
) -> None:
    from tests.catalog_projects import loaded_catalog

    text = """\
owner: pkg.gen
module: gen
description: Generation.
attributes:
  - name: rl.error.type
    type: string
    description: What went wrong.
    values:
      - {value: timeout, description: Timed out.}
    open: "true"
    max_cardinality: "16"
    annotations: {ui: {color: red}}
  - name: rl.phase
    type: string
    description: Phase.
    values:
      - {value: train, description: Training.}
"""
    catalog = loaded_catalog(tmp_path / "project", text, "gen.yaml")
    body = _html.owner_page_html(_load(tmp_path, catalog), "catalog/gen.yaml", _href)
    assert "string, 1 known values and at most 16 others" in body
    assert "string, one of 1 values" in body  # the closed enum beside it
    assert "annotations <code>{&quot;ui&quot;: {&quot;color&quot;: &quot;red&quot;}}</code>" in body


@pytest.mark.parametrize("reader", [_data.load, _data.file_digest])
def test_the_extension_refuses_a_resolved_catalog_that_is_a_fifo_without_waiting(
    tmp_path: Path, reader: Any
) -> None:
    """The docs build reads through the runtime's one door: a FIFO is refused, not read."""
    import os

    fifo = tmp_path / "catalog.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO"):
        reader(fifo)


def test_the_extension_shows_no_catalog_file_that_links_out_of_the_project(
    tmp_path: Path,
) -> None:
    from metric_catalog._safe_fs import MAX_CATALOG_FILE_BYTES, OutsideRootError, read_input

    root, outside = tmp_path / "project", tmp_path / "secret.yaml"
    (root / "catalog").mkdir(parents=True)
    outside.write_text("token: hunter2\n", encoding="utf-8")
    (root / "catalog" / "a.yaml").symlink_to(outside)
    with pytest.raises(OutsideRootError):
        read_input(root / "catalog" / "a.yaml", MAX_CATALOG_FILE_BYTES, root=root)
