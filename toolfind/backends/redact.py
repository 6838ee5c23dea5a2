"""The one redaction of backends' secrets: every log line, JSON error and MCP result text.

A servers file hands toolfind secrets: ``env`` and ``headers`` values, a URL's user, password
and query values, arguments such as ``--api-key=...``. Libraries put them in their texts
without asking (httpx's ``HTTPStatusError`` names the whole URL, ``user:password@`` and
``?api_key=`` included; an ``OSError`` may carry a command line; a backend's JSON-RPC error
may echo its configuration), so redacting where toolfind writes its own messages is not
enough: `redact` is applied to every text that leaves toolfind, whoever wrote it.

* Concrete values: every `ServerSpec` made registers its values (`remember`), as written
  and as they appear once encoded (percent-encoded, JSON- or repr-escaped, a URL's
  ``user:password`` as an HTTP Basic credential); `redact` replaces each with ``***``,
  longest first. Values shorter than `MIN_SECRET` characters, and the configuration words
  of `NOT_SECRET` (``true``, ``debug``...), are not remembered: replacing every ``1`` or
  ``true`` in a message would make it unreadable and protect nothing.
* Shapes, whatever the values: a URL's userinfo (``scheme://***@host``), query and fragment
  values (``?api_key=***``), ``Bearer``/``Basic`` credentials and ``name=value`` pairs whose
  name says secret (``password=``, ``api_key=``, ``token=``...). The patterns run in time
  linear in the text (no nested quantifiers, bounded names).
* URLs: hosted MCP servers put their key in the path (``https://actions.zapier.com/mcp/
  <key>/sse``), so a configured URL is shown as its origin alone (`show_url`:
  ``scheme://host[:port]``); a configured URL's path segments that look like keys
  (`key_like`) are remembered as values; and in any text, the path, query and fragment of a
  URL at a configured origin are masked whole (``https://actions.zapier.com/***``), however a
  library spelled them (the SSE endpoint a server announces, a redirect).

Where it applies: `RedactingFilter` on serve-mcp's and ``catalog pull``'s log handlers (every
library's records, their tracebacks included) and on toolfind's own serve loggers (for
programs that log through their own handlers); the backend pool's reasons (``link.describe``,
``tool_categories``' ``detail``, ``catalog pull --json``'s ``error``); serve-mcp's tool errors
and JSON-RPC errors (`toolfind.serve.guard`). What a backend itself returns (a tool's result,
its descriptions) is relayed as it is.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Iterable
from typing import Any

from toolfind.output.text import render_line, render_text

__all__ = [
    "MIN_SECRET",
    "NOT_SECRET",
    "RedactingFilter",
    "install",
    "key_like",
    "redact",
    "redact_values",
    "remember",
    "remember_values",
    "show_url",
]

#: Shorter values are not remembered as secrets (the shapes still hide them in URLs).
MIN_SECRET = 4
#: Configuration words that are never secrets, case aside.
NOT_SECRET = frozenset(
    "true false null none yes no on off enabled disabled debug info warn warning error "
    "critical trace fatal json text http https localhost".split()
)
MASK = "***"
#: A log line's message (and traceback) is cut after this many characters.
LIMIT = 64 * 1024

_lock = threading.Lock()
#: Every remembered value and its encodings, longest first (replaced as a whole by readers).
_values: tuple[str, ...] = ()
_known: set[str] = set()
#: The origins of configured URLs, as `_origin_of` spells them: whatever follows one in a text
#: (path, query, fragment) is masked.
_origins: frozenset[tuple[str, str, int]] = frozenset()

#: Names of arguments, variables and headers whose value is a secret.
_SECRET_WORDS = (
    r"passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credentials?|auth(?:orization)?|session|cookie|"
    r"signature|sig|jwt|bearer"
)
_SECRET_NAME = re.compile(rf"(?i)(?:^|[^a-z])(?:{_SECRET_WORDS})(?:$|[^a-z])")

#: A URL: its scheme, then ``//``; the authority is found by hand (`_scrub_urls`).
_SCHEME = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://")
#: ``?name=value`` / ``&name=value`` / ``#name=value`` anywhere: the value goes.
_QUERY = re.compile(r"([?&#;][A-Za-z0-9_.~%+\[\]-]{1,128}=)[^&#;\s\"'<>`]+")
#: An HTTP credential after its scheme.
_CREDENTIAL = re.compile(r"(?i)\b(bearer|basic|token|digest)(\s+)[A-Za-z0-9._~+/=:-]{8,}")
#: ``name=value``, ``name: value`` (a header) or ``"name": "value"`` whose name ends with a
#: secret's word (``X-Api-Key``, ``db_password``, ``api_key_id``; not ``authentication``).
_PAIR = re.compile(
    rf"(?i)(?<![A-Za-z0-9_-])([A-Za-z0-9_-]{{0,64}}(?:{_SECRET_WORDS})(?:[_-][A-Za-z0-9]{{1,32}})?)"
    r"(\"?\s{0,4}[=:]\s{0,4}\"?)([^\s\"'&,;)\]}]+)"
)


def remember(spec: Any) -> None:
    """Remember the secrets of a `ServerSpec` (called for every spec made). An ``env`` value
    that is an absolute path or a list of them (``HOME``, ``PATH``) is not one: masking it
    would hide every file name under it, and its secret, if any, is the file's content."""
    env = [value for value in spec.env.values() if not _is_path(value)]
    values: list[str] = [*env, *spec.headers.values()]
    values += (credential for value in spec.headers.values() for credential in _after_scheme(value))
    if spec.url:
        values += _url_secrets(spec.url)
        _remember_origin(spec.url)
    values += _argument_secrets(spec.args)
    values += (secret for value in spec.env.values() for secret in _url_secrets(value))
    remember_values(values)


