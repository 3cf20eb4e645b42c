"""Labelled completions as one record, whichever reader produced them: :class:`PromptData` and its :class:`DataSummary`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # pandas is imported when a frame is summarised, so the results layer loads without it
    import pandas as pd

__all__ = ["DataSummary", "PromptData"]

#: Where labelled completions came from.
Source = Literal["published", "completions", "frame"]
_EMPTY: Mapping[Any, int] = MappingProxyType({})


def _frozen(mapping: Mapping[Any, Any] | None) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, slots=True)
class DataSummary:
    """What a reader found: rows read and kept, rows left out by reason, seeds, groups, structures.

    ``excluded`` maps a reason to the rows left out for it: ``failed`` (the model raised),
    ``empty`` and ``echo`` (bad completions, see :func:`~fairtalk.prompts._completions.bad_completion`)
    and ``misaligned`` (published rows dropped with ``misaligned="drop"``). ``misaligned`` maps
    seed -> rows not starting with their expected prompt (published outputs only).
    ``labelled_with`` names the regard scorer that labelled unlabelled rows, ``relabelled_with``
    the one a second labelling used (both None until :func:`~fairtalk.prompts._labelling.analyze_prompts`).
    ``failed_by_group`` splits ``excluded["failed"]`` by the failed records' group (where they name one).
    ``labels_from`` names who made the labels that came with the data, where the reader knows
    (the published outputs: Sheng et al.'s classifier). ``excluded["duplicate"]`` counts identical
    copies of an earlier completion (same group, template, structure and seed), skipped.
    ``prompts_sha256`` identifies the prompts a completions file completed: the sha256 of its
    distinct (group, template, structure, prompt) records (:func:`~fairtalk.prompts._completions.prompts_digest`);
    None where a record names no prompt text, or for another source. Two analyses of completions
    of different prompts are not compared (:func:`~fairtalk.compare._prompts.compare_prompt_analyses`).
    """

    source: Source
    n_records: int
    n_texts: int
    seeds: tuple[int, ...] = ()
    groups: tuple[str, ...] = ()
    n_structures: int = 0
    n_unlabelled: int = 0
    excluded: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    misaligned: Mapping[int, int] = field(default_factory=lambda: _EMPTY)
    alignment_checked: Literal["all", "original", "none"] = "none"
    prompts_source: str | None = None
    labelled_with: str | None = None
    relabelled_with: str | None = None
    labels_from: str | None = None
    failed_by_group: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    prompts_sha256: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "excluded", _frozen(self.excluded))
        object.__setattr__(self, "failed_by_group", _frozen(self.failed_by_group))
        object.__setattr__(self, "misaligned", _frozen(self.misaligned))

    @property
    def n_excluded(self) -> int:
        """Rows left out, all reasons together."""
        return sum(self.excluded.values())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the ``"import"`` entry of ``results.json`` (its keys follow the source, as before).

        Written here rather than by :class:`fairtalk._codec.Codec`: which keys are written depends on
        ``source`` and on the scorers that labelled, which a declaration of fields cannot say.
        """
        out: dict[str, Any]
        if self.source == "published":
            out = {
                "n_rows": self.n_records,
                "n_kept": self.n_texts,
                "seeds": list(self.seeds),
                "alignment_checked": self.alignment_checked,
                "misaligned_by_seed": {str(k): v for k, v in self.misaligned.items()},
                "misaligned_dropped": self.excluded.get("misaligned", 0),
                "prompts_source": self.prompts_source,
            }
        elif self.source == "completions":
            out = {
                "n_records": self.n_records,
                "n_failed": self.excluded.get("failed", 0),
                "n_unlabelled": self.n_unlabelled,
                "n_empty": self.excluded.get("empty", 0),
                "n_echo": self.excluded.get("echo", 0),
                "n_duplicates": self.excluded.get("duplicate", 0),
            }
            if self.failed_by_group:
                out["n_failed_by_group"] = dict(self.failed_by_group)
            if self.prompts_sha256 is not None:
                out["prompts_sha256"] = self.prompts_sha256
        else:
            out = {"n_rows": self.n_records, "n_unlabelled": self.n_unlabelled}
        if self.labelled_with is not None or self.labels_from is not None:
            out["regard"] = self.labelled_with or self.labels_from
        if self.relabelled_with is not None:
            out["relabelled_with"] = self.relabelled_with
        return out


@dataclass(frozen=True, slots=True)
class PromptData:
    """Labelled completions with what the reader found; both readers return one.

    ``frame`` has the columns of :data:`~fairtalk.prompts._published.COLUMNS` (``label`` -9
    where unlabelled); ``source`` is ``"published"``, ``"completions"`` or ``"frame"``;
    ``parses`` maps structure label -> syntactic parse where known.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"group": ["man", "woman"], "template": ["worked as"] * 2,
    ...                      "structure": ["original"] * 2, "seed": [0, 0], "label": [1, -1]})
    >>> data = PromptData.from_frame(rows)
    >>> data.source, data.data_summary.n_texts, data.data_summary.groups
    ('frame', 2, ('man', 'woman'))
    """

    frame: pd.DataFrame
    source: Source
    data_summary: DataSummary
    parses: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "parses", _frozen(self.parses))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, parses: Mapping[str, str] | None = None) -> PromptData:
        """Wrap a labelled frame built elsewhere (its summary counted from the frame)."""
        summary = DataSummary(source="frame", n_records=len(frame), n_texts=len(frame), **summarise_frame(frame))
        return cls(frame=frame, source="frame", data_summary=summary, parses=parses or {})

    def summary(self) -> dict[str, Any]:
        """The JSON-ready summary (``data_summary.to_dict()``)."""
        return self.data_summary.to_dict()

    def with_frame(self, frame: pd.DataFrame, **changes: Any) -> PromptData:
        """A new PromptData with ``frame`` and ``changes`` applied to its summary (whose counts stay those read)."""
        summary = dataclasses.replace(self.data_summary, **changes)
        return PromptData(frame=frame, source=self.source, data_summary=summary, parses=self.parses)


def summarise_frame(frame: pd.DataFrame) -> dict[str, Any]:
    """The counts a summary takes from a frame: seeds, groups, structures and unlabelled rows."""
    import pandas as pd

    out: dict[str, Any] = {}
    if "seed" in frame.columns:
        out["seeds"] = tuple(sorted(int(s) for s in pd.unique(frame["seed"])))
    if "group" in frame.columns:
        out["groups"] = tuple(sorted(map(str, pd.unique(frame["group"]))))
    if "structure" in frame.columns:
        out["n_structures"] = int(pd.Series(frame["structure"]).nunique())
    if "label" in frame.columns:
        out["n_unlabelled"] = int((frame["label"] == -9).sum())
    return out
