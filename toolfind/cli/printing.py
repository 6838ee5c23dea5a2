"""How the index commands print an answer (``cli.commands.answer``): one rule for all.

Where records are printed (``search``' hits, ``list``, ``similar``, ``categories``,
``summaries``), ``--format`` picks a record format: for a person (``table``, or ``text`` and
``markdown`` lines for ``summaries``), ``json`` (one document, as ``--json``), or one record
a line (``jsonl``, ``csv``, ``tsv``: the columns are the command's record keys, whatever the
records hold, and an empty result is the header alone). ``--fields`` keeps some keys of each
record, in any record format. ``show`` and ``schemas`` print JSON documents: a tool in the
``--dialect`` asked for. For a person, output goes through the pager on a terminal (not with
``--no-pager``) and is styled as ``--color`` says.

No typer, and cheap to import: the warm path prints through here too.
"""

from __future__ import annotations

import sys

from toolfind.output import wire

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any

    from toolfind.cli.commands import Params

#: The keys of each command's records: what ``--fields`` may name and the CSV/TSV columns
#: (``search``' ``explain`` only with ``--explain``). ``output.wire`` spells them.
RECORD_KEYS: dict[str, tuple[str, ...]] = {
    "search": (*wire.HIT_KEYS, "schema", "explain"),
    "list": wire.ROW_KEYS,
    "similar": wire.SIMILAR_KEYS,
    "categories": wire.CATEGORY_KEYS,
    "summaries": wire.SUMMARY_KEYS,
}


def fields_of(p: Params) -> tuple[str, ...] | None:
    """``--fields`` as keys (None when not given)."""
    text = getattr(p, "fields", None)
    if text is None:
        return None
    return tuple(dict.fromkeys(key.strip() for key in text.split(",") if key.strip()))


def fields_problem(name: str, p: Params) -> str:
    """The usage error of ``--fields`` for command ``name`` ("" if none)."""
    fields = fields_of(p)
    if fields is None:
        return ""
    fmt = getattr(p, "format_", None)
    if fmt in ("table", "text", "markdown"):
        return (
            f"--fields picks record keys: use it with --json or --format json, jsonl, csv"
            f" or tsv, not --format {fmt}"
        )
    known = RECORD_KEYS[name]
    unknown = [key for key in fields if key not in known]
    if not fields or unknown:
        what = f"unknown field {unknown[0]!r}" if unknown else "no field given"
        return f"--fields: {what}; {name} records have {', '.join(known)}"
    return ""


def emit(name: str, p: Params, items: Any) -> int:
    """Print command ``name``'s answer (``commands.answer``) as ``p`` asks; return how many
    records it held (hits, tools, namespaces: ``--fail-empty``'s count)."""
    write = sys.stdout.write
    if name == "schemas":
        write(wire.dumps(items) + "\n")
        return len(items)
    if name == "show":
        if p.json_:
            write(wire.dumps(items[1]) + "\n")
        else:
            _for_a_person(p, lambda: _render(p).tool(*items))
        return 1
    counted = _Counted(items.hits if name == "search" else items)
    if p.json_:
        _write_json(name, p, items, counted)
    elif p.format_ in wire.RECORD_FORMATS:
        columns = fields_of(p) or _columns(name, p)
        records = _selected(p, _records(name, p, items, counted))
        write(wire.records_text(records, p.format_, columns))
    else:
        _for_a_person(p, lambda: _draw(name, p, items, counted))
    return counted.count


def _write_json(name: str, p: Params, items: Any, counted: _Counted) -> None:
    write = sys.stdout.write
    records = _selected(p, _records(name, p, items, counted))
    if name == "search":
        unmatched, corrections = list(items.unmatched_terms), dict(items.corrections)
        document = wire.search_document(
            items.query, list(records), unmatched, corrections, items.stages
        )
        write(wire.dumps(document) + "\n")
    elif name == "categories":
        document = wire.categories_record(items)
        document["categories"] = list(records)
        write(wire.dumps(document) + "\n")
    else:
        for piece in wire.dumps_array(records):
            write(piece)  # each record as it is made: 100k tools are never held at once
        write("\n")


def select(record: dict[str, Any], fields: Sequence[str] | None) -> dict[str, Any]:
    """``record`` with only the keys ``fields`` names, in that order (a key the record has
    not, such as a ranked hit's ``schema``, as null); all of it when ``fields`` is None."""
    return record if fields is None else {key: record.get(key) for key in fields}


def _selected(p: Params, records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    fields = fields_of(p)
    return iter(records) if fields is None else (select(r, fields) for r in records)


def _records(name: str, p: Params, items: Any, counted: _Counted) -> Iterator[dict[str, Any]]:
    """The records of command ``name``'s answer ``items`` (for ``search``, its hits), as
    ``--json`` prints them, each made as it is printed (``counted`` is ``items``' records'
    source, counting them)."""
    if name == "search":
        yield from wire.hit_records(items, include_schema=p.schema)
        return
    if name == "categories":
        yield from wire.categories_record(list(counted))["categories"]
        return
    makers: dict[str, Callable[[Any], dict[str, Any]]] = {
        "list": wire.tool_row,
        "similar": wire.similar_record,
        "summaries": wire.summary_record,
    }
    yield from map(makers[name], counted)


def _columns(name: str, p: Params) -> tuple[str, ...]:
    """The CSV/TSV columns of command ``name``: its record keys, whatever the records hold."""
    keys = RECORD_KEYS[name]
    return tuple(key for key in keys if key != "explain" or p.explain)


class _Counted:
    """An iterable that counts the items taken from it (for ``--fail-empty``); a sequence's
    length is known at once."""

    def __init__(self, items: Iterable[Any]) -> None:
        from _collections_abc import Sized  # loaded at start-up: collections.abc costs more

        self._items = items
        self._sized = isinstance(items, Sized)
        self.count = len(items) if isinstance(items, Sized) else 0

    def __iter__(self) -> Iterator[Any]:
        if self._sized:
            yield from self._items
            return
        for item in self._items:
            self.count += 1
            yield item


def _for_a_person(p: Params, draw: Callable[[], None]) -> None:
    """``draw()`` through the pager on a terminal (not with ``--no-pager``)."""
    if sys.stdout.isatty():  # the pager (and contextlib) only where it can start
        from toolfind.cli.pager import paged

        with paged(not p.no_pager):
            draw()
    else:
        draw()


def _render(p: Params) -> Any:
    """The renderer, styled as ``--color`` says."""
    from toolfind.output import render

    render.COLOR = getattr(p, "color", "auto")
    return render


def _draw(name: str, p: Params, items: Any, counted: _Counted) -> None:
    """Command ``name``'s answer for a person: a table (Rich's on a terminal), or lines."""
    render = _render(p)
    if name == "search":
        render.search(items, explain=p.explain)
    elif name == "list":
        render.tools(items)
    elif name == "similar":
        render.similar(p.name, items)
    elif name == "categories":
        render.categories(items)
    else:
        render.summaries(counted, markdown=p.format_ == "markdown")
