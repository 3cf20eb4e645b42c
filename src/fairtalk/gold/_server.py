"""The labelling page: a small HTTP server on 127.0.0.1, one sample, one annotator, a random token in every URL.

Nothing is reachable from elsewhere: the server binds to ``127.0.0.1`` only, answers 403 to any
request whose path does not start with ``/<token>/`` (a random 128-bit token, compared in constant
time) or whose ``Host`` is not the loopback address it serves (against DNS rebinding), and takes
POSTs only as ``application/json`` (which a cross-site form cannot send). Pages are served with
``Cache-Control: no-store``, ``Referrer-Policy: no-referrer`` and a Content-Security-Policy that
runs only the page's own script (by nonce). A refused request (403) closes its connection, whose
unread body would otherwise be taken for the next request.

Where the gold file holds the labels of more than one annotator, the page shows their agreement
per label field (Cohen's κ for two, Fleiss' κ for more, over the items all of them labelled),
computed by :func:`~fairtalk.gold._agreement.agreement`, as ``fairtalk label --agreement`` prints it.

The page shows the current text under its context, one turn per line with its role (the user's
last turn, the one the text answers, marked), and the question with each choice and when it
applies (from the field's guideline, :func:`~fairtalk.gold._schemes.guideline`). For an audit's
responses it says which pair and which of its two texts this is, and how many pairs the
annotator has labelled on both sides (:attr:`GoldLog.complete_pairs
<fairtalk.gold._labels.GoldLog.complete_pairs>`), the only pairs ``score --gold`` uses. Nothing
sent names a pair, a side or a group.

Routes, under ``/<token>/``: ``GET`` the page (the current item rendered in it); ``GET state``
the page's state as JSON; ``POST label`` ``{"step", "value", "note"}``; ``POST undo``
``{"step"}`` (the state's ``undo``: the label it takes back); ``POST done``, after which
:meth:`LabelServer.serve_forever` returns. A label that is not the next one, or an undo of a label
that is not the last given (a second tab, a stale page), or a note longer than :data:`MAX_NOTE` characters
(never cut without a word), is answered 409 with the current state, and changes nothing; one the disk
would not take whole (a full disk) is answered 507 with the error the page shows, and the file is
cut back to its whole rows. A malformed request is answered 4xx and changes nothing: no, a
negative, a malformed or two ``Content-Length`` (411 or 400), a body larger than 64 KiB (413), one
shorter than its length (400), or one that is not a JSON object (malformed, not UTF-8, or nested
deeper than :data:`~fairtalk._jsonl.MAX_DEPTH`: 400).
"""

from __future__ import annotations

import errno
import hmac
import json
import math
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fairtalk._jsonl import parse_object
from fairtalk._templating import jinja_environment
from fairtalk.errors import FairtalkError, InputError, OutputError
from fairtalk.gold._agreement import agreement
from fairtalk.gold._labels import GoldLog
from fairtalk.gold._schemes import LabelScheme, guideline, question
from fairtalk.records import split_turns, turn_roles

__all__ = ["MAX_NOTE", "LabelServer"]

_MSG_PORT_IN_USE = "port {port} is in use on 127.0.0.1: give another --port, or --port 0 for a free one"
_MSG_PORT = "cannot listen on 127.0.0.1:{port} ({reason})"
_MAX_BODY = 1 << 16
#: The longest note a label takes, in characters (the page's note field holds no more).
MAX_NOTE = 2000
_MSG_LONG_NOTE = "the note is {n:,} characters, more than the {limit:,} a label keeps: shorten it (the label was not given)"
#: Seconds a connection may stay silent (mid-body included) before it is closed.
_SOCKET_TIMEOUT = 60
_MSG_LENGTH_REQUIRED = "send the body with a Content-Length"
_MSG_BAD_LENGTH = "Content-Length must be one non-negative whole number of bytes, got {given!r}"
_MSG_TOO_LARGE = "the body is larger than {limit:,} bytes"
_MSG_NOT_JSON = "send JSON (Content-Type: application/json)"
_MSG_SHORT_BODY = "the body ended after {got:,} of the {length:,} bytes its Content-Length gives"


def _agreement(log: GoldLog) -> list[dict[str, Any]]:
    """κ per label field among the gold file's annotators (none while it holds one annotator's labels)."""
    try:
        found = agreement([log.path]) if log.path.exists() else []
    except InputError:  # fewer than two annotators
        return []
    return [
        {
            "field": a.field,
            "method": a.method,
            "kappa": None if math.isnan(a.kappa) else round(a.kappa, 3),
            "n_items": a.n_items,
            "annotators": list(a.annotators),
        }
        for a in found
    ]


def _turns(context: str | None) -> list[dict[str, Any]]:
    """A context's turns, oldest first, each with its role; ``last`` marks the user's last turn (the one answered)."""
    if context is None:
        return []
    texts, roles = split_turns(context), turn_roles(context)
    return [
        {"role": role, "text": text, "last": i == len(texts) - 1} for i, (text, role) in enumerate(zip(texts, roles, strict=True))
    ]


