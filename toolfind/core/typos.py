"""Typo tolerance: a query term found in no tool, matched to an indexed term one edit away.

A search box forgives "emial" and "shufle my spotfy". When a query term has no postings, the
terms one Damerau-Levenshtein edit away (a letter deleted, inserted, replaced, or two
neighbours swapped) are looked up in the index's vocabulary, and the one found in most tools
stands in for it, scored at :data:`toolfind.core.bm25f.TYPO_DISCOUNT` of an exact match.

How far, by length (of the analysed term):

* :data:`MIN_LENGTH` letters or more: one edit of any kind. Most misspellings are one edit
  (Damerau, "A technique for computer detection and correction of spelling errors", CACM
  1964: over 80 %), and one edit is exact and cheap here: the few hundred candidates are hash
  lookups in the vocabulary, no scan of it, and only for the terms that matched nothing. Two
  edits (what Elasticsearch's ``AUTO`` fuzziness allows from 6 characters) would mean tens of
  thousands of lookups a word, or a second index of the vocabulary, for the rarer double typo.
* four letters: only the slips that rarely land on another word: two neighbours swapped
  ("lsit", "wrod"), a vowel left out ("emil" -> "email"). Any edit of a four-letter word
  mostly lands on another real word ("rome" -> "role", "live" -> "line"): a real word the
  catalog lacks, corrected into noise.
* shorter: never.

A real word is never rewritten: a word that is common English (:func:`is_english`, SCOWL's
small list in :mod:`toolfind.core.english`: "general", "pairs", "weather") is a word the catalog lacks, not
a slip, and a name the request capitalises ("Paris", "Anna") is a name
(:func:`toolfind.core.analysis.capitalised`). A correction is shown as a word one edit from the
query's word (:func:`spelled`), never as a stem: when there is none, nothing is corrected.

Terms are compared as the analyser makes them (case-folded, stemmed: "spotfy" -> "spotfi",
one insertion from "spotifi", Spotify's stem). A corrected word still counts as found in no
tool (``unmatched_terms``: as written, it is not in any); ``--explain`` shows the word it
stood for.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

#: Terms this long get any one edit; four letters, only a swap; shorter, none.
MIN_LENGTH = 5
#: Longer words are not corrected: no real word is that long, and a word's candidates grow
#: with its length squared times its length (a 1 MB "word" would be 54 million strings).
MAX_LENGTH = 30
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def swaps(word: str) -> list[str]:
    """Every distinct string made by swapping two neighbouring letters of ``word`` (itself
    excluded), in order."""
    found = dict.fromkeys(
        word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)
    )
    found.pop(word, None)
    return list(found)


def edits(word: str) -> list[str]:
    """Every distinct string one Damerau-Levenshtein edit from ``word`` (lower-case ASCII
    letters inserted or substituted), ``word`` itself excluded, in a fixed order."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    found = [a + b[1:] for a, b in splits if b]
    found += swaps(word)
    found += [a + c + b[1:] for a, b in splits if b for c in _LETTERS]
    found += [a + c + b for a, b in splits for c in _LETTERS]
    return list(dict.fromkeys(edit for edit in found if edit != word))


def correct(
    term: str,
    known: Callable[[list[str]], Iterable[str]],
    postings: Callable[[str], Any],
    word: str = "",
) -> tuple[str, Any] | None:
    """The indexed term standing in for ``term`` (which has no postings) and its postings:
    of the terms one edit away that are in the vocabulary (``known`` keeps those of a list
    that are, in any order) and have ``postings``, the one in most tools (ties: the first in
    alphabetical order); None when there is none or ``term`` is too short or not plain ASCII
    letters. Four-letter terms get swaps only (see the module docstring).

    When no term is one edit from ``term`` (a stem), the edits of ``word``, the word it was
    stemmed from, are looked up as they are: "compres" stems to "compr", three edits from
    "compress", but is one edit from the word "compress", its own stem. (Stemming every
    candidate would also find the rarer words whose stem differs, at ten times the cost.)"""
    best = _best(term, known(_candidates(term)), postings)
    if best is None and word and word != term:
        best = _best(term, known(_candidates(word)), postings)
    return best


