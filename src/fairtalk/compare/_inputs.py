"""Reading the two runs ``compare_runs()`` compares: an audit's output folder or a ``score`` output folder, per axis its result and responses.

- ``fairtalk audit -o OUT``: ``OUT/run.json`` lists the axes and their folders; each folder holds
  ``results.json`` and ``responses.jsonl``.
- ``fairtalk score -o OUT``: ``OUT/results.json`` (one axis); the responses are a
  ``responses.jsonl`` beside it, else the file it was scored from, named in its manifest
  (``input.sources``) and read only when its sha256 is the one recorded.

A folder is input someone else may have written: no axis folder outside it is read, and no
file its manifest names is parsed unless it is the one recorded.

The responses are read as the run read them (``drop_empty`` as its manifest records).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import math
import numbers
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairtalk._jsonl import open_input, read_json_file
from fairtalk._responses import ResponseSet, read_responses
from fairtalk.config import AuditConfig
from fairtalk.errors import InputError, SpecError, path_argument
from fairtalk.models import hide_credentials, identity_unknown, recorded_specs
from fairtalk.results import COMPARISON_KIND, AuditResult, read_result_file

__all__ = [
    "COMPARISON_KIND",
    "AxisInput",
    "RunInput",
    "given_margins",
    "is_comparison",
    "is_prompt_analysis",
    "looks_like_analysis",
    "once",
    "python_target",
    "read_run",
    "results_of",
    "same_model",
    "same_model_configs",
    "same_run",
]

_MSG_MARGINS = "margins must map result keys to margins in their units (rates as fractions: 0.02 for 2 pp), got {value!r}"
_MSG_MARGIN = (
    "the non-inferiority margin of {key!r} must be a finite number > 0 (rates as fractions: 0.02 for 2 pp), got {value!r}"
)
_MSG_TWICE = "{what} {name!r} is given twice: give each {what} once"


def given_margins(margins: object) -> dict[str, float]:
    """A user's margins (key -> a finite number > 0), checked: a SpecError naming the key otherwise, never a bare error.

    ``None`` is no margins. A number given as text (``"0.01"``), 0, a negative, NaN or infinity is
    refused: a margin decides a gate, so nothing is read into it.

    >>> given_margins({"offense_rate": 0.01})
    {'offense_rate': 0.01}
    >>> given_margins({"offense_rate": 0})
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: the non-inferiority margin of 'offense_rate' must be a finite number > 0 (rates as fractions: 0.02 for 2 pp), got 0
    """
    if margins is None:
        return {}
    if not isinstance(margins, Mapping):
        raise SpecError(_MSG_MARGINS.format(value=margins))
    checked: dict[str, float] = {}
    for key, value in margins.items():
        number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
        if not (math.isfinite(number) and number > 0):
            raise SpecError(_MSG_MARGIN.format(key=key, value=value))
        checked[str(key)] = number
    return checked


def once(names: Iterable[str], what: str) -> None:
    """SpecError for a name given twice (``axis 'gender' is given twice: give each axis once``), as ``audit`` says it."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise SpecError(_MSG_TWICE.format(what=what, name=name))
        seen.add(name)


