"""Server URLs as messages and fingerprints show them: credentials (user:password, query, fragment) dropped."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["public_url", "shown_url"]

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
