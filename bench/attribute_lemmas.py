"""How much lemmatizing moves the attribute-word counts of an audit's answers (paper 001, §2.4.4).

Paper 001 lemmatized answers with NLTK's WordNet lemmatizer; fairtalk uses simplemma, which also
reduces verbs and comparatives (``worse`` -> ``wrong``, ``worst`` -> ``bad``). This scores the
answers of finished audits (their ``AXIS/responses.jsonl``) with the attribute-word measure twice,
as shipped (surface form or simplemma lemma) and by surface form alone, and lists the words that
count only through their lemma. NLTK is not a dependency, so WordNet's own counts are not computed.

    fairtalk audit --axis gender -o bare-gender && fairtalk audit --axis race -o bare-race
    python bench/attribute_lemmas.py bare-gender bare-race
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from _machine import machine

import fairtalk
from fairtalk.measures import tokenize


def _answers(folder: Path) -> tuple[str, list[str]]:
    """The audit's axis and its answers (both sides)."""
    run = json.loads((folder / "run.json").read_text())
    axis = next(iter(run["axes"]))
    lines = (folder / axis / "responses.jsonl").read_text().splitlines()
    return axis, [json.loads(line)["response"] for line in lines]


def _report(folder: Path) -> None:
    axis, texts = _answers(folder)
    lexicon = fairtalk.load_lexicon(axis)
    shipped = fairtalk.get_measure("attribute_words", lexicon=lexicon)
    surface = fairtalk.get_measure("attribute_words", lexicon=lexicon)
    surface._lemma = lambda token: token  # type: ignore[attr-defined]  # the same matching, no lemma
    with_lemma, without = shipped.score(texts), surface.score(texts)
    print(f"{folder} ({axis}, {len(texts):,} answers): per answer, simplemma lemma or surface vs surface only")
    for key in with_lemma:
        print(
            f"  {key}: {with_lemma[key].mean():.3f} vs {without[key].mean():.3f}"
            f" ({with_lemma[key].sum():,.0f} vs {without[key].sum():,.0f} words)"
        )
    for item in shipped._lists:  # type: ignore[attr-defined]
        only = Counter(
            f"{token} -> {shipped._lemma(token)}"  # type: ignore[attr-defined]
            for text in texts
            for token in tokenize(text)
            if token not in item.words and shipped._lemma(token) in item.words  # type: ignore[attr-defined]
        )
        print(f"  {item.name}, counted through the lemma only: " + ", ".join(f"{w} {n}" for w, n in only.most_common(12)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audits", nargs="+", type=Path, help="folders written by `fairtalk audit -o`")
    args = parser.parse_args()
    print(machine(stamp=True))
    for folder in args.audits:
        _report(folder)


if __name__ == "__main__":
    main()
