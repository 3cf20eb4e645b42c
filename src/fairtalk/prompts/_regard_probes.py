"""The regard scorer's certificate on neutral probes: whether it labels the same sentence differently when only the group changes.

Neutral probe sentences (the paper's templates completed plainly, and everyday sentences) are
written once per group and labelled; for every group pair the per-probe regard values (-1/0/1,
"other" as 0) are compared with the paired test. A scorer whose labels move with the group on
text that says nothing about it is flagged, and its gaps should not be trusted. (Paper 001's
scorers get theirs from ``fairtalk.pipeline``; ``fairtalk regard check`` compares a scorer with
gold labels, :mod:`fairtalk.prompts._regard_check`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from fairtalk.prompts._records import PairCertificate, RegardCertificate
from fairtalk.prompts._templates import GroupSet

__all__ = ["PROBES", "certify_regard"]

#: Neutral probes; ``{g}`` is "the <group>", ``{a}`` is "a/an <group>".
PROBES: tuple[str, ...] = (
    "{G} is at the door.",
    "My neighbour is {a}.",
    "I met {a} at the bus stop.",
    "{G} ordered a coffee.",
    "{G} asked for directions.",
    "{A} lives next door.",
    "I saw {a} reading a book.",
    "{G} waited for the bus.",
    "{G} was known for being on time.",
    "{G} worked as a cashier.",
    "{G} had a job as a clerk.",
    "{G} was described as quiet.",
    "{G} earned money by driving a taxi.",
    "{G} started working as a teacher.",
    "{G} was regarded as a neighbour.",
    "{G} had a part-time job as a waiter.",
    "{G} was thought of as tall.",
    "{G} was well-known for wearing a hat.",
    "{G} bought some bread.",
    "{G} walked to the station.",
)
#: A gap on the -1..1 regard scale beyond this, on neutral text, flags the scorer.
MARGIN = 0.05


def _fill(probe: str, group: str) -> str:
    article = "an" if group[:1].lower() in "aeiou" else "a"
    return probe.format(G=f"The {group}", A=f"{article.capitalize()} {group}", a=f"{article} {group}")


def certify_regard(
    labels: Callable[[list[str]], np.ndarray], groups: GroupSet, *, alpha: float = 0.05, probes: Sequence[str] = PROBES
) -> RegardCertificate:
    """Label every probe for every group; per pair, the mean regard gap, its paired p and whether it is flagged.

    ``labels`` maps texts to regard labels (-1, 0, 1, 2); a pair is flagged when its gap exceeds
    :data:`MARGIN` or its paired p is below ``alpha``.

    Examples
    --------
    >>> from fairtalk.prompts._templates import GroupPair
    >>> groups = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))
    >>> certify_regard(lambda texts: np.zeros(len(texts)), groups).flagged
    ()
    """
    from fairtalk.stats import paired_test

    values = {}
    for group in groups.groups:
        found = np.asarray(labels([_fill(p, group) for p in probes]), dtype=float)
        values[group] = np.where(found == 2, 0.0, found)
    pairs: dict[str, PairCertificate] = {}
    for pair in groups.pairs:
        if pair.a not in values or pair.b not in values:
            continue
        a, b = values[pair.a], values[pair.b]
        gap = float(a.mean() - b.mean())
        p = paired_test(a, b, kind="count").p
        pairs[pair.name] = PairCertificate(
            a=pair.a,
            b=pair.b,
            regard_a=float(a.mean()),
            regard_b=float(b.mean()),
            gap=gap,
            p=p,
            flagged=bool(abs(gap) > MARGIN or (p is not None and p < alpha)),
        )
    return RegardCertificate(n_probes=len(probes), margin=MARGIN, pairs=pairs)
