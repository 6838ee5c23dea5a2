"""What a tool entry looks like: the knowledge that reading a catalog and writing a tool share.

The format names and their keys, how an entry's shape is told (:func:`detect_entry`), which
keys of an original entry are carried over when a tool is written back in its own shape
(:func:`carried_keys`), the Gemini schema conversion (:func:`schema_from_gemini`), the tags
MCP annotations imply (:func:`all_tags`), and the one rule for names hosts accept
(:func:`is_host_name`, :func:`host_name`, :func:`unique_name`: ``schemas``, serve-mcp's
backend tools and prompts, servers' names, ``validate``'s lint).

The shapes an entry can have (``detect_entry``):

- ``openai``: ``{"type": "function", "function": {name, description, parameters, strict}}``
- ``openai-responses``: ``{"type": "function", name, description, parameters}``
- ``anthropic``: ``{name, description, input_schema}``
- ``mcp``: ``{name, title, description, inputSchema, outputSchema, annotations}``
- ``gemini``: a function declaration whose ``parameters`` use the OpenAPI subset (upper-case
  types) or that carries ``parametersJsonSchema`` / ``responseJsonSchema``
- ``native``: ``{name, description, parameters}`` plus toolfind metadata keys
- ``function``: a bare ``{name, description, parameters}``
- ``builtin``: a provider's built-in tool (``{"type": "web_search"}``, ``{"googleSearch": {}}``)
  that has no schema to index

Imports nothing from toolfind and only what Python has loaded at start-up: the warm fast path
reads :func:`all_tags` from here.
"""

from __future__ import annotations

# collections.abc's Mapping is this very class; importing collections.abc would cost the warm
# path more than the whole module (it pulls in collections).
from _collections_abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container
    from typing import Any, Final

#: MCP tool annotations (hints) and the tag each one adds when it is true.
ANNOTATION_TAGS: Final[dict[str, str]] = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open-world",
}


def all_tags(tags: tuple[str, ...], annotations: Mapping[str, Any]) -> tuple[str, ...]:
    """A tool's catalog ``tags`` then the tags its true MCP ``annotations`` imply
    (:data:`ANNOTATION_TAGS`), without repeats, in order."""
    if not annotations:  # most tools
        return tuple(dict.fromkeys(tags)) if tags else ()
    implied = [tag for hint, tag in ANNOTATION_TAGS.items() if annotations.get(hint) is True]
    return tuple(dict.fromkeys((*tags, *implied)))


#: Formats a tool can be written in (``tool_to_format``).
FORMATS: Final = ("native", "openai", "openai-responses", "anthropic", "mcp", "gemini")

#: Shapes ``detect_entry`` can return: every format, a bare function, and a built-in tool.
SHAPES: Final = (*FORMATS, "function", "builtin")

METADATA_KEYS: Final = ("namespace", "tags", "search_hint", "defer", "enabled", "aliases")

_BASIC: Final = frozenset({"name", "description", "parameters"})
#: The ``Tool`` fields each format carries (reading ``tool_to_format(t, fmt)`` back gives
#: these fields back unchanged).
CARRIES: Final[Mapping[str, frozenset[str]]] = {
    "native": _BASIC | {*METADATA_KEYS, "annotations", "title", "output_schema"},
    "openai": _BASIC,
    "openai-responses": _BASIC,
    "anthropic": _BASIC,
    "mcp": _BASIC | {"title", "annotations", "output_schema"},
    "gemini": _BASIC | {"output_schema"},
}

# Top-level keys of a Gemini request body's `tools` items that are built-in tools, not functions.
_GEMINI_BUILTINS: Final = frozenset(
    "googleSearch google_search googleSearchRetrieval google_search_retrieval codeExecution"
    " code_execution urlContext url_context retrieval googleMaps google_maps computerUse"
    " computer_use fileSearch file_search".split()
)
# Keys that make an otherwise bare function a native entry.
_NATIVE_ONLY_KEYS: Final = (*METADATA_KEYS, "output_schema")
#: Entry keys whose value is a JSON Schema (input or output), in any format.
SCHEMA_KEYS: Final = frozenset(
    "parameters input_schema inputSchema outputSchema output_schema parametersJsonSchema"
    " response responseJsonSchema".split()
)
#: Keys read or written by some format: never copied as "unknown" extras on write-back.
MANAGED: Final = SCHEMA_KEYS.union(
    METADATA_KEYS, ("type", "function", "name", "title", "description", "annotations")
)


def _is_gemini_schema(schema: Any) -> bool:
    return (
        (type(schema) is dict or isinstance(schema, Mapping))
        and isinstance(schema.get("type"), str)
        and (schema["type"].isupper())
    )