RUN_FILE = "run.json"
RESULTS_FILE = "results.json"
RESPONSES_FILE = "responses.jsonl"
_MSG_NOT_A_RUN = "not the output folder of `fairtalk audit` or `fairtalk score`: it holds neither run.json nor results.json"
_MSG_NO_FOLDER = "no such folder (give the output folder of `fairtalk audit -o` or `fairtalk score -o`)"
_MSG_A_FILE = (
    "is a file, not an output folder: give the folder of `fairtalk audit -o` or `fairtalk score -o` (for a "
    "results.json, the folder that holds it)"
)
_MSG_PROMPTS = (
    "a `fairtalk prompts analyze` output, not an audit: compare two prompts analyses "
    "(fairtalk.pipeline.compare_prompt_analyses), or two audits, not one of each"
)
_MSG_COMPARISON = (
    "a `fairtalk compare` output, not an audit: compare two output folders of `fairtalk audit -o` or `fairtalk score -o`"
)
#: What a comparison's ``results.json`` says it is (its ``kind``, :attr:`fairtalk.ModelComparison.kind`).
_MSG_NO_RESPONSES = (
    "the responses it was scored from are not there ({paths}); put them beside it as responses.jsonl, "
    "or run compare where `fairtalk score` ran"
)
_MSG_AXIS_FOLDER = "axis {axis!r}: its folder {folder!r} has no {name}"
_MSG_FOLDER_NAME = "field 'axes.{axis}.folder' must name a folder inside the run folder, got {folder!r}"
_MSG_OTHER_RESPONSES = (
    "{file} is not the responses it was scored from (their sha256 differs from the one recorded); put those "
    "beside it as responses.jsonl"
)


@dataclass(frozen=True, slots=True)
class AxisInput:
    """One axis of a run: its audit result (the measures, options and primary keys) and its responses."""

    result: AuditResult
    responses: ResponseSet


@dataclass(frozen=True, slots=True)
class RunInput:
    """A run to compare: its folder, its model's fingerprint (None for a ``score`` folder) and its axes, in order.

    ``run_id`` is an audit's run id (None for a ``score`` folder); ``sha256`` the hash of its
    ``run.json`` (an audit) or ``results.json`` (a score), which a copy of the folder shares;
    ``settings`` an audit's decoding settings (``run.json``'s ``settings``), which with the
    fingerprint key the answers in a run store; ``model_target`` a ``python:`` model's target as
    the run resolved it (``run.json``'s ``model_target``; None for another model, or a run
    recorded before runs kept it); ``responses_read`` per axis the result and the responses
    file(s) read for it, whose hashes (:func:`_responses_known_by`) tell a ``score`` folder of a
    run's own answers from another run; they are hashed only when a ``score`` folder is compared.
    """

    path: str
    model: str | None
    axes: Mapping[str, AxisInput]
    run_id: str | None = None
    sha256: str = ""
    settings: Mapping[str, Any] | None = None
    model_target: str | None = None
    responses_read: Mapping[str, tuple[AuditResult, str | tuple[str, str]]] = field(default_factory=dict)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _responses_known_by(result: AuditResult, read: str | tuple[str, str]) -> frozenset[str]:
    """The hashes an axis's responses are known by: the file(s) read, and the sources its manifest records (two files' joined by ``+``)."""
    names = (read,) if isinstance(read, str) else read
    known = {"+".join(_recorded_digest(name) for name in names)}
    given = () if result.provenance.input is None else result.provenance.input.sources or ()
    recorded = [source.sha256 for source in given if source.path]
    if recorded and all(isinstance(sha, str) and sha for sha in recorded):
        known.add("+".join(str(sha) for sha in recorded))
    return frozenset(known)


def _same_responses(baseline: RunInput, candidate: RunInput) -> str | None:
    """The sha256 of responses both runs scored for one axis, where either is a ``score`` folder (no run id), else None.

    Two audits are told apart by their run ids and models, whatever their answers; a ``score``
    folder has neither, and the same responses scored again are the run that answered them.
    """
    if baseline.run_id and candidate.run_id:
        return None
    for axis, read in baseline.responses_read.items():
        other = candidate.responses_read.get(axis)
        if other is None:
            continue
        shared = sorted(_responses_known_by(*read) & _responses_known_by(*other))
        if shared:
            return shared[0]
    return None


