"""SearchIndex: search semantics, exact names, resolve, similar, browse, params, impacts."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.test_search import STRATEGIES, WORDS, strategy
from toolfind.core import search as search_module
from toolfind.core import synonyms
from toolfind.core.actions import agreement
from toolfind.core.analysis import analyze_query
from toolfind.errors import AmbiguousName, ConfigError, ToolNotFound
from toolfind.models import FIELDS, FieldWeights, ScoringParams, Tool
from toolfind.store import build
from toolfind.store import index as index_module
from toolfind.store.build import field_terms
from toolfind.store.index import SearchIndex


def _params(*props: tuple[str, str]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": desc} for name, desc in props},
    }


TOOLS = (
    Tool(
        name="read_file",
        namespace="files",
        description="Read the contents of a text file from disk.",
        parameters=_params(("path", "Path of the file to read")),
        tags=("filesystem",),
        annotations={"readOnlyHint": True},
        aliases=("cat",),
    ),
    Tool(
        name="write_file",
        namespace="files",
        description="Write text to a file, replacing its contents.",
        parameters=_params(("path", "Where to write"), ("content", "Text to write")),
        tags=("filesystem",),
        annotations={"destructiveHint": True},
    ),
    Tool(
        name="compress_files",
        namespace="files",
        description="Compress files into a zip or tar.gz archive.",
        parameters={
            "type": "object",
            "properties": {
                "format": {"type": "string", "enum": ["zip", "gzip", "bzip2"]},
                "options": {
                    "type": "object",
                    "properties": {"level": {"type": "integer", "description": "Ratio knob"}},
                },
            },
        },
        tags=("filesystem", "archive"),
        search_hint="shrink squash pack",
    ),
    Tool(name="search", namespace="web", description="Search the web for pages."),
    Tool(
        name="search",
        namespace="email",
        description="Search mailbox messages.",
        defer=True,
        tags=("mail",),
    ),
    Tool(name="send_email", namespace="email", description="Send an email message.", defer=True),
    Tool(name="math.factorial", namespace="math", description="Factorial of an integer."),
    Tool(name="factorial", namespace="py", description="Compute n factorial.", enabled=False),
    Tool(name="翻译文本", namespace="translate", description="把文本翻译成英文"),
)


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex.build(TOOLS)


def names(result: object) -> list[str]:
    return [h.tool.qualified_name for h in result.hits]  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- search


def test_search_ranks_the_tool_whose_text_matches_best(index: SearchIndex) -> None:
    assert names(index.search("compress archive"))[0] == "files/compress_files"
    assert names(index.search("shrink"))[0] == "files/compress_files"  # search hint
    assert names(index.search("ratio knob")) == ["files/compress_files"]  # nested property
    assert names(index.search("bzip2")) == ["files/compress_files"]  # enum value


def test_a_query_naming_a_tool_returns_it_first_as_exact(index: SearchIndex) -> None:
    for query in ("read_file", "READ-FILE", "readFile", "files/read_file", "files__read_file"):
        hits = index.search(query).hits
        assert (hits[0].name, hits[0].match) == ("read_file", "exact"), query
        assert all(h.match == "ranked" for h in hits[1:])


def test_several_named_tools_come_first_by_namespace(index: SearchIndex) -> None:
    hits = index.search("search").hits
    assert [(h.namespace, h.match) for h in hits[:2]] == [("email", "exact"), ("web", "exact")]


def test_no_query_term_in_any_tool_gives_no_hits_and_lists_the_terms(index: SearchIndex) -> None:
    result = index.search("xyzzy frobnicate")
    assert result.hits == ()
    assert result.unmatched_terms == ("xyzzy", "frobnicate")  # as written, not stemmed
    assert index.search("the of").unmatched_terms == ("the", "of")


def test_unmatched_terms_lists_only_terms_found_nowhere(index: SearchIndex) -> None:
    result = index.search("compress xyzzy")
    assert names(result) == ["files/compress_files"]
    assert result.unmatched_terms == ("xyzzy",)
    # The whole-identifier term of "zip_files" is not news once its parts matched.
    assert index.search("zip_files").unmatched_terms == ()


def test_ties_break_by_name_then_namespace() -> None:
    same = "Convert units of measure."
    tools = [
        Tool(name="b_tool", namespace="x", description=same),
        Tool(name="a_tool", namespace="y", description=same),
        Tool(name="a_tool", namespace="b", description=same),
    ]
    for order in (tools, tools[::-1]):
        result = SearchIndex.build(order).search("convert units")
        assert names(result) == ["b/a_tool", "y/a_tool", "x/b_tool"]
        assert len({h.score for h in result.hits}) == 1


def test_limit_cuts_after_ties_are_ordered() -> None:
    tools = [Tool(name=f"t{i:02d}", description="same words here") for i in range(30)]
    result = SearchIndex.build(tools[::-1]).search("same words", limit=5)
    assert [h.name for h in result.hits] == ["t00", "t01", "t02", "t03", "t04"]
    assert SearchIndex.build(tools).search("same", limit=0).hits == ()


def test_disabled_tools_are_never_returned(index: SearchIndex) -> None:
    assert "py/factorial" not in names(index.search("factorial compute"))
    assert "py/factorial" not in names(index.search("py/factorial"))
    assert all(7 not in ids for ids, _ in index.impacts().values())


def test_deferred_tools_are_found_by_search(index: SearchIndex) -> None:
    hit = index.search("send email message").hits[0]
    assert (hit.name, hit.tool.defer) == ("send_email", True)


def test_namespace_and_tag_filters(index: SearchIndex) -> None:
    assert names(index.search("search", namespace="Web")) == ["web/search"]
    assert names(index.search("file", tags=["read-only"])) == ["files/read_file"]
    assert names(index.search("file", tags=["filesystem", "archive"])) == ["files/compress_files"]
    assert index.search("file", namespace="nowhere").hits == ()


def test_min_score_drops_weak_hits_named_ones_too(index: SearchIndex) -> None:
    scores = [h.score for h in index.search("file").hits]
    cut = (scores[0] + scores[-1]) / 2
    result = index.search("file", min_score=cut)
    assert result.hits and all(h.score >= cut for h in result.hits)
    assert names(index.search("read_file", min_score=1e9)) == []
    assert names(index.search("read_file", min_score=cut))[0] == "files/read_file"


def test_cjk_text_is_searchable(index: SearchIndex) -> None:
    assert names(index.search("文本")) == ["translate/翻译文本"]
    assert names(index.search("翻译成英文")) == ["translate/翻译文本"]


def test_explanation_contributions_sum_to_the_score(index: SearchIndex) -> None:
    for query in ("read text file", "compress zip archive files", "search web", "write file"):
        for hit in index.search(query, explain=True).hits:
            assert hit.explanation
            assert sum(c.score for c in hit.explanation) == pytest.approx(hit.score, rel=1e-12)
            assert {c.field for c in hit.explanation} <= set(FIELDS)
    assert index.search("read text file").hits[0].explanation == ()


def test_scores_are_the_sum_of_impacts_in_query_order_bit_for_bit(
    index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(synonyms, "TABLE", "")  # no synonyms: the query's own terms only
    index = index.with_params(index.params)
    impacts = index.impacts()
    for query in ("compress files archive", "read the text file", "search web email pages"):
        acc: dict[int, float] = {}
        for term in dict.fromkeys(analyze_query(query)):
            if term in impacts:
                ids, scores = impacts[term]
                for doc, score in zip(ids, scores, strict=True):
                    acc[doc] = acc.get(doc, 0.0) + score
        for hit in index.search(query, limit=100).hits:
            doc = index.tools.index(hit.tool)
            assert acc[doc] * agreement(query, index.action)(doc) == hit.score


def test_impacts_are_positive_with_ascending_ids(index: SearchIndex) -> None:
    for ids, scores in index.impacts().values():
        assert list(ids) == sorted(set(ids)) and len(ids) == len(scores)
        assert all(s > 0.0 for s in scores)


def test_name_keys_map_names_and_aliases_to_ids(index: SearchIndex) -> None:
    keys = {key: list(ids) for key, ids in index._keys.items()}
    assert keys["readfile"] == [0] and keys["cat"] == [0]
    assert keys["search"] == [3, 4]


def test_the_index_survives_pickling(index: SearchIndex) -> None:
    loaded = pickle.loads(pickle.dumps(index))
    for query in ("compress zip", "read_file", "文本"):
        assert loaded.search(query) == index.search(query)
    assert loaded.impacts() == index.impacts()


# ----------------------------------------------------------------------------- params


def test_with_params_equals_a_fresh_build_with_those_params(index: SearchIndex) -> None:
    params = ScoringParams(
        weights=FieldWeights(name=5.0, description=2.0, params=0.0, search_hint=0.0),
        k1=0.9,
        default_b=0.4,
        b=(("name", 0.0),),
        delta=0.5,
    )
    fresh = SearchIndex.build(TOOLS, params)
    reused = index.with_params(params)
    assert reused.impacts() == fresh.impacts()
    assert reused.params == params and index.params == ScoringParams()
    for query in ("compress zip", "read text file", "search", "shrink"):
        assert reused.search(query, explain=True) == fresh.search(query, explain=True)


def test_with_params_does_not_analyse_again(
    index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(tool: Tool, tags: object = None) -> tuple[list[str], ...]:
        raise AssertionError("re-analysed")

    monkeypatch.setattr(build, "field_terms", boom)
    assert index.with_params(ScoringParams(k1=1.0)).search("zip").hits


def test_a_term_only_in_zero_weight_fields_is_unmatched() -> None:
    params = ScoringParams(weights=FieldWeights(search_hint=0.0))
    result = SearchIndex.build(TOOLS, params).search("squash")
    assert result.hits == () and result.unmatched_terms == ("squash",)


@settings(max_examples=25, deadline=None)
@given(
    weights=st.tuples(*[st.one_of(st.just(0.0), st.floats(1e-3, 10.0)) for _ in FIELDS]),
    factor=st.floats(0.05, 50.0),
    query=st.sampled_from(["read text file", "compress zip files", "search web", "email send"]),
)
def test_ranking_is_unchanged_when_all_weights_scale_together(
    weights: tuple[float, ...], factor: float, query: str
) -> None:
    base = ScoringParams(weights=FieldWeights(**dict(zip(FIELDS, weights, strict=True))))
    scaled = replace(
        base, weights=FieldWeights(**{f: w * factor for f, w in zip(FIELDS, weights, strict=True)})
    )
    index = SearchIndex.build(TOOLS, base)
    one, other = index.search(query, 20), index.with_params(scaled).search(query, 20)
    assert names(one) == names(other)
    for a, b in zip(one.hits, other.hits, strict=True):
        assert a.score == pytest.approx(b.score, rel=1e-9)


@pytest.mark.parametrize(
    "params",
    [
        ScoringParams(weights=FieldWeights(name=-1.0)),
        ScoringParams(weights=FieldWeights(name=float("nan"))),
        ScoringParams(k1=-0.1),
        ScoringParams(delta=-1.0),
        ScoringParams(default_b=1.5),
        ScoringParams(b=(("nmae", 0.5),)),
    ],
)
def test_unusable_params_are_a_config_error(params: ScoringParams) -> None:
    with pytest.raises(ConfigError):
        SearchIndex.build(TOOLS[:1], params)


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("spelling", "qualified"),
    [
        ("read_file", "files/read_file"),
        ("Read-File", "files/read_file"),
        ("READFILE", "files/read_file"),
        ("cat", "files/read_file"),
        ("files/read_file", "files/read_file"),
        ("files:read_file", "files/read_file"),
        ("files__read_file", "files/read_file"),
        ("files.read_file", "files/read_file"),
        ("web/search", "web/search"),
        ("email:search", "email/search"),
        ("math.factorial", "math/math.factorial"),
        ("py/factorial", "py/factorial"),
    ],
)
def test_resolve_accepts_every_spelling(index: SearchIndex, spelling: str, qualified: str) -> None:
    assert index.resolve(spelling).qualified_name == qualified


def test_rules_apply_in_order_exact_name_then_name_key_then_qualified() -> None:
    tools = [
        Tool(name="factorial", namespace="math"),
        Tool(name="math.factorial", namespace="x"),
        Tool(name="gamma", namespace="math"),
    ]
    index = SearchIndex.build(tools)
    assert index.resolve("math.factorial").namespace == "x"  # exactly its name
    assert index.resolve("Math_Factorial").namespace == "x"  # same name key
    assert index.resolve("math/gamma").name == "gamma"  # only the qualified reading


def test_an_ambiguous_bare_name_lists_the_candidates(index: SearchIndex) -> None:
    with pytest.raises(AmbiguousName) as err:
        index.resolve("search")
    assert err.value.candidates == ("email/search", "web/search")


def test_an_unknown_name_suggests_the_closest(index: SearchIndex) -> None:
    with pytest.raises(ToolNotFound) as err:
        index.resolve("raed_file")
    assert err.value.suggestions[0] == "read_file"
    assert str(err.value) == "No tool named 'raed_file'. Did you mean 'read_file'?"
    with pytest.raises(ToolNotFound) as err:
        index.resolve("zzzzzzzz")
    assert err.value.suggestions == ()


def test_exact_ids_returns_every_tool_named(index: SearchIndex) -> None:
    assert index.exact_ids("search") == [3, 4]
    assert index.exact_ids("compress files please") == []
    assert index.get("cat").name == "read_file"


# ----------------------------------------------------------------------------- similar, browse


def test_similar_finds_related_tools_with_the_terms_they_share(index: SearchIndex) -> None:
    similar = index.similar("read_file", limit=3)
    assert similar[0].tool.name == "write_file"
    assert all(s.tool.name != "read_file" for s in similar)
    assert "file" in similar[0].shared_terms
    assert [s.score for s in similar] == sorted((s.score for s in similar), reverse=True)
    with pytest.raises(ToolNotFound):
        index.similar("nothing_like_it")


def test_categories_count_enabled_tools_per_namespace(index: SearchIndex) -> None:
    by_name = {c.name: c for c in index.categories()}
    assert list(by_name) == ["email", "files", "math", "translate", "web"]
    assert (by_name["email"].tool_count, by_name["email"].deferred_count) == (2, 2)
    files = by_name["files"]
    assert files.tool_count == 3 and files.deferred_count == 0
    assert files.tags == ("filesystem", "archive", "destructive", "read-only")


def test_categories_keep_at_most_five_tags_most_common_first() -> None:
    tools = [Tool(name=f"t{i}", namespace="n", tags=tuple("abcdefg"[: i + 1])) for i in range(7)]
    assert SearchIndex.build(tools).categories()[0].tags == ("a", "b", "c", "d", "e")


def test_summaries_select_deferred_all_or_direct_tools(index: SearchIndex) -> None:
    assert [t.name for t in index.summaries()] == ["search", "send_email"]
    assert len(index.summaries(None)) == len(TOOLS) - 1  # the disabled one is left out
    assert "send_email" not in [t.name for t in index.summaries(False)]


def _similar_by_definition(index: SearchIndex, name: str, limit: int) -> list[object]:
    """similar() as its docstring defines it, posting by posting, from public parts."""
    from toolfind.core import bm25f

    doc = next(i for i, t in enumerate(index.tools) if t.name == name)
    fields = field_terms(index.tools[doc])
    vecs: dict[str, list[int]] = {}
    for fi, terms in enumerate(fields):
        for term in terms:
            vecs.setdefault(term, [0] * len(FIELDS))[fi] += 1
    params = index.params
    weights = bm25f.effective_weights(params.weights.as_dict())
    avg = index._avg
    scales = [
        bm25f.field_scale(weights[f], len(fields[fi]), avg[fi], params.b_for(f))
        if weights[f] > 0.0
        else 0.0
        for fi, f in enumerate(FIELDS)
    ]
    impacts = index.impacts()
    weighted = []
    for term in vecs:
        tf = bm25f.pseudo_tf(vecs[term], scales)
        if term not in impacts or tf <= 0.0 or not build.similar_term(term, vecs[term]):
            continue
        weight = bm25f.saturate(tf, params.k1, 0.0)
        weight *= build.SIMILAR_NAME if vecs[term][0] else 1.0
        weighted.append((-(weight * max(impacts[term][1])), term, weight))
    acc: dict[int, float] = {}
    parts: dict[int, list[tuple[float, str]]] = {}
    for _, term, weight in sorted(weighted):  # the documented order of addition
        for d, s in zip(*impacts[term], strict=True):
            if d != doc:
                acc[d] = acc.get(d, 0.0) + weight * s
                parts.setdefault(d, []).append((weight * s, term))
    names = [(t.name, t.namespace) for t in index.tools]
    best = sorted(acc.items(), key=lambda ds: (-ds[1], names[ds[0]]))[:limit]
    return [
        (
            index.tools[d].name,
            score,
            tuple(
                t
                for c, t in sorted(parts[d], key=lambda c: (-c[0], c[1]))
                if c >= build.SHARED_SHARE * score
            )
            or tuple(t for _, t in sorted(parts[d], key=lambda c: (-c[0], c[1])))[:1],
        )
        for d, score in best
    ]


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=10), min_size=2, max_size=40
    ),
    pick=st.integers(0, 39),
    limit=st.integers(1, 8),
    how=st.sampled_from([None, *STRATEGIES]),
)
def test_similar_scores_and_explains_like_its_definition(
    docs: list[list[str]], pick: int, limit: int, how: str | None
) -> None:
    if how == "numpy":
        pytest.importorskip("numpy")
    tools = [Tool(name=f"t{i}", description=" ".join(d)) for i, d in enumerate(docs)]
    index = SearchIndex.build(tools)
    name = tools[pick % len(tools)].name
    with strategy(index, how):
        got = [(s.tool.name, s.score, s.shared_terms) for s in index.similar(name, limit)]
    assert got == _similar_by_definition(index, name, limit)


def test_similar_skips_the_postings_of_common_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many tools share the common words, few the rare ones: MaxScore stops scanning once the
    common words cannot lift an unseen tool into the top k, with the definition's results."""
    common = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    tools = [Tool(name=f"filler{i:04d}", description=common) for i in range(3000)]
    tools += [Tool(name=f"rare{i}", description=f"{common} zebra okapi quagga") for i in range(8)]
    index = SearchIndex.build(tools)
    scanned: list[int] = []
    add_into = search_module.add_into

    def counting(acc: dict[int, float], docs: Any, impacts: Any) -> None:
        scanned.append(len(docs))
        add_into(acc, docs, impacts)

    monkeypatch.setattr(search_module, "add_into", counting)
    got = [(s.tool.name, s.score, s.shared_terms) for s in index.similar("rare0", 5)]
    assert got == _similar_by_definition(index, "rare0", 5)
    assert [name for name, *_ in got] == ["rare1", "rare2", "rare3", "rare4", "rare5"]
    assert sum(scanned) < 3000  # of the 30,000+ postings the tool's terms hold


