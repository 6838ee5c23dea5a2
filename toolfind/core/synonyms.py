"""Words people use for the same thing: the software domain's synonyms and abbreviations.

A request says "open a PR", the tool says "create a pull request"; "make a folder" against
``create_directory``; "k8s" against a Kubernetes server. :data:`TABLE` lists groups of words
and phrases that mean the same to someone asking for a tool; a user extends it in
``toolfind.toml`` (``[synonyms]``, docs/ranking.md).

How a group is used: when a query holds one of its members (a word, or a phrase as
consecutive words), the other members' terms are searched too, each scored at
:data:`DISCOUNT` of what the word itself would score (``bm25f``'s typo rule: an expansion always
ranks below the word). Which expansions exist is settled when an index is built
(:func:`expansions`: only terms some tool has, keyed by the member's analysed terms), so a
search only looks up the query's words in a small dict, on the warm path too.

The table is written from the vocabulary of software and its users (abbreviations, the
product words of common services, everyday words for technical ones), not from any labelled
set; a group is added only when its members are interchangeable in a request to a tool. It is
versioned (:data:`VERSION`, part of the index cache key): a change to it rebuilds indexes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

#: Bump with every change to :data:`TABLE` (the cache key holds it).
VERSION = "toolfind-synonyms/1"

#: An expanded term scores this share of its impacts (below the word as written).
DISCOUNT = 0.5

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


def expansions(
    every: Iterable[Sequence[str]],
    analyse: Callable[[str], list[str]],
    known: Callable[[str], bool],
) -> dict[str, tuple[str, ...]]:
    """For each member of the groups ``every``, keyed by its analysed terms joined by a space
    (``pull request``), the terms of the group's other members that ``known`` (some tool has
    them), without the member's own: what a query holding that member also searches. Members
    whose key is empty (stop words only) are left out."""
    found: dict[str, dict[str, None]] = {}
    for group in every:
        phrases = [tuple(analyse(member)) for member in group]
        for phrase in phrases:
            if not phrase:
                continue
            key = " ".join(phrase)
            targets = found.setdefault(key, {})
            for other in phrases:
                for term in other:
                    if term not in phrase and known(term):
                        targets[term] = None
    return {key: tuple(terms) for key, terms in sorted(found.items()) if terms}


#: Phrases longer than this many terms are not looked for in a query.
MAX_PHRASE = 3


def expand(
    terms: Sequence[str], table: Callable[[str], tuple[str, ...] | None]
) -> list[tuple[str, int, int]]:
    """The terms a query's ``terms`` (in order) expand to through ``table`` (a lookup of
    :func:`expansions`' keys), each with the position and the length of the query's phrase
    it came from (longest phrases first), in order of position, without repeats and without
    the query's own terms."""
    own = set(terms)
    out: dict[str, tuple[int, int]] = {}
    for size in range(MAX_PHRASE, 0, -1):
        for i in range(len(terms) - size + 1):
            found = table(" ".join(terms[i : i + size]))
            if found:
                for term in found:
                    if term not in own and term not in out:
                        out[term] = (i, size)
    return sorted(((t, i, n) for t, (i, n) in out.items()), key=lambda item: item[1])
