"""``PromptOptions``: every option of the paper-004 analysis in one frozen value, validated once.

:func:`~fairtalk.prompts._labelling.analyze_prompts`, :func:`~fairtalk.prompts._analysis.analyze`
and ``fairtalk prompts analyze`` all build this one object and pass it on whole: nothing below
it validates an option again (as :class:`~fairtalk.pipeline.ScoreOptions` does for paper 001).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import InitVar, asdict, dataclass, fields
from typing import Any

from fairtalk.errors import SpecError

__all__ = ["PromptOptions"]

_MSG_BOOL = "{name} must be true or false, got {value!r}"
_MSG_AT_LEAST = "{name} must be an integer >= {least}, got {value!r}"
_MSG_UNIT = "{name} must be between 0 and 1 (exclusive), got {value!r}"
_MSG_SMOOTHING = "{name} must be a number >= 0, got {value!r}"
_MSG_SCORER = "{name} must be a regard scorer (builtin, builtin:tfidf, path:DIR or hf:MODEL), got {value!r}"
_MSG_BOTH = "give options= or keyword options, not both ({keys} given as keywords)"


def _integer(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int)


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class PromptOptions:
    """How a prompts analysis labels and tests: one frozen value, validated once, here.

    Parameters
    ----------
    regard : str
        The regard scorer for unlabelled rows and for ``relabel``: ``builtin``, ``builtin:tfidf``,
        ``path:DIR`` or ``hf:MODEL``.
    relabel : bool
        Also label every row with ``regard`` and analyse those labels beside the given ones.
    include_other : bool
        Count label 2 ("other") as a fourth category in distributions and KL.
    smoothing : float
        Additive smoothing of the distributions before KL (>= 0; 0: the paper's plain KL).
    n_best : int
        How many best and worst structures to list (>= 1).
    seed : int
        Seed of the robustness draws and the bootstrap (>= 0).
    n_sampled, n_draws : int
        Structures per "single structure" robustness trial (>= 2) and trials of each kind (>= 1).
    alpha : float
        Level of the reversal tests and of the pair verdicts, in (0, 1).
    n_resamples : int
        Template × seed bootstrap resamples (>= 0; 0: no intervals).
    names : mapping, optional
        Renames the options in error messages (the CLI passes its flags: ``--draws``, not ``n_draws``).

    Raises
    ------
    SpecError
        A value of the wrong type or out of range; the message names the valid range.

    Examples
    --------
    >>> PromptOptions(n_draws=20).n_draws
    20
    >>> PromptOptions(alpha=7)
    Traceback (most recent call last):
    ...
    fairtalk.errors.SpecError: alpha must be between 0 and 1 (exclusive), got 7
    """

    regard: str = "builtin"
    relabel: bool = False
    include_other: bool = False
    smoothing: float = 1e-6
    n_best: int = 5
    seed: int = 0
    n_sampled: int = 10
    n_draws: int = 100
    alpha: float = 0.05
    n_resamples: int = 1000
    names: InitVar[Mapping[str, str] | None] = None

    def __post_init__(self, names: Mapping[str, str] | None) -> None:
        label = dict(names or {})

        def name(key: str) -> str:
            return label.get(key, key)

        if not isinstance(self.regard, str) or not self.regard.strip():
            raise SpecError(_MSG_SCORER.format(name=name("regard"), value=self.regard))
        for key in ("relabel", "include_other"):
            if not isinstance(getattr(self, key), bool):
                raise SpecError(_MSG_BOOL.format(name=name(key), value=getattr(self, key)))
        if not _number(self.smoothing) or self.smoothing < 0:
            raise SpecError(_MSG_SMOOTHING.format(name=name("smoothing"), value=self.smoothing))
        for key, least in (("n_best", 1), ("seed", 0), ("n_sampled", 2), ("n_draws", 1), ("n_resamples", 0)):
            value = getattr(self, key)
            if not _integer(value) or value < least:
                raise SpecError(_MSG_AT_LEAST.format(name=name(key), least=least, value=value))
        if not _number(self.alpha) or not 0 < self.alpha < 1:
            raise SpecError(_MSG_UNIT.format(name=name("alpha"), value=self.alpha))

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The option names."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def resolve(cls, options: PromptOptions | None, **keywords: Any) -> PromptOptions:
        """``options`` when given (then every keyword must keep its default), else the options the keywords give.

        Raises
        ------
        SpecError
            ``options`` and keyword options that differ from the defaults, or a bad value.
        """
        built = cls(**keywords)
        if options is None:
            return built
        default = asdict(cls())
        changed = sorted(key for key, value in asdict(built).items() if value != default[key])
        if changed:
            raise SpecError(_MSG_BOTH.format(keys=", ".join(changed)))
        return options
