"""Where a result came from, typed: versions, hashes, settings and seeds (``results.json``'s ``manifest``).

:class:`Provenance` is what an :class:`~fairtalk.results.AuditResult` records so that it can be
traced and reproduced. Its sections are typed records of their own:

- :class:`LexiconProvenance`: the word list swapped with (a custom one with its copy);
- :class:`MeasureProvenance`: each measure run (name, keys, kind, version, config);
- :class:`ScoringSettings`: the measure settings (``options``), from which a comparison rebuilds the measures;
- :class:`InputProvenance`: what was read (each :class:`SourceRecord` and the reader's counts);
- :class:`ScoringEngine`: where the responses were scored (here, or on Ray);
- :class:`GoldProvenance`: the human labels that corrected the gaps;
- :class:`TruncationProvenance`: the answers cut off at the token limit;
- :class:`AuditProvenance`: the audit that generated the responses, its
  :class:`ServedProvenance` when a server named the model that answered, and its
  :class:`SequentialProvenance` when it ran ``--until-decided``.

Each record is read and written by :mod:`fairtalk._codec` as its fields declare: ``to_dict()``
writes the keys of the file as fairtalk always wrote them (a field that is None is left out
where it is declared ``OMIT_DEFAULT``, else written as null, unless the file it was read from
lacked it), and ``from_dict()`` reads them back. A key a record does not name (a hand-added
note, or a key a later or earlier fairtalk wrote) is kept in the record's ``extra`` mapping
(``REST``) and written back at its place (after the named ones; before ``sequential`` in the
``audit`` section): nothing is lost on a round trip.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from fairtalk._codec import ABSENT, OMIT_DEFAULT, REST, Codec, omit_default
from fairtalk._jsonl import jsonable

__all__ = [
    "AuditProvenance",
    "GoldProvenance",
    "InputProvenance",
    "LexiconProvenance",
    "MeasureProvenance",
    "Provenance",
    "ScoringEngine",
    "ScoringSettings",
    "SequentialProvenance",
    "ServedProvenance",
    "SourceRecord",
    "TruncationProvenance",
    "is_requested_model",
]


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


def _frozen(value: Any) -> Any:
    """A JSON value as a record holds it: objects as read-only mappings, lists as tuples (recursively)."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _optional() -> Any:
    """A field written only when set (None: left out of the file)."""
    return field(default=None, metadata=OMIT_DEFAULT)


def _rest() -> Any:
    """The keys a section does not name, kept as they were read and written back at this place."""
    return field(default_factory=_empty, metadata=REST)


@dataclass(frozen=True, slots=True)
class _Section(Codec):
    """A typed section of the manifest: its named fields in order, then ``extra`` (the keys it does not name).

    A field declared ``_optional()`` is written only when set (the others are written as null when
    None, as fairtalk writes them). ``_absent`` holds the fields a file read by ``from_dict()``
    lacked, so that they stay absent when written back (it takes no part in equality). Values
    are held as JSON holds them (NumPy scalars as Python numbers, non-finite floats as None,
    objects and lists read-only), so ``to_dict()`` is the file's content as it was always written.
    """

    _absent: frozenset[str] = field(default=frozenset(), repr=False, compare=False, kw_only=True, metadata=ABSENT)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None and f.name != "_absent" and not _is_section(value):
                object.__setattr__(self, f.name, _frozen(jsonable(value)))


def _is_section(value: Any) -> bool:
    return isinstance(value, _Section) or (isinstance(value, tuple) and any(isinstance(v, _Section) for v in value))


@dataclass(frozen=True, slots=True)
class LexiconProvenance(_Section):
    """The word list the audit swapped with: a built-in one by name, a user's (variant ``custom``) with its copy.

    A reader never opens ``source``: a custom lexicon is rebuilt from ``text`` (checked against
    ``text_sha256``; see :func:`fairtalk.lexicons.recorded_lexicon`).
    """

    axis: str | None = None
    groups: tuple[str, ...] | None = None
    variant: str | None = None
    source: str | None = None
    sha256: str | None = None
    n_pairs: int | None = None
    attributes: tuple[str, ...] | None = None
    text: str | None = _optional()
    text_sha256: str | None = _optional()
    extra: Mapping[str, Any] = _rest()


@dataclass(frozen=True, slots=True)
class MeasureProvenance(_Section):
    """A measure the result ran: its name, result keys, kind, version and the settings it was built with."""

    name: str | None = None
    keys: tuple[str, ...] | None = None
    kind: str | None = None
    version: str | None = None
    config: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = _rest()


@dataclass(frozen=True, slots=True)
class ScoringSettings(_Section):
    """The measure settings (``options``): what a comparison rebuilds the baseline's measures with."""

    distinct: str | None = None
    offense: str | None = None
    offense_threshold: float | None = None
    sentiment_threshold: float | None = None
    judge_rubric: str | None = None
    judge_scale: tuple[float, float] | None = None
    extra: Mapping[str, Any] = _rest()


