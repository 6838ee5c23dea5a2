"""toolfind.core.filters: one rule for --namespace/--tag (search, list) and serve's [filters]."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfind.config import Filters
from toolfind.core.filters import Rule, options_rule, serve_rule
from toolfind.models import Tool
from toolfind.store.index import SearchIndex

TOOLS = [
    Tool(name="read_file", namespace="files", description="Read a file.", tags=("filesystem",)),
    Tool(name="rm", namespace="files", description="Remove a file.", tags=("Danger-Zone",)),
    Tool(name="push", namespace="Git_Hub", description="Push a file.", tags=("vcs", "remote")),
    Tool(name="ping", description="Ping a host.", annotations={"readOnlyHint": True}),
]


def kept(rule: Rule) -> list[str]:
    return [t.name for t in TOOLS if rule.keeps(t.namespace, t.all_tags)]


def test_names_compare_by_name_key_case_and_separators_aside() -> None:
    assert kept(options_rule("github", ())) == ["push"]
    assert kept(options_rule("GIT-HUB", ())) == ["push"]
    assert kept(options_rule(None, ["danger_zone"])) == ["rm"]
    assert kept(options_rule(None, ["READ ONLY"])) == ["ping"]  # an annotation's tag


def test_search_and_list_keep_the_tools_carrying_every_tag() -> None:
    assert kept(options_rule(None, ["vcs", "remote"])) == ["push"]
    assert kept(options_rule(None, ["vcs", "filesystem"])) == []
    assert kept(options_rule("files", ["filesystem"])) == ["read_file"]


def test_the_default_namespace_is_the_empty_one_and_a_blank_tag_is_ignored() -> None:
    assert kept(options_rule("", ())) == ["ping"]
    assert options_rule(None, ["", " "]).keeps_all()


def test_a_tag_or_namespace_without_letters_or_digits_selects_its_own_tools() -> None:
    # Not the default namespace (key ""), not every tool: the tools spelling it.
    tools = [("plain", "", ("-",)), ("dashes", "---", ()), ("other", "x", ("a",))]
    rule = options_rule(None, ["-"])
    assert [n for n, ns, tags in tools if rule.keeps(ns, tags)] == ["plain"]
    rule = options_rule("---", ())
    assert [n for n, ns, tags in tools if rule.keeps(ns, tags)] == ["dashes"]


def test_serve_keeps_any_allowed_tag_and_drops_every_excluded_one() -> None:
    assert kept(serve_rule((), (), ("vcs", "filesystem"), ())) == ["read_file", "push"]
    assert kept(serve_rule(("FILES",), (), (), ("danger zone",))) == ["read_file"]
    assert kept(serve_rule((), ("files", "github"), (), ())) == ["ping"]
    assert serve_rule((), (), (), ()).keeps_all()


def test_serve_filters_allow_by_the_same_rule() -> None:
    f = Filters(namespaces=("Files",), exclude_tags=("danger_zone",))
    assert [t.name for t in TOOLS if f.allows(t.namespace, t.all_tags)] == ["read_file"]


words = st.sampled_from(["a", "B", "a-b", "A_B", "c", "", "-"])


@settings(max_examples=200, deadline=None)
@given(
    namespaces=st.one_of(st.none(), st.lists(words, max_size=2)),
    exclude_namespaces=st.lists(words, max_size=2),
    every=st.lists(words, max_size=2),
    some=st.lists(words, max_size=2),
    exclude=st.lists(words, max_size=2),
    tools=st.lists(st.tuples(words, st.lists(words, max_size=3)), min_size=1, max_size=8),
)
def test_the_predicate_on_ids_keeps_what_keeps_keeps(
    namespaces: list[str] | None,
    exclude_namespaces: list[str],
    every: list[str],
    some: list[str],
    exclude: list[str],
    tools: list[tuple[str, list[str]]],
) -> None:
    from toolfind.core.analysis import name_key

    rule = Rule(
        namespaces=namespaces,
        exclude_namespaces=exclude_namespaces,
        every_tag=every,
        some_tag=some,
        exclude_tags=exclude,
    )
    tag_ids: dict[str, list[int]] = {}
    for doc, (_, tags) in enumerate(tools):
        for key in {name_key(t) for t in tags}:
            tag_ids.setdefault(key, []).append(doc)
    keep = rule.over_ids(lambda d: name_key(tools[d][0]), lambda k: tag_ids.get(k, ()))
    expected = [rule.keeps(ns, tags) for ns, tags in tools]
    assert [True if keep is None else keep(d) for d in range(len(tools))] == expected


@pytest.mark.parametrize(
    ("namespace", "tags"),
    [("FILES", ()), ("git-hub", ()), (None, ("Danger Zone",)), (None, ("read_only",))],
)
def test_search_and_list_select_by_the_rule(namespace: str | None, tags: tuple[str, ...]) -> None:
    index = SearchIndex.build(TOOLS)
    expected = kept(options_rule(namespace, tags))
    assert [t.name for t in index.listed(namespace, tags)] == expected
    hits = index.search("file host", 10, namespace=namespace, tags=tags).hits
    assert sorted(h.tool.name for h in hits) == sorted(expected)
