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
- :class:`AuditProvenance`: the audit that generated the responses, and its
  :class:`SequentialProvenance` when it ran ``--until-decided``.

Each record's ``to_dict()`` writes the keys of the file as fairtalk always wrote them (a field
that is None is left out where the writer leaves it out, else written as null), and
``from_dict()`` reads them back. A key a record does not name (a hand-added note, or a key a
later or earlier fairtalk wrote) is kept in the record's ``extra`` mapping and written back
after the named ones: nothing is lost on a round trip.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Self

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
    "SourceRecord",
    "TruncationProvenance",
]

_MSG_NOT_OBJECT = "manifest section {field} must be an object, got {got}"


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


def _frozen(value: Any) -> Any:
    """A JSON value as a record holds it: objects as read-only mappings, lists as tuples (recursively)."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _plain(value: Any) -> Any:
    """A record's value as JSON: sections through their ``to_dict()``, mappings as dicts, tuples as lists."""
    if isinstance(value, _Section):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return jsonable(value)


def _mapping(value: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        got = "null" if value is None else type(value).__name__
        raise TypeError(_MSG_NOT_OBJECT.format(field=name, got=got))  # read_json() names the file
    return value


@dataclass(frozen=True, slots=True)
class _Section:
    """A typed section of the manifest: its named fields in order, then ``extra`` (the keys it does not name).

    ``_OPTIONAL`` names the fields written only when set (the others are written as null when
    None, as fairtalk writes them); ``_READERS`` how a field is read from JSON (default: objects
    and lists frozen). ``_absent`` holds the fields a file read by :meth:`from_dict` lacked, so
    that they stay absent when written back (it takes no part in equality).
    """

    _KEY: ClassVar[str] = "manifest"
    _OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    _READERS: ClassVar[Mapping[str, Callable[[Any], Any]]] = MappingProxyType({})

    _absent: frozenset[str] = field(default=frozenset(), repr=False, compare=False, kw_only=True)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (dict, list, MappingProxyType)):
                object.__setattr__(self, f.name, _frozen(value))

    def _written(self, name: str, value: Any) -> bool:
        if value is not None:
            return True
        return name not in self._OPTIONAL and name not in self._absent

    def to_dict(self) -> dict[str, Any]:
        """The section as ``results.json`` holds it."""
        out: dict[str, Any] = {}
        for name in _named(type(self)):
            value = getattr(self, name)
            if self._written(name, value):
                out[name] = _plain(value)
        out.update(_plain(getattr(self, "extra", {})))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Read the section back from its JSON object (keys it does not name go to ``extra``)."""
        data = _mapping(data, cls._KEY)
        names = _named(cls)
        known: dict[str, Any] = {key: cls._READERS.get(key, _frozen)(value) for key, value in data.items() if key in names}
        known["extra"] = MappingProxyType({key: _frozen(value) for key, value in data.items() if key not in names})
        return cls(**known, _absent=frozenset(name for name in names if name not in data))


def _named(kind: type[_Section]) -> tuple[str, ...]:
    """The fields a section names in its JSON object, in order (not ``extra``, not ``_absent``)."""
    return tuple(f.name for f in dataclasses.fields(kind) if f.name not in ("extra", "_absent"))


def _section_reader(kind: type[_Section]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else kind.from_dict(value)


def _sections_reader(kind: type[_Section]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else tuple(kind.from_dict(v) for v in value)


@dataclass(frozen=True, slots=True)
class LexiconProvenance(_Section):
    """The word list the audit swapped with: a built-in one by name, a user's (variant ``custom``) with its copy.

    A reader never opens ``source``: a custom lexicon is rebuilt from ``text`` (checked against
    ``text_sha256``; see :func:`fairtalk.lexicons.recorded_lexicon`).
    """

    _KEY: ClassVar[str] = "manifest.lexicon"

    _OPTIONAL: ClassVar[frozenset[str]] = frozenset({"text", "text_sha256"})

    axis: str | None = None
    groups: tuple[str, ...] | None = None
    variant: str | None = None
    source: str | None = None
    sha256: str | None = None
    n_pairs: int | None = None
    attributes: tuple[str, ...] | None = None
    text: str | None = None
    text_sha256: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class MeasureProvenance(_Section):
    """A measure the result ran: its name, result keys, kind, version and the settings it was built with."""

    _KEY: ClassVar[str] = "manifest.measures[]"

    name: str | None = None
    keys: tuple[str, ...] | None = None
    kind: str | None = None
    version: str | None = None
    config: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class ScoringSettings(_Section):
    """The measure settings (``options``): what a comparison rebuilds the baseline's measures with."""

    _KEY: ClassVar[str] = "manifest.options"

    distinct: str | None = None
    offense: str | None = None
    offense_threshold: float | None = None
    sentiment_threshold: float | None = None
    judge_rubric: str | None = None
    judge_scale: tuple[float, float] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class SourceRecord(_Section):
    """A responses file the result was scored from: its path as given and the sha256 of its bytes."""

    _KEY: ClassVar[str] = "manifest.input.sources[]"

    path: str | None = None
    sha256: str | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class InputProvenance(_Section):
    """What was read: the responses files (none when the responses came from memory) and the reader's counts."""

    _KEY: ClassVar[str] = "manifest.input"

    _READERS: ClassVar[Mapping[str, Callable[[Any], Any]]] = MappingProxyType({"sources": _sections_reader(SourceRecord)})

    sources: tuple[SourceRecord, ...] | None = None
    summary: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class ScoringEngine(_Section):
    """Where the responses were scored: ``local`` (this process) or ``ray`` (with its tasks, batches and batch size)."""

    _KEY: ClassVar[str] = "manifest.scoring_engine"

    _RAY_ONLY: ClassVar[frozenset[str]] = frozenset({"tasks_at_once", "batches", "score_batch"})

    name: str | None = None
    distinct_responses: int | None = None
    tasks_at_once: int | None = None
    batches: int | None = None
    score_batch: int | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    def _written(self, name: str, value: Any) -> bool:
        if name in self._RAY_ONLY and value is None and self.name != "ray":
            return False
        return _Section._written(self, name, value)


