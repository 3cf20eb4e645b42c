"""Texts scored in batches of Ray tasks on a :class:`~fairtalk.models.RayEngine`'s cluster, the scores back in order.

:class:`RayScorer` takes a *build*: a function, sent to the workers by value, that returns a
texts -> ``{key: scores}`` function (score()'s measures: ``fairtalk.pipeline``; regard labels:
``fairtalk.prompts``). A task's worker calls the build once and keeps what it returns for the
next batch it gets. Scores are those of this process to the last bit when the scoring function
scores each text on its own: the same function on the same texts, put back in their order.

Fault tolerance is Ray's own: a task whose worker process dies is run again (``max_retries``);
scoring is a pure function of the texts, so a batch run twice gives the same scores once.

The tasks reserve no CPU: they run once generation is over, in the CPUs the idle generation
actors hold; at most as many run at once as the engine has actors (``num_actors``, else the
cluster's CPUs divided by ``num_cpus``), each with that many threads.

When a batch fails (or the run is interrupted), the batches still running are cancelled with
``force=True``: their worker processes are killed. Ray's gentler cancel raises KeyboardInterrupt
inside the task, and a worker interrupted while importing its measures (``torch``) stays in Ray's
pool half-initialised, failing the next task it gets ("partially initialized module 'torch'").
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import fairtalk.errors as _errors
from fairtalk.errors import FairtalkError, SpecError
from fairtalk.models.ray._engine import RayEngine, connect_ray, import_ray

__all__ = ["Build", "RayScorer", "score_batch", "worth_it"]

_LOG = logging.getLogger(__name__)
_MSG_PICKLE = "{what} cannot be sent to the Ray cluster ({error}); score in this process: RayEngine(score_batch=None)"
_MSG_TASK = "scoring failed on the Ray cluster: {error}"
#: A texts -> {key: scores} function a worker built, by recipe id (one at a time: a new recipe replaces it).
_BUILT: dict[str, Callable[[list[str]], Mapping[str, Any]]] = {}

#: What a worker builds from a recipe: a function from texts to one score array per key.
Build = Callable[[], Callable[[list[str]], Mapping[str, Any]]]


def score_batch(recipe_id: str, recipe: bytes, texts: list[str], cwd: str, path: list[str], threads: int) -> tuple[str, Any]:
    """A Ray task's body: ``("ok", {key: scores})`` of the recipe's scoring function, or ``("raise", (kind, message))``."""
    try:
        scorer = _BUILT.get(recipe_id)
        if scorer is None:
            if os.path.isdir(cwd):
                os.chdir(cwd)
            sys.path[:] = [*path, *(entry for entry in sys.path if entry not in path)]
            _set_threads(threads)
            cloudpickle = importlib.import_module("ray.cloudpickle")  # untyped: an Any

            build = cloudpickle.loads(recipe)
            _BUILT.clear()
            scorer = _BUILT[recipe_id] = build()
        return ("ok", dict(scorer(texts)))
    except FairtalkError as exc:
        return ("raise", (type(exc).__name__, str(exc)))
    except Exception as exc:  # noqa: BLE001 - a failing measure stops the run, saying what it was
        return ("raise", ("FairtalkError", _MSG_TASK.format(error=f"{type(exc).__name__}: {exc}")))


def _set_threads(threads: int) -> None:
    """One scoring task's share of the node: its torch threads (when torch is installed)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)


class RayScorer:
    """Per-response scores of many texts on a Ray cluster, as the recipe's function gives them here.

    Parameters
    ----------
    engine : RayEngine
        The cluster (joined, or started on this machine and stopped by :meth:`close`), the
        batch size (``score_batch``), the tasks at once and the retries of a lost task.
    build : callable
        Sent to the workers by value; each calls it once and scores its batches with the
        function it returns (texts -> one array per key). :func:`measures_scorer` with its
        arguments bound gives score()'s measures.
    what : str
        What ``build`` builds, for the error when it cannot be sent.
    """

    def __init__(self, engine: RayEngine, build: Build, what: str = "the measures") -> None:
        self._ray = import_ray()
        cloudpickle = importlib.import_module("ray.cloudpickle")  # untyped: an Any

        self.engine = engine
        try:
            recipe = cloudpickle.dumps(build)
        except Exception as exc:  # noqa: BLE001 - any failure to serialise: the build names what it holds
            raise SpecError(_MSG_PICKLE.format(what=what, error=exc)) from None
        self._connection = connect_ray(self._ray, engine.address, timeout=engine.connect_timeout)
        try:
            resources = self._ray.cluster_resources()
            self._recipe = self._ray.put(recipe)
        except BaseException:
            self._connection.close()
            raise
        self.n_tasks = engine.num_actors or max(1, int(resources.get("CPU", 1) // engine.num_cpus))
        self._threads = max(1, int(engine.num_cpus))
        self._recipe_id = uuid.uuid4().hex
        self._task = self._ray.remote(num_cpus=0, max_retries=engine.max_retries, scheduling_strategy="SPREAD")(score_batch)
        self.n_batches = 0

    def score(self, texts: Sequence[str], advance: Callable[[int], object] | None = None) -> dict[str, np.ndarray]:
        """One array of ``len(texts)`` per key of the workers' scoring function; ``advance(n)`` as each batch's n texts finish."""
        size = self.engine.score_batch or len(texts) or 1
        batches = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
        results: list[dict[str, np.ndarray] | None] = [None] * len(batches)
        running: dict[Any, int] = {}
        cwd, path = os.getcwd(), list(sys.path)
        following = iter(range(len(batches)))
        for index in following:
            running[self._submit(batches[index], cwd, path)] = index
            if len(running) >= self.n_tasks:
                break
        try:
            while running:
                ready, _ = self._ray.wait(list(running), num_returns=1)
                index = running.pop(ready[0])
                results[index] = self._result(ready[0])
                if advance is not None:
                    advance(len(batches[index]))
                nxt = next(following, None)
                if nxt is not None:
                    running[self._submit(batches[nxt], cwd, path)] = nxt
        finally:  # a failed batch or Ctrl-C: the other batches are not wanted any more
            for ref in running:
                try:  # force: a worker interrupted mid-import (torch) stays in Ray's pool, broken for the next task
                    self._ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - best effort: a task already finished needs no cancelling
                    _LOG.debug("ray: could not cancel a scoring batch")
        self.n_batches += len(batches)
        keys = list(results[0]) if results and results[0] is not None else []
        return {key: np.concatenate([np.asarray(r[key]) for r in results if r is not None]) for key in keys}

    def _submit(self, texts: list[str], cwd: str, path: list[str]) -> Any:
        return self._task.remote(self._recipe_id, self._recipe, texts, cwd, path, self._threads)

    def _result(self, ref: Any) -> dict[str, np.ndarray]:
        try:
            status, payload = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise FairtalkError(_MSG_TASK.format(error=f"{type(exc).__name__}: {first}")) from None
        if status == "raise":
            kind, message = payload
            found = getattr(_errors, kind, None)
            cls = found if isinstance(found, type) and issubclass(found, FairtalkError) else FairtalkError
            raise cls(message)
        return dict(payload)

    def close(self) -> None:
        """Stop the cluster when this scorer started it (a joined one is left running), and remove its temp dir."""
        self._connection.close()


def worth_it(engine: RayEngine | None, n_texts: int) -> bool:
    """Whether ``n_texts`` distinct responses are scored on the cluster: at least two batches, with batching on."""
    return engine is not None and engine.score_batch is not None and n_texts >= 2 * engine.score_batch