def _pair_position(log: GoldLog, index: int) -> dict[str, int] | None:
    """Where item ``index`` stands among the pairs: the pair's number, how many pairs, and which of its two texts (1 or 2)."""
    if log.sample.kind != "responses":
        return None
    items = log.sample.items
    pair_ids = list(dict.fromkeys(item.id for item in items))
    pair_id = items[index].id
    first = next(i for i, item in enumerate(items) if item.id == pair_id)
    return {"number": pair_ids.index(pair_id) + 1, "n_pairs": len(pair_ids), "text": 1 if first == index else 2}


def _pairs(log: GoldLog) -> dict[str, Any] | None:
    """How many pairs the annotator has labelled on both sides, per field, of how many (None for texts)."""
    if log.sample.kind != "responses":
        return None
    return {"n_pairs": log.n_pairs, "complete": [{"field": f, "n": n} for f, n in log.complete_pairs.items()]}


def _choices(scheme: LabelScheme) -> list[dict[str, Any]]:
    """A scheme's choices as the page shows them: value, name, keys, and when it applies (from its guideline)."""
    found = guideline(scheme.field)
    meanings = {} if found is None else found.meanings
    return [{"value": c.value, "name": c.name, "keys": list(c.keys), "meaning": meanings.get(c.name, "")} for c in scheme.choices]


def _guidelines(schemes: tuple[LabelScheme, ...]) -> list[dict[str, Any]]:
    """What the page's guideline section shows for each measure labelled: its question, choices and document."""
    shown = []
    for scheme in schemes:
        found = guideline(scheme.field)
        shown.append(
            {
                "field": scheme.field,
                "question": question(scheme.field),
                "document": None if found is None else found.document,
                "choices": _choices(scheme),
            }
        )
    return shown


def _page_state(log: GoldLog) -> dict[str, Any]:
    """What the page shows: the step, progress and the current item, masked (never its group, side, text or any score)."""
    total = len(log.steps)
    position = log.position
    state: dict[str, Any] = {
        "step": position,
        "undo": log.last_given,
        "total": total,
        "given": log.n_given,
        "done": position == total,
        "annotator": log.annotator,
        "gold": log.path.name,
        "item": None,
        "pairs": _pairs(log),
        "agreement": _agreement(log),
    }
    if position < total:
        step = log.steps[position]
        state["item"] = {
            "number": step.index + 1,
            "n_items": len(log.sample.items),
            "pair": _pair_position(log, step.index),
            "text": step.item.shown,
            "context": _turns(step.item.context),
            "field": step.scheme.field,
            "question": question(step.scheme.field),
            "choices": _choices(step.scheme),
        }
    return state


class _Handler(BaseHTTPRequestHandler):
    """One request: token and host checked first; then the page, the state, or a change to the log."""

    server: LabelServer
    protocol_version = "HTTP/1.1"
    timeout = _SOCKET_TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (the base class names it so)
        """Quiet: the library does not print (the token is in every path)."""

    def _route(self) -> str | None:
        """The path after ``/<token>/``; None (and a 403 sent) without the token or with a foreign Host."""
        host = self.headers.get("Host", "")
        prefix = f"/{self.server.token}/"
        path = self.path.split("?", 1)[0]
        allowed = {f"127.0.0.1:{self.server.port}", f"localhost:{self.server.port}"}
        if host not in allowed or not hmac.compare_digest(path[: len(prefix)].encode(), prefix.encode()):
            # its body is not read: what follows on the connection is no request, so it is closed
            self.close_connection = True
            self._send(403, b"forbidden\n", "text/plain; charset=utf-8", {"Connection": "close"})
            return None
        return path[len(prefix) :]

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json")

    def do_GET(self) -> None:
        """The page, or its state as JSON."""
        route = self._route()
        if route is None:
            return
        if route == "":
            nonce = secrets.token_urlsafe(16)
            csp = f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; form-action 'none'"
            page = self.server.render(nonce).encode("utf-8")
            self._send(200, page, "text/html; charset=utf-8", {"Content-Security-Policy": csp})
        elif route == "state":
            self._json(200, self.server.state())
        else:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")

    def _refuse(self, status: int, message: str) -> None:
        """Answer a request whose body was not read (or not whole) and close the connection: what is left is not a request."""
        self.close_connection = True
        self._send(status, json.dumps({"error": message}).encode("utf-8"), "application/json", {"Connection": "close"})

    def _content_length(self) -> int | None:
        """The body's length from its one ``Content-Length`` (None, and a 4xx sent, when missing, malformed or too large)."""
        if self.headers.get("Transfer-Encoding") is not None:
            self._refuse(411, _MSG_LENGTH_REQUIRED)
            return None
        given = self.headers.get_all("Content-Length") or []
        if not given:
            self._refuse(411, _MSG_LENGTH_REQUIRED)
            return None
        digits = given[0].strip()
        if len(given) > 1 or not digits.isascii() or not digits.isdigit():
            self._refuse(400, _MSG_BAD_LENGTH.format(given=", ".join(given)[:40]))
            return None
        digits = digits.lstrip("0") or "0"
        if len(digits) > len(str(_MAX_BODY)) or int(digits) > _MAX_BODY:  # never int() of a thousand digits
            self._refuse(413, _MSG_TOO_LARGE.format(limit=_MAX_BODY))
            return None
        return int(digits)

    def _body(self) -> dict[str, Any] | None:
        """The request's JSON object (``{}`` for an empty body); None, and a 4xx sent, for anything else."""
        length = self._content_length()
        if length is None:
            return None
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            self._refuse(415, _MSG_NOT_JSON)
            return None
        try:
            raw = self.rfile.read(length)
        except OSError:  # the client went quiet (the socket's timeout) or away: nothing to answer
            self.close_connection = True
            return None
        if len(raw) < length:
            self._refuse(400, _MSG_SHORT_BODY.format(got=len(raw), length=length))
            return None
        if not raw:
            return {}
        try:
            return parse_object(raw.decode("utf-8"), "the request body", 1)  # guarded: malformed, not an object, too deep
        except UnicodeDecodeError:
            self._json(400, {"error": "the body must be a JSON object (UTF-8)"})
        except InputError as exc:
            self._json(400, {"error": f"the body must be a JSON object: {exc.message}"})
        return None

    def do_POST(self) -> None:
        """A label, an undo, or done."""
        route = self._route()
        if route is None:
            return
        body = self._body()
        if body is None:
            return
        if route == "done":
            self._json(200, {"done": True})
            self.server.finish()
            return
        if route not in ("label", "undo"):
            self._send(404, b"not found\n", "text/plain; charset=utf-8")
            return
        try:
            state = self.server.change(route, body)
        except OutputError as exc:  # not saved (a full disk): the page shows it, and nothing is acknowledged
            self._json(507, {"error": str(exc), "state": self.server.state()})
            return
        except FairtalkError as exc:
            self._json(409, {"error": str(exc), "state": self.server.state()})
            return
        self._json(200, state)