def test_similar_reads_at_most_its_budget_of_postings_keeping_rarer_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A common word that would pass the budget is left out; a rarer term after it, that
    fits, is still searched; the tool's strongest term always is."""
    tools = [Tool(name=f"filler{i:03d}", description="archive shared") for i in range(300)]
    tools += [Tool(name=f"vault{i}", description="archive shared okapi") for i in range(4)]
    index = SearchIndex.build(tools)
    strongest = {s.tool.name for s in index.similar("vault0", 3)}
    assert strongest <= {"vault1", "vault2", "vault3"}
    monkeypatch.setattr(index_module, "SIMILAR_POSTINGS", 50)
    scanned: list[int] = []
    add_into = search_module.add_into

    def counting(acc: dict[int, float], docs: Any, impacts: Any) -> None:
        scanned.append(len(docs))
        add_into(acc, docs, impacts)

    monkeypatch.setattr(search_module, "add_into", counting)
    got = index.similar("vault0", 3)
    assert {s.tool.name for s in got} == {"vault1", "vault2", "vault3"}
    assert all(s.shared_terms == ("vault", "okapi") for s in got)  # the common words left out
    assert sum(scanned) <= 50


def test_numpy_scores_a_loaded_index_like_the_pure_path(tmp_path: Path) -> None:
    """Accelerated search over the memory-mapped columns of a cached index: same hits, same
    scores to the bit, with filters, exact matches and ties."""
    from toolfind.store.cache import load_index

    tools = [
        Tool(name=f"tool_{i}", namespace=f"ns{i % 3}", tags=(f"t{i % 4}",), description=text)
        for i, text in enumerate(
            " ".join(WORDS[(i * j) % len(WORDS)] for j in range(1 + i % 7)) for i in range(400)
        )
    ]
    catalog = tmp_path / "c.json"
    catalog.write_text(
        json.dumps(
            [
                {
                    "name": t.name,
                    "namespace": t.namespace,
                    "tags": list(t.tags),
                    "description": t.description,
                }
                for t in tools
            ]
        )
    )
    load_index([catalog], cache_root=tmp_path / "cache")
    loaded = load_index([catalog], cache_root=tmp_path / "cache")
    assert loaded.from_cache
    index = loaded.index
    for query, kwargs in [
        ("file text zip", {}),
        ("tool_3 mail", {}),
        ("read send list", {"namespace": "ns1"}),
        ("page web", {"tags": ["t2"], "min_score": 1.0}),
        ("find", {"limit": 50}),
    ]:
        with strategy(index, None):
            full = index.search(query, **kwargs)  # type: ignore[arg-type]
        with strategy(index, "numpy"):
            fast = index.search(query, **kwargs)  # type: ignore[arg-type]
        assert fast == full and [h.score for h in fast] == [h.score for h in full]


