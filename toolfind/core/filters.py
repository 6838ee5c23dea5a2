"""Which tools a namespace or tag filter keeps: one rule for search, list and serve-mcp.

The rule:

* Names are compared by :func:`~toolfind.core.analysis.name_key`: case, Unicode
  compatibility forms and every character but letters and digits are ignored, so
  ``--tag Read_Only`` selects the tag ``read-only`` and ``--namespace GitHub`` the namespace
  ``github``. A tag value with no letter or digit (``--tag -``) selects nothing and is
  ignored; the namespace ``""`` is the default namespace.
* A tool's tags are its ``all_tags``: its own and those its MCP annotations imply
  (``read-only``, ``destructive``, ...).
* ``search`` and ``list``: ``--namespace NS`` keeps the tools of that namespace; ``--tag T``
  (repeatable) keeps the tools carrying *every* tag given.
* serve-mcp's ``[filters]``: ``namespaces`` keeps the tools of any of them,
  ``exclude_namespaces`` drops the tools of any of them; ``tags`` keeps the tools carrying
  *at least one* of them, ``exclude_tags`` drops the tools carrying any of them.

:class:`Rule` holds one filter; :meth:`Rule.keeps` asks it of one tool's namespace and tags,
:meth:`Rule.over_ids` turns it into a predicate on an index's tool ids.
"""

from __future__ import annotations

from toolfind.core.analysis import name_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

__all__ = ["Rule", "options_rule", "serve_rule"]


def _tag_keys(tags: Iterable[str]) -> frozenset[str]:
    return frozenset(map(name_key, tags)) - {""}


class Rule:
    """A namespace and tag filter (see the module docstring for what it keeps)."""

    __slots__ = ("every_tag", "exclude_namespaces", "exclude_tags", "namespaces", "some_tag")

    def __init__(
        self,
        *,
        namespaces: Iterable[str] | None = None,
        exclude_namespaces: Iterable[str] = (),
        every_tag: Iterable[str] = (),
        some_tag: Iterable[str] = (),
        exclude_tags: Iterable[str] = (),
    ) -> None:
        """``namespaces``: None keeps every namespace. The tag lists: keep the tools carrying
        every one of ``every_tag``, at least one of ``some_tag`` (if given), none of
        ``exclude_tags``."""
        self.namespaces = None if namespaces is None else frozenset(map(name_key, namespaces))
        self.exclude_namespaces = frozenset(map(name_key, exclude_namespaces))
        self.every_tag = _tag_keys(every_tag)
        self.some_tag = _tag_keys(some_tag)
        self.exclude_tags = _tag_keys(exclude_tags)

    def keeps_all(self) -> bool:
        """Whether this filter keeps every tool."""
        return self.namespaces is None and not (
            self.exclude_namespaces or self.every_tag or self.some_tag or self.exclude_tags
        )

    def _namespace_ok(self, key: str) -> bool:
        return (self.namespaces is None or key in self.namespaces) and (
            key not in self.exclude_namespaces
        )

    def keeps(self, namespace: str, tags: Iterable[str]) -> bool:
        """Whether a tool of ``namespace`` carrying ``tags`` (its ``all_tags``) passes."""
        if not self._namespace_ok(name_key(namespace)):
            return False
        if not (self.every_tag or self.some_tag or self.exclude_tags):
            return True
        have = {name_key(tag) for tag in tags}
        return (
            self.every_tag <= have
            and (not self.some_tag or not self.some_tag.isdisjoint(have))
            and self.exclude_tags.isdisjoint(have)
        )

    def over_ids(
        self,
        namespace_key: Callable[[int], str],
        ids_with_tag: Callable[[str], Iterable[int]],
    ) -> Callable[[int], bool] | None:
        """:meth:`keeps` as a predicate on tool ids, for an index that gives each tool's
        namespace key (``namespace_key(id)``) and the ids of the tools carrying a tag key
        (``ids_with_tag(key)``); None when the filter keeps every tool.

        The tag part is worked out once, as sets of ids, so that the predicate costs a
        lookup or two per tool.
        """
        if self.keeps_all():
            return None
        tagged: set[int] | None = None
        for key in self.every_tag:
            ids = set(ids_with_tag(key))
            tagged = ids if tagged is None else tagged & ids
        if self.some_tag:
            some = set().union(*map(ids_with_tag, self.some_tag))
            tagged = some if tagged is None else tagged & some
        excluded = set().union(*map(ids_with_tag, self.exclude_tags))
        namespace_ok = self._namespace_ok
        check_namespace = self.namespaces is not None or bool(self.exclude_namespaces)

        def keep(doc: int) -> bool:
            if check_namespace and not namespace_ok(namespace_key(doc)):
                return False
            return (tagged is None or doc in tagged) and doc not in excluded

        return keep


def options_rule(namespace: str | None, tags: Sequence[str]) -> Rule:
    """The filter of ``search`` and ``list``: ``--namespace`` (one) and ``--tag`` (every one)."""
    return Rule(namespaces=None if namespace is None else (namespace,), every_tag=tags)


_SERVE_RULES: dict[tuple[tuple[str, ...], ...], Rule] = {}


def serve_rule(
    namespaces: Sequence[str],
    exclude_namespaces: Sequence[str],
    tags: Sequence[str],
    exclude_tags: Sequence[str],
) -> Rule:
    """The filter of serve-mcp's ``[filters]`` (an empty allow list allows everything);
    made once per distinct setting."""
    lists = (tuple(namespaces), tuple(exclude_namespaces), tuple(tags), tuple(exclude_tags))
    rule = _SERVE_RULES.get(lists)
    if rule is None:
        rule = _SERVE_RULES[lists] = Rule(
            namespaces=lists[0] or None,
            exclude_namespaces=lists[1],
            some_tag=lists[2],
            exclude_tags=lists[3],
        )
    return rule