class LabelServer(ThreadingHTTPServer):
    """The labelling page of one :class:`~fairtalk.gold._labels.GoldLog`, on ``127.0.0.1:port`` (0: a free port).

    :attr:`url` (with the token) is what to open; :meth:`serve_forever` returns after the page's
    "done" (:attr:`finished` is then True) or :meth:`shutdown`.

    The server holds the annotator's session on the gold file (:meth:`GoldLog.claim
    <fairtalk.gold._labels.GoldLog.claim>`) from its start to :meth:`server_close`.

    Raises
    ------
    InputError
        The port is in use, or cannot be listened on; or this annotator labels the file in another session.
    OutputError
        The session's lock file cannot be made.
    """

    daemon_threads = True

    def __init__(self, log: GoldLog, *, port: int = 0, token: str | None = None) -> None:
        self.log = log
        self.token = token or secrets.token_urlsafe(16)
        self.finished = False
        self._lock = threading.Lock()
        self._template = jinja_environment().get_template("label.html.j2")  # as every page: escaped, strict, clean
        log.claim()  # one session per annotator and file, until server_close
        try:
            self._listen(port)
        except BaseException:
            log.release()
            raise
        self.port = int(self.server_address[1])

    def _listen(self, port: int) -> None:
        try:
            super().__init__(("127.0.0.1", port), _Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise InputError(_MSG_PORT_IN_USE.format(port=port)) from exc
            raise InputError(_MSG_PORT.format(port=port, reason=exc.strerror or exc)) from exc

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    def state(self) -> dict[str, Any]:
        """The page's state now."""
        with self._lock:
            return _page_state(self.log)

    def render(self, nonce: str) -> str:
        """The page, with the current item in it."""
        state = self.state()
        page: str = self._template.render(
            state=state, nonce=nonce, measures=[s.field for s in self.log.schemes], guidelines=_guidelines(self.log.schemes)
        )
        return page

    def change(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        """Give a label (``route == "label"``) or undo the last one; the new state (FairtalkError when refused)."""
        with self._lock:
            if route == "undo":
                step = body.get("step")
                if isinstance(step, bool) or not isinstance(step, int):
                    raise InputError('an undo is {"step": int}: the label it takes back (the state\'s "undo")')
                self.log.undo(step)
            else:
                step, note = body.get("step"), body.get("note") or ""
                if isinstance(step, bool) or not isinstance(step, int) or not isinstance(note, str):
                    raise InputError('a label is {"step": int, "value": int, "note": str}')
                if len(note) > MAX_NOTE:  # never cut without a word (the page's field takes no more)
                    raise InputError(_MSG_LONG_NOTE.format(limit=MAX_NOTE, n=len(note)))
                self.log.add(step, body.get("value"), note)
            return _page_state(self.log)

    def server_close(self) -> None:
        """Stop listening and end the annotator's session on the gold file (its lock released)."""
        try:
            super().server_close()
        finally:
            self.log.release()

    def finish(self) -> None:
        """The page said done: stop serving (from another thread, as a handler cannot wait for its own server)."""
        self.finished = True
        threading.Thread(target=self.shutdown, daemon=True).start()