def same_run(baseline: RunInput, candidate: RunInput) -> str | None:
    """What the two runs are when they cannot be told apart, else None: the release gate fails on it (``--fail-if-worse``, ``assert_not_worse``).

    ``one run (…)``: the same folder, the same run id, a copy of its files, or (a ``score`` folder
    on either side) the same responses scored again, by their sha256; ``two runs of the
    same model … with the same decoding settings``: the same fingerprint and decoding settings (what keys the answers in a run store: ``audit
    --baseline-model`` with the candidate's own model, or the model audited twice). Whatever the
    pairs, its answers are its own: not worse than itself proves nothing about a release.
    """
    if Path(baseline.path).resolve() == Path(candidate.path).resolve():
        return f"one run (the same folder {baseline.path})"
    if baseline.run_id and baseline.run_id == candidate.run_id:
        return f"one run (the same run id {baseline.run_id})"
    if baseline.sha256 and baseline.sha256 == candidate.sha256:
        return "one run (a byte-identical copy of its results file)"
    scored = _same_responses(baseline, candidate)
    if scored is not None:
        return f"one run (the same responses scored on both sides, sha256 {scored[:16]}…)"
    return same_model(
        (baseline.model, baseline.settings),
        (candidate.model, candidate.settings),
        targets=(baseline.model_target, candidate.model_target),
    )


def _split_fingerprint(fingerprint: str) -> tuple[str, tuple[dict[str, Any], str] | None]:
    """A fingerprint's name (``kind:identity``), and its identity fields (the JSON after it) with the rest after them.

    The rest is a model version (`` version=TAG``), or empty; None in place of both: no such fields.
    """
    at = fingerprint.find(" {")
    while at != -1:
        try:
            fields, end = json.JSONDecoder().raw_decode(fingerprint, at + 1)
        except ValueError:
            fields = None
        if isinstance(fields, dict):
            return fingerprint[:at], (fields, fingerprint[end:])
        at = fingerprint.find(" {", at + 1)
    return fingerprint, None


def _module_file(name: str) -> str | None:
    """The file of module ``name`` as the ``python:`` adapter would import it, found without running any of it (None: not found).

    A module already imported gives its own file; else the search path, then the current folder
    (where the adapter looks last, as ``python -m`` does).
    """
    loaded = getattr(sys.modules.get(name), "__file__", None)
    if isinstance(loaded, str):
        return loaded
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    spec = None
    for roots in (sys.path, [os.getcwd()]):
        try:
            spec = importlib.machinery.PathFinder.find_spec(parts[0], roots)
            for depth in range(1, len(parts)):
                where = None if spec is None else spec.submodule_search_locations
                spec = (
                    None if where is None else importlib.machinery.PathFinder.find_spec(".".join(parts[: depth + 1]), list(where))
                )
        except (ImportError, OSError, ValueError):
            spec = None
        if spec is not None and spec.origin and spec.has_location:
            return spec.origin
    return None


def python_target(target: str) -> str:
    """What a ``python:`` target names, whatever its spelling: ``/real/path/of/file.py:function``.

    A file (``bot.py``, ``./bot.py``, ``/abs/bot.py``) resolves to its real path; a module
    (``bot``, ``pkg.bot``) to its file, found without importing it. A file that is not there
    (or a module not found) keeps its spelling, a path normalised (``./bot.py`` is ``bot.py``).

    Examples
    --------
    >>> python_target("./no/such/../dir/bot.py:reply") == python_target("no/dir/bot.py:reply")
    True
    """
    module, sep, name = target.rpartition(":")
    if not sep or not module:
        return target
    if module.endswith(".py") or "/" in module or "\\" in module:
        path = Path(module)
        try:
            where = str(path.resolve()) if path.is_file() else os.path.normpath(module)
        except (OSError, RuntimeError):
            where = os.path.normpath(module)
        return f"{where}:{name}"
    found = _module_file(module)
    if found is None:
        return target
    try:
        return f"{Path(found).resolve()}:{name}"
    except (OSError, RuntimeError):
        return target


