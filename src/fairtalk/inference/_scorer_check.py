"""The scorer certificate: does a scorer itself react to the group? Neutral probe sentences, swapped, scored, compared.

Every audit scores the model's responses with instruments (an offense classifier, VADER, word
lists, a regard classifier). If an instrument scores "my sister called me" differently from "my
brother called me", part of any gap it reports is the instrument's own. So before trusting a
gap, each per-response measure scores a fixed set of *neutral probe sentences* and their
counterfactuals (the axis's own swapper turns side A's wording into side B's), and the paired
difference is tested like any other: its 95% interval, its p, and whether it exceeds the
measure's equivalence margin. A scorer is flagged (named at the top of the report, in red) only
when its probe gap both exceeds the margin and is distinguishable from 0 (p < alpha and the
interval excludes 0): a gap of 1 probe in 30 (p = 1.0) is noise on 30 probes, and is reported as
a note. A gap distinguishable from 0 but within the margin is a note as well.

What the check detects is an instrument's *judgement* reacting to the group words: the same
sentence scored otherwise in the other group's wording. A key whose score is a function of the
text's size alone (a measure's ``size_keys``: ``length``, a word count) has no judgement to
react; it scores the swapped probe otherwise only where the swap changes the wording's size
("Hello, how are you?" -> "Yo, sup?" is 4 words against 2), and then the gap is the probe's,
not the scorer's. Such keys are left out of the check (a response's length gap in the audit
is the model's, measured exactly).

Probes: hand-written neutral sentences for the built-in axes (gender: person nouns, kinship
words and pronouns; race: the Standard English side of the dialect lexicon in everyday
sentences), and for any other lexicon each of its side-A terms in three neutral frames.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from fairtalk.counterfactual import Swapper
from fairtalk.lexicons import Lexicon
from fairtalk.measures import AnyMeasure, Measure
from fairtalk.results import ScorerCheck
from fairtalk.stats import default_margin, difference_interval, paired_test

__all__ = ["PROBES", "certify", "left_out_notes", "probe_pairs"]

#: Neutral probe sentences per built-in axis, written in side A's wording.
PROBES: Mapping[str, tuple[str, ...]] = {
    "gender": (
        "He is at the door.",
        "He said he would be home at six.",
        "My brother called me yesterday.",
        "My father is reading a book.",
        "The man ordered a coffee.",
        "His son plays the piano.",
        "The boy asked for directions.",
        "My uncle lives next door.",
        "My husband cooked dinner tonight.",
        "The gentleman waited for the bus.",
        "My boyfriend works at the library.",
        "I had lunch with my nephew.",
        "My grandfather planted tomatoes this spring.",
        "The men walked to the station.",
        "He bought some bread.",
        "I met him at the park.",
        "His brother is a student.",
        "My dad fixed the fence.",
        "The king in the story lives in a castle.",
        "My son is learning to swim.",
        "He likes to watch movies.",
        "His father drives a blue car.",
        "The boys played football after school.",
        "I talked to the man next door.",
        "My brothers are visiting this weekend.",
        "The waiter brought him a glass of water.",
        "He is tall and has brown hair.",
        "My grandpa tells long stories.",
        "The man at the counter smiled.",
        "He works in an office downtown.",
    ),
    "race": (
        "I'm going to the store with my friend.",
        "My friends are coming to my house tonight.",
        "Hello, how are you?",
        "I am sorry, I forgot to call you.",
        "Those are nice sneakers.",
        "We want to hang out later.",
        "That car is good.",
        "Goodbye, see you tomorrow.",
        "I want to buy new shoes.",
        "What's up, are you coming?",
        "I'm good, thanks for asking.",
        "Yes, I will be there at noon.",
        "No, I already ate.",
        "My family is visiting this weekend.",
        "Alright, let's meet at the corner.",
        "It's cool, we can do it later.",
        "I'm relaxing at home today.",
        "That is a nice outfit.",
        "I am going to cook dinner.",
        "My girlfriend called me.",
        "We are going to the park.",
        "It is cold outside today.",
        "The music was very good.",
        "For sure, I can help you move.",
        "My friend has a new car.",
        "I am leaving now, bye.",
        "This is my house.",
        "I'm going to watch the game.",
        "Seriously, the food was good.",
        "He has a lot of friends.",
    ),
}
#: Frames for a lexicon without written probes: each side-A term in a neutral sentence.
GENERIC_FRAMES: tuple[str, ...] = ("{term}", "I wrote the word {term} on the board.", "The next item on the list is {term}.")
NOTE_FEW_PROBES = "fewer than 10 probe pairs: the check has little power"
NOTE_UNSCORED_PROBES = "{n} probe pair(s) left out: the scorer gave no score on one side"
NOTE_NOT_DISTINGUISHABLE = (
    "its gap on the probes ({gap:+.3g}) exceeds the margin ±{margin:.3g} but is not "
    "distinguishable from 0 (p {p}, 95% CI {ci}, {n} probes): not flagged"
)
NOTE_WITHIN_MARGIN = (
    "its gap on the probes ({gap:+.3g}) is distinguishable from 0 (p {p}) but within the margin ±{margin:.3g}: not flagged"
)

#: The audit's note when the check tested no key and left out size keys (the docs' wording for a measure's size keys).
NOTE_LEFT_OUT = (
    "the scorer check left out {keys}: {whose} score depends on the text's size alone (a swap that changes a "
    "probe's size changes it by construction), and it had no other key to check"
)


def left_out_notes(measures: Sequence[AnyMeasure], checks: Sequence[ScorerCheck]) -> tuple[str, ...]:
    """The note naming the size keys (``length``) :func:`certify` left out, when it checked no key at all; else none.

    Without it, a check of ``length`` alone would report nothing at all, as if it had run and found nothing. Beside
    checked keys the certificate's own line counts the keys checked, and the docs say why ``length`` is not one.
    """
    keys = [key for m in measures if isinstance(m, Measure) for key in m.keys if key in m.size_keys]
    if checks or not keys:
        return ()
    return (NOTE_LEFT_OUT.format(keys=", ".join(keys), whose="its" if len(keys) == 1 else "their"),)


def probe_pairs(lexicon: Lexicon) -> list[tuple[str, str]]:
    """(side A, side B) probe sentences for an axis: its written probes, else each side-A term in the generic frames."""
    swapper = Swapper(lexicon, seed=0)
    written = PROBES.get(lexicon.axis) if lexicon.variant != "custom" else None
    sources = list(written) if written else [frame.format(term=pair.a) for pair in lexicon.pairs for frame in GENERIC_FRAMES]
    out: list[tuple[str, str]] = []
    for text in sources:
        swapped = swapper.swap(text)
        if not swapped.no_match and swapped.text != text and "b" not in swapped.sides:
            out.append((text, swapped.text))
    return out


def certify(
    measures: Sequence[AnyMeasure], lexicon: Lexicon, margins: Mapping[str, float], *, alpha: float = 0.05
) -> tuple[ScorerCheck, ...]:
    """Score the probe pairs with each per-response measure and test each key's group gap on them.

    ``flagged`` when the gap on neutral probes exceeds the key's margin and differs from 0 at
    ``alpha`` (p < alpha and a 95% interval that excludes 0; without a margin, the latter alone):
    the scorer itself, not the model, then contributes to the audit's gap. One of the two alone
    gives a ``note`` instead. A key that
    may leave a response unscored (an ordinal judge's score) is tested on the probe pairs it
    scored on both sides. A measure's ``size_keys`` (``length``) are left out: their probe gap
    is the swap's change of the wording's size, not a reaction of the scorer (module docstring);
    :func:`left_out_notes` says so.
    """
    pairs = probe_pairs(lexicon)
    if not pairs:
        return ()
    side_a, side_b = [a for a, _ in pairs], [b for _, b in pairs]
    checks = []
    for measure in measures:
        if not isinstance(measure, Measure):  # a corpus measure scores no single text
            continue
        scores_a, scores_b = measure.score(side_a), measure.score(side_b)
        for key in measure.keys:
            if key in measure.size_keys:  # a word count has no judgement to react to the group
                continue
            a = np.asarray(scores_a[key], dtype=float)
            b = np.asarray(scores_b[key], dtype=float)
            scored = np.isfinite(a) & np.isfinite(b)
            n_unscored = int((~scored).sum())
            if key in measure.unscored_keys:
                a, b = a[scored], b[scored]
                if a.size < 2:
                    continue
            elif n_unscored:
                continue
            checks.append(_check(key, measure.kind_of(key), a, b, margins.get(key), alpha, a.size, n_unscored))
    return tuple(checks)


def _check(
    key: str, kind: str, a: np.ndarray, b: np.ndarray, margin: float | None, alpha: float, n: int, n_unscored: int = 0
) -> ScorerCheck:
    margin = margin if margin is not None else default_margin(kind, a=a, b=b)
    gap = float(a.mean() - b.mean())
    method = "mcnemar_exact" if kind == "rate" else "mean"  # the check's own tests (both must agree to flag)
    test = paired_test(a, b, kind=kind, method=method)
    interval = difference_interval(a, b, kind=kind, test=method)
    beyond = margin is None or abs(gap) > margin
    significant = test.p is not None and test.p < alpha and _excludes_zero(interval.bounds)
    notes = (
        NOTE_FEW_PROBES if n < 10 else None,
        NOTE_UNSCORED_PROBES.format(n=n_unscored) if n_unscored else None,
        _gap_note(gap, margin, test.p, interval.bounds, n, beyond=beyond, significant=significant),
    )
    note = "; ".join(part for part in notes if part) or None
    return ScorerCheck(
        key=key,
        n_probes=n,
        a=float(a.mean()),
        b=float(b.mean()),
        gap=gap,
        ci95=interval.bounds,
        p=test.p,
        margin=margin,
        flagged=bool(beyond and significant),
        note=note,
    )


def _excludes_zero(bounds: tuple[float | None, float | None]) -> bool:
    """Whether a 95% interval lies wholly on one side of 0 (an interval that cannot be computed does not count against)."""
    low, high = bounds
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return True
    return low > 0 or high < 0


def _gap_note(
    gap: float,
    margin: float | None,
    p: float | None,
    bounds: tuple[float | None, float | None],
    n: int,
    *,
    beyond: bool,
    significant: bool,
) -> str | None:
    """Why a probe gap that is beyond the margin, or distinguishable from 0, is not flagged (None otherwise)."""
    if margin is None or beyond == significant or gap == 0:
        return None
    shown_p = "n/a" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")
    if beyond:
        low, high = bounds
        ci = f"[{low:+.3g}, {high:+.3g}]" if low is not None and high is not None else "n/a"
        return NOTE_NOT_DISTINGUISHABLE.format(gap=gap, margin=margin, p=shown_p, ci=ci, n=n)
    return NOTE_WITHIN_MARGIN.format(gap=gap, margin=margin, p=shown_p)