def test_one_query_over_enough_postings_turns_numpy_on_with_the_same_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("numpy")
    tools = [Tool(name=f"t{i}", description=" ".join(WORDS[i % 7 :])) for i in range(200)]
    pure, fresh = SearchIndex.build(tools), SearchIndex.build(tools)
    monkeypatch.setattr(index_module, "_IMPORT_PAYS_BACK", 10**9)
    expected = pure.search("file text zip mail", 10), pure.similar("t3", 4)
    assert not pure._accelerated
    monkeypatch.setattr(index_module, "_IMPORT_PAYS_BACK", 300)
    assert fresh.search("sort", 10) == pure.search("sort", 10)  # fewer postings: still pure
    assert not fresh._accelerated
    assert (fresh.search("file text zip mail", 10), fresh.similar("t3", 4)) == expected
    assert fresh._accelerated


def test_b_of_one_scores_tools_with_empty_fields() -> None:
    """b = 1 makes an empty field's length norm 0: its scale is 0, not a division by zero."""
    import math

    params = ScoringParams(default_b=1.0, b=tuple((f, 1.0) for f in FIELDS))
    index = SearchIndex.build(TOOLS, params)
    result = index.search("compress file", explain=True)
    assert result.hits and all(math.isfinite(h.score) and h.score > 0 for h in result.hits)
    assert index.similar(TOOLS[0].name)
    assert index.with_params(params).impacts() == index.impacts()


