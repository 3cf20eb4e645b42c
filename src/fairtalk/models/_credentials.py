"""Secrets a model spec or a server URL may hold, masked wherever the spec is shown or stored.

A URL's ``user:password@`` becomes ``***@``, and the value of a query parameter that carries a
credential (``api-key``, ``api_key``, ``apikey``, ``key``, ``token``, ``access_token``,
``password``, ``secret``, ... in any case) becomes ``***``; the rest is kept, so a reader still
sees which server and which options a run used. The request itself is sent as given: only what
is written (run.json, results, reports, logs, error messages) is masked.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

__all__ = ["MASK", "CREDENTIAL_PARAMETERS", "hide_credentials", "url_secrets"]

#: What a secret is replaced by.
MASK = "***"
#: Query parameters whose value is a credential (compared case-insensitively, ``-`` and ``_`` alike).
CREDENTIAL_PARAMETERS = frozenset(
    {
        "key",
        "api_key",
        "apikey",
        "x_api_key",
        "token",
        "access_token",
        "auth",
        "auth_token",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "sig",
        "signature",
    }
)
_USERINFO = re.compile(r"//[^/@\s]+@")
#: ``?name=`` or ``&name=`` (or ``;``), also percent-encoded (``%3F``, ``%26``, ``%3D``), before a value that ends at
#: the next ``?``, ``&``, ``#``, space or quote (or its encoding): a URL given as an option's value has its own query.
_PARAMETER = re.compile(
    r"(?P<lead>(?:[?&;]|%3[Ff]|%26)(?P<name>[A-Za-z][A-Za-z0-9_-]*)(?:=|%3[Dd]))"
    r"(?P<value>(?:(?!%26|%23|%3[Ff])[^?&;#\s\"'])*)"
)

#: One ``name=value`` of a query string, not decoded.
_RAW_PARAMETER = re.compile(r"(?:^|[&;])([^=&;]+)=([^&;]*)")


def _credential(name: str) -> bool:
    return name.lower().replace("-", "_") in CREDENTIAL_PARAMETERS


def hide_credentials(text: str) -> str:
    """``text`` (a spec, a URL, a message) with URL credentials and credential query values masked.

    Examples
    --------
    >>> hide_credentials("openai:m?base_url=http://bob:pw@h:8000/v1?API-Key=s3cret&timeout=60")
    'openai:m?base_url=http://***@h:8000/v1?API-Key=***&timeout=60'
    >>> hide_credentials("http://h/v1?token=t&model=x&key=k#frag")
    'http://h/v1?token=***&model=x&key=***#frag'
    """
    text = _USERINFO.sub("//" + MASK + "@", text)

    def mask(match: re.Match[str]) -> str:
        if not _credential(match["name"]) or not match["value"]:
            return match[0]
        return match["lead"] + MASK

    return _PARAMETER.sub(mask, text)


def url_secrets(url: str) -> tuple[str, ...]:
    """The secrets a URL holds as written: its ``user:password`` and the values of its credential parameters.

    Examples
    --------
    >>> url_secrets("http://bob:pw@h/v1?api-key=k1&n=2")
    ('bob:pw', 'k1')
    """
    parts = urlsplit(url)
    found = [f"{parts.username or ''}:{parts.password or ''}"] if parts.username or parts.password else []
    found += [value for name, value in parse_qsl(parts.query, keep_blank_values=True) if value and _credential(name)]
    found += [value for name, value in _RAW_PARAMETER.findall(parts.query) if value and _credential(name)]  # as sent
    return tuple(dict.fromkeys(found))
