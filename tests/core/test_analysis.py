"""Text analysis: identifier splitting, folding, stemming, stop words, CJK, idempotence."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import toolfind
from toolfind.core import analysis
from toolfind.core.analysis import (
    analyze_identifier,
    analyze_prose,
    analyze_query,
    lookup_name,
    name_key,
    query_terms,
    split_identifier,
    unmatched_words,
)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("getURLs", ["get", "url", "get_urls"]),
        ("HTTPServer", ["http", "server", "http_server"]),
        ("math.factorial", ["math", "factori", "math_factorial"]),
        ("read_file", ["read", "file", "read_file"]),
        ("read-file", ["read", "file", "read_file"]),
        ("files/read", ["file", "read", "files_read"]),
        ("ns:tool", ["ns", "tool", "ns_tool"]),
        ("base64Encode", ["base", "64", "encod", "base_64_encode"]),
        ("isASCIIString", ["is", "ascii", "string", "is_ascii_string"]),
        ("IDs", ["id"]),
        ("search", ["search"]),
    ],
)
def test_identifiers_split_at_every_boundary_and_keep_the_whole(
    text: str, terms: list[str]
) -> None:
    assert analyze_identifier(text) == terms


def test_every_spelling_of_a_name_yields_the_same_whole_identifier_term() -> None:
    spellings = ["read_file", "readFile", "ReadFile", "READ_FILE", "read-file", "read.file"]
    assert {analyze_identifier(s)[-1] for s in spellings} == {"read_file"}
    assert analyze_query("read_file") == ["read", "file", "read_file"]


def test_split_identifier_keeps_the_written_parts() -> None:
    assert split_identifier("getURLs") == [("get", False), ("URLs", False)]
    assert split_identifier("__init__") == [("init", False)]
    assert split_identifier("文件read") == [("文件", True), ("read", False)]


def test_unicode_is_nfkc_normalised_and_case_folded() -> None:
    assert analyze_identifier("ＲＥＡＤ") == ["read"]  # full-width letters
    assert analyze_identifier("Straße") == analyze_identifier("STRASSE")
    assert analyze_identifier("ﬁle") == ["file"]  # ligature


def test_english_words_are_stemmed() -> None:
    assert analyze_prose("Compressing compressed files") == ["compress", "compress", "file"]
    assert analyze_query("emails") == analyze_query("email")


def test_prose_and_queries_drop_stop_words_but_names_keep_them() -> None:
    assert analyze_prose("Read the contents of a file") == ["read", "content", "file"]
    assert analyze_identifier("the_end") == ["the", "end", "the_end"]
    assert analyze_query("how do I send an email") == ["send", "email"]


def test_prose_drops_eg_and_ie_abbreviations() -> None:
    assert analyze_prose("a format (e.g. json, i.e. text)") == ["format", "json", "text"]


def test_a_query_of_only_stop_words_keeps_them() -> None:
    assert analyze_query("the") == ["the"]
    assert analyze_query("to be or not") == ["not"]


def test_query_terms_are_distinct_in_order_of_first_appearance() -> None:
    assert analyze_query("file read file_read read") == ["file", "read", "file_read"]


def test_query_terms_pair_each_term_with_the_word_as_written() -> None:
    assert query_terms("Compressing FILES, read_file") == [
        ("compress", "compressing"),
        ("file", "files"),
        ("read", "read"),
        ("read_file", "read_file"),
    ]
    assert query_terms("the") == [("the", "the")]


def test_unmatched_words_are_reported_as_written_without_whole_identifiers() -> None:
    pairs = query_terms("zip xyzzy read_fiel")
    assert unmatched_words(pairs, {"zip", "read"}) == ("xyzzy", "fiel")
    assert unmatched_words(pairs, set()) == ("zip", "xyzzy", "read", "fiel", "read_fiel")


def test_cjk_becomes_character_bigrams_and_other_scripts_stay_words() -> None:
    assert analyze_query("读取文件") == ["读取", "取文", "文件"]
    assert analyze_query("文") == ["文"]
    assert analyze_query("ファイルを読む") == ["ファ", "ァイ", "イル", "ルを", "を読", "読む"]
    assert analyze_query("파일 읽기") == ["파일", "읽기"]
    assert analyze_query("Прочитать файл") == ["прочитать", "файл"]
    assert analyze_query("read文件") == ["read", "文件"]


def test_punctuation_and_symbols_separate_words() -> None:
    assert analyze_query("zip, (tar)! gz?") == ["zip", "tar", "gz"]
    assert analyze_query("") == []
    assert analyze_query("!!! ...") == []


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("read_file", "readfile"),
        ("Read-File", "readfile"),
        ("files/read_file", "filesreadfile"),
        ("files__readFile", "filesreadfile"),
        ("ＲＥＡＤ file", "readfile"),
        ("数学.階乗", "数学階乗"),
    ],
)
def test_name_key_ignores_case_and_separators(text: str, key: str) -> None:
    assert name_key(text) == key


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("___", "___"),
        ("---", "---"),
        (".", "."),
        ("🚀", "🚀"),
        ("Ａ", "a"),
        (" - ", "-"),
        (" ", ""),
    ],
)
def test_a_name_without_letters_or_digits_is_a_key_of_its_own(text: str, key: str) -> None:
    assert name_key(text) == key


@pytest.mark.parametrize("name", ["___", "---", ".", "🚀", "-_-"])
def test_an_exact_name_without_letters_or_digits_always_resolves(name: str) -> None:
    names = ["___", "---", ".", "🚀", "-_-", "launch"]
    keys: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        keys.setdefault(name_key(n), []).append(i)
    ns_key = name_key("u")

    def lookup(text: str) -> list[int]:
        return lookup_name(text, lambda k: keys.get(k, ()), names.__getitem__, lambda d: ns_key)

    wanted = [names.index(name)]
    assert lookup(name) == wanted
    for separator in ("/", ":", "__", "."):
        assert lookup(f"u{separator}{name}") == wanted, separator


def test_lookup_name_prefers_exact_then_key_then_qualified() -> None:
    names = ["math.factorial", "factorial", "mathfactorial", "search", "search"]
    ns_keys = ["py", "math", "other", "web", "email"]
    keys: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        keys.setdefault(name_key(n), []).append(i)

    def ids(key: str) -> list[int]:
        return keys.get(key, [])

    assert lookup_name("math.factorial", ids, names.__getitem__, ns_keys.__getitem__) == [
        0
    ]  # exact beats the key
    assert lookup_name("Math-Factorial", ids, names.__getitem__, ns_keys.__getitem__) == [
        0,
        2,
    ]  # same key
    assert lookup_name("web/search", ids, names.__getitem__, ns_keys.__getitem__) == [3]
    assert lookup_name("email:search", ids, names.__getitem__, ns_keys.__getitem__) == [4]
    assert lookup_name("search", ids, names.__getitem__, ns_keys.__getitem__) == [3, 4]
    assert lookup_name("nothing", ids, names.__getitem__, ns_keys.__getitem__) == []
    assert lookup_name("!!", ids, names.__getitem__, ns_keys.__getitem__) == []


def test_importing_analysis_loads_no_heavy_module() -> None:
    code = (
        "import sys; before = set(sys.modules); import toolfind.core.analysis; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    root = Path(toolfind.__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    ).stdout.split()
    for heavy in ("re", "json", "snowballstemmer", "toolfind.models", "typing", "dataclasses"):
        assert heavy not in out


identifier_text = st.lists(
    st.sampled_from([*"abcdefXYZ_-./: 09ßé读İ", "Ab", "URLs", "文件", "HTTPServer", "e.g."]),
    max_size=12,
).map("".join)


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=40), identifier_text))
def test_analysing_the_surface_words_again_yields_the_same_terms(text: str) -> None:
    pairs = query_terms(text)
    query = analyze_query(text)
    assert [term for term, _ in pairs] == query
    # The words a query's terms come from analyse to the same terms (stems are not stemmed
    # again: that is what "stem once" means), so reporting words loses nothing.
    whole = [surface for term, surface in pairs if "_" not in term]
    again = analyze_query(" ".join(whole))
    assert [t for t in again if "_" not in t] == [t for t in query if "_" not in t]


def test_a_word_is_stemmed_once_not_to_a_fixed_point() -> None:
    # "only" -> "onli" -> "on" (a stop word) if stemmed twice: "only" must stay a word.
    assert analyze_query("only") == ["onli"]
    assert analyze_query("read only files") == ["read", "onli", "file"]
    assert analyze_prose("Directories") == ["directori"]


@settings(max_examples=200)
@given(st.text(max_size=40))
def test_every_term_is_nonempty_and_has_no_whitespace(text: str) -> None:
    for term in analyze_identifier(text):
        assert term
        assert not any(c.isspace() for c in term)


# --- the fast paths agree with the general path ---------------------------------------------

ascii_text = st.text(alphabet=st.characters(max_codepoint=127), max_size=60)
mostly_ascii_text = st.lists(
    st.one_of(
        st.sampled_from([*"aZ09_-./: \t\n,!?'\"", "readFile", "getURLs", "base64", "e.g.", "IDs"]),
        st.sampled_from(["é", "’", "—", "…", "\u00a0", "\u2028", "ﬁ", "Ｒ", "读取", "\u0301", "ß"]),
        st.characters(),
    ),
    max_size=20,
).map("".join)
any_text = st.one_of(st.text(max_size=60), ascii_text, mostly_ascii_text, identifier_text)


def _reference_spans(text: str) -> list[str]:
    """The words of ``text`` by the general rule alone: NFKC, the contractions read, then
    ``_TABLE``."""
    text = unicodedata.normalize("NFKC", text)
    return analysis._contractions(text).translate(analysis._TABLE).split()


@settings(max_examples=400)
@given(any_text)
@example("A'S")  # a contraction: the clitic goes with its apostrophe in the fast path too
@example("I\uff07m here")  # a fullwidth apostrophe, one after NFKC
def test_fast_spans_equal_the_general_rule(text: str) -> None:
    assert analysis._spans(text) == _reference_spans(text)


@settings(max_examples=400)
@given(st.one_of(ascii_text, identifier_text.filter(str.isascii)))
def test_the_ascii_word_analyser_equals_the_general_one_on_any_ascii(word: str) -> None:
    assert analysis._analyze_ascii(word) == analysis._analyze_general(word)


@settings(max_examples=300)
@given(any_text)
def test_every_ascii_span_analyses_as_the_general_path_says(text: str) -> None:
    for span in _reference_spans(text):
        if span.isascii():
            assert analysis._analyze_ascii(span) == analysis._analyze_general(span)


@settings(max_examples=300)
@given(any_text)
def test_public_analysers_equal_the_general_path_without_memos(text: str) -> None:
    general = [analysis._analyze_general(span) for span in _reference_spans(text)]
    assert analyze_identifier(text) == [term for g in general for term in g[0]]
    assert analyze_prose(text) == [term for g in general for term in g[1]]
    content = [pair for g in general for pair in zip(g[1], g[3], strict=True)]
    every = [pair for g in general for pair in zip(g[0], g[2], strict=True)]
    first: dict[str, str] = {}
    for term, surface in content or every:
        first.setdefault(term, surface)
    assert query_terms(text) == list(first.items())
    assert analyze_query(text) == list(first)


def test_the_word_memos_are_cleared_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "_MEMO_LIMIT", 3)
    words = [f"w{i}ord" for i in range(10)]
    for word in words:
        assert analyze_identifier(word) == list(analysis._analyze_general(word)[0])
    assert len(analysis._every_memo) <= 3
    assert analysis._every_memo.keys() == analysis._content_memo.keys()
    assert analyze_prose(" ".join(words)) == [t for w in words for t in analyze_prose(w)]


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_an_invisible_format_character_inside_a_word_does_not_split_it(invisible: str) -> None:
    assert analyze_query(f"com{invisible}press the file") == analyze_query("compress the file")
    assert analyze_query(f"read{invisible}_file") == analyze_query("read_file")
