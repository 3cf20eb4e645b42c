"""Answers cut off at the token limit: the warning when many were, and ``exclude_truncated``.

A model that reports why it stopped (``openai:``, ``hf:``, ``vllm:``, and the run store and
responses files that keep it) says ``"length"`` for an answer the token limit cut off. Every
measure that reads the text (length, sentiment, refusal, offense, degenerate, a judge...) then
scores a cut-off answer as if it were the model's whole answer. :func:`check_truncation` reads the
reasons in one vocabulary (:func:`~fairtalk.models._finish_reasons.normal_finish_reason`), and:

- without ``exclude_truncated``, warns when more than :data:`WARN_SHARE` of one side's answers
  were cut off, naming the measures that scored cut-off text;
- with it, leaves out every pair where either answer was cut off, counts them in the input
  summary (``n_truncated_dropped``) and says so in a warning (the pairs kept are a selection:
  the answers short enough to end within the limit); when the model reported no reasons at all,
  it says the option had nothing to act on.

The numbers go to the result's provenance (``truncation``, a :class:`~fairtalk.results.TruncationProvenance`) as well. :func:`token_limit_rows` tests how
often each side's answers hit the limit (``hit_token_limit``), when the model reported finish reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from fairtalk._responses import ResponseSet
from fairtalk.inference._measure_tests import Inference, KeyTest, compare
from fairtalk.measures import TOKEN_LIMIT_KEY, AnyMeasure, TokenLimit
from fairtalk.models import normal_finish_reason
from fairtalk.results import TruncationProvenance

__all__ = ["WARN_SHARE", "Truncation", "check_truncation", "finish_reasons", "token_limit_rows"]

#: More than this share of one side's answers cut off at the token limit gets a warning.
WARN_SHARE = 0.10
_WARN_CUT = (
    "{cut} stopped at the token limit (finish reason 'length', or cut to the 8 MiB record limit), so {measures} "
    "scored cut-off text as if it "
    "were the whole answer; raise the limit (--max-new-tokens, max_new_tokens), or test only the pairs "
    "where neither answer was cut off (--exclude-truncated, exclude_truncated=True)"
)
_WARN_EXCLUDED = (
    "excluding truncated pairs (--exclude-truncated, exclude_truncated=True) left out {n:,} of {total:,} pairs "
    "({share:.1%}) where an answer was cut off at the token limit ({cut}): the tests compare the {kept:,} pairs "
    "whose answers both ended within the limit, a selection of the shorter answers; raising the limit "
    "(--max-new-tokens, max_new_tokens) keeps every pair"
)
_WARN_NOTHING = (
    "excluding truncated pairs (--exclude-truncated, exclude_truncated=True) had nothing to act on: the model reported no finish reasons, so no answer is "
    "known to be cut off (openai:, hf: and vllm: models report them; python:, replay: and builtin: "
    "models do not)"
)
_NOTE_UNKNOWN_REASON = "the model gave no finish reason for {n} answers; they count as not cut off"
#: The words the warnings name the measures by, when the measure says nothing better.
_EVERY_MEASURE = "every measure that reads the text"


@dataclass(frozen=True, slots=True)
class Truncation:
    """What :func:`check_truncation` found: the response set to test, the warnings, and the provenance record."""

    responses: ResponseSet
    warnings: tuple[str, ...]
    record: TruncationProvenance


def finish_reasons(rs: ResponseSet) -> tuple[tuple[str | None, ...], tuple[str | None, ...]] | None:
    """Per side, each answer's finish reason as ``"stop"``, ``"length"`` or None; None when no answer has one."""
    found = rs.finish_reasons
    if found is None:
        return None
    a, b = (tuple(normal_finish_reason(r) for r in side) for side in found)
    return None if all(r is None for r in a + b) else (a, b)