@dataclass(frozen=True, slots=True)
class SourceRecord(_Section):
    """A responses file the result was scored from: its path as given and the sha256 of its bytes."""

    path: str | None = None
    sha256: str | None = None
    extra: Mapping[str, Any] = _rest()


@dataclass(frozen=True, slots=True)
class InputProvenance(_Section):
    """What was read: the responses files (none when the responses came from memory) and the reader's counts."""

    sources: tuple[SourceRecord, ...] | None = None
    summary: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = _rest()


def _not_ray(engine: ScoringEngine) -> bool:
    return engine.name != "ray"


#: Field metadata of Ray's settings: left out when None, unless the engine is Ray.
_RAY_ONLY = omit_default(_not_ray)


@dataclass(frozen=True, slots=True)
class ScoringEngine(_Section):
    """Where the responses were scored: ``local`` (this process) or ``ray`` (with its tasks, batches and batch size)."""

    name: str | None = None
    distinct_responses: int | None = None
    tasks_at_once: int | None = field(default=None, metadata=_RAY_ONLY)
    batches: int | None = field(default=None, metadata=_RAY_ONLY)
    score_batch: int | None = field(default=None, metadata=_RAY_ONLY)
    extra: Mapping[str, Any] = _rest()


@dataclass(frozen=True, slots=True)
class GoldProvenance(_Section):
    """The human labels that corrected the gaps: their file, the pairs labelled and the keys corrected."""

    path: str | None = None
    n_labelled_pairs: int | None = None
    keys: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = _rest()


@dataclass(frozen=True, slots=True)
class TruncationProvenance(_Section):
    """The answers cut off at the token limit (when the model reported why each answer ended).

    ``n_cut`` and ``share_cut`` are per side (``a``, ``b``); ``warned`` says whether the share
    passed ``warn_share`` (without ``exclude_truncated``), ``n_pairs_left_out`` how many pairs
    ``exclude_truncated`` left out.
    """

    reasons_reported: bool | None = None
    exclude_truncated: bool | None = None
    n_pairs: int | None = _optional()
    n_cut: Mapping[str, int] | None = _optional()
    share_cut: Mapping[str, float | None] | None = _optional()
    warn_share: float | None = _optional()
    warned: bool | None = _optional()
    n_pairs_left_out: int | None = _optional()
    extra: Mapping[str, Any] = _rest()


@dataclass(frozen=True, slots=True)
class SequentialProvenance(_Section):
    """How an ``--until-decided`` axis' looks went: the design, the looks run, the last look's levels, why it stopped.

    ``undecided`` names the primary keys that held the run back to its budget, and ``undecided_why``
    says why each did (a key answered identically on every pair has no difference to test, and
    waits on the identical-answers bound).
    """

    design: str | None = None
    spending: str | None = None
    correction: str | None = None
    max_pairs: int | None = None
    n_pairs_available: int | None = None
    planned_looks: tuple[int, ...] | None = None
    fractions: tuple[float, ...] | None = None
    looks: int | None = None
    n_pairs: int | None = None
    z_boundaries: tuple[float | None, ...] | None = None
    nominal_alpha: float | None = None
    nominal_alpha_equivalence: float | None = None
    stopped: str | None = None
    decided_at: Mapping[str, int] | None = None
    undecided: tuple[str, ...] | None = None
    undecided_why: Mapping[str, str] | None = None
    extra: Mapping[str, Any] = _rest()


#: A version after a served model's name: ``-`` parts, each a number (``0613``, ``001``, a date's
#: ``2024-08-06``, ``20240806``) or ``v`` and a number (``v2``, ``v0.2``).
_VERSION_SUFFIX = re.compile(r"(?:-(?:\d+|v\d+(?:\.\d+)*))+")


def is_requested_model(requested: str, served: str) -> bool:
    """Whether the model a server says answered is the one asked for: the same name, or it with a version after a ``-``.

    A version is one or more ``-`` parts, each a number or ``v`` and a number: ``gpt-4o`` served as
    ``gpt-4o-2024-08-06`` (a dated snapshot of the alias), ``gpt-4`` as ``gpt-4-0613``,
    ``gemini-1.5-pro`` as ``gemini-1.5-pro-002``, ``…-instruct`` as ``…-instruct-v0.2``. Any other
    suffix names another model (``gpt-4o-mini``, ``llama-3.1-8b-instruct``, ``gpt-4-32k``,
    ``gpt-4-1106-preview``). A name asked for that ends in ``-latest`` (``mistral-large-latest``)
    stands for its name before that with any version (``mistral-large-2411``).

    Examples
    --------
    >>> is_requested_model("gpt-4o", "gpt-4o-2024-08-06"), is_requested_model("llama-3.1-8b", "qwen2.5-0.5b")
    (True, False)
    >>> is_requested_model("gpt-4o", "gpt-4o-mini"), is_requested_model("mistral-large-latest", "mistral-large-2411")
    (False, True)
    """
    if served == requested:
        return True
    base = requested.removesuffix("-latest")
    return served.startswith(base) and _VERSION_SUFFIX.fullmatch(served, len(base)) is not None


