"""How the index commands that print records print them: one rule for all (:class:`Records`).

Where records are printed (``search``' hits, ``list``, ``similar``, ``categories``,
``summaries``), ``--format`` picks a record format: for a person (``table``, or ``text`` and
``markdown`` lines for ``summaries``), ``json`` (one document, as ``--json``), or one record
a line (``jsonl``, ``csv``, ``tsv``: the columns are the command's record keys, whatever the
records hold, and an empty result is the header alone). ``--fields`` keeps some keys of each
record, in any record format. For a person, output goes through the pager on a terminal (not
with ``--no-pager``) and is styled as ``--color`` says.

No typer, and cheap to import: the warm path prints through here too.
"""

from __future__ import annotations

import sys

from toolfind.cli.grammar import Params
from toolfind.output.encode import dumps, dumps_array
from toolfind.output.wire import RECORD_FORMATS, records_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from types import ModuleType
    from typing import Any


class Records(Params):
    """A command that prints records, and how: ``--json`` one document (:meth:`document`, or
    an array written as each record is made), one record a line (:meth:`columns`), or for a
    person (:meth:`draw`). The command says which items of its answer are records
    (:meth:`items`, counted) and what they are (:meth:`records`)."""

    TABLE = True

    def emit(self, answer: Any) -> int:
        counted = Counted(self.items(answer))
        fields = self.fields_of()
        if not self.machine():
            for_a_person(self, lambda: self.draw_fields(answer, counted, fields))
            return counted.count
        records = select_all(self.records(answer, counted), fields)
        if self.format_ in RECORD_FORMATS:
            sys.stdout.write(records_text(records, self.format_, fields or self.columns()))
        elif (document := self.document(answer, records)) is not None:
            sys.stdout.write(dumps(document) + "\n")
        else:
            for piece in dumps_array(records):
                sys.stdout.write(piece)  # as each is made: 100k tools are never held at once
            sys.stdout.write("\n")
        return counted.count

    def draw_fields(self, answer: Any, items: Iterable[Any], fields: Sequence[str] | None) -> None:
        """For a person: the command's own table, or with ``--fields`` a table of those keys
        of its records, a column each (as ``kubectl -o custom-columns``); nothing found is
        said as the command says it."""
        render = renderer(self.color)
        if fields is None:
            self.draw(render, answer, items)
            return
        rows = list(select_all(self.records(answer, items), fields))
        if rows:
            render.records(fields, rows)
        else:
            self.draw(render, answer, rows)

    def items(self, answer: Any) -> Iterable[Any]:
        """What the records are made of (``search``: the hits)."""
        items: Iterable[Any] = answer
        return items

    def records(self, answer: Any, items: Iterable[Any]) -> Iterator[dict[str, Any]]:
        """The records as ``--json`` prints them, each made from ``items`` as it is printed."""
        raise NotImplementedError

    def document(self, answer: Any, records: Iterator[dict[str, Any]]) -> Any:
        """The one JSON document holding ``records`` (None: they are a JSON array)."""
        return None

    def draw(self, render: ModuleType, answer: Any, items: Iterable[Any]) -> None:
        """``answer`` for a person, by ``render`` (``output.render``)."""
        raise NotImplementedError

    def columns(self) -> tuple[str, ...]:
        """The CSV/TSV columns: the record keys, whatever the records hold."""
        return self.KEYS


def select(record: dict[str, Any], fields: Sequence[str] | None) -> dict[str, Any]:
    """``record`` with only the keys ``fields`` names, in that order (a key the record has
    not, such as a ranked hit's ``schema``, as null); all of it when ``fields`` is None."""
    return record if fields is None else {key: record.get(key) for key in fields}


def select_all(
    records: Iterable[dict[str, Any]], fields: Sequence[str] | None
) -> Iterator[dict[str, Any]]:
    """Each of ``records`` with only the keys ``fields`` names (:func:`select`)."""
    return iter(records) if fields is None else (select(r, fields) for r in records)


class Counted:
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


def for_a_person(p: Params, draw: Callable[[], None]) -> None:
    """``draw()`` through the pager on a terminal (not with ``--no-pager``)."""
    if sys.stdout.isatty():  # the pager (and contextlib) only where it can start
        from toolfind.cli.pager import paged

        with paged(not p.no_pager):
            draw()
    else:
        draw()


def renderer(color: str = "auto") -> ModuleType:
    """The renderer (``output.render``, imported only when something is drawn for a person),
    styled as ``--color`` says."""
    from toolfind.output import render

    render.COLOR = color
    return render
