"""Counterpart data augmentation: counterparts, consistency, counts, and the JSONL writer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fairtalk.counterfactual import Swapper, term_key
from fairtalk.debias import ROLE_RESOLVED, augment, swap_dialogue, write_dialogues
from fairtalk.errors import InputError, OutputError
from fairtalk.lexicons import load_lexicon
from fairtalk.records import Context

GENDER = Swapper(load_lexicon("gender"))


def _toy() -> list[Context]:
    return [
        Context("1", "he is a doctor", origin="toy:1", response="that is great"),
        Context("2", "how are you", origin="toy:2", response="she said hi"),
        Context("3", "hello there", origin="toy:3", response="hi"),
        Context("4", "no reply here", origin="toy:4", response=None),
        Context("5", "my father called", origin="toy:5", response="Did HE call his mother?"),
        Context("6", "empty reply", origin="toy:6", response=""),
    ]


def test_counterparts_follow_their_original_and_unchanged_dialogues_are_not_duplicated() -> None:
    out = [(d.context, d.response, d.augmented, d.origin) for d in augment(_toy(), GENDER)]
    assert out == [
        ("he is a doctor", "that is great", False, "toy:1"),
        ("she is a doctor", "that is great", True, "toy:1"),
        ("how are you", "she said hi", False, "toy:2"),
        ("how are you", "he said hi", True, "toy:2"),
        ("hello there", "hi", False, "toy:3"),
        ("my father called", "Did HE call his mother?", False, "toy:5"),
        ("my mother called", "Did SHE call her father?", True, "toy:5"),
    ]


def test_summary_counts() -> None:
    result = augment(_toy(), GENDER)
    assert result.summary.n_read == 0  # nothing read before iterating
    list(result)
    summary = result.summary
    assert (summary.n_read, summary.n_no_response, summary.n_in) == (6, 2, 4)
    assert (summary.n_changed, summary.n_out) == (3, 7)
    assert summary.ratio == pytest.approx(7 / 4)
    terms = dict(summary.top_terms)
    assert terms["he"] == 2 and terms["she"] == 1 and terms["father"] == 1
    list(result)  # a second pass over a list starts from zero again
    assert result.summary.n_out == 7


def test_empty_input_has_no_ratio() -> None:
    result = augment([], GENDER)
    assert list(result) == []
    assert result.summary.ratio is None


def test_both_sides_use_the_same_swapper_in_both_directions() -> None:
    context, response, swaps = swap_dialogue(GENDER, "he and she", "She likes him")
    assert (context, response) == ("she and he", "He likes her")
    assert [s.source for s in swaps] == ["he", "she", "She", "him"]


def test_many_to_many_choice_is_consistent_within_a_dialogue() -> None:
    lexicon = load_lexicon("race")
    choices = set()
    for seed in range(8):
        swapper = Swapper(lexicon, seed=seed)
        context, response, _ = swap_dialogue(swapper, "Cool, that is cool. cool!", "so COOL")
        words = context.lower().replace(",", "").replace(".", "").replace("!", "").split()
        first = words[0]
        assert words == [first, "that", "is", first, first]
        assert context.startswith(first.capitalize()) and response == f"so {first.upper()}"
        choices.add(first)
    assert len(choices) > 1  # the seed still picks among the counterparts


def test_role_words_keep_their_own_choice() -> None:
    assert "her" in ROLE_RESOLVED
    context, response, _ = swap_dialogue(GENDER, "I saw her dog", "I like her")
    assert (context, response) == ("I saw his dog", "I like him")


def test_rejects_wrong_types() -> None:
    with pytest.raises(TypeError):
        augment([], load_lexicon("gender"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Context"):
        list(augment([("he", "she")], GENDER))  # type: ignore[list-item]


def test_writer_round_trips_as_a_corpus(tmp_path: Path) -> None:
    from fairtalk.corpora import read_corpus

    out = tmp_path / "augmented.jsonl"
    n = write_dialogues(augment(_toy(), GENDER), out)
    assert n == 7
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = {"context": "she is a doctor", "response": "that is great", "augmented": True, "origin": "toy:1"}
    assert records[1] == expected
    back = [(c.text, c.response) for c in read_corpus(f"jsonl:{out}")]
    assert back[:2] == [("he is a doctor", "that is great"), ("she is a doctor", "that is great")]
    assert len(back) == 7


def test_writer_gzip_and_no_leftover_temporary(tmp_path: Path) -> None:
    import gzip

    out = tmp_path / "augmented.jsonl.gz"
    write_dialogues(augment(_toy()[:1], GENDER), out)
    assert len(gzip.decompress(out.read_bytes()).splitlines()) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["augmented.jsonl.gz"]


def test_writer_refuses_its_own_input(tmp_path: Path) -> None:
    source = tmp_path / "corpus.jsonl"
    source.write_text(json.dumps({"context": "he is here", "response": "ok"}) + "\n", encoding="utf-8")
    before = source.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    cases = ((source, f"jsonl:{source}"), (link, str(source)), (tmp_path / "." / "corpus.jsonl", str(source)))
    for target, spec in cases:
        with pytest.raises(OutputError, match="refusing to write the augmented corpus over its own input"):
            write_dialogues([], target, inputs=[spec])
    assert source.read_bytes() == before
    assert write_dialogues([], tmp_path / "other.jsonl", inputs=[f"jsonl:{source}", "builtin:chitchat"]) == 0


def test_writer_unwritable_target_is_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(OutputError, match="out.jsonl: cannot write .a part of its folder path is a file"):
        write_dialogues([], tmp_path / "a-file" / "out.jsonl")
    assert write_dialogues([], tmp_path / "new-dir" / "out.jsonl") == 0  # missing folders are created


def test_debias_package_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = "import sys, fairtalk.debias._cda, fairtalk.debias._candidate_filter; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_corpus_read_from_an_augmented_file_is_refused_unless_again(tmp_path: Path) -> None:
    from fairtalk.corpora import read_corpus
    from fairtalk.debias import is_augmented_corpus

    swapper = Swapper(load_lexicon("gender"))
    source = [Context("1", "is he a doctor?", response="yes he is"), Context("2", "hi", response="hello")]
    out = tmp_path / "augmented.jsonl.gz"
    write_dialogues(augment(source, swapper), out)
    assert is_augmented_corpus(out) and not is_augmented_corpus(tmp_path / "missing.jsonl")
    corpus = read_corpus(out)
    with pytest.raises(InputError, match="augmented corpus fairtalk wrote.*twins of its twins.*again=True") as caught:
        augment(corpus, swapper)
    assert caught.value.path == str(out)
    assert [d.augmented for d in augment(corpus, swapper, again=True)] == [False, True, False, True, False]
    assert len(list(augment(list(corpus), swapper))) == 5  # records alone carry no file: augmented as given
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert not is_augmented_corpus(empty) and list(augment(read_corpus(empty), swapper)) == []


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.parametrize(
    ("context", "response", "term", "written"),
    [
        ("that is cool", "\uff43\uff4f\uff4f\uff4c indeed", "cool", _fullwidth),  # "ｃｏｏｌ indeed"
        ("that is cool", "\uff23\uff2f\uff2f\uff2c indeed", "cool", lambda w: _fullwidth(w.upper())),  # "ＣＯＯＬ"
        ("that is cool", "Cool indeed", "cool", lambda w: w[0].upper() + w[1:]),
        ("what's up", "what\u2018s up man", "what's up", lambda w: w.replace("'", "\u2018")),
        ("what\u2019s up", "what's up man", "what's up", lambda w: w),
    ],
)
def test_one_choice_a_term_across_its_forms(context: str, response: str, term: str, written: Callable[[str], str]) -> None:
    """A fullwidth or typographic-apostrophe form is the swapper's same term: it takes the context's choice, in its own form."""
    lexicon = load_lexicon("race")
    tail = response.split(" ")[-1]
    seen: set[str] = set()
    for seed in range(12):
        new_context, new_response, swaps = swap_dialogue(Swapper(lexicon, seed=seed), context, response)
        chosen = term_key(swaps[0].target)
        assert term_key(new_context).endswith(chosen)
        assert new_response == f"{written(chosen)} {tail}", (seed, new_context)
        assert term_key(swaps[1].target) == chosen
        seen.add(chosen)
    assert len(seen) > 1  # the seed still picks among the counterparts
    result = augment([Context(str(i), context, response=response) for i in range(3)], Swapper(lexicon))
    list(result)
    assert dict(result.summary.top_terms) == {term: 6}