@dataclass(frozen=True, slots=True)
class ServedProvenance(_Section):
    """The models a server said answered an axis' responses (each reply's ``model``: ``openai:``), counted.

    ``requested`` is the model name asked for; ``counts`` counts the answers (pair sides, those
    the run store served included: it keeps each answer's name) by the name the server gave, and
    ``n_unknown`` those without one (the server named none, or the store holds them from a
    fairtalk that did not keep the name).

    Examples
    --------
    >>> ServedProvenance("llama-3.1-8b", {"qwen2.5-0.5b": 18}, 2).others()
    {'qwen2.5-0.5b': 18}
    """

    requested: str | None = None
    counts: Mapping[str, int] | None = None
    n_unknown: int | None = None
    extra: Mapping[str, Any] = _rest()

    def others(self) -> dict[str, int]:
        """The served names that are not the model asked for (:func:`is_requested_model`), with their counts."""
        requested = self.requested
        return {
            name: n
            for name, n in (self.counts or {}).items()
            if requested is not None and not is_requested_model(requested, name)
        }


@dataclass(frozen=True, slots=True)
class AuditProvenance(_Section):
    """The audit that generated the responses: run id, corpus, model fingerprint, decoding, seed, coverage.

    ``served`` is what the server said of the model that answered (None: a model that does not say).
    ``extra`` holds what the caller added (``audit(extra_manifest=...)``: a paper reproduction's
    checkpoint, a planted rate) and is written before ``sequential``.
    """

    run_id: str | None = None
    corpus: str | None = None
    split: str | None = None
    model: str | None = None
    decoding: Mapping[str, Any] | None = None
    seed: int | None = None
    n_pairs_requested: int | None = None
    mixed: str | None = None
    balance: bool | None = None
    coverage: Mapping[str, Any] | None = None
    served: ServedProvenance | None = _optional()
    extra: Mapping[str, Any] = _rest()  # written before ``sequential``
    sequential: SequentialProvenance | None = _optional()


@dataclass(frozen=True, slots=True)
class Provenance(_Section):
    """Versions, hashes, thresholds and seeds: what it takes to trace and reproduce a result.

    Every field is None when the result does not record it (a result built in Python, or a file
    written by an older fairtalk); ``to_dict()`` leaves such a field out. ``extra`` keeps the keys
    this record does not name, in their order, after the named ones.

    Examples
    --------
    >>> p = Provenance(seed=0, scoring_engine=ScoringEngine(name="local", distinct_responses=12))
    >>> p.to_dict()
    {'seed': 0, 'scoring_engine': {'name': 'local', 'distinct_responses': 12}}
    >>> Provenance.from_dict(p.to_dict()) == p
    True
    >>> Provenance.from_dict({"seed": 1, "note": "by hand"}).extra["note"]
    'by hand'
    """

    fairtalk_version: str | None = _optional()
    python: str | None = _optional()
    libraries: Mapping[str, str] | None = _optional()
    lexicon: LexiconProvenance | None = _optional()
    measures: tuple[MeasureProvenance, ...] | None = _optional()
    options: ScoringSettings | None = _optional()
    seed: int | None = _optional()
    alpha: float | None = _optional()
    correction: str | None = _optional()
    n_resamples: int | None = _optional()
    n_permutations: int | None = _optional()
    mask_groups: bool | None = _optional()
    drop_empty: bool | None = _optional()
    exclude_truncated: bool | None = _optional()
    binary_test: str | None = _optional()
    count_test: str | None = _optional()
    clustered: bool | None = _optional()
    power: float | None = _optional()
    margins: Mapping[str, float] | None = _optional()
    primary: tuple[str, ...] | None = _optional()
    methods: Mapping[str, str] | None = _optional()
    input: InputProvenance | None = _optional()
    scoring_engine: ScoringEngine | None = _optional()
    gold: GoldProvenance | None = _optional()
    truncation: TruncationProvenance | None = _optional()
    audit: AuditProvenance | None = _optional()
    extra: Mapping[str, Any] = _rest()

    @property
    def measure_names(self) -> tuple[str, ...]:
        """The names of the measures the result ran, in order (empty when it does not record them)."""
        return tuple(m.name for m in self.measures or () if m.name is not None)

    @property
    def sequential(self) -> SequentialProvenance | None:
        """How an ``--until-decided`` audit's looks went (None for a fixed number of pairs, or no audit)."""
        return None if self.audit is None else self.audit.sequential
