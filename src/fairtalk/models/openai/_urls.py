"""Server URLs as messages and fingerprints show them (credentials: user:password, query, fragment dropped), and as requests use them."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["endpoint", "public_url", "shown_url"]

_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@")


def public_url(url: str) -> str:
    """Drop user:password and query/fragment from a URL (they may hold credentials).

    Examples
    --------
    >>> public_url("HTTP://user:pw@Example.org:8000/v1/?key=k")
    'http://example.org:8000/v1'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def shown_url(url: str) -> str:
    """``url`` as the user wrote it (case kept), less what may hold credentials: user:password, query, fragment.

    Examples
    --------
    >>> shown_url("http://user:pw@Example.org/v1?key=k")
    'http://Example.org/v1'
    """
    shown = _USERINFO.sub(r"\1", url, count=1)
    return re.split(r"[?#]", shown, maxsplit=1)[0]


def endpoint(url: str, path: str) -> str:
    """The URL of ``path`` (``/chat/completions``) under the base ``url``, its query kept after the path.

    A server that takes its key in the query (``?api-key=...``) gets it on every request, and
    the path is not appended to the key.

    Examples
    --------
    >>> endpoint("http://h:8000/v1/?api-key=k", "/chat/completions")
    'http://h:8000/v1/chat/completions?api-key=k'
    >>> endpoint("http://h:8000/v1", "/models")
    'http://h:8000/v1/models'
    """
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, parts.query, ""))
