"""Text analysis: how tool text and queries become index terms.

One analyser serves documents and queries alike:

1. Unicode NFKC (full-width letters, ligatures and superscripts become plain characters).
2. Anything that is not a letter, digit or combining mark separates words, except the
   identifier connectors ``_ - . / :`` inside a word and the invisible format characters
   (zero-width space and joiners, soft hyphen, bidi controls), which are dropped.
3. A word is an identifier: it is split at its connectors, at camelCase boundaries
   (``getURLs`` -> get, urls; ``HTTPServer`` -> http, server; ASCII capitals only), and at
   letter/digit and CJK/non-CJK boundaries.
4. Each part is case-folded (``str.casefold`` then NFKC again, to a fixed point) and, when it is
   plain ASCII letters, stemmed once with the Snowball English stemmer (PyStemmer). Once:
   stemming a stem again can change it ("only" -> "onli" -> "on"), which would conflate
   unrelated words; so analysing the words a term came from (its surface forms) yields the
   term, and analysing the term itself need not.
5. A word of two or more parts also yields itself whole, its folded parts joined by ``_``
   (``read_file``, ``readFile``, ``Read-File`` -> ``read_file``), so a query that spells a name
   matches that name best whatever its separators and case.
6. Runs of CJK characters (Han, kana, Hangul) become overlapping character bigrams (a lone
   character stays a unigram); other scripts stay whole words.
7. Prose (descriptions, parameter descriptions, search hints) and queries drop a small list of
   English stop words; names, namespaces, parameter names, enum values and tags keep every
   word. A query made only of stop words keeps them.

On the warm search path: it imports only :mod:`unicodedata` and PyStemmer, and memoises per word.
"""

from __future__ import annotations

import unicodedata

import Stemmer

# collections.abc and typing cost a warm search more than this module: only mypy reads this.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence

#: English function words dropped from prose and queries. Small on purpose: words such as
#: "not", "all", "new" or "first" change what a tool does, so they stay. The last lines are
#: how people type some of them in a hurry: contractions without their apostrophe ("whats")
#: and the commonest slips ("teh"), which no tool's words should match.
STOP_WORDS: frozenset[str] = frozenset(
    """a an and any are as at be been being but by can could did do does doing e e_g etc for
    from g had has
    have having he her hers him his how i if in into is it its itself me my of on onto or our
    i_e ours please s she should so some such t than that the their theirs them then there
    these they this those to too us was we were what when where which while who whom why will
    whether with would you your yours
    whats thats whos hows wheres im ive youre
    dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt hasnt havent
    teh hte adn waht whta taht thsi wiht iwth yuo yoru""".split()
)

#: Identifier connectors: they split a word into parts but keep it one word.
CONNECTORS = "_-./:"

_MEMO_LIMIT = 200_000
_STEMMER = Stemmer.Stemmer("english")
_stem_memo: dict[str, str] = {}
_Analysed = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
# Per word, the terms :func:`_terms` gives: every one, and the ones not stop words.
_every_memo: dict[str, tuple[str, ...]] = {}
_content_memo: dict[str, tuple[str, ...]] = {}


def _stem(word: str) -> str:
    """Snowball English stem of an ASCII word (one pass: see the module docstring)."""
    stem = _stem_memo.get(word)
    if stem is None:
        stem = _STEMMER.stemWord(word) or word
        if len(_stem_memo) >= _MEMO_LIMIT:
            _stem_memo.clear()
        _stem_memo[word] = stem
    return stem


#: Stop words as the analyser sees them (stemmed).
_STOP_TERMS: frozenset[str] = frozenset(_stem(w) for w in STOP_WORDS)

SETTINGS: str = (
    "toolfind-analysis/6 nfkc drop=Cf contractions casefold split=_-./:,camel,digit,cjk compound=_ "
    f"stem=snowball-english/pystemmer-{Stemmer.version()} once cjk=bigram "
    f"stop={','.join(sorted(STOP_WORDS))}"
)
"""Everything that changes analysed terms, as one string (part of the index cache key)."""