def _identities(fingerprint: str, recorded: str | None = None) -> set[tuple[str, str, object]]:
    """A fingerprint's identities as one model, each ``(rule, name, fields)``: two runs share one when they are one model.

    A ``python:`` model has up to three, one per rule that can show it is the model of another run:

    - ``code``: its function's name and every identity field (the code's hash among them), wherever
      its file lay: one code in two checkouts is one model (a model whose behaviour its code does
      not show, a file it reads, is told apart by a model version, which is among the fields);
    - ``recorded``: its target as the run resolved it where it ran (``recorded``), with the fields;
    - ``here``: its target resolved here (:func:`python_target`, against this process's current
      folder), with the fields: the rule for runs recorded before runs kept their target.

    Every other fingerprint has one, as written. A built-in model recorded under its store key's head
    (``retrieval:builtin-minilm {…}``, as runs before :attr:`~fairtalk.models.Responder.user_spec`
    wrote it) is its spec's (``builtin:minilm-retrieval {…}``).
    """
    head, space, rest = fingerprint.partition(" ")
    spec = recorded_specs().get(head)
    if spec is not None:
        return {("as written", f"{spec}{space}{rest}", None)}
    name, fields = _split_fingerprint(fingerprint)
    kind, _, target = name.partition(":")
    if kind != "python" or not target:
        return {("as written", fingerprint, None)}
    found: set[tuple[str, str, object]] = {("here", f"python:{python_target(target)}", repr(fields))}
    if recorded and fields is not None:
        found.add(("recorded", f"python:{recorded}", repr(fields)))
    if fields is not None and "code" in fields[0]:
        found.add(("code", target.rpartition(":")[2], repr(fields)))
    return found


def same_model(
    baseline: tuple[str | None, object],
    candidate: tuple[str | None, object],
    *,
    targets: tuple[str | None, str | None] = (None, None),
) -> str | None:
    """The rule of one model: the same model identity and the same decoding settings, each ``(model, settings)``.

    ``model`` is a run's fingerprint (what keys its answers in a run store, the spec first), or
    None (no model: never the same). Two ``python:`` models are one model when their identity
    fields (the JSON after the name: code hash, ``batched``, ``state`` and any others, and a model
    version after them) are equal and any one of these holds (:func:`_identities`): the same
    function name with a code hash among the fields (one code, wherever its file lay: two CI
    checkouts of one bot, however spelled); the same target as each run resolved it where it ran
    (``targets``: ``run.json``'s ``model_target``, :attr:`~fairtalk.models.Responder.resolved_target`);
    or the same target resolved here (:func:`python_target`, against this process's folder: the
    rule for runs recorded before they kept their target). Any one rule is enough, so that a gate
    never compares a model with itself because one rule could not see it: a bot whose behaviour
    its code does not show (a file it reads) is told apart by ``--model-version``. Other
    fingerprints are compared as written; two fingerprints written alike are one model (they key
    one model's answers in a run store).

    A fingerprint whose identity is unknown (a callable whose state cannot be read, with no model
    version: :func:`~fairtalk.models.identity_unknown`) cannot show that two runs are of one model,
    so it never does: the runs are compared as two models', and the gate passes or fails on their
    answers, failing closed there as always.
    """
    (model, settings), (other, other_settings) = baseline, candidate
    if model is None or other is None or settings != other_settings:
        return None
    if identity_unknown(model) or identity_unknown(other):
        return None
    if model != other and not _identities(model, targets[0]) & _identities(other, targets[1]):
        return None
    name, other_name = model.partition(" ")[0], other.partition(" ")[0]
    spelled = "" if name == other_name else f" (spelled {other_name} in the candidate)"
    return f"two runs of the same model {name}{spelled} with the same decoding settings"