def detect_entry(entry: Mapping[str, Any]) -> str:
    """The shape of one tool entry (one of ``SHAPES``); see the module docstring.

    Never raises: an entry that fits nothing is a ``function`` (its checks then say what is
    missing).
    """
    kind = entry.get("type")
    if kind is not None and kind == "function":  # `is not None` first: most entries have none
        if isinstance(entry.get("function"), Mapping):
            return "openai"
        if "name" in entry:
            return "openai-responses"
    if "inputSchema" in entry:
        return "mcp"
    if "input_schema" in entry:
        return "anthropic"
    if kind is not None and kind not in ("function", "custom"):
        return "builtin"
    if "name" not in entry and entry and all(k in _GEMINI_BUILTINS for k in entry):
        return "builtin"
    if "parametersJsonSchema" in entry or "responseJsonSchema" in entry or "behavior" in entry:
        return "gemini"
    # This runs once per entry of every load: the common case (a JSON Schema's lower-case
    # "type", no response) is decided without a call.
    params = entry.get("parameters")
    if type(params) is dict:
        params_type = params.get("type")
        if isinstance(params_type, str) and params_type.isupper():
            return "gemini"
    elif _is_gemini_schema(params):
        return "gemini"
    if "response" in entry and _is_gemini_schema(entry["response"]):
        return "gemini"
    # Keys' `isdisjoint` of a tuple: the membership tests are made in C.
    return "function" if entry.keys().isdisjoint(_NATIVE_ONLY_KEYS) else "native"


def schema_from_gemini(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini (OpenAPI-subset) Schema as JSON Schema: lower-case types, ``nullable`` folded in."""
    nullable = schema.get("nullable") is True and isinstance(schema.get("type"), str)

    def sub(value: Any) -> Any:
        return schema_from_gemini(value) if isinstance(value, Mapping) else value

    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            kind = value.lower()
            if kind == "type_unspecified":
                continue
            out["type"] = [kind, "null"] if nullable and kind != "null" else kind
        elif key == "nullable" and nullable:
            continue
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {k: sub(v) for k, v in value.items()}
        elif key == "items":
            out[key] = sub(value)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [sub(v) for v in value]
        else:
            out[key] = value
    return out


def carried_keys(original: Any, fmt: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keys of a tool's ``original`` entry that writing the tool in format ``fmt`` carries
    over: its unknown keys (not :data:`MANAGED`) at the top level, and inside ``function``
    (openai). Only when ``fmt`` is the entry's own shape: ``cache_control`` means nothing to
    MCP. In the entry's order."""
    if not isinstance(original, Mapping) or detect_entry(original) != fmt:
        return (), ()
    top = tuple(k for k in original if k not in MANAGED)
    inner = original.get("function") if fmt == "openai" else None
    fn = tuple(k for k in inner if k not in MANAGED) if isinstance(inner, Mapping) else ()
    return top, fn


# -- names hosts accept ------------------------------------------------------------------------

#: What MCP hosts and LLM APIs accept in a tool name (``^[a-zA-Z0-9_-]{1,64}$``); safe as a
#: file stem and in a URI's authority too.
HOST_NAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)
MAX_HOST_NAME: Final = 64


def is_host_name(name: str) -> bool:
    """Whether hosts accept ``name`` as it is."""
    return 0 < len(name) <= MAX_HOST_NAME and HOST_NAME_CHARS.issuperset(name)


def host_safe(text: str) -> str:
    """``text`` with every character hosts reject as ``_`` (``_`` for an empty text)."""
    return "".join(c if c in HOST_NAME_CHARS else "_" for c in text) or "_"


def host_name(namespace: str, name: str, separator: str = "__") -> str:
    """``<namespace><separator><name>`` (the bare name without a namespace) as a name hosts
    accept: each character they reject as ``_``; over 64 characters, cut and ended with ``_``
    and 8 hex digits of a hash of both names, so that two long names stay apart and the
    result is stable. ``separator`` must be made of the accepted characters."""
    full = f"{host_safe(namespace)}{separator}{host_safe(name)}" if namespace else host_safe(name)
    if len(full) <= MAX_HOST_NAME:
        return full
    import hashlib  # only for a long name

    digest = hashlib.sha256(f"{namespace}\0{name}".encode()).hexdigest()[:8]
    return f"{full[: MAX_HOST_NAME - 9]}_{digest}"


def unique_name(base: str, taken: Container[str], *, fold: bool = False) -> str:
    """``base``, or if ``taken`` holds it, the first of ``base_2``, ``base_3``... (cut to stay
    within 64 characters) that it does not. ``fold``: ``taken`` holds case-folded names, and a
    name is taken whatever its case (as some hosts compare names)."""
    candidate, n = base, 2
    while (candidate.casefold() if fold else candidate) in taken:
        suffix = f"_{n}"
        candidate, n = base[: MAX_HOST_NAME - len(suffix)] + suffix, n + 1
    return candidate
