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

``RayResponder`` (the second half of this module): ray actors that each hold one model, and ``RayResponder``, which sends them batches and streams the answers back.

Built by :meth:`RayEngine.responder`. Each actor loads the spec once, in the
driver's folder and with its import path (so that a ``python:`` model and its fingerprint are
those of the driver). The driver keeps every actor busy with two batches (one running, one
queued), takes the answers of whichever batch finishes first (``ray.wait``), and yields them one
by one as ``(index, answer)``: :class:`~fairtalk.store.CachingResponder` commits them as they come.

An actor whose process dies loses its batches: each goes to another actor, or to the same one once
Ray has restarted it (``max_restarts``), at most ``max_retries`` times. An answer is yielded once,
from the one run of its batch that finished, so the store holds it exactly once.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator

import fairtalk.errors as _errors
from fairtalk._schema import keys_of, options_schema
from fairtalk.errors import FairtalkError, ResponderAborted, ResponderError, SpecError
from fairtalk.models._base import (
    DecodingSettings,
    Reply,
    Responder,
    Stream,
    check_batch,
    collect_stream,
    finish_reason,
    length_batches,
    one_line,
    raise_first_error,
    respond_each_checked,
)
from fairtalk.models._credentials import hide_credentials
from fairtalk.models._registry import load_responder
from fairtalk.models._spec import parse_model_spec
from fairtalk.models.ray._connect import (
    CONNECT_TIMEOUT,
    MSG_NO_RAY,
    MSG_NO_RAY_CLIENT,
    RAY_PREFIXES,
    RayConnection,
    cluster_error,
    connect_ray,
    import_ray,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "ENGINES",
    "HEARTBEAT",
    "MSG_NO_RAY",
    "MSG_NO_RAY_CLIENT",
    "ModelWorker",
    "RAY_PREFIXES",
    "RayConnection",
    "RayEngine",
    "RayResponder",
    "cluster_error",
    "connect_ray",
    "import_ray",
    "resolve_engine",
]

ENGINES = ("local", "ray")
"""The engines generation runs on: this process, or Ray actors."""
_MSG_ENGINE = "unknown {name} {given!r}"
_MSG_ENGINE_TYPE = "{name} must be 'local', 'ray', a RayEngine or a table of RayEngine options, got {value!r}"
_MSG_NAME_IN_TABLE = "{name}: a table of options is for engine 'ray', got name={given!r}"
_MSG_ADDRESS = "RayEngine: address must be a non-empty string (host:port, auto or ray://host:port) or None, got {value!r}"
_LOG = logging.getLogger(__name__)


