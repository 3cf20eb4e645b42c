"""Connecting to Ray: importing it, starting a cluster of this run's own or joining a given one, and naming what failed.

:class:`~fairtalk.models.RayEngine` (``ray_engine.py``) says where a run goes; this module makes
the connection that both generation on actors (``_engine.py``) and scoring in Ray tasks
(``ray_scoring.py``) stand on, so neither needs the other.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fairtalk.errors import FairtalkError
from fairtalk.models._credentials import hide_credentials

__all__ = [
    "CONNECT_TIMEOUT",
    "MSG_NO_RAY",
    "MSG_NO_RAY_CLIENT",
    "RAY_PREFIXES",
    "RayConnection",
    "cluster_error",
    "connect_ray",
    "import_ray",
]

#: The spec prefixes whose models run on Ray actors.
RAY_PREFIXES = ("builtin", "hf", "python", "retrieval")
MSG_NO_RAY = "--engine ray needs Ray: pip install 'fairtalk[ray]'"
MSG_NO_RAY_CLIENT = "a ray:// address needs the Ray client: pip install 'ray[client]'"
#: Seconds a given cluster address has to answer in (RayEngine.connect_timeout's default).
CONNECT_TIMEOUT = 30.0

_MSG_UNREACHABLE = (
    "no Ray cluster answered at {address} within {timeout:g} s ({why}); check the address "
    "(--ray-address), or leave it out to start a local cluster"
)
_MSG_NO_AUTO = "address 'auto' found no running Ray cluster to join ({error})"
_MSG_JOIN = "cannot join the Ray cluster at {address}: {error}"
_MSG_START = "cannot start a local Ray cluster: {error}"
_MSG_TOKEN = (
    " (the cluster asks for a token: set RAY_AUTH_MODE=token, and the cluster's token in ~/.ray/auth_token or RAY_AUTH_TOKEN)"
)
_AUTH_FAILED = re.compile(r"InvalidAuthToken|AuthenticationError|[Aa]uthentication token")
#: The logger of Ray's "Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled to opt out…"
#: warning, said when ``ray.init`` starts a cluster and RAY_AUTH_MODE is unset: for a run's own private cluster that
#: nothing else joins it is noise (it broke ``-q`` and 80 columns). Ray still sets token authentication up as ever.
_RAY_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"
#: Ray's count of one-second tries at a GCS while joining (20 by default).
_GCS_WAIT = "RAY_gcs_server_port_wait_time_s"
_MSG_ENV_IGNORED = (
    "RAY_ADDRESS is set, but no address was given: starting a local Ray cluster of this run's own "
    "(give the address auto, --ray-address auto, to join the one RAY_ADDRESS names)"
)
#: The Ray client's port when a ray:// address names none.
_CLIENT_PORT = 10001
#: An HTTP/2 client's greeting (its preface and an empty SETTINGS frame): a gRPC server answers with a SETTINGS frame.
_HTTP2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_HTTP2_SETTINGS = 4
_LOG = logging.getLogger(__name__)


def import_ray() -> Any:
    """The ``ray`` module (FairtalkError :data:`MSG_NO_RAY` when it is not installed)."""
    try:
        import ray
    except ImportError as exc:
        raise FairtalkError(MSG_NO_RAY) from exc
    return ray


@dataclass
class RayConnection:
    """What :func:`connect_ray` did: ``connected`` when it called ``ray.init``; ``temp_dir``, its local cluster's."""

    ray: Any
    connected: bool = False
    temp_dir: str | None = None

    def close(self) -> None:
        """Stop the cluster this connection started (or leave the one it joined), and remove its temp dir."""
        if self.connected and self.ray.is_initialized():
            self.ray.shutdown()
        self.connected = False
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None


def cluster_error(exc: BaseException) -> bool:
    """Whether ``exc`` says Ray itself cannot be used (not installed, no cluster to start, reach or join): no model can."""
    messages = (MSG_NO_RAY, MSG_NO_RAY_CLIENT, _MSG_UNREACHABLE, _MSG_NO_AUTO, _MSG_JOIN, _MSG_START)
    return isinstance(exc, FairtalkError) and str(exc).startswith(tuple(m.split("{")[0] for m in messages))


