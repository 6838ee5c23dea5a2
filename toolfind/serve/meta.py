"""The meta-tools: what they are called, what they take and return, and what they do.

No MCP types, so the logic is tested without a transport. A meta-tool's arguments are checked
against the input schema it declares (`checked_arguments`, worded as a forwarded call's
arguments are), so what a host lists is what is enforced; each handler then returns the
record the CLI prints with ``--json``, and a mistake the model can fix raises `ToolCallError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from toolfind.backends.tools import MCP_SOURCE
from toolfind.core import confidence, filters
from toolfind.core.suggest import close as suggest
from toolfind.errors import AmbiguousName, ToolNotFound
from toolfind.models import Tool
from toolfind.output import schemas, wire
from toolfind.output.text import clean_text
from toolfind.output.tool_formats import tool_to_format

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolfind.store.index import SearchIndex

MAX_LIMIT = 100
#: Longer queries are refused, not searched: analysing megabytes of text (CJK bigrams above
#: all) would hold the event loop for seconds, and a task is described in a few words.
MAX_QUERY = 2000
#: Longer tool names are refused before lookup, so an error never echoes megabytes back.
MAX_NAME = 1000
NAMESPACES_IN_DESCRIPTION = 24

META_KEYS = SEARCH, SIMILAR, CATEGORIES, GET, CALL = (
    "search_tools",
    "similar_tools",
    "tool_categories",
    "get_tool",
    "call_tool",
)


class ToolCallError(Exception):
    """A tool call the model can correct; the message tells it how."""


@dataclass(frozen=True, slots=True)
class MetaTool:
    """One meta-tool as listed: ``key`` is its unprefixed name (``search_tools``)."""

    key: str
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    #: None for call_tool: a called tool's result is passed on as it is.
    output_schema: Mapping[str, Any] | None
    read_only: bool = True


_STRINGS = schemas.STRINGS_SCHEMA
GET_OUTPUT = {
    "type": "object",
    "description": "The tool's MCP definition.",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "inputSchema": {"type": "object"},
    },
    "required": ["name", "inputSchema"],
}

_NAME_ARG = {
    "type": "string",
    "description": "A tool name as search returned it; 'server/tool', 'server:tool', "
    "'server__tool' and a unique bare name all work.",
}


def _arguments(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    """A meta-tool's input schema: an object of ``properties``, no others allowed."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def meta_tools(
    prefix: str, namespaces: Sequence[str], total_tools: int, backends_connecting: int = 0
) -> list[MetaTool]:
    """The five meta-tools, named ``<prefix><key>``; search's description names the catalog,
    and how many backend servers are still connecting (their tools join later)."""
    scope = _scope(namespaces, total_tools, backends_connecting)
    p = prefix
    table = (
        (
            SEARCH,
            "Search tools",
            f"Find tools by what they do, ranked by relevance (BM25F). Searches {scope}. "
            f"Describe the task in a few words ('compress a file', 'create calendar event'). "
            f"Hits name the tool and its namespace; deferred hits include their input schema. "
            f"Each hit has a confidence from 0 to 1: below 0.5 the result says there is no "
            f"confident match, and you should ask the user rather than call a hit. "
            f"Call a hit with {p}{CALL}, or fetch its full schema with {p}{GET}.",
            _search_arguments(p),
            schemas.SEARCH_SCHEMA,
        ),
        (
            SIMILAR,
            "Similar tools",
            "List tools related to a given tool (shared terms explain each), to find an "
            "alternative or a companion tool.",
            _arguments(
                {
                    "name": _NAME_ARG,
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 5},
                },
                "name",
            ),
            schemas.SIMILAR_TOOLS_SCHEMA,
        ),
        (
            CATEGORIES,
            "Tool categories",
            "List the namespaces with their tool counts, deferred counts and commonest tags.",
            _arguments({}),
            schemas.CATEGORIES_SCHEMA,
        ),
        (
            GET,
            "Get tool",
            "Get one tool's full definition (description and input schema) by name.",
            _arguments({"name": _NAME_ARG}, "name"),
            GET_OUTPUT,
        ),
        (
            CALL,
            "Call tool",
            "Call a tool found by search, by name, with its arguments (an object matching "
            "its input schema). Only tools served by a connected MCP server can run.",
            _arguments(
                {
                    "name": _NAME_ARG,
                    "arguments": {"type": "object", "description": "The tool's arguments."},
                },
                "name",
            ),
            None,
        ),
    )
    return [
        MetaTool(key, p + key, title, description, inputs, outputs, read_only=key != CALL)
        for key, title, description, inputs, outputs in table
    ]