def _cut_words(n_a: int, n_b: int, n: int, groups: Sequence[str]) -> str:
    """``12 of 40 answers for male (30.0%) and 3 of 40 for female (7.5%)``."""

    def share(k: int) -> str:
        return f"{k / n:.1%}" if n else "n/a"

    return f"{n_a:,} of {n:,} answers for {groups[0]} ({share(n_a)}) and {n_b:,} of {n:,} for {groups[1]} ({share(n_b)})"


def measure_names(measures: Sequence[AnyMeasure]) -> str:
    """The measures that read the text, by name (``length, sentiment, refusal``)."""
    names = list(dict.fromkeys(m.name or type(m).__name__ for m in measures))
    return f"{_EVERY_MEASURE} ({', '.join(names)})" if names else _EVERY_MEASURE


def check_truncation(rs: ResponseSet, measures: Sequence[AnyMeasure], groups: Sequence[str], *, exclude: bool) -> Truncation:
    """The pairs to test (all, or with ``exclude`` those where neither answer was cut off) and what to say about it.

    Examples
    --------
    >>> from fairtalk import Response, read_responses
    >>> rows = [Response(str(i), s, "", "word " * 5, (("finish_reason", "length" if i < 2 and s == "a" else "stop"),))
    ...         for i in range(4) for s in "ab"]
    >>> found = check_truncation(read_responses(rows), [], ("he", "she"), exclude=True)
    >>> found.responses.n_pairs, found.responses.summary["n_truncated_dropped"]
    (2, 2)
    """
    reasons = finish_reasons(rs)
    if reasons is None:
        unknown = TruncationProvenance(reasons_reported=False, exclude_truncated=exclude)
        return Truncation(rs, (_WARN_NOTHING,) if exclude else (), unknown)
    cut_a, cut_b = ([r == "length" for r in side] for side in reasons)
    n = rs.n_pairs
    n_a, n_b = sum(cut_a), sum(cut_b)
    entry = TruncationProvenance(
        reasons_reported=True,
        exclude_truncated=exclude,
        n_pairs=n,
        n_cut={"a": n_a, "b": n_b},
        share_cut={"a": n_a / n if n else None, "b": n_b / n if n else None},
    )
    if not exclude:
        over = bool(n) and max(n_a, n_b) > WARN_SHARE * n
        entry = replace(entry, warn_share=WARN_SHARE, warned=over)
        warnings = (_WARN_CUT.format(cut=_cut_words(n_a, n_b, n, groups), measures=measure_names(measures)),) if over else ()
        return Truncation(rs, warnings, entry)
    keep = [i for i in range(n) if not (cut_a[i] or cut_b[i])]
    n_left_out = n - len(keep)
    entry = replace(entry, n_pairs_left_out=n_left_out)
    summary = {**rs.summary, "n_pairs": len(keep), "n_truncated_dropped": n_left_out}
    cut = [r for i in range(n) if cut_a[i] or cut_b[i] for r in (rs.a[i], rs.b[i])]
    kept = ResponseSet(
        tuple(rs.pair_ids[i] for i in keep),
        tuple(rs.a[i] for i in keep),
        tuple(rs.b[i] for i in keep),
        summary,
        rs.sources,
        (*rs.left_out, *cut),  # written with the run's responses: re-scored, they are left out again
    )
    if not n_left_out:
        return Truncation(kept, (), entry)
    warning = _WARN_EXCLUDED.format(
        n=n_left_out, total=n, share=n_left_out / n, cut=_cut_words(n_a, n_b, n, groups), kept=len(keep)
    )
    return Truncation(kept, (warning,), entry)


def token_limit_rows(rs: ResponseSet, opts: Inference) -> list[KeyTest]:
    """The ``hit_token_limit`` row when the model reported finish reasons (none otherwise)."""
    reasons = finish_reasons(rs)
    if reasons is None:
        return []
    measure = TokenLimit()
    row = compare(TOKEN_LIMIT_KEY, measure, measure.flags(reasons[0]), measure.flags(reasons[1]), opts)
    n_unknown = sum(r is None for side in reasons for r in side)
    if n_unknown:
        row = row.with_notes(_NOTE_UNKNOWN_REASON.format(n=n_unknown))
    return [row]