class _CharTable(dict[int, int | str]):
    """``str.translate`` table: letters, digits, marks and connectors stay, the rest -> space.

    Filled lazily for non-ASCII characters (``__missing__``) and then remembered.
    """

    def __missing__(self, cp: int) -> int | str:
        char = chr(cp)
        category = unicodedata.category(char)
        keep = char.isalnum() or category[0] == "M"
        # Format characters (zero-width space and joiners, soft hyphen, bidi controls) are
        # invisible: dropped, so that one inside a word does not split it.
        value: int | str = cp if keep else "" if category == "Cf" else " "
        self[cp] = value
        return value


_TABLE = _CharTable()
for _cp in range(128):
    _c = chr(_cp)
    _TABLE[_cp] = _cp if (_c.isalnum() or _c in CONNECTORS) else " "
del _cp, _c

#: ``_TABLE``'s ASCII half as a ``bytes.translate`` table; bytes >= 128 stay as they are.
_BYTE_TABLE = bytes(cp if _TABLE[cp] == cp else 32 for cp in range(128)) + bytes(range(128, 256))
_ASCII_CHARS = frozenset(map(chr, range(128)))


def _spans(text: str) -> list[str]:
    """NFKC, then the whitespace-free words of ``text`` (connectors still inside): the NFKC
    text translated by ``_TABLE`` and split, by ``bytes.translate`` (one C lookup per byte).
    English contractions are read after NFKC (:func:`_contractions`), so that an apostrophe
    NFKC makes (a fullwidth one) is read as the ASCII one is."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if "'" in text or "\u2019" in text:
        text = _contractions(text)
    if not text.isascii():
        return _spans_mixed(text)
    return text.encode().translate(_BYTE_TABLE).decode().split()


#: What follows an apostrophe in a contraction or a possessive: dropped with it ("I'm",
#: "Anna's", "we'll"), so that no word of one letter ("m", "s", "d") is left behind.
_CLITICS = frozenset({"s", "m", "re", "ve", "ll", "d"})


def _contractions(text: str) -> str:
    """``text`` with its contractions read: an apostrophe (``'`` or ``’``) between letters
    goes with the clitic after it (``I'm`` -> ``I``, ``Anna's`` -> ``Anna``), or joins the
    negation (``don't`` -> ``dont``, a stop word); any other apostrophe separates words."""
    parts = text.replace("\u2019", "'").split("'")
    out = [parts[0]]
    for part in parts[1:]:
        end = 0
        while end < len(part) and part[end].isalpha():
            end += 1
        clitic = part[:end].lower()
        before = out[-1][-1:]
        if not (before.isalpha() and end):
            out.append(" " + part)
        elif clitic in _CLITICS:
            out.append(part[end:])
        elif clitic == "t" and before in "nN":
            out.append(part)
        else:
            out.append(" " + part)
    return "".join(out)


def _spans_mixed(text: str) -> list[str]:
    """:func:`_spans` of non-ASCII NFKC text: the bytes pass maps the ASCII characters and
    keeps the others (UTF-8 bytes >= 128); then each distinct non-ASCII character that
    separates words (``’``, ``—``) is replaced by a space throughout."""
    data = text.encode("utf-8", "surrogatepass").translate(_BYTE_TABLE)
    text = data.decode("utf-8", "surrogatepass")
    for char in set(text).difference(_ASCII_CHARS):
        value = _TABLE[ord(char)]
        if value == " " or value == "":
            text = text.replace(char, value)
    return text.split()


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF  # CJK unified ideographs
        or 0x3040 <= cp <= 0x30FF  # hiragana, katakana
        or 0xAC00 <= cp <= 0xD7AF  # Hangul syllables
        or 0x3400 <= cp <= 0x4DBF  # extension A
        or 0x20000 <= cp <= 0x3134F  # extensions B-G
        or 0xF900 <= cp <= 0xFAFF  # compatibility ideographs
        or 0x1100 <= cp <= 0x11FF  # Hangul jamo
        or 0x3130 <= cp <= 0x318F  # Hangul compatibility jamo
        or 0x31F0 <= cp <= 0x31FF  # katakana phonetic extensions
        or 0x3005 <= cp <= 0x3007  # 々 〆 〇
    )


# Character classes inside a word.
_LETTER, _DIGIT, _CJK, _MARK = 0, 1, 2, 3


def _char_class(char: str) -> int:
    if char.isascii():
        return _DIGIT if char.isdigit() else _LETTER
    if unicodedata.category(char)[0] == "M":
        return _MARK
    if char.isalpha():
        return _CJK if _is_cjk(ord(char)) else _LETTER
    return _DIGIT


def _camel_break(piece: str, i: int) -> bool:
    """Whether an identifier part starts at ``piece[i]`` (both neighbours are letters).

    ``aB`` breaks before B; ``ABc`` breaks before B (``HTTPServer``), except for a plural
    ``s`` closing an acronym (``URLs``). Only ASCII capitals start a part, so folded text,
    which has none, never splits again.
    """
    char = piece[i]
    if not ("A" <= char <= "Z"):
        return False
    prev = piece[i - 1]
    if prev.islower():
        return True
    if not ("A" <= prev <= "Z") or i + 1 >= len(piece):
        return False
    nxt = piece[i + 1]
    if not nxt.islower():
        return False
    plural = nxt == "s" and (i + 2 == len(piece) or not piece[i + 2].islower())
    return not plural


def _split_piece(piece: str, out: list[tuple[str, bool]]) -> None:
    """Split a connector-free piece at camelCase, letter/digit and CJK boundaries."""
    classes = [_char_class(c) for c in piece]
    if _MARK in classes:
        # A combining mark belongs to the character before it (or after it, at the start).
        for i, cls in enumerate(classes):
            if cls == _MARK:
                if i:
                    classes[i] = classes[i - 1]
                else:
                    classes[i] = next((c for c in classes if c != _MARK), _LETTER)
    start = 0
    for i in range(1, len(piece)):
        cls = classes[i]
        if cls != classes[i - 1] or (cls == _LETTER and _camel_break(piece, i)):
            out.append((piece[start:i], classes[start] == _CJK))
            start = i
    out.append((piece[start:], classes[start] == _CJK))


def split_identifier(word: str) -> list[tuple[str, bool]]:
    """The parts of one word, as written, each flagged ``True`` when it is a CJK run.

    >>> split_identifier("getURLs")
    [('get', False), ('URLs', False)]
    """
    parts: list[tuple[str, bool]] = []
    piece_start = 0
    for i, char in enumerate(word):
        if char in CONNECTORS:
            if i > piece_start:
                _split_piece(word[piece_start:i], parts)
            piece_start = i + 1
    if piece_start < len(word):
        _split_piece(word[piece_start:], parts)
    return parts


def _fold(part: str) -> str:
    """Case-fold a part: ``casefold`` then NFKC, repeated to a fixed point."""
    if part.isascii():
        return part.lower()
    folded = part
    for _ in range(4):
        nxt = unicodedata.normalize("NFKC", folded.casefold())
        if nxt == folded:
            break
        folded = nxt
    return folded


def _bigrams(run: str) -> list[str]:
    """Overlapping bigrams of a CJK run; combining marks stay with their base character."""
    clusters: list[str] = []
    for char in run:
        if clusters and (
            unicodedata.category(char)[0] == "M"
            or all(unicodedata.category(c)[0] == "M" for c in clusters[-1])
        ):
            clusters[-1] += char
        else:
            clusters.append(char)
    if len(clusters) == 1:
        return clusters
    return [clusters[i] + clusters[i + 1] for i in range(len(clusters) - 1)]


def _analyze_span(span: str) -> _Analysed:
    """Of one word: every term, the terms that are not stop words, and the surface form
    (folded, unstemmed) each of them comes from, in the same order."""
    return _analyze_ascii(span) if span.isascii() else _analyze_general(span)


def _analyze_general(span: str) -> _Analysed:
    """:func:`_analyze_span` of any word, uncached (the reference of :func:`_analyze_ascii`)."""
    every: list[str] = []
    every_surface: list[str] = []
    words: list[str] = []
    for part, cjk in split_identifier(span):
        if cjk:
            grams = _bigrams(part)
            every += grams
            every_surface += grams
            continue
        folded = _fold(part)
        words.append(folded)
        every.append(_stem(folded) if folded.isascii() and folded.isalpha() else folded)
        every_surface.append(folded)
    if len(words) >= 2:
        whole = "_".join(words)
        every.append(whole)
        every_surface.append(whole)
    return _with_content(every, every_surface)


def _analyze_ascii(span: str) -> _Analysed:
    """:func:`_analyze_general` of an ASCII word, with no per-character work for the usual
    parts (see :func:`_ascii_parts`); ASCII has no CJK and folds with ``str.lower``."""
    words = [part.lower() for part in _ascii_parts(span)]
    every = [_stem(word) if word.isalpha() else word for word in words]
    if len(words) < 2:
        return _with_content(every, words)
    whole = "_".join(words)
    return _with_content([*every, whole], [*words, whole])


def _with_content(every: list[str], surfaces: list[str]) -> _Analysed:
    """The four tuples of :func:`_analyze_span`: content terms are those not stop words (CJK
    bigrams never are). Most words hold no stop word, and then share the tuples."""
    terms, forms = tuple(every), tuple(surfaces)
    if _STOP_TERMS.isdisjoint(terms):
        return terms, terms, forms, forms
    kept = [i for i, term in enumerate(terms) if term not in _STOP_TERMS]
    return terms, tuple(terms[i] for i in kept), forms, tuple(forms[i] for i in kept)


def _ascii_parts(word: str) -> list[str]:
    """The parts of an ASCII word as written: :func:`split_identifier`'s, none of them CJK.

    A piece of digits, or of letters in one case or capitalised (``read``, ``URL``, ``Read``),
    has no inner boundary: only mixed pieces (``getURLs``) are scanned per character.
    """
    for connector in "-./:":
        if connector in word:
            word = word.replace(connector, "_")
    parts: list[str] = []
    for piece in word.split("_"):
        if piece.isdigit() or (
            piece.isalpha() and (piece.islower() or piece.isupper() or piece[1:].islower())
        ):
            parts.append(piece)
        elif piece:
            parts += _split_ascii_piece(piece)
    return parts


def _split_ascii_piece(piece: str) -> list[str]:
    """:func:`_split_piece` of a connector-free ASCII piece: letter/digit and camelCase
    boundaries only (every ASCII character that is not a digit counts as a letter there)."""
    parts: list[str] = []
    start = 0
    prev_digit = piece[0].isdigit()
    for i in range(1, len(piece)):
        char = piece[i]
        digit = char.isdigit()
        if digit != prev_digit or (not digit and "A" <= char <= "Z" and _camel_break(piece, i)):
            parts.append(piece[start:i])
            start = i
        prev_digit = digit
    parts.append(piece[start:])
    return parts


def _terms(text: str, which: int) -> list[str]:
    """Terms of ``text``: ``which`` 0 keeps stop words, 1 drops them.

    Runs once per word of every tool's text: one subscript of a memo per word; a miss
    analyses the word and fills both memos.
    """
    memo = _content_memo if which else _every_memo
    terms: list[str] = []
    for span in _spans(text):
        try:
            terms += memo[span]
        except KeyError:
            analysed = _analyze_span(span)
            if len(_every_memo) >= _MEMO_LIMIT:
                _every_memo.clear()
                _content_memo.clear()
            _every_memo[span], _content_memo[span] = analysed[0], analysed[1]
            terms += analysed[which]
    return terms


def analyze_identifier(text: str) -> list[str]:
    """Terms of a name, namespace, parameter name, enum value or tag: no stop words dropped.

    >>> analyze_identifier("read_file")
    ['read', 'file', 'read_file']
    """
    return _terms(text, 0)


def analyze_prose(text: str) -> list[str]:
    """Terms of a description or search hint: stop words dropped.

    >>> analyze_prose("Reads the files")
    ['read', 'file']
    """
    return _terms(text, 1)


def query_terms(text: str, counts: bool = False) -> list[tuple[str, str]]:
    """A query's distinct terms, each with the word it comes from as the user wrote it
    (case-folded, not stemmed: ``xyzzy`` for the term ``xyzzi``), in order of first
    appearance. Stop words are dropped unless the query has nothing else; so is a count of
    the latest things (:func:`recent_count`: "last 5"), unless ``counts``.

    >>> query_terms("Compressing files")
    [('compress', 'compressing'), ('file', 'files')]
    """
    every: list[str] = []
    content: list[str] = []
    every_surface: list[str] = []
    content_surface: list[str] = []
    for span in _spans(text):
        analysed = _analyze_span(span)
        every += analysed[0]
        content += analysed[1]
        every_surface += analysed[2]
        content_surface += analysed[3]
    if content and not counts:
        _drop_counts(content, content_surface)
    if content:
        pairs = zip(content, content_surface, strict=True)
    else:
        pairs = zip(every, every_surface, strict=True)
    seen: dict[str, str] = {}
    for term, surface in pairs:
        seen.setdefault(term, surface)
    return list(seen.items())


#: Words that, before a count, say how many of the latest ("the last 5 commits").
_RECENCY = frozenset({"last", "latest", "recent", "past", "previous"})
#: Counts spelt out.
COUNT_WORDS = frozenset(
    """two three four five six seven eight nine ten eleven twelve fifteen twenty fifty
    hundred few""".split()
)


#: A count before one of these is a window of time or of a file ("the last 6 hours", "the
#: last 50 lines"), which a tool may take and say in its words ("the last N lines").
WINDOW_UNITS = frozenset(
    """second seconds minute minutes hour hours day days week weeks month months year years
    line lines byte bytes row rows character characters""".split()
)


def recent_count(surfaces: Sequence[str], i: int) -> bool:
    """Whether ``surfaces[i]`` is a recency word followed by a count of things (not of time):
    "the last 5 commits", "the latest ten entries", not "the last 6 hours"."""
    after = surfaces[i + 1] if i + 1 < len(surfaces) else ""
    then = surfaces[i + 2] if i + 2 < len(surfaces) else ""
    return (
        surfaces[i] in _RECENCY
        and (after.isdigit() or after in COUNT_WORDS)
        and then not in WINDOW_UNITS
    )


def _drop_counts(terms: list[str], surfaces: list[str]) -> None:
    """Drop a recency word and the count after it ("last 5", "latest ten": :func:`recent_count`):
    they say how many to list, not what to find ("who last changed each line" is another
    "last"). A query keeps at least one word."""
    for i in range(len(surfaces) - 2, -1, -1):
        if recent_count(surfaces, i) and len(terms) > 2:
            del terms[i : i + 2], surfaces[i : i + 2]


def query_stop_words(text: str) -> list[str]:
    """The stop words of a query (folded, distinct, in order) when it has other words: what
    ``query_terms`` drops.

    >>> query_stop_words("is 97 prime")
    ['is']
    """
    found: dict[str, None] = {}
    content = False
    for span in _spans(text):
        every, kept, surfaces, _ = _analyze_span(span)
        content = content or bool(kept)
        for term, surface in zip(every, surfaces, strict=True):
            if term in _STOP_TERMS:
                found[surface] = None
    return list(found) if content else []


def capitalised(text: str) -> frozenset[str]:
    """The words of ``text`` (folded) that it writes with a capital first letter, its first
    word aside (a sentence starts with one): names, such as "Paris" or "Anna", which typo
    correction leaves alone.

    >>> sorted(capitalised("Book a flight to Paris with Anna"))
    ['anna', 'paris']
    """
    return frozenset(
        _fold(part)
        for span in _spans(text)[1:]
        if span[:1].isupper()
        for part, cjk in split_identifier(span)
        if not cjk
    )


def term_words(texts: Iterable[str]) -> dict[str, str]:
    """Each term of ``texts`` (stop words included) with the first word it comes from as
    written (case-folded, not stemmed): how a tool's terms are shown to people.

    >>> term_words(["List directories", "read_file"])
    {'list': 'list', 'directori': 'directories', 'read': 'read', 'file': 'file', 'read_file': 'read_file'}
    """
    words: dict[str, str] = {}
    for text in texts:
        for span in _spans(text):
            analysed = _analyze_span(span)
            for term, surface in zip(analysed[0], analysed[2], strict=True):
                words.setdefault(term, surface)
    return words


def unmatched_words(pairs: Sequence[tuple[str, str]], matched: Collection[str]) -> tuple[str, ...]:
    """The words to report as found nowhere, given :func:`query_terms` and the matched terms.

    Words as the user wrote them (folded, unstemmed), without repeats. Once any term matched,
    whole-identifier terms (``read_files``) are left out: their parts are reported on their own.

    >>> unmatched_words(query_terms("zip xyzzy"), ["zip"])
    ('xyzzy',)
    """
    words = [
        surface
        for term, surface in pairs
        if term not in matched and (not matched or "_" not in term)
    ]
    return tuple(dict.fromkeys(words))


def analyze_query(text: str) -> list[str]:
    """A query's distinct terms in order of first appearance (stop words dropped unless the
    query has nothing else).

    >>> analyze_query("How do I read_file?")
    ['read', 'file', 'read_file']
    """
    return [term for term, _ in query_terms(text)]


_DROP_ASCII = {cp: None for cp in range(128) if not chr(cp).isalnum()}


def name_key(text: str) -> str:
    """A name for separator- and case-agnostic lookup: NFKC, casefold, drop non-alphanumerics.

    A name with no letter or digit (``___``, ``---``, ``.``, an emoji: valid for MCP hosts and
    catalogs) keeps its folded characters, whitespace aside, so that it is still a key of its
    own (``""`` only for an empty or blank text): otherwise it could never be looked up.

    >>> name_key("Files__Read-File")
    'filesreadfile'
    >>> name_key("___")
    '___'
    """
    if text.isascii():
        if text.isalnum():
            return text.lower()
        return text.lower().translate(_DROP_ASCII) or "".join(text.lower().split())
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in folded if c.isalnum()) or "".join(folded.split())