def same_model_configs(baseline: AuditConfig, candidate: AuditConfig) -> str | None:
    """The rule of :func:`same_model` on two audits' configs, before any answer is generated (``audit --baseline-model``).

    Two specs naming one model (identical, or a ``python:`` target spelled two ways: see
    :func:`python_target`) with the same model arguments, model version and decoding settings
    are one model. A ``python:`` spec whose file changes between two runs gets another
    fingerprint, which :func:`same_run` tells apart afterwards; in one command the two specs are
    one model. Both audits run in this process, so a relative target is resolved against the folder
    they run in, as their runs record it (``model_target``).
    """

    def spec(config: AuditConfig) -> str:
        model = str(config.model)
        return "python:" + python_target(model[len("python:") :]) if model.startswith("python:") else model

    def identity(config: AuditConfig) -> tuple[str | None, object]:
        if not isinstance(config.model, str):  # a Responder object or a function: no spec to compare
            return None, config.settings
        args = sorted((k, repr(v)) for k, v in config.model_args.items())
        return f"{spec(config)} {args!r} {config.model_version!r}", config.settings

    model = identity(baseline)
    if model[0] is None or model != identity(candidate):
        return None
    shown = hide_credentials(str(candidate.model))
    spelled = "" if baseline.model == candidate.model else f" (spelled {shown} in the candidate)"
    return f"two runs of the same model {hide_credentials(str(baseline.model))}{spelled} with the same decoding settings"


def _result(path: Path) -> AuditResult:
    """The audit result of a ``results.json``, its version and shape checked (InputError naming the file and field)."""
    data = read_result_file(path, "audit")
    return AuditResult.from_dict(data)


def _score_result(path: Path) -> AuditResult:
    """:func:`_result` of a score folder's ``results.json``; a comparison's (``fairtalk compare -o``) is named as such."""
    try:
        return _result(path)
    except InputError:
        if is_comparison(path):
            raise InputError(_MSG_COMPARISON, path=str(path.parent)) from None
        raise


