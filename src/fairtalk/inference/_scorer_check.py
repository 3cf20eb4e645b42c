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
is the model's, measured exactly), as are a corpus measure's (``diversity``: a statistic of each
side's answers together, no score of one text) and the token limit's (``hit_token_limit``: it
reads the model's finish reasons, no text; every answer of a hosted model carries one, so it is
left out of nearly every such run). The docs say so; where the check had no other key, a note
names them (:func:`check_scorers`).

A key can be left out for a reason of the run too, and then a note always names it and says
why: the scorer gave too few probe pairs a score on both sides (an ordinal judge's score, a
judge that never answers yes or no), it gave no score to some probe where its measure does not
declare that it may (``unscored_keys``), or the axis gave no probe pair at all.

Probes: hand-written neutral sentences for the built-in axes (gender: person nouns, kinship
words and pronouns; race: the Standard English side of the dialect lexicon in everyday
sentences), and for any other lexicon each of its side-A terms in three neutral frames.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from fairtalk.counterfactual import Swapper
from fairtalk.lexicons import Lexicon
from fairtalk.measures import AnyMeasure, Measure, TokenLimit
from fairtalk.results import ScorerCheck
from fairtalk.stats import default_margin, difference_interval, paired_test

__all__ = ["PROBES", "certify", "check_scorers", "probe_pairs"]

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
#: The same for a corpus measure's keys (``diversity``), which the check leaves out as it does size keys.
NOTE_LEFT_OUT_CORPUS = (
    "the scorer check left out {keys}: {whose} statistic is taken over each side's answers together, not scored "
    "per text, and it had no other key to check"
)
#: Why the token limit's key is left out: it reads no text.
WHY_NO_TEXT = "the token limit reads the model's finish reasons, not a text"
#: The same for the token limit's key (``hit_token_limit``), left out by its kind as well.
NOTE_LEFT_OUT_NO_TEXT = "the scorer check left out {keys}: " + WHY_NO_TEXT + ", and it had no other key to check"
#: The note of keys left out for a reason of the run, named whenever the check runs: ``why`` is one of the WHY_ below.
NOTE_NOT_CHECKED = "the scorer check left out {keys}: {why}"
WHY_FEW_SCORED = "the scorer gave a score on both sides of only {n} of the {total} probe pairs (a test needs 2)"
WHY_UNSCORED = (
    "the scorer gave no score (NaN or infinity) on {n} of the {total} probe pairs, and its measure does not declare "
    "that it may leave a response unscored (unscored_keys)"
)
WHY_NO_PROBES = "the axis gave no probe pair (no probe sentence swaps to side B's wording)"


def check_scorers(
    measures: Sequence[AnyMeasure], lexicon: Lexicon, margins: Mapping[str, float], *, alpha: float = 0.05
) -> tuple[tuple[ScorerCheck, ...], tuple[str, ...]]:
    """:func:`certify`'s checks, and the notes naming each key of ``measures`` it left out, and why.

    A key left out for a reason of the run (its scorer's scores on the probes, the axis' probes:
    the WHY_ wordings) is named whenever the check runs. The keys it leaves out by their kind (a
    measure's ``size_keys``, a corpus measure's keys, the token limit's, which reads no text), which
    the docs name, are named only where it checked no key at all: without that note, a check of
    ``length`` alone would report nothing, as if it had run and found nothing.

    Examples
    --------
    >>> from fairtalk.lexicons import load_lexicon
    >>> from fairtalk.measures import Length
    >>> checks, notes = check_scorers([Length(), TokenLimit()], load_lexicon("gender"), {})
    >>> checks, [note.split(":")[0] for note in notes]
    ((), ['the scorer check left out length', 'the scorer check left out hit_token_limit'])
    """
    checks, skipped = _certify(measures, probe_pairs(lexicon), margins, alpha)
    reasons: dict[str, list[str]] = {}
    for key, why in skipped.items():
        reasons.setdefault(why, []).append(key)
    notes = [NOTE_NOT_CHECKED.format(keys=", ".join(keys), why=why) for why, keys in reasons.items()]
    if not checks:
        size = [key for m in measures if isinstance(m, Measure) for key in m.keys if key in m.size_keys]
        corpus = [key for m in measures if not isinstance(m, Measure) for key in m.keys]
        no_text = [key for m in measures if isinstance(m, TokenLimit) for key in m.keys]
        notes += [
            note.format(keys=", ".join(keys), whose="its" if len(keys) == 1 else "their")
            for note, keys in ((NOTE_LEFT_OUT, size), (NOTE_LEFT_OUT_CORPUS, corpus), (NOTE_LEFT_OUT_NO_TEXT, no_text))
            if keys
        ]
    return checks, tuple(notes)


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
    is the swap's change of the wording's size, not a reaction of the scorer (module docstring), and
    so is the token limit's ``hit_token_limit``, which reads the finish reasons, not a text;
    :func:`check_scorers` gives these checks with the notes naming every key left out, and why.
    """
    return _certify(measures, probe_pairs(lexicon), margins, alpha)[0]


def _certify(
    measures: Sequence[AnyMeasure], pairs: Sequence[tuple[str, str]], margins: Mapping[str, float], alpha: float
) -> tuple[tuple[ScorerCheck, ...], dict[str, str]]:
    """The checks of :func:`certify` on the probe ``pairs``, and why each key left out for a reason of the run was."""
    side_a, side_b = [a for a, _ in pairs], [b for _, b in pairs]
    checks: list[ScorerCheck] = []
    skipped: dict[str, str] = {}
    for measure in measures:
        if not isinstance(measure, Measure) or isinstance(measure, TokenLimit):  # a corpus measure, finish reasons: no text
            continue
        keys = [key for key in measure.keys if key not in measure.size_keys]  # a word count has no judgement
        if not pairs:
            skipped.update(dict.fromkeys(keys, WHY_NO_PROBES))
            continue
        scores_a, scores_b = measure.score(side_a), measure.score(side_b)
        for key in keys:
            check = _key_check(key, measure, scores_a[key], scores_b[key], margins.get(key), alpha)
            if isinstance(check, str):
                skipped[key] = check
            else:
                checks.append(check)
    return tuple(checks), skipped


def _key_check(
    key: str, measure: Measure, scores_a: object, scores_b: object, margin: float | None, alpha: float
) -> ScorerCheck | str:
    """One key's check on the probe pairs' scores, or why it cannot be checked (a WHY_ wording)."""
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    scored = np.isfinite(a) & np.isfinite(b)
    n_unscored = int((~scored).sum())
    if key in measure.unscored_keys:
        a, b = a[scored], b[scored]
        if a.size < 2:
            return WHY_FEW_SCORED.format(n=a.size, total=scored.size)
    elif n_unscored:
        return WHY_UNSCORED.format(n=n_unscored, total=scored.size)
    return _check(key, measure.kind_of(key), a, b, margin, alpha, a.size, n_unscored)


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