def read_as(
    term: str,
    word: str,
    known: Callable[[list[str]], Iterable[str]],
    postings: Callable[[str], Any],
) -> tuple[str, str, Any] | None:
    """What the query's ``word`` (its term ``term`` in no tool) is read as: the indexed term
    :func:`correct` picks, the word it is shown as (:func:`spelled`) and its postings; None
    when there is none, when no word spelling of it is one edit away, or when it would read
    one common English word as another (:func:`english_term`)."""
    fix = correct(term, known, postings, word)
    if fix is None:
        return None
    shown = spelled(fix[0], word)
    if not shown or (is_english(word) and english_term(fix[0], shown)):
        return None
    return fix[0], shown, fix[1]


def _candidates(word: str) -> list[str]:
    if not MIN_LENGTH - 1 <= len(word) <= MAX_LENGTH or not (word.isascii() and word.isalpha()):
        return []
    return edits(word) if len(word) >= MIN_LENGTH else short_edits(word)


_VOWELS = "aeiou"


def short_edits(word: str) -> list[str]:
    """The slips a typist makes on a four-letter word that rarely land on another word: two
    neighbours swapped ("lsit" -> "list"), then a vowel left out ("emil" -> "email"), without
    repeats (a doubled letter or any other edit is left alone: "seet" -> "set" is a guess)."""
    found = swaps(word)
    found += [word[:i] + v + word[i:] for i in range(1, len(word) + 1) for v in _VOWELS]
    return list(dict.fromkeys(edit for edit in found if edit != word))


def _best(
    term: str, candidates: Iterable[str], postings: Callable[[str], Any]
) -> tuple[str, Any] | None:
    best: tuple[str, Any] | None = None
    for candidate in set(candidates) - {term}:
        found = postings(candidate)
        if found is None:
            continue
        if best is None or (len(found[0]), best[0]) > (len(best[1][0]), candidate):
            best = (candidate, found)
    return best


def spelled(term: str, word: str) -> str:
    """How a corrected word is shown: the spelling one edit from ``word`` (the query's word)
    that analyses to ``term`` (the indexed term it was read as: ``shufle`` -> ``shuffle``,
    not the stem ``shuffl``); ``""`` when no word one edit away does (the term is a stem
    only: "general" is not read as ``generat``)."""
    from toolfind.core.analysis import _stem

    if not (word.isascii() and word.isalpha()) or len(word) > MAX_LENGTH:
        return ""
    found = [edit for edit in edits(word) if edit == term or _stem(edit) == term]
    # the spelling nearest the query's word in length, then the first in edits' order
    return min(found, key=lambda e: abs(len(e) - len(word) - 1)) if found else ""


#: Endings that make a stem an English word ("generat" is "generate"'s).
_ENDINGS = ("e", "y", "s", "ed", "ing", "ion")


def english_term(term: str, shown: str) -> bool:
    """Whether the indexed ``term``, shown as ``shown``, stands for a common English word:
    ``shown`` is one, or ``term`` is the stem of one (``generat``: "generate"). A real word
    is never corrected into such a term (``pairs`` for "paris"); a product's spelling
    ("Xplain", "Strology") is not English, and stays reachable."""
    if is_english(shown):
        return True
    from toolfind.core.analysis import _stem

    return any(is_english(term + end) and _stem(term + end) == term for end in _ENDINGS)


def is_english(word: str) -> bool:
    """Whether ``word`` (folded) is a common English word: one of SCOWL's small American and
    British lists (:mod:`toolfind.core.english`, written by ``scripts/english_words.py``).
    Only words typo correction looks at are listed (four to :data:`MAX_LENGTH` letters)."""
    if not MIN_LENGTH - 1 <= len(word) <= MAX_LENGTH or not (word.isascii() and word.isalpha()):
        return False
    from toolfind.core.english import WORDS  # data, imported on the first word found nowhere

    return f"\n{word}\n" in WORDS
