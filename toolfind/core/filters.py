"""Which tools a namespace or tag filter keeps: one rule for search, list and serve-mcp.

* Names compare by :func:`~toolfind.core.analysis.name_key` (``--tag Read_Only`` selects the
  tag ``read-only``); an empty or blank tag value is ignored; a value with no letter or
  digit (``-``) is compared as written, case aside (``name_key``); the namespace ``""`` is the
  default namespace. A tool's tags are its ``all_tags`` (those its MCP
  annotations imply included).
* ``search`` and ``list``: ``--namespace NS`` keeps the tools of that namespace; ``--tag T``
  (repeatable) keeps the tools carrying *every* tag given.
* serve-mcp's ``[filters]``: ``namespaces`` and ``tags`` keep the tools of *any* of them,
  ``exclude_namespaces`` and ``exclude_tags`` drop the tools of any of them.
"""

from __future__ import annotations

from toolfind.core.analysis import name_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence


def _tag_keys(tags: Iterable[str]) -> frozenset[str]:
    return frozenset(map(name_key, tags)) - {""}


class Rule:
    """A namespace and tag filter. ``namespaces`` None keeps every namespace; the tools kept
    carry every one of ``every_tag``, at least one of ``some_tag`` (if given), none of
    ``exclude_tags``."""

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
        """:meth:`keeps` as a predicate on tool ids, given each tool's namespace key and the
        ids of the tools carrying a tag key; None when the filter keeps every tool. The tag
        part is worked out once, as sets of ids."""
        if self.keeps_all():
            return None
        groups = [set(ids_with_tag(key)) for key in self.every_tag]
        if self.some_tag:
            groups.append(set().union(*map(ids_with_tag, self.some_tag)))
        tagged = set.intersection(*groups) if groups else None
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