def _scope(namespaces: Sequence[str], total_tools: int, backends_connecting: int) -> str:
    """What search searches, as its description says it."""
    shown = ", ".join(namespaces[:NAMESPACES_IN_DESCRIPTION])
    if len(namespaces) > NAMESPACES_IN_DESCRIPTION:
        shown += f", and {len(namespaces) - NAMESPACES_IN_DESCRIPTION} more"
    scope = f"{total_tools} tools in {len(namespaces)} namespaces" + (
        f" ({shown})" if shown else ""
    )
    if backends_connecting:
        servers = "server is" if backends_connecting == 1 else "servers are"
        scope += (
            f"; {backends_connecting} more MCP {servers} still connecting (their tools join "
            "when they are up)"
        )
    return scope


def _search_arguments(p: str) -> dict[str, Any]:
    """search_tools' input schema (``p``: the meta-tools' prefix)."""
    return _arguments(
        {
            "query": {"type": "string", "description": "What the tool should do."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": 10,
                "description": "How many hits to return.",
            },
            "namespace": {
                "type": "string",
                "description": f"Only tools in this namespace (see {p}{CATEGORIES}).",
            },
            "tags": {**_STRINGS, "description": "Only tools carrying all of these tags."},
            "include_schema": {
                "type": "boolean",
                "default": False,
                "description": "Include every hit's input schema.",
            },
        },
        "query",
    )


