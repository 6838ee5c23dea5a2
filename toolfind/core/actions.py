"""Action agreement: what a request asks to do against what a tool does.

"remember a fact" must not put ``delete_relations`` first because the memory server's tools all
share its words. Each tool gets an action class when the index is built (:func:`tool_class`):

* ``DESTROYS``: its name holds a removing verb (delete, remove, drop, reset, purge, ...);
* ``MODIFIES``: MCP annotates it ``destructiveHint`` (or a catalog tags it ``destructive``) but its
  name removes nothing (``write_file``, ``move_file``: they overwrite);
* ``READS``: annotated ``readOnlyHint`` (tagged ``read-only``), or named with a reading verb
  (get, list, read, search, show...);
* ``CREATES``: named with a creating verb (create, add, send, save, ...);
* ``CHANGES``: named with a changing verb (update, edit, merge, approve, close, ...);

and each request its intents (:func:`intents`), from every word it holds, stop words included
("what is on my calendar" reads). A tool whose class the request does not ask for scores a
share of its BM25F score (:data:`PENALTY`): a destroying tool unless the request asks to remove
or undo something, a modifying one unless it asks to change, create or remove, a creating one
when the request only reads or removes, a changing one when it only reads or makes, a
reading one when the request only changes. A request
with no intent word penalises only destroying and modifying tools. Scores only go down, so the
ranking of the lexical top stays exact (:func:`toolfind.core.search.run` widens its pool
until it is).

Pure, cheap to import (the warm path runs it on every search): the verb lists are stemmed once.
"""

from __future__ import annotations

