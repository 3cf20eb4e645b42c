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

import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from fairtalk.errors import SpecError
from fairtalk.models._base import Responder
from fairtalk.models._ray_connect import (
    CONNECT_TIMEOUT,
    MSG_NO_RAY,
    MSG_NO_RAY_CLIENT,
    RAY_PREFIXES,
    RayConnection,
    cluster_error,
    connect_ray,
    hide_credentials,
    import_ray,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "ENGINES",
    "MSG_NO_RAY",
    "MSG_NO_RAY_CLIENT",
    "RAY_PREFIXES",
    "RayConnection",
    "RayEngine",
    "cluster_error",
    "connect_ray",
    "import_ray",
    "resolve_engine",
]

#: The engines generation runs on: this process, or Ray actors.
ENGINES = ("local", "ray")
_MSG_ENGINE = "unknown {name} {given!r}"
_MSG_ENGINE_TYPE = "{name} must be 'local', 'ray', a RayEngine or a table of RayEngine options, got {value!r}"
_MSG_NAME_IN_TABLE = "{name}: a table of options is for engine 'ray', got name={given!r}"
_MSG_COUNT = "RayEngine: {field} must be {rule}, got {value!r}"
_MSG_ADDRESS = "RayEngine: address must be a non-empty string (host:port, auto or ray://host:port) or None, got {value!r}"
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
            out["address"] = hide_credentials(self.address)
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
