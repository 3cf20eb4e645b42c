"""``RayEngine``: generation on a Ray cluster, one model load per actor; its options, validated once.

``engine="ray"`` (``--engine ray`` on the command line) runs the model a spec names on Ray
actors instead of in this process: each actor loads the spec with the same loader
(:func:`~fairtalk.models.load_responder`), batches of pair sides go to the actors, and the
answers come back to the driver as each batch finishes. The driver alone writes the run store,
so the store's keys, crash-safety and resume are those of a run in this process: a run resumed
without Ray reuses the answers of a Ray run, and the other way round.

``hf:``, ``builtin:``, ``python:`` and ``retrieval:`` models run on Ray (their files must be at the
same paths on every node, with fairtalk and the model's packages installed). ``openai:`` models are
refused: they already keep ``max_concurrency`` requests in flight against one or several server
replicas (scale the servers, not the client); ``vllm:`` spreads over GPUs itself; ``replay:`` has
nothing to generate.

Without an address, a run starts a Ray cluster of its own, in a temp dir of its own: never another
process's, be it named by ``RAY_ADDRESS`` or left by ``ray start`` (address ``auto`` joins those).
A given address must answer within :attr:`RayEngine.connect_timeout` seconds, else the run stops.

Ray is imported only when an engine starts (``pip install 'fairtalk[ray]'``; a ``ray://`` address
also needs the Ray client, ``pip install 'ray[client]'``).
"""

from __future__ import annotations

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
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from fairtalk.errors import FairtalkError, SpecError
from fairtalk.models.base import Responder

__all__ = ["CONNECT_TIMEOUT", "ENGINES", "MSG_NO_RAY", "MSG_NO_RAY_CLIENT", "RAY_PREFIXES", "RayConnection", "RayEngine",
           "cluster_error", "connect_ray", "import_ray", "resolve_engine"]  # fmt: skip

#: The engines generation runs on: this process, or Ray actors.
ENGINES = ("local", "ray")
#: The spec prefixes whose models run on Ray actors.
RAY_PREFIXES = ("builtin", "hf", "python", "retrieval")
MSG_NO_RAY = "--engine ray needs Ray: pip install 'fairtalk[ray]'"
MSG_NO_RAY_CLIENT = "a ray:// address needs the Ray client: pip install 'ray[client]'"
#: Seconds a given cluster address has to answer in (RayEngine.connect_timeout's default).
CONNECT_TIMEOUT = 30.0

_MSG_ENGINE = "unknown {name} {given!r}"
_MSG_ENGINE_TYPE = "{name} must be 'local', 'ray', a RayEngine or a table of RayEngine options, got {value!r}"
_MSG_NAME_IN_TABLE = "{name}: a table of options is for engine 'ray', got name={given!r}"
_MSG_COUNT = "RayEngine: {field} must be {rule}, got {value!r}"
_MSG_ADDRESS = "RayEngine: address must be a non-empty string (host:port, auto or ray://host:port) or None, got {value!r}"
_MSG_UNREACHABLE = ("no Ray cluster answered at {address} within {timeout:g} s ({why}); check the address "
                    "(--ray-address), or leave it out to start a local cluster")  # fmt: skip
_MSG_NO_AUTO = "address 'auto' found no running Ray cluster to join ({error})"
_MSG_JOIN = "cannot join the Ray cluster at {address}: {error}"
_MSG_START = "cannot start a local Ray cluster: {error}"
_MSG_TOKEN = (" (the cluster asks for a token: set RAY_AUTH_MODE=token, and the cluster's token in "
              "~/.ray/auth_token or RAY_AUTH_TOKEN)")  # fmt: skip
_AUTH_FAILED = re.compile(r"InvalidAuthToken|AuthenticationError|[Aa]uthentication token")
#: Ray's count of one-second tries at a GCS while joining (20 by default).
_GCS_WAIT = "RAY_gcs_server_port_wait_time_s"
_MSG_ENV_IGNORED = ("RAY_ADDRESS is set, but no address was given: starting a local Ray cluster of this run's own "
                    "(give the address auto, --ray-address auto, to join the one RAY_ADDRESS names)")  # fmt: skip
