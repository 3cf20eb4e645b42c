"""A test-owned HTTP server on a free port of 127.0.0.1: the one way the tests start a stub server and stop it.

The tests' stub OpenAI-compatible servers differ only in their request handler; starting one
(a free port, a daemon thread, threads per request) and tearing it down is written once here, so
two test runs on one machine never share a port and no server outlives its test.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["LocalServer", "RefusedPort", "send_chat_answer", "send_json"]


class LocalServer:
    """``handler`` served on ``127.0.0.1`` at a free port, in a daemon thread, until :meth:`close` (or the ``with`` ends).

    ``server_class`` may be a subclass of :class:`ThreadingHTTPServer` (a longer listen backlog,
    for instance).
    """

    def __init__(
        self, handler: type[BaseHTTPRequestHandler], *, server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer
    ) -> None:
        self.httpd = server_class(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def url(self, path: str = "/v1") -> str:
        """The server's base URL with ``path`` (the OpenAI-compatible ``/v1`` by default)."""
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        """Stop serving and free the port."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class RefusedPort:
    """A port of 127.0.0.1 that refuses every connection for as long as the test holds it.

    The socket is bound and never listens, so a connection is refused, and no other test (another
    xdist worker's server) can take the port meanwhile, which a port bound and closed again allows.
    """

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]

    def url(self, path: str = "/v1") -> str:
        """The refused base URL with ``path``."""
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        """Free the port."""
        self._socket.close()

    def __enter__(self) -> RefusedPort:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def send_json(handler: BaseHTTPRequestHandler, status: int, body: object) -> None:
    """Answer the handler's request with ``body`` as JSON (a client that has gone meanwhile is no error)."""
    data = json.dumps(body).encode()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def send_chat_answer(handler: BaseHTTPRequestHandler, content: str) -> None:
    """Answer the handler's request as an OpenAI-compatible chat completion whose message is ``content``."""
    send_json(handler, 200, {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})
