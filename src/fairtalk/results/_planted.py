"""A bias of known size, recovered: planted models (gap vs truth) and a planted corpus (baseline, CDA, WER).

Gaps here are written ``B - A`` (group B's rate minus group A's), the direction the bias was
planted in, so a recovered gap is positive; the audit's own intervals bound ``A - B`` and are
negated. :class:`PlantedGap` is one planted model and measure; :class:`DebiasedGap` one model
(a Seq2Seq generator or a retrieval ranker) trained on the planted corpus, with its change against
the baseline of its own architecture.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Self

from fairtalk.results._debias import DebiasComparison
from fairtalk.results._model_comparison import Change
from fairtalk.results._protocol import Result, Verdict

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["ARCHITECTURES", "DebiasedGap", "PlantedGap", "PlantedRecovery", "RankerPool"]

#: The architectures trained on the planted corpus, in the table's order.
ARCHITECTURES = ("seq2seq", "retrieval")
_LABELS = {"baseline": "baseline", "cda": "CDA", "wer": "WER"}

_Bounds = tuple[float | None, float | None]


def _bounds(value: Any) -> _Bounds:
    lo, hi = value if value is not None else (None, None)
    return (lo, hi)


@dataclass(frozen=True, slots=True)
class PlantedGap:
    """One planted model, one measure: the planted rate, the true gap, and what the audit recovered.

    - ``rate``: the probability of a planted reply on a group-B context;
    - ``base_share``: the share of the group-A answers the measure flags (the base model's own rate);
    - ``true_gap``: ``rate * (1 - base_share)`` (a planted reply replaces an answer that may
      already have been flagged; the planted replies are all flagged);
    - ``n_planted``: pairs whose group-B side got a planted reply;
    - ``gap``, ``ci``: the audit's ``B - A`` and its interval; ``covered``: the interval holds ``true_gap``;
    - ``p_adjusted``, ``verdict``, ``mde``: the audit's test, verdict and minimum detectable effect;
    - ``n_unmapped``: pairs whose group-B side, swapped back by the lexicon, is not their group-A
      side (the planted model maps each pair's group-B side to its own group-A side, so these too
      get the group-A answer; the count says how often the swap alone would not have round-tripped).
    """

    rate: float
    key: str
    n_pairs: int
    base_share: float
    true_gap: float
    n_planted: int
    gap: float | None
    ci: _Bounds
    covered: bool | None
    p_adjusted: float | None
    verdict: Verdict
    mde: float | None
    n_unmapped: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the verdict as its string)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["ci"], out["verdict"] = list(self.ci), self.verdict.value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The row of a :meth:`to_dict` dict."""
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["ci"], values["verdict"] = _bounds(data.get("ci")), Verdict(data["verdict"])
        return cls(**values)


@dataclass(frozen=True, slots=True)
class DebiasedGap:
    """One model trained on the planted corpus, one measure: its rates ``a``, ``b``, gap (``B - A``) and change from the baseline.

    ``model`` is the debiasing (``baseline``, ``cda``, ``wer``) and ``architecture`` the model kind
    (``seq2seq`` or ``retrieval``; files written before retrieval rows existed read as ``seq2seq``).
    ``change`` is the difference in differences (this model's ``B - A`` minus the baseline's of the
    same architecture), ``change_ci`` its interval and ``change_verdict`` the comparison's
    :class:`Change` (None for a baseline).
    """

    model: str
    key: str
    a: float
    b: float
    gap: float
    ci: _Bounds
    verdict: Verdict
    p_adjusted: float | None
    change: float | None = None
    change_ci: _Bounds = (None, None)
    p_change: float | None = None
    change_verdict: Change | None = None
    architecture: str = "seq2seq"

    @property
    def label(self) -> str:
        """The row's name in tables and the figure: ``seq2seq baseline``, ``retrieval CDA``."""
        return f"{self.architecture} {_LABELS.get(self.model, self.model)}"

    @property
    def name(self) -> str:
        """The row's key in :attr:`PlantedRecovery.verdicts`: the model for Seq2Seq (``cda``), else ``retrieval-cda``."""
        return self.model if self.architecture == "seq2seq" else f"{self.architecture}-{self.model}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (verdicts as their strings)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["ci"], out["change_ci"], out["verdict"] = list(self.ci), list(self.change_ci), self.verdict.value
        out["change_verdict"] = None if self.change_verdict is None else self.change_verdict.value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The row of a :meth:`to_dict` dict."""
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["ci"], values["change_ci"] = _bounds(data.get("ci")), _bounds(data.get("change_ci"))
        values["verdict"] = Verdict(data["verdict"])
        change = data.get("change_verdict")
        values["change_verdict"] = None if change is None else Change(change)
        return cls(**values)


@dataclass(frozen=True, slots=True)
class RankerPool:
    """A retrieval ranker trained on the planted corpus: the planted replies in its pool, and how often it chose one.

    A ranker answers only from its candidate pool (the distinct training responses), so
    ``n_held`` of the ``n_replies`` planted replies are among its ``n_candidates``;
    ``n_chosen_a`` and ``n_chosen_b`` count the audited pairs whose group-A and group-B sides it
    answered with one of them.
    """

    n_held: int
    n_replies: int
    n_candidates: int
    n_chosen_a: int
    n_chosen_b: int

    def to_dict(self) -> dict[str, int]:
        """A JSON-ready dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The pool of a :meth:`to_dict` dict."""
        return cls(**{f.name: int(data[f.name]) for f in fields(cls)})


@dataclass(frozen=True, slots=True)
class PlantedRecovery(Result[tuple[str, str]]):
    """``reproduce planted``: planted models' gaps against the truth, and a planted corpus debiased. Built once.

    ``planted`` holds a :class:`PlantedGap` per (rate, measure); ``corpus_rate`` is the planted
    corpus' replacement probability and ``corpus`` the counts of its planting; ``debiased`` holds a
    :class:`DebiasedGap` per (model, measure), and ``debias`` the full comparison (None when the
    corpus part was skipped); ``debias_retrieval`` is the retrieval rankers' comparison (None when
    not trained) and ``pools`` maps each ranker (``baseline``, ``cda``, ``wer``) to its :class:`RankerPool`
    (the planted replies among its candidates, and how often it chose one). Keys are ``("planted-<rate>", measure)``
    and ``(DebiasedGap.name, measure)``: ``("cda", ...)`` for Seq2Seq, ``("retrieval-cda", ...)`` for rankers.
    """

    axis: str
    groups: tuple[str, str]
    base_model: str
    n_pairs: int
    seed: int
    mode: str
    planted: tuple[PlantedGap, ...]
    corpus_rate: float | None = None
    corpus: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    debiased: tuple[DebiasedGap, ...] = ()
    debias: DebiasComparison | None = None
    debias_retrieval: DebiasComparison | None = None
    pools: Mapping[str, RankerPool] = field(default_factory=lambda: MappingProxyType({}))
    timings: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def verdicts(self) -> Mapping[tuple[str, str], Verdict]:
        """Each planted model's and each trained model's verdict per measure."""
        out = {(f"planted-{row.rate:g}", row.key): row.verdict for row in self.planted}
        out.update({(row.name, row.key): row.verdict for row in self.debiased})
        return MappingProxyType(out)

    @property
    def all_recovered(self) -> bool:
        """Every planted gap lies in its interval (rows without an interval count as not recovered)."""
        return all(row.covered is True for row in self.planted)

    def to_frame(self) -> pd.DataFrame:
        """One row per planted model and measure, then one per trained model and measure (``part`` tells which)."""
        import pandas as pd

        rows = [{"part": "planted", **row.to_dict()} for row in self.planted]
        rows += [{"part": "debias", **row.to_dict()} for row in self.debiased]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """The ``results.json`` of ``reproduce planted``."""
        return {
            "axis": self.axis,
            "groups": list(self.groups),
            "base_model": self.base_model,
            "n_pairs": self.n_pairs,
            "seed": self.seed,
            "mode": self.mode,
            "planted": [row.to_dict() for row in self.planted],
            "corpus_rate": self.corpus_rate,
            "corpus": dict(self.corpus),
            "debiased": [row.to_dict() for row in self.debiased],
            "debias": None if self.debias is None else self.debias.to_dict(),
            "debias_retrieval": None if self.debias_retrieval is None else self.debias_retrieval.to_dict(),
            "pools": {name: pool.to_dict() for name, pool in self.pools.items()},
            "timings": dict(self.timings),
            "files": dict(self.files),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The result of its ``results.json`` dict (the inverse of :meth:`to_dict`)."""
        debias, retrieval = data.get("debias"), data.get("debias_retrieval")
        pools = {name: RankerPool.from_dict(pool) for name, pool in (data.get("pools") or {}).items()}
        return cls(
            axis=data["axis"],
            groups=tuple(data["groups"]),
            base_model=data["base_model"],
            n_pairs=data["n_pairs"],
            seed=data["seed"],
            mode=data["mode"],
            planted=tuple(PlantedGap.from_dict(row) for row in data["planted"]),
            corpus_rate=data.get("corpus_rate"),
            corpus=MappingProxyType(dict(data.get("corpus") or {})),
            debiased=tuple(DebiasedGap.from_dict(row) for row in data.get("debiased") or ()),
            debias=None if debias is None else DebiasComparison.from_dict(debias),
            debias_retrieval=None if retrieval is None else DebiasComparison.from_dict(retrieval),
            pools=MappingProxyType(pools),
            timings=MappingProxyType(dict(data.get("timings") or {})),
            files=MappingProxyType(dict(data.get("files") or {})),
        )