@options_schema(kw_only=False, what="RayEngine")
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
    num_actors: int | None = Field(default=None, ge=1)
    max_restarts: int = Field(default=3, ge=0)
    max_retries: int = Field(default=3, ge=0)
    num_cpus: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    num_gpus: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    score_batch: int | None = Field(default=2000, ge=1)
    connect_timeout: float = Field(default=CONNECT_TIMEOUT, gt=0, allow_inf_nan=False)

    @field_validator("address", mode="plain")
    @classmethod
    def _address(cls, value: Any) -> str | None:
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise SpecError(_MSG_ADDRESS.format(value=value))
        return value

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The option names."""
        return keys_of(cls)

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


#: Seconds without a finished batch after which the stream yields None (the store may commit).
HEARTBEAT = 0.25
#: Batches in flight per actor: one running and one queued, so an actor never waits for the driver.
DEPTH = 2
#: Probes of an actor Ray reports unavailable before it is given up.
MAX_PROBES = 50

_LOG = logging.getLogger(__name__)
_WHY_NOT = {
    "openai": "openai: models keep max_concurrency requests in flight against their servers themselves; "
    "give several replica URLs (openai:URL1,URL2#MODEL) and leave the engine local",
    "replay": "replay: reads answers made elsewhere; there is nothing to generate",
    "vllm": "vllm: drives vLLM's own engine, which spreads over GPUs itself (data_parallel_size, through Ray)",
}
_MSG_PREFIX = "engine ray runs {prefixes} models, not {prefix} ({why})"
_MSG_BATCH = "batch_size must be >= 1, got {value!r}"
_MSG_LOAD = "{spec} cannot load on a Ray actor: {kind}: {error}"
_MSG_TASK = "the model failed on a Ray actor: {error}"
_MSG_ALL_DEAD = "every Ray actor died ({error}); {n_left} pair side(s) were not answered"
_MSG_DIED_LOADING = "every Ray actor died while loading {spec} ({error})"
_MSG_LOST = "the Ray actor running this item died {n} time(s) ({error})"
_MSG_NO_GPU = "engine ray: each actor asks for {gpus:g} GPU(s) but the cluster has {have:g}"
_MSG_NO_CPU = "engine ray: each actor asks for {cpus:g} CPU(s) but the cluster has {have:g}"
_WARN_CUT_UNKNOWN = (
    "ray: no actor answered to check max_new_tokens against {spec} and count the tokens it cuts from the prompts' "
    "start to fit its positions ({error}); a prompt cut in this run is not warned of"
)


def _encode(item: str | ResponderError) -> tuple[str | None, str | None, str | None]:
    """An answer as ``(text, finish_reason, None)``, an error as ``(None, kind, message)``: plain values travel."""
    if isinstance(item, ResponderError):
        return (None, type(item).__name__, str(item))
    return (str(item), finish_reason(item), None)


def _error_class(kind: str, base: type[FairtalkError]) -> type[FairtalkError]:
    """The fairtalk error class named ``kind`` when it is a ``base``, else ``base``."""
    found = getattr(_errors, kind, None)
    return found if isinstance(found, type) and issubclass(found, base) else base


def _decode(row: Sequence[str | None]) -> str | ResponderError:
    text, reason_or_kind, message = row
    if text is None:
        return _error_class(reason_or_kind or "", ResponderError)(message or "")  # type: ignore[return-value]
    return Reply(text, reason_or_kind) if reason_or_kind else text


class ModelWorker:
    """A Ray actor's body: the model a spec names, loaded once, answering batches of contexts."""

    def __init__(self, spec: str, options: Mapping[str, Any], cwd: str, path: Sequence[str]) -> None:
        if os.path.isdir(cwd):
            os.chdir(cwd)
        sys.path[:] = [*path, *(entry for entry in sys.path if entry not in path)]
        self.model: Responder | None = None
        self.error: tuple[str, str] | None = None
        try:
            self.model = load_responder(spec, **options)
            self.model.preflight()
        except Exception as exc:  # noqa: BLE001 - reported to the driver by describe()
            self.error = (type(exc).__name__, str(exc))

    def describe(self) -> dict[str, Any]:
        """The loaded model's fingerprint and files, or the error it failed to load with."""
        if self.model is None:
            return {"error": self.error}
        paths = tuple(str(p) for p in self.model.input_paths)
        kind = type(self.model)
        return {
            "fingerprint": self.model.fingerprint,
            "gets_transcript": self.model.gets_transcript,  # the driver's run store keys answers as the model does
            # whether the driver need ask this model to check settings and count cut prompts (the hf: adapter does)
            "checks": kind.check_settings is not Responder.check_settings or kind.prompts_cut is not Responder.prompts_cut,
            "user_spec": self.model.user_spec,
            "resolved_target": self.model.resolved_target,
            "input_paths": paths,
            "pid": os.getpid(),
        }

    def check(self, contexts: list[str], settings: DecodingSettings) -> tuple[str, Any]:
        """``("ok", cut)``: the model's check of ``settings`` passed, and per context the tokens it cuts from the prompt's start.

        ``("raise", (kind, message))`` when the check fails. It tokenizes and generates nothing.
        """
        if self.model is None:
            return ("raise", ("ResponderAborted", _MSG_TASK.format(error=f"the model did not load: {self.error}")))
        try:
            self.model.check_settings(settings)
            return ("ok", self.model.prompts_cut(contexts, settings) if contexts else None)
        except FairtalkError as exc:
            return ("raise", (type(exc).__name__, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a bug in the model stops the run, saying what it was
            return ("raise", ("ResponderAborted", _MSG_TASK.format(error=f"{type(exc).__name__}: {exc}")))

    def respond(self, contexts: list[str], settings: DecodingSettings, seeds: list[int]) -> tuple[str, Any]:
        """``("ok", rows)`` with one encoded answer or error per context, or ``("raise", (kind, message))``."""
        if self.model is None:  # the driver never sends work to an actor that failed to load
            return ("raise", ("ResponderAborted", _MSG_TASK.format(error=f"the model did not load: {self.error}")))
        try:
            out = respond_each_checked(self.model, contexts, settings, seeds=seeds)
        except FairtalkError as exc:
            return ("raise", (type(exc).__name__, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a bug in the model stops the run, saying what it was
            return ("raise", ("ResponderAborted", _MSG_TASK.format(error=f"{type(exc).__name__}: {exc}")))
        return ("ok", [_encode(item) for item in out])


@dataclass
class _Slot:
    """One actor: its handle, its batches in flight, and whether it takes work (ready), is starting, or is dead."""

    handle: Any
    n_running: int = 0
    state: str = "starting"
    n_probes: int = 0


@dataclass
class _Batch:
    indices: tuple[int, ...]
    n_lost: int = 0


class RayResponder(Responder):
    """A model spec loaded on Ray actors: ``respond_stream`` yields each answer as its batch finishes.

    ``fingerprint`` and ``input_paths`` are those the first ready actor reports (an actor that
    reports another fingerprint is not used: its environment differs).
    """

    def __init__(self, spec: str, options: Mapping[str, Any], *, engine: RayEngine, batch_size: int = 64) -> None:
        parsed = parse_model_spec(spec)
        if parsed.prefix not in RAY_PREFIXES:
            why = _WHY_NOT.get(parsed.prefix, "its model may not load on the cluster's workers")
            raise SpecError(
                _MSG_PREFIX.format(prefixes=", ".join(f"{p}:" for p in RAY_PREFIXES), prefix=f"{parsed.prefix}:", why=why)
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise SpecError(_MSG_BATCH.format(value=batch_size))
        self.spec, self.engine, self.batch_size = spec, engine, batch_size
        self._ray = import_ray()
        self._slots: list[_Slot] = []
        self._probes: dict[Any, _Slot] = {}
        self._fingerprint: str | None = None
        self._checks = False  # whether the model checks settings or counts cut prompts (asked of an actor)
        self._last_death = "no actor was ready"
        self._closed = False
        self._connection = connect_ray(self._ray, engine.address, timeout=engine.connect_timeout)
        try:
            self._start(parsed.prefix, parsed.target, {**parsed.options, **options}, options)
        except BaseException:
            self.close()
            raise

    def _start(self, prefix: str, target: str, all_options: Mapping[str, Any], options: Mapping[str, Any]) -> None:
        """Create the actors, and wait until the first has loaded the model (raising its load error)."""
        engine, cluster = self.engine, self._ray.cluster_resources()
        gpus = engine.num_gpus
        if gpus is None:
            torch_model = prefix == "hf" or (prefix == "builtin" and target == "smollm2")
            gpus = 1.0 if cluster.get("GPU") and torch_model and str(all_options.get("device", "auto")) != "cpu" else 0.0
        if gpus > cluster.get("GPU", 0):
            raise SpecError(_MSG_NO_GPU.format(gpus=gpus, have=cluster.get("GPU", 0)))
        if engine.num_cpus > cluster.get("CPU", 0):
            raise SpecError(_MSG_NO_CPU.format(cpus=engine.num_cpus, have=cluster.get("CPU", 0)))
        n_actors = engine.num_actors or max(1, int(cluster["GPU"] // gpus if gpus else cluster["CPU"] // engine.num_cpus))
        actor = self._ray.remote(num_cpus=engine.num_cpus, num_gpus=gpus, max_restarts=engine.max_restarts, max_task_retries=0)(
            ModelWorker
        )
        for _ in range(n_actors):
            slot = _Slot(actor.remote(self.spec, dict(options), os.getcwd(), list(sys.path)))
            self._slots.append(slot)
            self._probe(slot)
        _LOG.info("ray: %d actor(s) loading %s (%g CPU, %g GPU each)", n_actors, prefix, engine.num_cpus, gpus)
        while self._fingerprint is None:
            if not self._probes:
                raise ResponderAborted(_MSG_DIED_LOADING.format(spec=self.spec, error=self._last_death))
            ready, _ = self._ray.wait(list(self._probes), num_returns=1)
            self._probed(ready[0])

    def _probe(self, slot: _Slot) -> None:
        slot.state = "starting"
        slot.n_probes += 1
        self._probes[slot.handle.describe.remote()] = slot

    def _probed(self, ref: Any) -> None:
        """An actor's description arrived: it takes work, or it is given up (or probed again while Ray restarts it)."""
        slot = self._probes.pop(ref)
        exceptions = self._ray.exceptions
        try:
            described = self._ray.get(ref)
        except exceptions.RayError as exc:
            self._last_death = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if slot.state != "dead" and not isinstance(exc, exceptions.ActorDiedError) and slot.n_probes < MAX_PROBES:
                self._probe(slot)
            else:
                slot.state = "dead"
            return
        if slot.state == "dead":
            return
        if described.get("error"):
            kind, message = described["error"]
            if self._fingerprint is None:  # the loader's own error (SpecError, InputError), else one that says where
                cls = _error_class(kind, FairtalkError)
                raise (
                    cls(message)
                    if cls is not FairtalkError
                    else FairtalkError(_MSG_LOAD.format(spec=self.spec, kind=kind, error=one_line(message)))
                )
            _LOG.warning("ray: a restarted actor failed to load the model (%s: %s); it is not used", kind, message)
            slot.state = "dead"
            return
        if self._fingerprint is None:
            self._fingerprint, self.input_paths = described["fingerprint"], tuple(described["input_paths"])
            self.user_spec = described.get("user_spec")
            self._checks = bool(described.get("checks"))
            self.gets_transcript = bool(described.get("gets_transcript"))
            self.resolved_target = described.get("resolved_target")
        elif described["fingerprint"] != self._fingerprint:
            _LOG.warning(
                "ray: an actor loaded %s, not %s (its environment differs); it is not used",
                described["fingerprint"],
                self._fingerprint,
            )
            slot.state = "dead"
            return
        slot.state, slot.n_probes = "ready", 0

    @property
    def fingerprint(self) -> str:
        """The model's fingerprint as the actors report it: the same as the spec loaded in this process."""
        return self._fingerprint or f"ray:{self.spec}"

    @property
    def actors(self) -> tuple[Any, ...]:
        """The Ray actor handles (those given up included)."""
        return tuple(slot.handle for slot in self._slots)

    @property
    def n_actors(self) -> int:
        """Actors not given up."""
        return sum(slot.state != "dead" for slot in self._slots)

    def respond_stream(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> Stream:
        """Yield ``(index, answer or error)`` as each batch finishes, and None every HEARTBEAT without one."""
        check_batch(contexts, seeds)
        size = max(1, min(self.batch_size, math.ceil(len(contexts) / max(1, self.n_actors))))
        todo = deque(_Batch(tuple(group)) for group in length_batches([len(c) for c in contexts], size))
        running: dict[Any, tuple[_Slot, _Batch]] = {}
        n_left = len(contexts)
        try:
            while todo or running:
                self._submit(todo, running, contexts, settings, seeds)
                waiting = [*running, *self._probes]
                if not waiting:
                    raise ResponderAborted(_MSG_ALL_DEAD.format(error=self._last_death, n_left=n_left))
                ready, _ = self._ray.wait(waiting, num_returns=1, timeout=HEARTBEAT)
                if not ready:
                    yield None
                    continue
                if ready[0] in self._probes:
                    self._probed(ready[0])
                    continue
                slot, batch = running.pop(ready[0])
                slot.n_running -= 1
                try:
                    rows = self._result(ready[0], slot)
                except _Lost as lost:
                    batch.n_lost += 1
                    if batch.n_lost <= self.engine.max_retries:
                        todo.appendleft(batch)
                        continue
                    rows = [(None, "ResponderError", _MSG_LOST.format(n=batch.n_lost, error=lost))] * len(batch.indices)
                for index, row in zip(batch.indices, rows):
                    n_left -= 1
                    yield index, _decode(row)
        finally:
            for ref, (slot, _) in running.items():
                slot.n_running -= 1
                try:
                    self._ray.cancel(ref)
                except Exception:  # noqa: BLE001 - best effort: a running actor task finishes anyway
                    _LOG.debug("ray: could not cancel a batch")

    def _submit(
        self,
        todo: deque[_Batch],
        running: dict[Any, tuple[_Slot, _Batch]],
        contexts: Sequence[str],
        settings: DecodingSettings,
        seeds: Sequence[int],
    ) -> None:
        """Hand batches to the ready actors, the least busy first, up to DEPTH each."""
        while todo:
            free = [slot for slot in self._slots if slot.state == "ready" and slot.n_running < DEPTH]
            if not free:
                return
            slot = min(free, key=lambda s: s.n_running)
            batch = todo.popleft()
            ref = slot.handle.respond.remote(
                [contexts[i] for i in batch.indices], settings, [int(seeds[i]) for i in batch.indices]
            )
            running[ref] = (slot, batch)
            slot.n_running += 1

    def _result(self, ref: Any, slot: _Slot) -> list[Sequence[str | None]]:
        """A finished batch's rows; raises _Lost when its actor died, or the model's run-stopping error."""
        exceptions = self._ray.exceptions
        try:
            status, payload = self._ray.get(ref)
        except exceptions.RayTaskError as exc:
            raise ResponderAborted(_MSG_TASK.format(error=exc.cause if exc.cause is not None else exc)) from None
        except exceptions.RayError as exc:
            if slot.state != "dead":
                if isinstance(exc, exceptions.ActorDiedError):
                    slot.state = "dead"
                elif slot.state == "ready":
                    self._probe(slot)  # Ray restarts it (max_restarts): it takes work again once it answers
                _LOG.warning("ray: an actor died (%s); its batches go to the other actors", type(exc).__name__)
            self._last_death = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            raise _Lost(self._last_death) from None
        if status == "raise":
            kind, message = payload
            raise _error_class(kind, FairtalkError)(message)
        return list(payload)

    def _check(self, contexts: Sequence[str], settings: DecodingSettings) -> list[int] | None:
        """The model's check of ``settings`` and its count of the tokens cut from each prompt, as a ready actor gives them.

        Asked of one actor (the first that answers; it tokenizes only), and only of a model that
        checks or counts (:meth:`ModelWorker.describe`); None when no actor answers (logged).
        """
        if not self._checks:
            return None
        error = self._last_death
        for slot in [s for s in self._slots if s.state == "ready"]:
            try:
                status, payload = self._ray.get(slot.handle.check.remote(list(contexts), settings))
            except self._ray.exceptions.RayError as exc:
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                continue
            if status == "raise":
                kind, message = payload
                raise _error_class(kind, FairtalkError)(message)
            return None if payload is None else [int(n) for n in payload]
        _LOG.warning(_WARN_CUT_UNKNOWN.format(spec=self.spec, error=error))
        return None

    def check_settings(self, settings: DecodingSettings) -> None:
        """The model's own check of ``settings`` (the ``hf:`` adapter's token limit), made on an actor."""
        self._check((), settings)

    def prompts_cut(self, contexts: Sequence[str], settings: DecodingSettings) -> list[int] | None:
        """Per context, the tokens the model cuts from its prompt's start to fit, as an actor's model counts them.

        The model's tokenizer runs on the actor, not here: no second copy of the model in this process.
        """
        if not contexts:
            return [] if self._checks else None
        return self._check(contexts, settings)

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Every answer or error, in order (the stream, collected)."""
        return collect_stream(self.respond_stream(contexts, settings, seeds=seeds), len(contexts))

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """One answer per context; the first item's error raised if any failed."""
        return raise_first_error(self.respond_each(contexts, settings, seeds=seeds))

    def close(self) -> None:
        """Stop the actors, and the cluster when this responder started it."""
        if self._closed:
            return
        self._closed = True
        for slot in self._slots:
            try:
                self._ray.kill(slot.handle)
            except Exception:  # noqa: BLE001 - an actor already gone
                _LOG.debug("ray: actor already gone")
        self._probes.clear()
        self._connection.close()


class _Lost(Exception):
    """A batch's actor died before answering."""