@dataclass(frozen=True, slots=True)
class GoldProvenance(_Section):
    """The human labels that corrected the gaps: their file, the pairs labelled and the keys corrected."""

    _KEY: ClassVar[str] = "manifest.gold"

    path: str | None = None
    n_labelled_pairs: int | None = None
    keys: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class TruncationProvenance(_Section):
    """The answers cut off at the token limit (when the model reported why each answer ended).

    ``n_cut`` and ``share_cut`` are per side (``a``, ``b``); ``warned`` says whether the share
    passed ``warn_share`` (without ``exclude_truncated``), ``n_pairs_left_out`` how many pairs
    ``exclude_truncated`` left out.
    """

    _KEY: ClassVar[str] = "manifest.truncation"

    _OPTIONAL: ClassVar[frozenset[str]] = frozenset({"n_pairs", "n_cut", "share_cut", "warn_share", "warned", "n_pairs_left_out"})

    reasons_reported: bool | None = None
    exclude_truncated: bool | None = None
    n_pairs: int | None = None
    n_cut: Mapping[str, int] | None = None
    share_cut: Mapping[str, float | None] | None = None
    warn_share: float | None = None
    warned: bool | None = None
    n_pairs_left_out: int | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class SequentialProvenance(_Section):
    """How an ``--until-decided`` axis' looks went: the design, the looks run, the last look's levels, why it stopped."""

    _KEY: ClassVar[str] = "manifest.audit.sequential"

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
    extra: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class AuditProvenance(_Section):
    """The audit that generated the responses: run id, corpus, model fingerprint, decoding, seed, coverage.

    ``extra`` holds what the caller added (``audit(extra_manifest=...)``: a paper reproduction's
    checkpoint, a planted rate) and is written before ``sequential``.
    """

    _KEY: ClassVar[str] = "manifest.audit"

    _OPTIONAL: ClassVar[frozenset[str]] = frozenset({"sequential"})
    _READERS: ClassVar[Mapping[str, Callable[[Any], Any]]] = MappingProxyType(
        {"sequential": _section_reader(SequentialProvenance)}
    )

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
    extra: Mapping[str, Any] = field(default_factory=_empty)
    sequential: SequentialProvenance | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``audit`` section: the audit's fields, what the caller added, then ``sequential``."""
        out = _Section.to_dict(dataclasses.replace(self, sequential=None))
        if self.sequential is not None:
            out["sequential"] = self.sequential.to_dict()
        return out


_PROVENANCE_READERS: Mapping[str, Callable[[Any], Any]] = MappingProxyType(
    {
        "lexicon": _section_reader(LexiconProvenance),
        "measures": _sections_reader(MeasureProvenance),
        "options": _section_reader(ScoringSettings),
        "input": _section_reader(InputProvenance),
        "scoring_engine": _section_reader(ScoringEngine),
        "gold": _section_reader(GoldProvenance),
        "truncation": _section_reader(TruncationProvenance),
        "audit": _section_reader(AuditProvenance),
    }
)


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

    _OPTIONAL: ClassVar[frozenset[str]] = frozenset(
        {
            "fairtalk_version",
            "python",
            "libraries",
            "lexicon",
            "measures",
            "options",
            "seed",
            "alpha",
            "correction",
            "n_resamples",
            "n_permutations",
            "mask_groups",
            "drop_empty",
            "exclude_truncated",
            "binary_test",
            "count_test",
            "clustered",
            "power",
            "margins",
            "primary",
            "methods",
            "input",
            "scoring_engine",
            "gold",
            "truncation",
            "audit",
        }
    )
    _READERS: ClassVar[Mapping[str, Callable[[Any], Any]]] = _PROVENANCE_READERS

    fairtalk_version: str | None = None
    python: str | None = None
    libraries: Mapping[str, str] | None = None
    lexicon: LexiconProvenance | None = None
    measures: tuple[MeasureProvenance, ...] | None = None
    options: ScoringSettings | None = None
    seed: int | None = None
    alpha: float | None = None
    correction: str | None = None
    n_resamples: int | None = None
    n_permutations: int | None = None
    mask_groups: bool | None = None
    drop_empty: bool | None = None
    exclude_truncated: bool | None = None
    binary_test: str | None = None
    count_test: str | None = None
    clustered: bool | None = None
    power: float | None = None
    margins: Mapping[str, float] | None = None
    primary: tuple[str, ...] | None = None
    methods: Mapping[str, str] | None = None
    input: InputProvenance | None = None
    scoring_engine: ScoringEngine | None = None
    gold: GoldProvenance | None = None
    truncation: TruncationProvenance | None = None
    audit: AuditProvenance | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty)

    @property
    def measure_names(self) -> tuple[str, ...]:
        """The names of the measures the result ran, in order (empty when it does not record them)."""
        return tuple(m.name for m in self.measures or () if m.name is not None)

    @property
    def sequential(self) -> SequentialProvenance | None:
        """How an ``--until-decided`` audit's looks went (None for a fixed number of pairs, or no audit)."""
        return None if self.audit is None else self.audit.sequential