def connect_ray(ray: Any, address: str | None, *, timeout: float = CONNECT_TIMEOUT) -> RayConnection:
    """Start a local cluster of this run's own (``address`` None or ``local``), or join the one ``address`` names.

    A process already connected (``ray.init`` called before) keeps its connection. A local cluster
    gets a temp dir of its own (its address is left nowhere another process looks); ``RAY_ADDRESS``
    is for ``auto`` only. A given address has ``timeout`` s to answer :func:`_probe`, then as many
    one-second tries of Ray's at its GCS (unless ``RAY_gcs_server_port_wait_time_s`` is set).

    Raises
    ------
    FairtalkError
        A ``ray://`` address without the Ray client (:data:`MSG_NO_RAY_CLIENT`); no cluster
        answering at the address in time; ``auto`` finding none; Ray refusing to join.
    """
    given = None if address is None or address.strip() == "local" else address.strip()
    if given is not None and given.startswith("ray://"):
        _check_client()
    if ray.is_initialized():
        return RayConnection(ray)
    options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if given is None:
        if os.environ.get("RAY_ADDRESS", "").strip():
            _LOG.warning(_MSG_ENV_IGNORED)
        temp_dir = tempfile.mkdtemp(prefix="fairtalk-ray-", dir=_temp_root())
        try:
            with _quiet(_RAY_AUTH_LOGGER):  # Ray's own line about the token it sets up for this run's cluster
                ray.init(address="local", _temp_dir=temp_dir, include_dashboard=False, **options)
        except BaseException as exc:
            shutil.rmtree(temp_dir, ignore_errors=True)
            if isinstance(exc, Exception):  # Ray's: a socket path too long, no shared memory...: said in one line
                raise FairtalkError(_MSG_START.format(error=_first_line(exc))) from exc
            raise
        _LOG.debug("ray: started a local cluster in %s", temp_dir)
        return RayConnection(ray, connected=True, temp_dir=temp_dir)
    shown = hide_credentials(given)
    _probe(_bootstrap(given), shown, timeout)
    budget = os.environ.get(_GCS_WAIT)  # Ray's tries at its GCS, one a second: as many as the timeout has seconds
    os.environ[_GCS_WAIT] = budget if budget is not None else str(max(1, math.ceil(timeout)))
    try:
        ray.init(address=given, **options)
    except Exception as exc:  # noqa: BLE001 - Ray's ConnectionError, RuntimeError, ValueError...: said in one line
        error = _first_line(exc) + (_MSG_TOKEN if _AUTH_FAILED.search(f"{exc}\n{exc.__cause__}") else "")
        raise FairtalkError(_MSG_JOIN.format(address=shown, error=error)) from exc
    finally:
        if budget is None:
            os.environ.pop(_GCS_WAIT, None)
    return RayConnection(ray, connected=True)


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """The logger ``name`` says only errors while the block runs (its level as it was after)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        logger.setLevel(level)


def _first_line(exc: BaseException) -> str:
    """``Type: first line of its message``."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _check_client() -> None:
    """FairtalkError :data:`MSG_NO_RAY_CLIENT` unless the Ray client's gRPC is installed (what ``ray[client]`` adds)."""
    try:
        importlib.import_module("grpc")
    except ImportError as exc:
        raise FairtalkError(MSG_NO_RAY_CLIENT) from exc


def _temp_root() -> str | None:
    """Where Ray puts temp dirs: ``RAY_TMPDIR``, else ``TMPDIR`` (Linux) or /tmp (Linux, macOS: socket paths stay short)."""
    linux, darwin = sys.platform.startswith("linux"), sys.platform.startswith("darwin")
    return os.environ.get("RAY_TMPDIR") or (linux and os.environ.get("TMPDIR")) or ("/tmp" if linux or darwin else None)  # noqa: S108


def _bootstrap(address: str) -> tuple[str, int] | None:
    """``(host, port)`` to probe for an address (``auto`` resolved as Ray does), or None when it cannot tell."""
    if address == "auto":
        env = os.environ.get("RAY_ADDRESS", "").strip()
        if env and env not in ("auto", "local"):
            if env.startswith("ray://"):
                _check_client()
            return _bootstrap(env)
        try:
            from ray._private.services import canonicalize_bootstrap_address
        except ImportError:  # another Ray: ray.init finds the cluster itself, unprobed
            return None
        try:
            address = canonicalize_bootstrap_address("auto") or ""
        except ConnectionError as exc:
            raise FairtalkError(_MSG_NO_AUTO.format(error=_first_line(exc))) from None
    client = address.startswith("ray://")
    rest = address.split("://", 1)[1].split("/", 1)[0] if client else address
    rest = rest.rsplit("@", 1)[-1]
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        if client and rest:
            return rest.strip("[]"), _CLIENT_PORT
        return None  # ray.init says what is wrong with it
    return host.strip("[]"), int(port)


def _probe(target: tuple[str, int] | None, shown: str, timeout: float) -> None:
    """FairtalkError unless a gRPC server (a Ray GCS or Ray client server) answers at ``target`` within ``timeout`` s.

    Name lookup, TCP connection, an HTTP/2 greeting a gRPC server answers with SETTINGS: in a daemon
    thread, abandoned at the deadline (a name lookup has no timeout of its own).
    """
    if target is None:
        return
    outcome: list[str | None] = []

    def attempt() -> None:
        try:
            outcome.append(_greet(*target, timeout=timeout))
        except TimeoutError:
            outcome.append("no answer")
        except Exception as exc:  # noqa: BLE001 - reported by the caller, in one line
            outcome.append(_first_line(exc))

    worker = threading.Thread(target=attempt, name="fairtalk-ray-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    why = outcome[0] if outcome else "no answer"
    if why is not None:
        raise FairtalkError(_MSG_UNREACHABLE.format(address=shown, timeout=timeout, why=why))


def _greet(host: str, port: int, *, timeout: float) -> str | None:
    """None when a gRPC server answers at ``host:port``, else why not; with ``RAY_USE_TLS`` set, the TCP connection."""
    with socket.create_connection((host, port), timeout=timeout) as conn:
        if os.environ.get("RAY_USE_TLS", "0").strip().lower() not in ("", "0", "false"):
            return None
        conn.sendall(_HTTP2_GREETING)
        reply = b""
        while len(reply) < 9:
            chunk = conn.recv(9 - len(reply))
            if not chunk:
                break
            reply += chunk
    if len(reply) == 9 and reply[3] == _HTTP2_SETTINGS:
        return None
    return "it closed the connection" if not reply else "it does not speak gRPC: not a Ray cluster's port"