def is_comparison(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is the ``results.json`` of a model comparison (``fairtalk compare -o``), by its ``kind``.

    A file that cannot be read as a result file is none (False).
    """
    try:
        data = read_result_file(path)
    except InputError:
        return False
    return data.get("kind") == COMPARISON_KIND


def _drop_empty(result: AuditResult) -> bool:
    return bool(result.provenance.drop_empty)


def _recorded_digest(path: str) -> str:
    """The sha256 of a file's bytes, read in chunks (a pipe or a device is refused by :func:`open_input`)."""
    digest = hashlib.sha256()
    with open_input(path, what="responses file") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _score_sources(folder: Path, result: AuditResult) -> str | tuple[str, str]:
    """The responses a ``score`` folder's result was read from: ``responses.jsonl`` beside it, else its manifest's sources.

    A source the manifest names is read only when its bytes are the ones scored (their sha256
    is the one recorded): a results.json from someone else cannot make compare parse, and quote
    in an error, a file of this machine that the user did not name.
    """
    beside = folder / RESPONSES_FILE
    if beside.is_file():
        return str(beside)
    where = str(folder / RESULTS_FILE)
    given = () if result.provenance.input is None else result.provenance.input.sources or ()
    recorded = [(source.path, source.sha256) for source in given if source.path]
    paths = [path for path, _ in recorded]
    found = []
    for path in paths:
        candidates = (Path(path), folder / path) if not os.path.isabs(path) else (Path(path),)
        found.append(next((str(c) for c in candidates if c.is_file()), None))
    if not paths or any(f is None for f in found):
        raise InputError(_MSG_NO_RESPONSES.format(paths=", ".join(paths) or "none recorded"), path=where)
    names = [f for f in found if f is not None]
    for name, (_, sha) in zip(names, recorded):
        if not isinstance(sha, str) or _recorded_digest(name) != sha:
            raise InputError(_MSG_OTHER_RESPONSES.format(file=name), path=where)
    return names[0] if len(names) == 1 else (names[0], names[1])


#: The fields a ``prompts analyze`` results.json holds (:func:`looks_like_analysis`).
_ANALYSIS_FIELDS = ("method", "groups", "pairs", "regard", "gaps")
_RESULTS_FILE = "results.json"


def results_of(path: Path) -> dict[str, Any] | None:
    """``results.json`` of a folder as a dict, or None when there is none or it is no JSON object."""
    try:
        data = read_json_file(path / _RESULTS_FILE)
    except InputError:  # missing, too large, not JSON, too deep
        return None
    return data if isinstance(data, dict) else None


def looks_like_analysis(data: Mapping[str, Any]) -> bool:
    """Whether a ``results.json`` dict has the shape of a ``fairtalk prompts analyze`` result."""
    return all(name in data for name in _ANALYSIS_FIELDS) and str(data["method"]).startswith("prompts")


def is_prompt_analysis(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an output folder of ``fairtalk prompts analyze -o`` (by its ``results.json``'s shape).

    Examples
    --------
    >>> is_prompt_analysis("no/such/folder")
    False
    """
    folder = Path(path)
    data = results_of(folder) if folder.is_dir() else None
    return data is not None and looks_like_analysis(data)


def read_run(path: str | os.PathLike[str]) -> RunInput:
    """The axes of an audit's or a score's output folder, each with its result and responses.

    Raises
    ------
    InputError
        Not such a folder (a file, a prompts analysis, a comparison), an unreadable ``run.json``/``results.json`` (too large, not JSON, of another
        ``schema_version``, a field of the wrong shape: see :func:`fairtalk.results.read_result_file`),
        or responses that are not there.
    """
    folder = Path(path_argument(path, "compare_runs: baseline and candidate", what="run folders (a str or os.PathLike)"))
    if not folder.is_dir():
        raise InputError(_MSG_A_FILE if folder.exists() else _MSG_NO_FOLDER, path=str(folder))
    if is_prompt_analysis(folder):
        raise InputError(_MSG_PROMPTS, path=str(folder))
    if (folder / RUN_FILE).is_file():
        run = read_result_file(folder / RUN_FILE, "run")
        axes: dict[str, AxisInput] = {}
        read: dict[str, tuple[AuditResult, str | tuple[str, str]]] = {}
        for axis, entry in run["axes"].items():
            name = str(entry.get("folder") or axis)
            if not name or name in (".", "..") or any(c in name for c in "/\\\0"):  # never a folder outside the run's
                raise InputError(
                    _MSG_FOLDER_NAME.format(axis=repr(axis[:80])[1:-1], folder=name[:120]), path=str(folder / RUN_FILE)
                )
            sub = folder / name
            for name in (RESULTS_FILE, RESPONSES_FILE):
                if not (sub / name).is_file():
                    raise InputError(_MSG_AXIS_FOLDER.format(axis=axis, folder=sub.name, name=name), path=str(folder))
            result = _result(sub / RESULTS_FILE)
            axes[str(axis)] = AxisInput(result, read_responses(sub / RESPONSES_FILE, drop_empty=_drop_empty(result)))
            read[str(axis)] = (result, str(sub / RESPONSES_FILE))
        model, run_id, settings, target = run.get("model"), run.get("run_id"), run.get("settings"), run.get("model_target")
        return RunInput(
            str(folder),
            None if model is None else str(model),
            axes,
            run_id=str(run_id) if run_id else None,
            sha256=_sha256(folder / RUN_FILE),
            settings=settings if isinstance(settings, Mapping) else None,
            model_target=target if isinstance(target, str) and target else None,
            responses_read=read,
        )
    if (folder / RESULTS_FILE).is_file():
        result = _score_result(folder / RESULTS_FILE)
        sources = _score_sources(folder, result)
        responses = read_responses(sources, drop_empty=_drop_empty(result))
        return RunInput(
            str(folder),
            None,
            {result.axis: AxisInput(result, responses)},
            sha256=_sha256(folder / RESULTS_FILE),
            responses_read={result.axis: (result, sources)},
        )
    raise InputError(_MSG_NOT_A_RUN, path=str(folder))
