"""toolfind.core.actions: what a request asks to do against what a tool does."""

from __future__ import annotations

import pytest

from toolfind.core import actions
from toolfind.core.actions import CHANGES, CREATES, DESTROYS, MODIFIES, READS


@pytest.mark.parametrize(
    ("name", "annotations", "tags", "bits"),
    [
        ("delete_relations", {"destructiveHint": True}, (), DESTROYS),
        ("git_reset", {}, (), DESTROYS),
        ("git_branch_delete", {}, (), DESTROYS),
        ("shredFile", {}, (), DESTROYS),
        # Annotated destructive without a removing verb: it overwrites.
        ("write_file", {"destructiveHint": True}, (), MODIFIES),
        ("move_file", {}, ("destructive",), MODIFIES),
        ("read_graph", {"readOnlyHint": True}, (), READS),
        ("list_events", {}, (), READS | actions.LISTS),
        ("get-env", {}, (), READS),
        ("search_nodes", {}, ("read-only",), READS),
        ("create_entities", {}, (), CREATES),
        ("add_observations", {"readOnlyHint": False}, (), CREATES),
        ("merge_pull_request", {}, (), CHANGES),
        ("approve_pr", {}, (), CHANGES),
        ("sequentialthinking", {}, (), 0),
        ("calculate", {}, (), 0),
    ],
)
def test_a_tool_class_comes_from_its_name_annotations_and_tags(
    name: str, annotations: dict[str, bool], tags: tuple[str, ...], bits: int
) -> None:
    assert actions.tool_class(name, annotations, tags) == bits


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        ("remember a fact", actions.MAKE),
        ("store this observation for later", actions.MAKE),
        ("delete the staging branch", actions.REMOVE),
        ("undo my last commit", actions.REMOVE),
        ("what is on my calendar tomorrow", actions.READ),
        ("show me the logs", actions.READ),
        ("overwrite config.yaml", actions.CHANGE),
        ("Deleting files", actions.REMOVE),  # stemmed, case-folded
        ("compress file", 0),
        ("", 0),
    ],
)
def test_a_request_asks_what_its_words_say(query: str, asked: int) -> None:
    assert actions.intents(query) == asked


def test_a_tool_loses_its_share_only_when_the_request_does_not_ask_for_what_it_does() -> None:
    factor = actions.factor
    assert factor(DESTROYS, actions.REMOVE) == 1.0
    for asked in (0, actions.READ, actions.MAKE, actions.CHANGE):
        assert factor(DESTROYS, asked) == actions.PENALTY[DESTROYS] < 1.0
    assert factor(MODIFIES, actions.CHANGE) == factor(MODIFIES, actions.MAKE) == 1.0
    assert factor(MODIFIES, 0) == factor(MODIFIES, actions.READ) == actions.PENALTY[MODIFIES]
    # Without an intent, only destroying and modifying tools lose anything.
    assert factor(READS, 0) == factor(CREATES, 0) == factor(CHANGES, 0) == factor(0, 0) == 1.0
    assert factor(READS, actions.MAKE) == actions.PENALTY[READS] < 1.0
    assert factor(CREATES, actions.READ) == actions.PENALTY[CREATES] < 1.0
    assert factor(CHANGES, actions.MAKE) == actions.PENALTY[CHANGES] < 1.0
    assert factor(READS | DESTROYS, actions.READ) == actions.PENALTY[DESTROYS]
    # A factor is never above 1: scores only go down (search.run stays exact).
    for bits in range(0, actions.CLASS_BITS + 1, 4):
        for asked in range(32):
            assert 0.0 < factor(bits, asked) <= 1.0


def test_a_count_of_the_latest_things_asks_for_a_list_and_undo_is_the_opposite_of_making() -> None:
    assert actions.intents("show me the last 5 commits") & actions.RECENT
    assert actions.intents("show the last ten entries") & actions.RECENT
    assert not actions.intents("who last changed this line") & actions.RECENT
    assert not actions.intents("metrics of the last 6 hours") & actions.RECENT
    log = actions.tool_class("git_log", {"readOnlyHint": True}, ())
    blame = actions.tool_class("git_blame", {"readOnlyHint": True}, ())
    assert log == READS | actions.LISTS and blame == READS
    asked = actions.intents("show me the last 5 commits")
    assert actions.factor(log, asked) == 1.0 > actions.factor(blame, asked)
    assert actions.factor(CREATES, actions.REMOVE) == actions.OPPOSITE < actions.PENALTY[CREATES]