def test_without_numpy_every_path_stays_pure_and_gives_the_same_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tools = [Tool(name=f"t{i}", description=" ".join(WORDS[i % 7 :])) for i in range(200)]
    expected = SearchIndex.build(tools)
    monkeypatch.setattr(build, "BUILD_VECTOR_MIN", 0)
    monkeypatch.setattr(index_module, "_IMPORT_PAYS_BACK", 0)
    monkeypatch.setattr(build, "_NO_NUMPY", [])
    monkeypatch.setitem(__import__("sys").modules, "numpy", None)  # import numpy fails
    index = SearchIndex.build(tools)
    assert bytes(index._imp) == bytes(expected._imp)
    query = "file text zip mail"
    assert index.search(query) == expected.search(query)
    assert index.similar("t3") == expected.similar("t3")
    assert not index.accelerate() and not index._accelerated
    assert build._NO_NUMPY == [True]


# --- lexical scoring that behaves ---------------------------------------------------------------


def test_the_bm25_plus_floor_scales_with_the_weight_of_the_field_matched() -> None:
    # "compress" only in a parameter description must not get the floor of a name match.
    tools = [
        Tool(name="compress_file", description="Shrink a file."),
        Tool(
            name="backup_database",
            description="Back up a database to a file.",
            parameters=_params(("mode", "Whether to compress the dump")),
        ),
        Tool(name="append_file", description="Append text to a file."),
    ]
    params = ScoringParams()
    index = SearchIndex.build(tools, params)
    weights = index._weights
    ranked = [h.name for h in index.search("compress file").hits]
    assert ranked[0] == "compress_file"
    hit = next(
        h for h in index.search("compress", explain=True).hits if h.name == "backup_database"
    )
    (part,) = hit.explanation
    assert part.field == "params"
    # impact = idf * (saturation + delta * w_params): the floor shrinks with the weight.
    tf = part.tf * weights[FIELDS.index("params")] / part.length_norm
    saturation = (params.k1 + 1) * tf / (params.k1 + tf)
    floor = params.delta * weights[FIELDS.index("params")]
    assert part.score == pytest.approx(part.idf * (saturation + floor))
    assert floor < params.delta