def remember_values(values: Iterable[str | None]) -> None:
    """Remember ``values`` (a token of toolfind's own, ``--token``) as secrets."""
    global _values
    fresh = []
    for value in values:
        if not value:
            continue
        for form in _forms(value):
            if len(form) >= MIN_SECRET and form.lower() not in NOT_SECRET and form not in _known:
                fresh.append(form)
    if not fresh:
        return
    with _lock:
        _known.update(fresh)
        _values = tuple(sorted(_known, key=len, reverse=True))


def _remember_origin(url: str) -> None:
    global _origins
    origin = _origin_of(url)
    if origin is not None and origin not in _origins:
        with _lock:
            _origins = _origins | {origin}


def show_url(url: str) -> str:
    """A configured URL as toolfind shows it anywhere (a log line, an error, a JSON record, an
    MCP result): ``scheme://host[:port]``, without its userinfo, path, query and fragment,
    any of which may hold a credential; ``***`` for what is not such a URL."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return MASK
    host = parts.hostname
    if not parts.scheme or not host:
        return MASK
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{render_line(shown)}" + ("" if port is None else f":{port}")


#: The port a scheme means when its URL names none.
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of ``url``, the port its scheme's default when it names none:
    the same origin however a library spells it (``HTTPS://Host:443/`` is ``https://host/``)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS.get(scheme, 0)


def key_like(segment: str) -> bool:
    """Whether a URL path segment may be a credential: 20 characters or more, or 8 or more
    with a digit, both cases or a character other than letters and ``-_.``. Path words
    (``mcp``, ``sse``, ``messages``, ``v1``, ``streamable_http``) are not: remembering them
    would mask them in every message."""
    if len(segment) < 8:
        return False
    if len(segment) >= 20 or (not segment.islower() and not segment.isupper()):
        return True
    return any(not (c.isalpha() or c in "-_.") for c in segment)


def redact(text: str, limit: int | None = None) -> str:
    """``text`` without any remembered secret or anything shaped like one; with ``limit``, at
    most that many characters of it (a secret across the cut is hidden whole)."""
    if not text:
        return text
    if limit is not None and len(text) > limit:
        margin = max([1024, *map(len, _values[:1])])
        return redact(text[: limit + margin])[:limit] + f"… ({len(text) - limit} more characters)"
    for value in _values:
        if value in text:
            text = text.replace(value, MASK)
    if "://" in text:
        text = _scrub_urls(text)
    if "=" in text:
        text = _QUERY.sub(rf"\1{MASK}", text)
    text = _CREDENTIAL.sub(rf"\1\2{MASK}", text)
    return _PAIR.sub(_pair, text)


def redact_values(text: str) -> str:
    """``text`` without any remembered secret; shapes are left alone (what a backend itself
    says, such as the URL it asks a user to open, stays usable)."""
    for value in _values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def _pair(match: re.Match[str]) -> str:
    name, separator, value = match.groups()
    return match.group() if value == MASK else f"{name}{separator}{MASK}"


#: Where a URL's authority ends (its path, query or fragment begins, or the URL ends).
_AUTHORITY_END = frozenset("/?#\\ \t\r\n\"'<>`")
#: Where a URL ends, as far as masking what follows a configured origin goes.
_URL_END = frozenset(" \t\r\n\"'<>`)]}")


def _scrub_urls(text: str) -> str:
    """Each URL's userinfo (``user:password@``) as ``***@``; and for a URL at a configured
    origin, everything after its authority (path, query, fragment) as ``/***``."""
    out = []
    last = 0
    for match in _SCHEME.finditer(text):
        start = match.end()
        if start < last:
            continue
        end = start
        while end < len(text) and text[end] not in _AUTHORITY_END:
            end += 1
        at = text.rfind("@", start, end)
        if at >= 0:
            out.append(text[last:start])
            out.append(MASK)
            last = at
        if _origins and end < len(text) and text[end] in "/?#":
            host = text[max(at + 1, start) : end]
            if _origin_of(f"{match.group()}{host}") in _origins:
                rest = end
                while rest < len(text) and text[rest] not in _URL_END:
                    rest += 1
                if text[end:rest] != "/":
                    out.append(text[last:end])
                    out.append(f"/{MASK}")
                    last = rest
    out.append(text[last:])
    return "".join(out)


def _forms(value: str) -> list[str]:
    """``value`` and the spellings in which it shows up in other texts."""
    import json
    from urllib.parse import quote, quote_plus, unquote, unquote_plus

    forms = {value, value.strip()}
    for form in list(forms):
        forms.update(
            (quote(form, safe=""), quote(form), quote_plus(form), unquote(form), unquote_plus(form))
        )
        forms.add(json.dumps(form)[1:-1])
        forms.add(json.dumps(form, ensure_ascii=False)[1:-1])
        forms.add(repr(form)[1:-1])
        forms.add(render_text(form))
    return [f for f in forms if f]


def _is_path(value: str) -> bool:
    parts = [part for part in value.split(os.pathsep) if part]
    absolute = all(p.startswith("/") or p[1:3] in (":\\", ":/") for p in parts)
    return bool(parts) and absolute and not any(c.isspace() or c in "@?=" for c in value)


def _after_scheme(value: str) -> list[str]:
    """The credential of a header value such as ``Bearer abc`` (``abc``)."""
    scheme, _, credential = value.strip().partition(" ")
    return [credential.strip()] if credential.strip() and scheme.isalpha() else []


def _url_secrets(url: str) -> list[str]:
    """A URL's user, password (and ``user:password`` as HTTP Basic sends it), query and
    fragment values. Not a URL: nothing."""
    import base64
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    if not parts.scheme or not parts.netloc:
        return []
    found: list[str] = []
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        # A user name alone is the credential (https://TOKEN@host); beside a password, it is
        # only a name (and hidden with it wherever the URL is shown).
        user, colon, password = userinfo.partition(":")
        found += [password, userinfo] if colon else [user]
        basic = f"{unquote(user)}:{unquote(password)}".encode()
        found.append(base64.b64encode(basic).decode("ascii"))
    for piece in (parts.query, parts.fragment):
        found += [value for _, value in parse_qsl(piece, keep_blank_values=False)]
        if piece and "=" not in piece:
            found.append(piece)
    # A key in the path (https://actions.zapier.com/mcp/<key>/sse), as written and decoded.
    found += [s for s in parts.path.split("/") if key_like(s) or key_like(unquote(s))]
    return found


def _argument_secrets(args: Iterable[str]) -> list[str]:
    """Values in a command line that are secrets: URLs' credentials, ``--api-key=VALUE``,
    ``--token VALUE``, ``PASSWORD=VALUE``, ``Bearer VALUE``."""
    found: list[str] = []
    after_name = False
    for arg in args:
        if after_name and not arg.startswith("-"):
            found.append(arg)
        after_name = False
        found += _url_secrets(arg)
        found += _after_scheme(arg)
        name, equals, value = arg.partition("=")
        if equals and _SECRET_NAME.search(name):
            found.append(value)
            found += _url_secrets(value)
        elif not equals and arg.startswith("-") and _SECRET_NAME.search(arg):
            after_name = True
    return found


class RedactingFilter(logging.Filter):
    """Redacts a log record. ``flatten`` (a handler's filter): the formatted message, one
    line, its traceback and stack too; otherwise (a logger's filter) the template and each
    argument, so that filters after it still see one template per kind of line."""

    def __init__(self, *, flatten: bool) -> None:
        super().__init__()
        self.flatten = flatten

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            if self.flatten:
                self._flatten(record)
            else:
                record.msg = redact(str(record.msg))
                if isinstance(record.args, tuple):
                    record.args = tuple(_redacted_arg(a) for a in record.args)
                elif isinstance(record.args, dict):
                    record.args = {k: _redacted_arg(v) for k, v in record.args.items()}
        except Exception:  # a record that cannot be formatted: its text, nothing else
            record.msg, record.args = redact(repr(record.msg)), ()
            record.exc_info = record.exc_text = None
        return True

    @staticmethod
    def _flatten(record: logging.LogRecord) -> None:
        # One record, one line: a newline in a file name cannot forge another log line.
        record.msg = render_line(redact(record.getMessage(), LIMIT))
        record.args = ()
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = render_text(redact(record.exc_text, LIMIT))
        if record.stack_info:
            record.stack_info = render_text(redact(record.stack_info, LIMIT))


def _redacted_arg(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(value if isinstance(value, str) else str(value))


#: toolfind's loggers under serve-mcp and ``catalog pull`` (a logger's filter sees only the
#: records logged to that logger, not to its children: each is named).
LOGGERS = ("toolfind.serve", "toolfind.backends", "toolfind.serve.http")


def install(*handlers: logging.Handler) -> None:
    """Redact every record ``handlers`` write (add it after the handlers' other filters), and
    every record toolfind's serve loggers make, whoever handles them."""
    for handler in handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter(flatten=True))
    for name in LOGGERS:
        log = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in log.filters):
            log.addFilter(RedactingFilter(flatten=False))


def log_to_stderr(
    fmt: str, level: str | int, *filters: logging.Filter, keep_handlers: bool = False
) -> None:
    """The one logging set-up of serve-mcp and ``catalog pull``: every record to stderr as
    ``fmt`` writes it, through ``filters``, then redacted (:func:`install`): no line names
    a secret. The root logger's handlers are replaced, or with ``keep_handlers`` kept when
    it has some (as ``logging.basicConfig`` does: an embedding program's logging stands)."""
    install()
    root = logging.getLogger()
    if keep_handlers and root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    for extra in filters:
        handler.addFilter(extra)
    install(handler)
    handler.setFormatter(logging.Formatter(fmt))
    root.handlers[:] = [handler]
    root.setLevel(level.upper() if isinstance(level, str) else level)


install()
