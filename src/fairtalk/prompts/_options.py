"""``PromptOptions``: every option of the paper-004 analysis in one frozen value, validated once.

:func:`~fairtalk.prompts._labelling.analyze_prompts`, :func:`~fairtalk.prompts._analysis.analyze`
and ``fairtalk prompts analyze`` all build this one object and pass it on whole: nothing below
it validates an option again (as :class:`~fairtalk.pipeline.ScoreOptions` does for paper 001).
It is built with the same schema (:func:`fairtalk._schema.options_schema`): each bound is
declared on its field, and a bad value is told what it must be in the schema's one wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import InitVar, asdict
from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from fairtalk._schema import keys_of, label, options_schema
from fairtalk.errors import SpecError
from fairtalk.options import PROMPT_FIELDS, SCORE_FIELDS

__all__ = ["PromptOptions"]

_MSG_SCORER = "{name} must be a regard scorer (builtin, builtin:tfidf, path:DIR or hf:MODEL), got {value!r}"
_MSG_BOTH = "give options= or keyword options, not both ({keys} given as keywords)"


@options_schema(kw_only=False)
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
    balanced_only : bool
        Analyse only the template × structure cells that every group holds (its help, the
        ``--balanced-only`` flag's, is declared on the field): the rows of the others are left
        out and counted (:func:`~fairtalk.prompts._coverage.analysed_rows`).
    smoothing : float
        Additive smoothing of the distributions before KL (>= 0; 0: the paper's plain KL).
    n_best : int
        How many best and worst structures to list (>= 1).
    seed : int
        Seed of the robustness draws and the bootstrap (>= 0).
    n_sampled, n_draws : int
        Structures per "single structure" robustness trial (>= 2) and trials of each kind (>= 1).
    alpha : float
        Level of the reversal tests and of the pair verdicts: the scoring option ``alpha``'s field,
        between 0 and 1 (exclusive) and at least :data:`~fairtalk.options.MIN_ALPHA`.
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
    fairtalk.errors.SpecError: alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 7
    """

    regard: str = "builtin"
    relabel: bool = False
    include_other: bool = False
    balanced_only: bool = PROMPT_FIELDS["balanced_only"]
    smoothing: float = Field(default=1e-6, ge=0, allow_inf_nan=False)
    n_best: int = Field(default=5, ge=1)
    seed: int = Field(default=0, ge=0)
    n_sampled: int = Field(default=10, ge=2)
    n_draws: int = Field(default=100, ge=1)
    alpha: float = SCORE_FIELDS["alpha"]  # the scoring option's bounds: below MIN_ALPHA the intervals are infinite
    n_resamples: int = Field(default=1000, ge=0)
    names: InitVar[Mapping[str, str] | None] = None

    @field_validator("regard", mode="plain")
    @classmethod
    def _regard(cls, value: Any, info: ValidationInfo) -> str:
        if not isinstance(value, str) or not value.strip():
            raise SpecError(_MSG_SCORER.format(name=label(info), value=value))
        return value

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The option names."""
        return keys_of(cls)

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
