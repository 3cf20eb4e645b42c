"""The result of the counterfactual similarity test: whether swapping the group changes answers more than asking again does.

How the baseline was had depends on the decoding (``SimilarityResult.baseline_kind``):

- ``"measured"``: side A's context asked twice more per pair; under sampling, the model's own
  sampling noise (and the re-asks are checked for a model or server that ignores sampling or
  the seed: ``reask_check["kind"] == "sampling"``);
- ``"zero"``: greedy decoding and a model found deterministic on a sample of re-asks
  (``reask_check["kind"] == "determinism"``): asked again, it gives the same answer, so the
  baseline is zero and the test is one against zero change.

Anything the reader must know before trusting the rows (a model not deterministic under
greedy decoding, sampling that seems ignored) is in ``warnings``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from fairtalk._codec import Codec
from fairtalk.results._protocol import Result, Verdict
from fairtalk.results._schema import versioned

if TYPE_CHECKING:  # pandas is imported lazily by to_frame()
    import pandas as pd

__all__ = ["BASELINE_KINDS", "SimilarityResult", "SimilarityRow"]

#: How the baseline was had: asked (``measured``), or known to be zero (a deterministic model under greedy decoding).
BASELINE_KINDS = ("measured", "zero")


@dataclass(frozen=True, slots=True)
class SimilarityRow(Codec):
    """One similarity method: mean divergence (1 - similarity) of counterfactual and baseline answer pairs.

    ``difference`` is counterfactual - baseline (positive: the group swap changes answers more
    than asking again does), with its 95% interval and the paired test's p over pairs (or
    dialogues), corrected over the methods (Holm) into ``p_adjusted``. A difference needs both
    the test (``p_adjusted < alpha``) and the interval (0 outside it, when there is one): when
    only one of them says different, ``verdict`` is :attr:`Verdict.DISAGREE` and ``note``
    says which, and the row does not count as a difference (:meth:`detected`). A string
    ``verdict`` is read as its :class:`Verdict`.
    """

    method: str
    n_pairs: int
    counterfactual: float
    baseline: float
    difference: float
    ci95: tuple[float | None, float | None]
    test: str
    p: float | None
    p_adjusted: float | None
    verdict: Verdict
    note: str | None = None

    #: Its JSON keys in order (fields and derived properties).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "method",
        "n_pairs",
        "counterfactual",
        "baseline",
        "difference",
        "ci95",
        "test",
        "p",
        "p_adjusted",
        "detected",
        "verdict",
        "note",
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))  # ValueError for a string that is no verdict

    def detected(self) -> bool:
        """Whether the row shows a difference from the baseline (the test and its interval agree)."""
        return self.verdict.shows_difference


@dataclass(frozen=True, slots=True)
class SimilarityResult(Codec, Result[str]):
    """Counterfactual answer pairs against a no-effect baseline, per similarity method.

    The baseline answers the *same* context twice, with the seeds a counterfactual pair's two
    sides get: what asking again alone changes. A model that ignores the group has
    ``counterfactual == baseline`` in expectation, however much it samples. Under greedy
    decoding a model that answers a sample of re-asks identically has a baseline of zero
    (``baseline_kind == "zero"``): the test is then one against zero change.

    ``sampled`` says whether sampling was asked for; ``reask_check`` holds the counts of the
    re-ask check (determinism under greedy decoding, sampling that is not ignored under
    sampling); ``warnings`` what that check found wrong, in words.

    Its keys are the similarity methods: ``verdicts`` maps each to its row's :class:`Verdict`, and
    ``detected()`` names those that differ from the baseline (test and interval agree).
    """

    axis: str
    model: str
    alpha: float
    seed: int
    n_pairs: int
    n_clusters: int | None
    rows: tuple[SimilarityRow, ...]
    summary: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    sampled: bool = True
    baseline_kind: str = "measured"
    reask_check: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    warnings: tuple[str, ...] = ()

    #: Its JSON keys in order (fields and derived properties).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "axis",
        "model",
        "alpha",
        "seed",
        "n_pairs",
        "n_clusters",
        "sampled",
        "baseline_kind",
        "reask_check",
        "warnings",
        "rows",
        "summary",
    )

    @property
    def verdicts(self) -> Mapping[str, Verdict]:
        """Method -> its row's verdict, in the rows' order."""
        return MappingProxyType({row.method: row.verdict for row in self.rows})

    def to_json(self) -> str:
        """``to_dict()`` as strict JSON, indented, non-ASCII escaped (``similarity.json`` as it has always been written)."""
        return json.dumps(versioned(self.to_dict()), indent=2, allow_nan=False) + "\n"

    def to_frame(self) -> pd.DataFrame:
        """One row per method (pandas DataFrame indexed by ``method``)."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows]).set_index("method")