def test_explain_and_similar_show_words_as_written_not_stems() -> None:
    tools = [
        Tool(name="list_directory", description="List the directories under a path."),
        Tool(name="make_directory", description="Create directories under a path."),
    ]
    index = SearchIndex.build(tools)
    hit = index.search("directories", explain=True).hits[0]
    assert {c.term for c in hit.explanation} == {"directories"}  # the query's word
    (similar,) = index.similar("list_directory", 1)
    # One word per shared stem: the first the tool writes ("directory" in its name).
    assert similar.shared_terms == ("directory", "path", "under")


def test_a_misspelt_query_finds_the_tool_below_an_exact_match() -> None:
    tools = [
        Tool(name="send_email", description="Send an email message."),
        Tool(name="send_sms", description="Send a text message."),
    ]
    index = SearchIndex.build(tools)
    exact = index.search("send email", explain=True)
    typo = index.search("send emial", explain=True)
    assert exact.hits[0].name == typo.hits[0].name == "send_email"
    assert typo.hits[0].score < exact.hits[0].score
    # Read as "email": matched, so not a word no tool mentions; the result says so.
    assert typo.unmatched_terms == () and typo.corrections == (("emial", "email"),)
    terms = {c.term for c in typo.hits[0].explanation}
    assert terms == {"send", "email"}  # the tool's word the typo stood for
    assert {c.query_word for c in typo.hits[0].explanation} == {"send", "emial"}
    assert sum(c.score for c in typo.hits[0].explanation) == pytest.approx(typo.hits[0].score)


