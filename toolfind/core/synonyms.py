"""Words people use for the same thing: the software domain's synonyms and abbreviations.

A request says "open a PR", the tool says "create a pull request"; "make a folder" against
``create_directory``; "k8s" against a Kubernetes server. :data:`TABLE` lists groups of words
and phrases that mean the same to someone asking for a tool; a user extends it in
``toolfind.toml`` (``[synonyms]``, docs/ranking.md).

How a group is used: when a query holds one of its members (a word, or a phrase as
consecutive words), the other members' terms are searched too, each scored at
:data:`DISCOUNT` of what the word itself would score (``bm25f``'s typo rule: an expansion always
ranks below the word).

Members are matched by the words a person wrote, never by stems: Snowball stems "terminal"
and "terminate" alike (``termin``), and "run ls in the terminal" does not ask to kill a
process. A query word is a member's word when it is that word, or a regular inflection of it
(``folders``, ``stopped``, ``repositories``, ``deleting``) with the same stem
(:meth:`Table.member_word`: "news" is not a form of "new"). What a group expands to is the
analysed terms of its members that some tool has: the index holds stems.

A :class:`Table` is settled when an index is built and holds each group once (member key ->
group ids -> the group's terms), so its size, its build time and its share of the cache grow
with the number of words declared, not with the square of a group's size; a search only
looks up the query's words in it, on the warm path too.

The table is written from the vocabulary of software and its users (abbreviations, the
product words of common services, everyday words for technical ones), not from any labelled
set; a group is added only when its members are interchangeable in a request to a tool. It is
versioned (:data:`VERSION`, part of the index cache key): a change to it rebuilds indexes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

#: Bump with every change to :data:`TABLE` or to how members are matched (the cache key holds it).
VERSION = "toolfind-synonyms/2"

#: An expanded term scores this share of its impacts (below the word as written).
DISCOUNT = 0.5

#: The most words (members, a phrase counting once) a configuration's ``[synonyms]`` may declare
#: in all: a table costs time, memory and cache in proportion to it, and a list of this many
#: synonyms is already far beyond a hand-written one.
MAX_WORDS = 10_000

#: One group a line: members separated by ``|``; a member of several words is a phrase.
TABLE = """
pr | pull request
mr | merge request
repo | repository
dir | directory | folder
k8s | kubernetes
gcal | google calendar
gdrive | google drive
gmail | google mail
gdocs | google docs
gsheets | google sheets
codeberg | forgejo | gitea
agenda | calendar events
meeting | event | appointment
download | fetch
webpage | web page | website | url
link | url
ticket | issue
bug | issue
sprint | iteration
oncall | on call | pager
alarm | alert
outage | incident
dm | direct message | private message
msg | message
email | e-mail | mail
inbox | mailbox
doc | document
spreadsheet | sheet | workbook
slides | presentation | deck
pic | picture | image | photo
img | image
vid | video
db | database
row | record
env var | environment variable
env | environment
config | configuration | settings
cfg | config
auth | authentication | login
pwd | password
creds | credentials
info | information
stats | statistics
num | number
avg | average | mean
max | maximum
min | minimum
params | parameters
args | arguments
func | function
var | variable
app | application
proc | process
cpu | processor
mem | memory | ram
tz | timezone | time zone
datetime | date and time
now | current
today | current date
upcoming | coming up | tomorrow | next week
calc | calculate | compute
sqrt | square root
ls | list
rm | delete | remove
del | delete
mv | move | rename
cp | copy | duplicate
mkdir | make directory | create directory
make | create | new
show | display | view
find | search | look up | lookup
remember | memorize | memory
erase | delete
kill | terminate | stop process
unzip | decompress | unpack
zip | compress
js | javascript
py | python
md | markdown
yml | yaml
cron | scheduled job
pkg | package
lib | library
dep | dependency
vm | virtual machine
container | docker container
cert | certificate
ssl | tls
dns | domain name
ci | continuous integration | pipeline
cd | continuous deployment | deploy
changelog | release notes
diff | patch | changes
blame | annotate
stash | shelve
undo | revert | rollback | roll back | reset
todo | task
kanban | board
wiki | knowledge base
signup | registration | sign up
logout | sign out
login | sign in
screenshot | screen capture
ocr | text recognition
tts | text to speech
stt | speech to text | transcribe
llm | language model
gpu | graphics card
"""


def groups(table: str | None = None) -> list[tuple[str, ...]]:
    """The groups of a table in :data:`TABLE`'s form (default: :data:`TABLE`), each a tuple of
    its members."""
    out = []
    for line in (TABLE if table is None else table).splitlines():
        members = tuple(m.strip() for m in line.split("|") if m.strip())
        if len(members) >= 2:
            out.append(members)
    return out


#: Phrases longer than this many words are not looked for in a query.
MAX_PHRASE = 3
#: A query searches at most this many synonyms' terms (the first found, longest phrases
#: first): a search costs what its terms' postings cost, and a hand-written group has a few
#: words, not thousands.
MAX_EXPANSIONS = 64

#: A table as an index file keeps it: member keys -> group ids, each group's terms, the
#: members' words (:meth:`Table.plain`).
Plain = tuple[dict[str, tuple[int, ...]], tuple[tuple[str, ...], ...], dict[str, str]]


class Table:
    """The synonym groups of an index: each member's key (its words as a query spells them,
    by a space: ``pull request``) -> the ids of the groups it is in -> each group's terms that
    some tool has (what a query holding the member also searches). Linear in the words
    declared: a group is stored once, however many members it has."""

    __slots__ = ("_keys", "_targets", "_words")

    def __init__(
        self,
        keys: dict[str, tuple[int, ...]],
        targets: tuple[tuple[str, ...], ...],
        words: dict[str, str] | None = None,
    ) -> None:
        self._keys = keys
        self._targets = targets
        self._words = _word_forms(keys) if words is None else words

    def plain(self) -> Plain:
        """The table as plain containers (for ``marshal``)."""
        return (self._keys, self._targets, self._words)

    @classmethod
    def from_plain(cls, found: object) -> Table:
        """The table :meth:`plain` gave. Raises ValueError when ``found`` is not of its shape."""
        if not (
            isinstance(found, tuple)
            and len(found) == 3
            and isinstance(found[0], dict)
            and isinstance(found[1], tuple)
            and isinstance(found[2], dict)
        ):
            raise ValueError("synonym table is malformed")
        return cls(found[0], found[1], found[2])

    def __len__(self) -> int:
        return len(self._keys)

    def terms(self, key: str) -> tuple[str, ...] | None:
        """The terms of the groups whose member has ``key`` (None when none has)."""
        ids = self._keys.get(key)
        if not ids:
            return None
        if len(ids) == 1:
            return self._targets[ids[0]]
        return tuple(dict.fromkeys(t for g in ids for t in self._targets[g]))

    def member_word(self, word: str) -> str:
        """The member's word that ``word`` (folded, as a query writes it) is a form of, else
        ``word``: two words are forms of one word when one is the other or a regular
        inflection of it, or both inflect a third (:func:`lemmas`: ``change``, ``changed``,
        ``changes``), and Snowball stems them alike (``news`` is not ``new``; ``terminal``,
        stemmed like ``terminate``, inflects nothing)."""
        words = self._words
        found = words.get(word)
        if found == word:
            return word
        stem: str | None = None
        for candidate in (found, *map(words.get, lemmas(word))):
            if candidate is not None:
                if stem is None:
                    from toolfind.core.analysis import _stem

                    stem = _stem(word)
                if _stem(candidate) == stem:
                    return candidate
        return word

    def expand(self, words: Sequence[str], own: Iterable[str]) -> list[tuple[str, int, int]]:
        """The terms a query's ``words`` (in order, as written) expand to, each with the
        position and the length of the query's phrase it came from (longest phrases first),
        in order of position, without repeats and without ``own`` (the query's terms); at
        most :data:`MAX_EXPANSIONS`."""
        forms = [self.member_word(word) for word in words]
        seen = set(own)
        out: dict[str, tuple[int, int]] = {}
        for size in range(min(MAX_PHRASE, len(forms)), 0, -1):
            for i in range(len(forms) - size + 1):
                found = self.terms(" ".join(forms[i : i + size]))
                if found:
                    for term in found:
                        if term not in seen and term not in out:
                            out[term] = (i, size)
                            if len(out) == MAX_EXPANSIONS:
                                return _in_order(out)
        return _in_order(out)


def _in_order(out: dict[str, tuple[int, int]]) -> list[tuple[str, int, int]]:
    return sorted(((t, i, n) for t, (i, n) in out.items()), key=lambda item: item[1])


def _word_forms(keys: Iterable[str]) -> dict[str, str]:
    """Each word of the member keys ``keys``, and each word it may inflect (:func:`lemmas`),
    -> the member's word (a word of a member before a lemma of another)."""
    words = {word: word for key in keys for word in key.split(" ")}
    for word in list(words):
        for lemma in lemmas(word):
            words.setdefault(lemma, word)
    return words


def lemmas(word: str) -> list[str]:
    """The words ``word`` may be a regular English inflection of, likeliest first: plurals and
    third persons (``folders``, ``boxes``, ``repositories``), past tenses (``deleted``,
    ``stopped``, ``copied``) and participles (``listing``, ``making``, ``running``)."""
    out: list[str] = []
    n = len(word)
    if n > 3 and word.endswith("ies"):
        out.append(word[:-3] + "y")
    if n > 3 and word.endswith("es"):
        out.append(word[:-2])
    if n > 2 and word.endswith("s") and not word.endswith("ss"):
        out.append(word[:-1])
    if n > 3 and word.endswith("ied"):
        out.append(word[:-3] + "y")
    if n > 3 and word.endswith("ed"):
        out += [word[:-2], word[:-1]]
        if n > 4 and word[-3] == word[-4]:
            out.append(word[:-3])
    if n > 4 and word.endswith("ing"):
        out += [word[:-3], word[:-3] + "e"]
        if n > 5 and word[-4] == word[-5]:
            out.append(word[:-4])
    return out


def build(
    every: Iterable[Sequence[str]],
    words_of: Callable[[str], Sequence[tuple[str, str]]],
    known: Callable[[str], bool],
) -> Table:
    """The :class:`Table` of the groups ``every``: ``words_of(member)`` gives a member's
    (term, word) pairs as a query's are read (:func:`toolfind.core.analysis.query_terms`),
    ``known(term)`` whether some tool has a term. A group none of whose terms any tool has is
    left out; so is a member of more than :data:`MAX_PHRASE` words as a key (it is still
    searched for when another member is asked for)."""
    keys: dict[str, list[int]] = {}
    targets: list[tuple[str, ...]] = []
    for group in every:
        terms: dict[str, None] = {}
        members: dict[str, None] = {}
        for member in group:
            pairs = words_of(member)
            if not pairs:
                continue
            if len(pairs) <= MAX_PHRASE:
                members[" ".join(word for _, word in pairs)] = None
            for term, _ in pairs:
                if term not in terms and known(term):
                    terms[term] = None
        if terms and members:
            for key in members:
                keys.setdefault(key, []).append(len(targets))
            targets.append(tuple(terms))
    return Table({key: tuple(ids) for key, ids in keys.items()}, tuple(targets))