_CREDENTIALS = re.compile(r"//[^/@\s]+@")
#: The Ray client's port when a ray:// address names none.
_CLIENT_PORT = 10001
#: An HTTP/2 client's greeting (its preface and an empty SETTINGS frame): a gRPC server answers with a SETTINGS frame.
_HTTP2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_HTTP2_SETTINGS = 4
_LOG = logging.getLogger(__name__)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value and value != float("inf")


@dataclass(frozen=True, slots=True)
class RayEngine:
    """Where and how a run generates on Ray: the cluster, the actors and how a lost actor is replaced.

    Parameters
    ----------
    address : str, optional
        The cluster to join (``host:6379``, ``auto``, ``ray://host:10001``); ``auto`` is Ray's: the
        cluster ``RAY_ADDRESS`` names, else the latest one started on this machine. None (or
        ``local``) starts a cluster of this run's own on this machine, in a temp dir of its own, and
        never joins another process's. A cluster this engine started is shut down when the model
        is closed; one it joined is left running.
    num_actors : int, optional
        Actors, each holding one copy of the model, and scoring tasks at once; None: as many
        as the cluster has CPUs (divided by ``num_cpus``), or GPUs when the model wants one.
    max_restarts : int
        How often Ray restarts an actor whose process died (reloading the model) before it is
        given up; its batch goes to another actor meanwhile.
    max_retries : int
        How often one batch is sent again after the actor running it died; past that, its
        pair sides fail (stored as errors and retried by the next run).
    num_cpus : float
        CPUs reserved per actor (Ray sets its ``OMP_NUM_THREADS`` to match).
    num_gpus : float, optional
        GPUs per actor; None: 1 for ``hf:`` models and ``builtin:smollm2`` (unless ``device=cpu``)
        when the cluster has GPUs, else 0.
    score_batch : int, optional
        Distinct responses per scoring task: an axis with at least two batches' worth is scored
        on the cluster (every per-response measure but a judge), one task per batch; fewer are
        scored in this process, where starting the tasks would cost more than it saves. None:
        scoring always stays in this process.
    connect_timeout : float
        Seconds a given ``address`` has to answer in; past that (or at once, when nothing listens
        there) the run stops with a FairtalkError instead of waiting on Ray's own retries.

    Examples
    --------
    >>> RayEngine(num_actors=4).to_dict()["num_actors"]
    4
    >>> resolve_engine("ray") == RayEngine(), resolve_engine("local")
    (True, None)
    """

    address: str | None = None
    num_actors: int | None = None
    max_restarts: int = 3
    max_retries: int = 3
    num_cpus: float = 1.0
    num_gpus: float | None = None
    score_batch: int | None = 2000
    connect_timeout: float = CONNECT_TIMEOUT

    def __post_init__(self) -> None:
        if self.address is not None and (not isinstance(self.address, str) or not self.address.strip()):
            raise SpecError(_MSG_ADDRESS.format(value=self.address))
        if self.num_actors is not None and (not _whole(self.num_actors) or self.num_actors < 1):
            raise SpecError(_MSG_COUNT.format(field="num_actors", rule="an integer >= 1 or None", value=self.num_actors))
        for name in ("max_restarts", "max_retries"):
            value = getattr(self, name)
            if not _whole(value) or value < 0:
                raise SpecError(_MSG_COUNT.format(field=name, rule="an integer >= 0", value=value))
        if not _number(self.num_cpus) or not self.num_cpus > 0:
            raise SpecError(_MSG_COUNT.format(field="num_cpus", rule="a number > 0", value=self.num_cpus))
        if self.num_gpus is not None and (not _number(self.num_gpus) or self.num_gpus < 0):
            raise SpecError(_MSG_COUNT.format(field="num_gpus", rule="a number >= 0 or None", value=self.num_gpus))
        if self.score_batch is not None and (not _whole(self.score_batch) or self.score_batch < 1):
            raise SpecError(_MSG_COUNT.format(field="score_batch", rule="an integer >= 1 or None", value=self.score_batch))
        if not _number(self.connect_timeout) or not self.connect_timeout > 0:
            raise SpecError(_MSG_COUNT.format(field="connect_timeout", rule="a number > 0", value=self.connect_timeout))

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The option names."""
        return tuple(f.name for f in fields(cls))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``run.json``'s ``config.engine``): ``name`` plus every option, no credentials."""
        out: dict[str, Any] = {"name": "ray", **{key: getattr(self, key) for key in self.keys()}}
        if self.address is not None:
            out["address"] = _CREDENTIALS.sub("//***@", self.address)
        return out

    def responder(self, spec: str, *, batch_size: int = 64, model_args: Mapping[str, Any] | None = None) -> Responder:
        """Start the actors (and the cluster, when none is given) and load ``spec`` on each.

        Parameters
        ----------
        spec : str
            A model spec with a prefix of :data:`RAY_PREFIXES`; it is what travels to the actors.
        batch_size : int
            Pair sides per batch sent to an actor (fewer when that leaves an actor idle).
        model_args : mapping, optional
            The model's adapter options, as the keywords of :func:`~fairtalk.models.load_responder`.

        Returns
        -------
        Responder
            With ``respond_stream``: the run store commits each batch's answers as it arrives.
            Closing it stops the actors (and a cluster it started).

        Raises
        ------
        FairtalkError
            Ray is not installed (:data:`MSG_NO_RAY`); no cluster answers at ``address`` within
            ``connect_timeout``; a prefix Ray does not run; the model cannot load on the actors
            (the loader's own error).
        """
        from fairtalk.models._ray_pool import RayResponder

        return RayResponder(spec, dict(model_args or {}), engine=self, batch_size=batch_size)


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
            ray.init(address="local", _temp_dir=temp_dir, include_dashboard=False, **options)
        except BaseException as exc:
            shutil.rmtree(temp_dir, ignore_errors=True)
            if isinstance(exc, Exception):  # Ray's: a socket path too long, no shared memory...: said in one line
                raise FairtalkError(_MSG_START.format(error=_first_line(exc))) from exc
            raise
        _LOG.debug("ray: started a local cluster in %s", temp_dir)
        return RayConnection(ray, connected=True, temp_dir=temp_dir)
    shown = _CREDENTIALS.sub("//***@", given)
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


def resolve_engine(value: object, *, name: str = "engine") -> RayEngine | None:
    """The engine a value names: None for ``"local"`` (or None), a RayEngine for ``"ray"``, a RayEngine or a table.

    A table (from a config file) holds RayEngine options, and may say ``name = "ray"``.

    Raises
    ------
    SpecError
        An unknown engine name (with the choices), an unknown option or a bad value.
    """
    if value is None or isinstance(value, RayEngine):
        return value
    if isinstance(value, str):
        given = value.strip().lower()
        if given not in ENGINES:
            raise SpecError(_MSG_ENGINE.format(name=name, given=value), choices=ENGINES, given=value)
        return RayEngine() if given == "ray" else None
    if isinstance(value, Mapping):
        options = {str(key).strip().replace("-", "_"): item for key, item in value.items()}
        label = options.pop("name", "ray")
        if label != "ray":
            raise SpecError(_MSG_NAME_IN_TABLE.format(name=name, given=label))
        for key in options:
            if key not in RayEngine.keys():
                raise SpecError(f"unknown {name} option {key!r}", choices=RayEngine.keys(), given=key)
        return RayEngine(**options)
    raise SpecError(_MSG_ENGINE_TYPE.format(name=name, value=value))
