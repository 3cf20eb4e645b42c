"""Both sides of each parallel context pair, as the integrations ask a model them (:func:`pair_sides`).

A plain record and a generator on the public API (:func:`fairtalk.build_pairs` on a corpus); the
inspect_ai task's dataset and :func:`fairtalk.integrations.mlflow.make_metric`'s evaluation data are
built from it. It imports no optional package.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fairtalk import build_pairs, load_lexicon, read_corpus
from fairtalk.errors import SpecError
from fairtalk.lexicons import refuse_bare_multiway

__all__ = ["PairSide", "check_one_pair", "pair_sides"]

_MSG_NOT_ONE = (
    "{option}={given}: one axis per {what} (an axis name such as gender, or religion:christian-jewish); "
    "run it once per axis, or run `fairtalk audit` for several"
)
_MSG_NOT_NAME = "{option}={given!r}: must be an axis name (gender, race, religion:christian-jewish, a lexicon file, ...)"


@dataclass(frozen=True, slots=True)
class PairSide:
    """One side of one parallel context pair: what the model is asked, and where it belongs."""

    pair_id: str
    side: str
    text: str
    cluster: str | None = None


def check_one_pair(axis: object, *, option: str = "axis", what: str = "task") -> str:
    """``axis`` when it names one pair of groups; SpecError naming ``option`` otherwise, before any pair is built.

    A bare multi-way axis (``religion``) is refused, naming its pairs (``religion:christian-jewish``,
    ...): :func:`fairtalk.load_lexicon` would take its first two groups alone, so a model biased
    against any other group would pass unseen (``fairtalk audit`` runs each pair). So is anything but
    one name (inspect's ``-T axis=gender,race`` arrives as a list).

    Raises
    ------
    SpecError
        Not one axis name, or a bare multi-way axis (an unknown one is refused when its lexicon loads).
    LexiconError
        A multi-way lexicon file that cannot be read.
    """
    if isinstance(axis, (list, tuple)):
        raise SpecError(_MSG_NOT_ONE.format(option=option, given=",".join(map(str, axis)), what=what))
    if not isinstance(axis, str) or not axis.strip():
        raise SpecError(_MSG_NOT_NAME.format(option=option, given=axis))
    # in the words of the CLI's single-pair commands (``fairtalk score``, ``train``): the library's refusal
    refuse_bare_multiway(axis, given=f"{option}={axis}", needs=f"this {what} compares")
    return axis


def pair_sides(
    axis: str = "gender", *, n_pairs: int | None = 100, corpus: str = "builtin:chitchat", seed: int = 0
) -> Iterator[PairSide]:
    """Both sides of a seeded sample of ``n_pairs`` pairs of ``axis`` (side ``a``, then ``b``, pair by pair).

    ``builtin:chitchat`` is read from its held-out split, as :func:`fairtalk.audit` reads it. A bare
    multi-way axis (``religion``) is a SpecError naming its pairs (:func:`check_one_pair`).

    Examples
    --------
    >>> [(s.pair_id, s.side) for s in pair_sides("gender", n_pairs=1)]  # doctest: +SKIP
    [('...', 'a'), ('...', 'b')]
    """
    check_one_pair(axis)
    split = "heldout" if corpus == "builtin:chitchat" else "all"
    pairs = build_pairs(read_corpus(corpus, split=split), load_lexicon(axis), limit=n_pairs, seed=seed)
    for pair in pairs:
        yield PairSide(pair.id, "a", pair.a, pair.cluster)
        yield PairSide(pair.id, "b", pair.b, pair.cluster)
