"""Both sides of each parallel context pair, as the integrations ask a model them (:func:`pair_sides`).

A plain record and a generator on the public API (:func:`fairtalk.build_pairs` on a corpus); the
inspect_ai task's dataset and :func:`fairtalk.integrations.mlflow.make_metric`'s evaluation data are
built from it. It imports no optional package.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fairtalk import build_pairs, load_lexicon, read_corpus

__all__ = ["PairSide", "pair_sides"]


@dataclass(frozen=True, slots=True)
class PairSide:
    """One side of one parallel context pair: what the model is asked, and where it belongs."""

    pair_id: str
    side: str
    text: str
    cluster: str | None = None


def pair_sides(
    axis: str = "gender", *, n_pairs: int | None = 100, corpus: str = "builtin:chitchat", seed: int = 0
) -> Iterator[PairSide]:
    """Both sides of a seeded sample of ``n_pairs`` pairs of ``axis`` (side ``a``, then ``b``, pair by pair).

    ``builtin:chitchat`` is read from its held-out split, as :func:`fairtalk.audit` reads it.

    Examples
    --------
    >>> [(s.pair_id, s.side) for s in pair_sides("gender", n_pairs=1)]  # doctest: +SKIP
    [('...', 'a'), ('...', 'b')]
    """
    split = "heldout" if corpus == "builtin:chitchat" else "all"
    pairs = build_pairs(read_corpus(corpus, split=split), load_lexicon(axis), limit=n_pairs, seed=seed)
    for pair in pairs:
        yield PairSide(pair.id, "a", pair.a, pair.cluster)
        yield PairSide(pair.id, "b", pair.b, pair.cluster)
