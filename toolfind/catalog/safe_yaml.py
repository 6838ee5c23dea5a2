"""The safe YAML loader: libyaml's parser when present, and a composer that bounds the document.

The composer refuses recursive aliases, alias expansion beyond ``MAX_YAML_ALIAS_NODES``
("billion laughs") and nesting beyond ``MAX_YAML_DEPTH``; the constructor makes every mapping
key a string, records duplicate keys, and refuses NaN/infinity and every tag that is not
plain JSON data (Python tags, !!binary, !!set, ...); timestamps stay strings. Only ``parse``
imports this module, and only to parse YAML (see docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Final

from yaml import AliasEvent
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from toolfind.catalog.paths import PathPart

#: Nodes that YAML aliases may add in total before a file is refused ("billion laughs").
MAX_YAML_ALIAS_NODES: Final = 100_000
#: Deepest nesting of a YAML document (kept well inside Python's recursion limit).
MAX_YAML_DEPTH: Final = 200


try:
    from yaml.cyaml import CParser as Parser  # type: ignore[attr-defined]
except ImportError:  # PyYAML built without libyaml
    from yaml.parser import Parser as PyParser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class Parser(Reader, Scanner, PyParser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            PyParser.__init__(self)


def _refusal(message: str, event: Any) -> ComposerError:
    return ComposerError(None, None, message, event.start_mark)


class Loader(Parser, Composer, SafeConstructor, Resolver):
    # libyaml's parser has its own composer: the Python one is used, so it can bound nodes.
    get_single_node = Composer.get_single_node

    def __init__(self, stream: str) -> None:
        Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.depth = 0
        self.expanded = 0  # nodes added by aliases
        self.count = 0  # nodes, each alias counting as the size of what it repeats
        self.sizes: dict[int, int] = {}  # anchored node -> its size
        self.duplicates: list[tuple[MappingNode, ScalarNode]] = []

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event: Any = self.peek_event()
        if isinstance(event, AliasEvent):
            target = self.anchors.get(event.anchor)
            if target is not None:
                size = self.sizes.get(id(target))
                if size is None:  # the anchor is still open: the alias is inside it
                    raise _refusal(f"recursive YAML alias *{event.anchor}", event)
                self.count += size
                self.expanded += size
                if self.expanded > MAX_YAML_ALIAS_NODES:
                    raise _refusal(
                        f"YAML aliases expand to more than {MAX_YAML_ALIAS_NODES:,} nodes; "
                        "refusing to load",
                        event,
                    )
            return Composer.compose_node(self, parent, index)
        self.depth += 1
        if self.depth > MAX_YAML_DEPTH:
            raise _refusal(f"nesting is deeper than {MAX_YAML_DEPTH} levels", event)
        start = self.count
        node = Composer.compose_node(self, parent, index)
        self.count += 1
        if getattr(event, "anchor", None) is not None:
            self.sizes[id(node)] = self.count - start
        self.depth -= 1
        return node

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        explicit = [k for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"]
        self.flatten_mapping(node)
        seen: set[str] = set()
        for key_node in explicit:
            if isinstance(key_node, ScalarNode):
                if key_node.value in seen:
                    self.duplicates.append((node, key_node))
                seen.add(key_node.value)
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise ConstructorError(
                    None, None, "a mapping key must be a plain value", key_node.start_mark
                )
            # The key's text, so `on:` or `1:` name a property instead of becoming
            # True or 1: catalogs are JSON data, whose keys are strings.
            mapping[key_node.value] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_finite_float(self, node: ScalarNode) -> float:
        value = self.construct_yaml_float(node)
        if not math.isfinite(value):
            raise ConstructorError(None, None, "NaN and infinity are not allowed", node.start_mark)
        return value

    def refuse(self, node: Node) -> Any:
        tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
        raise ConstructorError(None, None, f"unsupported YAML tag {tag!r}", node.start_mark)


register: Any = Loader.add_constructor
register("tag:yaml.org,2002:float", Loader.construct_finite_float)
register("tag:yaml.org,2002:timestamp", Loader.construct_yaml_str)
for tag in ("binary", "omap", "pairs", "set"):
    register(f"tag:yaml.org,2002:{tag}", Loader.refuse)
register(None, Loader.refuse)  # any other tag, Python ones included


def node_line(root: Any, parts: Sequence[PathPart]) -> int:
    """The line of the deepest node along ``parts``."""
    node, line = root, root.start_mark.line + 1
    for part in parts:
        if isinstance(node, MappingNode):
            # The last pair with the key wins, as in the constructed mapping.
            pair = next((p for p in reversed(node.value) if p[0].value == part), None)
            if pair is None:
                break
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return int(line)


def node_children(node: Node) -> Iterable[tuple[PathPart, Any]]:
    if isinstance(node, MappingNode):
        return ((key.value, value) for key, value in node.value)
    return enumerate(node.value) if isinstance(node, SequenceNode) else ()