def close_names(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates`` within a few edits of ``word`` (case folded), closest
    first: the "did you mean" of a mistyped filter. (difflib would import re and enum on a
    path that is otherwise a warm, fast one.)"""
    wanted = word.casefold()
    limit = max(1, len(wanted) // 3)
    scored = []
    for candidate in candidates:
        folded = candidate.casefold()
        if abs(len(folded) - len(wanted)) > limit:
            continue
        distance = _edits(wanted, folded)
        if distance <= limit:
            scored.append((distance, candidate))
    scored.sort()
    return [candidate for _, candidate in scored[:n]]


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


#: Separators of a qualified name ``namespace<sep>tool``.
QUALIFIERS: tuple[str, ...] = ("/", ":", "__", ".")


def lookup_name(
    text: str,
    ids_for: Callable[[str], Sequence[int]],
    name_of: Callable[[int], str],
    namespace_key_of: Callable[[int], str],
) -> list[int]:
    """The tools ``text`` names, by ``show``'s rules, first rule that matches wins.

    1. tools whose name is exactly ``text``;
    2. tools whose name or an alias has the same :func:`name_key`;
    3. qualified forms ``ns/tool``, ``ns:tool``, ``ns__tool``, ``ns.tool``: the part after the
       separator matches rule 2 and the part before it has the key of the tool's namespace;
       of those, the tools whose name is exactly the part after the separator, if any.

    So two tools of one namespace whose names share a key (``read_file``, ``Read-File``) are
    each reachable by their exact spelling, bare or qualified (``ns/read_file``); a name with no
    letter or digit (``___``) has a key of its own (:func:`name_key`), so it is reachable too.

    ``ids_for(key)`` gives the ids of the tools with that name key (names and aliases);
    ``name_of(i)`` and ``namespace_key_of(i)`` tool i's name and namespace key (asked of
    candidates only). Returns ascending ids.
    """
    key = name_key(text)
    if not key:
        return []
    candidates = sorted(set(ids_for(key)))
    exact = [i for i in candidates if name_of(i) == text]
    if exact:
        return exact
    if candidates:
        return candidates
    found: set[int] = set()
    spelled: set[int] = set()  # ... whose name is exactly the text after the separator
    for sep in QUALIFIERS:  # every (namespace, tool) reading of ``text``
        start = text.find(sep)
        while start > 0:
            ns_key = name_key(text[:start])
            tool_text = text[start + len(sep) :]
            tool_key = name_key(tool_text)
            if ns_key and tool_key:
                for i in ids_for(tool_key):
                    if namespace_key_of(i) == ns_key:
                        found.add(i)
                        if name_of(i) == tool_text:
                            spelled.add(i)
            start = text.find(sep, start + 1)
    return sorted(spelled or found)