from toolfind.core.analysis import (
    _stem,
    analyze_identifier,
    query_terms,
    recent_count,
    split_identifier,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

#: Bump with every change to how a tool's class is decided (the index cache key holds it:
#: the class is stored in the index).
VERSION = "toolfind-actions/2"

#: Bits of a tool's action class (stored beside the ENABLED and DEFERRED flags of the index).
#: ``LISTS`` marks, besides its class, a tool named for listing or history (list, log, ...).
DESTROYS, MODIFIES, READS, CREATES, CHANGES, LISTS = 4, 8, 16, 32, 64, 128
CLASS_BITS = DESTROYS | MODIFIES | READS | CREATES | CHANGES | LISTS

#: Bits of a request's intents. ``RECENT``: it asks about recent history ("the last 5 commits").
REMOVE, CHANGE, MAKE, READ, RECENT = 1, 2, 4, 8, 16

#: The share of its score a tool keeps when the request does not ask for what it does.
PENALTY: dict[int, float] = {DESTROYS: 0.5, MODIFIES: 0.7, CREATES: 0.8, READS: 0.8, CHANGES: 0.8}
#: ... a creating tool when the request asks only to remove or undo (its opposite).
OPPOSITE = 0.5
#: ... a reading tool not named for listing, when the request asks about recent history.
NOT_HISTORY = 0.8

_DESTROYING = """delete remove drop destroy purge erase wipe reset truncate clear kill terminate
revoke uninstall unlink shred discard rm del unsubscribe prune clean cancel evict flush
unstage""".split()
_READING = """get list read show search find fetch query describe view lookup browse check count
inspect explain preview download export open stat tail head grep diff log status info
summarize summarise analyze analyse compare lookup peek watch retrieve""".split()
_CREATING = """create add new insert post send save store write upload make append record put
register schedule submit publish generate commit push import remember memorize invite share
reply forward start""".split()
_LISTING = """list log logs history timeline feed recent tail""".split()
_CHANGING = """update edit modify change set rename move merge patch replace approve decline reject
close reopen archive assign unassign mark toggle enable disable lock unlock resolve transition
restore revert configure apply accept upsert""".split()

# Request words, as the analyser stems them: what a request asks to do.
_ASK_REMOVE = """delete remove drop destroy purge erase wipe reset truncate clear kill terminate
revoke uninstall unlink shred discard rm del unsubscribe prune clean cancel evict flush unstage
undo revert rollback forget empty""".split()
_ASK_CHANGE = """overwrite replace edit update modify change write move rename set save put patch
alter rewrite amend fix approve decline reject close reopen archive assign mark toggle enable
disable lock unlock resolve restore flag label star pin merge rebase switch turn""".split()
_ASK_MAKE = """create add make new insert post send save store write upload remember memorize
record note put register schedule submit publish generate invite share reply forward start
open build book""".split()
_ASK_READ = """read list show get view display see find search look lookup check what which who
where when how is are does tell fetch inspect describe count print browse status info know
whats retrieve obtain gather collect provide give access""".split()


def _stems(words: Iterable[str]) -> frozenset[str]:
    return frozenset(_stem(w) for w in words)


_INTENT_WORDS: tuple[tuple[int, frozenset[str]], ...] = (
    (REMOVE, _stems(_ASK_REMOVE)),
    (CHANGE, _stems(_ASK_CHANGE)),
    (MAKE, _stems(_ASK_MAKE)),
    (READ, _stems(_ASK_READ)),
)

_DESTROY_VERBS = frozenset(_DESTROYING)
_READ_VERBS = frozenset(_READING)
_CREATE_VERBS = frozenset(_CREATING)
_CHANGE_VERBS = frozenset(_CHANGING)
_VERBS = _READ_VERBS | _CREATE_VERBS | _CHANGE_VERBS
_LIST_WORDS = frozenset(_LISTING)


def tool_class(name: str, annotations: Mapping[str, object], tags: Iterable[str]) -> int:
    """A tool's action bits (the module docstring's rules), from its name, its MCP
    annotations and its tags (``all_tags``: annotation tags included)."""
    parts = [part.lower() for part, _ in split_identifier(name)]
    tag_set = {tag.lower() for tag in tags}
    bits = 0
    if any(part in _DESTROY_VERBS for part in parts):
        bits |= DESTROYS
    elif annotations.get("destructiveHint") is True or "destructive" in tag_set:
        bits |= MODIFIES
    verb = next((part for part in parts if part in _VERBS), "")
    if annotations.get("readOnlyHint") is True or "read-only" in tag_set:
        bits |= READS
    elif not bits and verb in _READ_VERBS:
        bits |= READS
    elif not bits and verb in _CREATE_VERBS:
        bits |= CREATES
    elif not bits and verb in _CHANGE_VERBS:
        bits |= CHANGES
    if bits & READS and any(part in _LIST_WORDS for part in parts):
        bits |= LISTS
    return bits


def intents(query: str) -> int:
    """A request's intent bits: every word it holds (stop words too), stemmed; ``RECENT``
    when it counts the latest things (``analysis.recent_count``)."""
    terms = set(analyze_identifier(query))
    bits = 0
    for bit, words in _INTENT_WORDS:
        if not words.isdisjoint(terms):
            bits |= bit
    written = [word for _, word in query_terms(query, counts=True)]
    if any(recent_count(written, i) for i in range(len(written) - 1)):
        bits |= RECENT  # "the last 5 commits": a count of the latest things
    return bits


def factor(tool_bits: int, asked: int) -> float:
    """The share of its score a tool of class ``tool_bits`` keeps for a request with intents
    ``asked`` (1.0 when they agree)."""
    if asked & RECENT and tool_bits & READS and not tool_bits & (LISTS | DESTROYS):
        return NOT_HISTORY * factor(tool_bits, asked & ~RECENT)
    asked &= ~RECENT
    if tool_bits & DESTROYS:
        return 1.0 if asked & REMOVE else PENALTY[DESTROYS]
    if tool_bits & MODIFIES:
        return 1.0 if asked & (REMOVE | CHANGE | MAKE) else PENALTY[MODIFIES]
    if not asked:
        return 1.0
    if tool_bits & READS:
        return 1.0 if asked & READ else PENALTY[READS]
    if tool_bits & CREATES:
        if asked & (MAKE | CHANGE):
            return 1.0
        return OPPOSITE if asked == REMOVE else PENALTY[CREATES]
    if tool_bits & CHANGES:
        return 1.0 if asked & (CHANGE | REMOVE) else PENALTY[CHANGES]
    return 1.0


def agreement(query: str, action_of: Callable[[int], int]) -> Callable[[int], float]:
    """The factor of each tool (by id, its class from ``action_of``) for ``query``."""
    asked = intents(query)
    table = {bits: factor(bits, asked) for bits in _CLASSES}

    def of(doc: int) -> float:
        return table[action_of(doc) & CLASS_BITS]

    return of


#: Every combination of class bits a tool can have.
_CLASSES = tuple(range(0, CLASS_BITS + 1, 4))