def checked_arguments(tool: MetaTool, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """``arguments`` as a dict, once they match ``tool``'s declared input schema.

    Raises:
        ToolCallError: naming the first argument that does not, by its JSON path.
    """
    from jsonschema.exceptions import best_match

    args = dict(arguments or {})
    error = best_match(_validator(tool).iter_errors(args))
    if error is not None:
        raise ToolCallError(
            f"Invalid arguments for {tool.name!r} at {error.json_path}: "
            f"{clean_text(error.message, 300)}. Fix them to match its input schema."
        )
    return args


_validators: dict[str, tuple[Mapping[str, Any], Any]] = {}


def _validator(tool: MetaTool) -> Any:
    """The (cached) validator of a meta-tool's input schema: toolfind's own, trusted."""
    cached = _validators.get(tool.key)
    if cached is None or cached[0] != tool.input_schema:
        from jsonschema.validators import Draft202012Validator

        cached = _validators[tool.key] = (
            tool.input_schema,
            Draft202012Validator(tool.input_schema),
        )
    return cached[1]


def resolve(index: SearchIndex, name: str, *, serves: Callable[[str], bool] | None = None) -> Tool:
    """The tool ``name`` names: exactly (`exact_ids`) if it can, else by ``show``'s lookup;
    a miss or an ambiguous name becomes a ToolCallError naming the candidates.

    With ``serves`` (a call), a name that only ``show``'s loose rules (case, separators)
    tie to a callable tool is refused with that tool as the suggestion: a call never runs
    a tool its name does not spell out. A miss suggests close callable names first.
    """
    if not name.strip():
        raise ToolCallError("'name' is empty: give a tool name as search returned it.")
    if len(name) > MAX_NAME:
        raise ToolCallError(
            f"No tool named {name[:60]!r}... ({len(name)} characters): "
            "give a tool name as search returned it."
        )
    tools = index.tools
    exact = exact_ids(index, name)
    if len(exact) == 1:
        found: Tool = tools[exact[0]]
        return found
    if exact:
        raise ToolCallError(
            str(AmbiguousName(name, sorted(tools[i].qualified_name for i in exact)))
        )
    try:
        found = index.resolve(name)
    except ToolNotFound as exc:
        close = callable_suggestions(index, name, serves) if serves is not None else []
        raise ToolCallError(str(ToolNotFound(name, close or exc.suggestions))) from None
    except AmbiguousName as exc:
        raise ToolCallError(str(exc)) from None
    if serves is not None and serves(found.name):
        raise ToolCallError(str(ToolNotFound(name, [found.name])))
    return found


def exact_ids(index: SearchIndex, name: str) -> list[int]:
    """The tools ``name`` spells out: a tool's exact name; else ``namespace/tool`` or
    ``namespace:tool`` with the exact namespace and the tool's exact name or alias (a
    backend's own name for it); else a bare exact alias. Never a near spelling."""
    from toolfind.core.analysis import name_key

    tools = index.tools
    ids = [i for i in index.ids_with_key(name_key(name)) if tools[i].name == name]
    if ids:
        return ids
    for separator in ("/", ":"):
        namespace, found, rest = name.partition(separator)
        if found and namespace and rest:
            ids = [
                i
                for i in index.ids_with_key(name_key(rest))
                if tools[i].namespace == namespace
                and (tools[i].name == rest or rest in tools[i].aliases)
            ]
            if ids:
                return ids
    return [i for i in index.ids_with_key(name_key(name)) if name in tools[i].aliases]


def callable_suggestions(index: SearchIndex, name: str, serves: Callable[[str], bool]) -> list[str]:
    """Up to three callable tools' names close to ``name`` (their own or their backend's
    name), best first; a callable tool whose backend name is ``name`` comes first."""
    pool: dict[str, str] = {}
    for tool in index.tools:
        if serves(tool.name):
            for spelling in (tool.name, *tool.aliases):
                pool.setdefault(spelling.casefold(), tool.name)
    wanted = name.casefold()
    if wanted in pool:
        return [pool[wanted]]
    return suggest(wanted, pool)


def catalog_place(catalogs: Sequence[str | os.PathLike[str]]) -> Callable[[str], str]:
    """How serve-mcp names a tool's catalog file to a model: never by its local path (the
    model needs no path, and the user's home directory is not its business), but by its path
    inside the catalog path of ``catalogs`` that holds it (``web/tools.yaml`` under ``-c
    ~/catalogs``), or its name (a catalog path that is a file); a backend's ``mcp://<server>``
    as it is."""
    roots = [PurePath(c) for c in catalogs]

    def place(file: str) -> str:
        if file.startswith(MCP_SOURCE):
            return file
        path = PurePath(file)
        for root in roots:
            try:
                inside = path.relative_to(root)
            except ValueError:
                continue
            if inside.parts:
                return str(inside)
        return path.name

    return place


def search(
    index: SearchIndex,
    args: Mapping[str, Any],
    serves: Callable[[str], bool] | None = None,
    backends_connecting: int = 0,
    place: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """The search record; with ``serves``, each hit says whether it is ``callable``, and the
    record how many backends are still connecting (``backends_connecting``, when some are);
    ``place`` names each hit's catalog file (`catalog_place`)."""
    query: str = args["query"]
    if not query.strip():
        raise ToolCallError(
            "'query' is empty: describe the tool you need in a few words, e.g. 'compress a file'."
        )
    if len(query) > MAX_QUERY:
        raise ToolCallError(
            f"'query' is too long ({len(query)} characters; at most {MAX_QUERY}): describe the "
            "tool you need in a few words, e.g. 'compress a file'."
        )
    limit = int(args.get("limit", 10))
    namespace: str | None = args.get("namespace")
    if namespace is not None:
        # The command line's rule (core.filters): "Files" and "files" are one namespace.
        known = [c.name for c in index.categories()]
        if not any(filters.options_rule(namespace, ()).keeps(name, ()) for name in known):
            raise ToolCallError(
                f"Unknown namespace {namespace!r}. Valid namespaces: {', '.join(known)}."
            )
    tags = tuple(args.get("tags") or ())
    include_schema = bool(args.get("include_schema", False))
    result = index.search(query, limit, namespace=namespace, tags=tags)
    callable_ = None if serves is None else (lambda tool: serves(tool.name))
    best = max((hit.confidence for hit in result.hits), default=None)
    note = confidence.no_confident_match(best)
    return wire.search_record(
        result,
        include_schema=include_schema,
        callable_=callable_,
        note=note,
        backends_connecting=backends_connecting,
        place=place,
    )


def categories(index: SearchIndex, statuses: Mapping[str, Any]) -> dict[str, Any]:
    """``tool_categories``' record: the namespaces, and each backend's status by the
    namespace of its tools. A backend's ``detail`` (its last error, which a library may have
    worded with its URL or headers) is redacted: it is sent to the model."""
    from toolfind.backends.redact import redact
    from toolfind.backends.seam import BackendStatus

    shown = {
        name: BackendStatus(
            name=str(getattr(status, "name", name)),
            available=bool(status.available),
            tool_count=int(getattr(status, "tool_count", 0)),
            detail=redact(str(status.detail)),
            state=str(getattr(status, "state", "")),
        )
        for name, status in statuses.items()
    }
    return wire.categories_record(index.categories(), shown)


def similar(index: SearchIndex, args: Mapping[str, Any]) -> dict[str, Any]:
    tool = resolve(index, args["name"])
    limit = int(args.get("limit", 5))
    return wire.similar_tools_record(tool, index.similar(tool.qualified_name, limit))


def get_tool(index: SearchIndex, args: Mapping[str, Any]) -> dict[str, Any]:
    """The tool as an MCP ``Tool`` object (what ``show --format mcp --json`` prints)."""
    return tool_to_format(resolve(index, args["name"]), "mcp")


#: The meta-tools that only read the index (categories also needs the backends' status).
HANDLERS = {SEARCH: search, SIMILAR: similar, GET: get_tool}