def test_a_request_naming_the_app_favours_that_namespace() -> None:
    tools = [
        Tool(name="send_message", namespace="slack", description="Send a message to a channel."),
        Tool(name="send_message", namespace="teams", description="Send a message to a channel."),
        Tool(name="post", namespace="http", description="Send an HTTP POST request."),
    ]
    index = SearchIndex.build(tools)
    assert index.search("post this message to slack").hits[0].tool.namespace == "slack"
    assert index.search("send a message in teams").hits[0].tool.namespace == "teams"


def test_a_misspelt_app_and_verb_still_find_the_tool() -> None:
    tools = [
        Tool(name="set_shuffle", namespace="spotify", description="Turn shuffle on or off."),
        Tool(name="set_volume", namespace="spotify", description="Set the playback volume."),
        Tool(name="shuffle_list", namespace="lists", description="Shuffle the items of a list."),
    ]
    result = SearchIndex.build(tools).search("shufle my spotfy")
    assert [h.name for h in result.hits][:1] == ["set_shuffle"]
    assert result.unmatched_terms == ()
    assert result.corrections == (("shufle", "shuffle"), ("spotfy", "spotify"))


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(
        st.lists(
            st.sampled_from(["Directories", "listing", "files", "only", "copied"]), min_size=1
        ),
        min_size=2,
        max_size=6,
    )
)
def test_shared_terms_are_words_of_the_tool_that_analyse_to_terms_both_tools_hold(
    docs: list[list[str]],
) -> None:
    names = ["alpha", "bravo", "charlie", "echo", "foxtrot", "golf"]  # share no word
    tools = [Tool(name=names[i], description=" ".join(d)) for i, d in enumerate(docs)]
    index = SearchIndex.build(tools)
    own = {w.casefold() for w in docs[0]}
    mine = set(field_terms(tools[0])[2])
    for similar in index.similar("alpha", 5):
        theirs = set(field_terms(similar.tool)[2])
        for word in similar.shared_terms:
            assert word in own  # as written in the tool (folded), never a stem
            (term,) = analyze_query(word)
            assert term in mine and term in theirs


def test_names_sharing_a_key_in_one_namespace_are_each_reached_by_their_exact_spelling() -> None:
    index = SearchIndex.build(
        [
            Tool(name="read_file", namespace="alpha", description="alpha read file"),
            Tool(name="Read-File", namespace="alpha", description="alpha other read file"),
            Tool(name="read_file", namespace="beta", description="beta read file"),
        ]
    )
    for spelling, wanted in [
        ("alpha/read_file", ("alpha", "read_file")),
        ("alpha/Read-File", ("alpha", "Read-File")),
        ("alpha__Read-File", ("alpha", "Read-File")),
        ("Read-File", ("alpha", "Read-File")),
        ("beta/read_file", ("beta", "read_file")),
    ]:
        tool = index.resolve(spelling)
        assert (tool.namespace, tool.name) == wanted, spelling
    with pytest.raises(AmbiguousName):
        index.resolve("read_file")  # two namespaces: qualify it
    with pytest.raises(AmbiguousName):
        index.resolve("alpha/READ FILE")  # no exact spelling: both alpha tools answer
    hits = index.search("alpha/read_file", 1)
    assert [(h.tool.namespace, h.tool.name) for h in hits] == [("alpha", "read_file")]
