"""Issue 40: what an audit holds per pair stays compact, and the generation stage works in bounded chunks.

Structural checks, no timings: pairs that make the same swaps share one swap record; the pair
sample keeps its input positions in an array, not a tuple per pair; ``generate`` hands the
model at most ``_CHUNK`` pair sides per call; its response set is what ``read_responses``
builds from the same records.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fairtalk.pairs as pairs_module
import fairtalk.run._generate as generate_module
from fairtalk import Swapper, build_pairs, load_lexicon, read_responses
from fairtalk._responses import aligned_responses
from fairtalk.models import DecodingSettings
from fairtalk.progress import ProgressReporter
from fairtalk.records import Response
from fairtalk.run._generate import cached_model, generate


@pytest.fixture(scope="module")
def gender() -> Swapper:
    return Swapper(load_lexicon("gender"))


def _texts(n: int) -> list[str]:
    return [f"my brother says he likes item {i}" if i % 2 else f"my sister says she likes item {i}" for i in range(n)]


def test_pairs_with_equal_swaps_share_one_swap_record(gender: Swapper) -> None:
    pairs = list(build_pairs(_texts(40), gender))
    assert len(pairs) == 40
    brothers = [p for p in pairs if p.original_side == "a"]
    sisters = [p for p in pairs if p.original_side == "b"]
    assert len({id(p.swaps) for p in brothers}) == 1  # one tuple of Swap records for 20 pairs
    assert len({id(p.swaps) for p in sisters}) == 1
    assert brothers[0].swaps != sisters[0].swaps


def test_sharing_stops_at_its_bound_and_changes_no_pair(gender: Swapper, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = list(build_pairs(_texts(40), gender))
    monkeypatch.setattr(pairs_module, "_MAX_SHARED_SWAPS", 0)
    unshared = list(build_pairs(_texts(40), gender))
    assert unshared == shared
    assert len({id(p.swaps) for p in unshared}) == 40


@pytest.mark.parametrize("chunk", [1, 3, 4096])
def test_the_sample_is_the_same_whatever_the_size_of_its_position_array(
    gender: Swapper, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    reference = [p.id for p in build_pairs(_texts(300), gender, limit=50, seed=3)]
    monkeypatch.setattr(pairs_module, "_RESERVOIR_CHUNK", chunk)
    sample = [p.id for p in build_pairs(_texts(300), gender, limit=50, seed=3)]
    assert sample == reference
    everything = [p.id for p in build_pairs(_texts(300), gender)]
    assert sorted(sample, key=everything.index) == sample  # corpus order
    assert [p.id for p in build_pairs(_texts(30), gender, limit=50, seed=3)] == everything[:30]


def test_generate_sends_bounded_chunks_and_gets_the_same_answers(gender: Swapper, monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = list(build_pairs(_texts(25), gender))
    settings = DecodingSettings()
    with cached_model("builtin:echo", None, batch_size=4, max_errors=None) as cached:
        whole = generate(cached, pairs, settings, seed=0, progress=ProgressReporter(None))
    calls: list[int] = []
    monkeypatch.setattr(generate_module, "_CHUNK", 6)
    with cached_model("builtin:echo", None, batch_size=4, max_errors=None) as cached:
        original = cached.respond_each

        def counted(contexts, settings, *, seeds):  # type: ignore[no-untyped-def]
            calls.append(len(contexts))
            return original(contexts, settings, seeds=seeds)

        monkeypatch.setattr(cached, "respond_each", counted)
        chunked = generate(cached, pairs, settings, seed=0, progress=ProgressReporter(None))
    assert calls == [6, 6, 6, 6, 6, 6, 6, 6, 2]  # 50 pair sides, 6 at a time (3 pairs)
    assert chunked.responses == whole.responses
    assert chunked.responses.summary == whole.responses.summary
    assert chunked.summary.n_items == whole.summary.n_items == 50
    assert chunked.summary.n_generated == 50


def test_aligned_responses_equal_what_read_responses_builds() -> None:
    a = [Response(str(i), "a", f"he {i}", " " if i == 2 else f"x{i}", (("seed", i),)) for i in range(5)]
    b = [Response(str(i), "b", f"she {i}", f"y{i}") for i in range(5)]
    records = [r for pair in zip(a, b) for r in pair]
    built = aligned_responses([str(i) for i in range(5)], a, b)
    read = read_responses(records)
    assert built == read
    assert dict(built.summary) == dict(read.summary)
    assert built.summary["n_empty"] == 1
    repeated = aligned_responses(["0", "0"], [a[0], a[0]], [b[0], b[0]])  # a repeated id: read_responses' rules
    assert repeated.pair_ids == ("0",)
    assert repeated.summary["n_duplicates"] == 2


def test_attribute_words_cache_at_most_its_bound_of_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    import fairtalk.measures._attribute_words as attribute_module
    from fairtalk.measures import AttributeWords

    texts = [f"the doctor and the nurse met token{i} at work" for i in range(50)]
    unbounded = AttributeWords(lexicon=load_lexicon("gender"))
    expected = unbounded.score(texts)
    monkeypatch.setattr(attribute_module, "_MAX_CACHED_TOKENS", 5)
    bounded = AttributeWords(lexicon=load_lexicon("gender"))
    found = bounded.score(texts)
    assert len(bounded._hits) <= 5 and len(bounded._lemmas) <= 5
    assert len(unbounded._hits) > 50  # every distinct token, without the bound
    assert {k: v.tolist() for k, v in found.items()} == {k: v.tolist() for k, v in expected.items()}
    assert sum(v.sum() for v in found.values()) > 0


@pytest.mark.parametrize("definition", ["paper", "standard"])
def test_the_flat_diversity_index_counts_what_sets_of_ngrams_count(definition: str) -> None:
    import random
    from itertools import pairwise

    import numpy as np

    from fairtalk.measures import Diversity, tokenize

    rng = random.Random(7)
    words = "a b c d e f g h i j k l".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 7))) for _ in range(400)] + ["x", "x y", ""]
    stat = Diversity(definition=definition).prepare(texts)
    weights = np.random.default_rng(0).integers(0, 3, len(texts))
    chosen = [t for t, w in zip(texts, weights) for _ in range(int(w))]
    tokens = [tokenize(t) for t in chosen]
    n_words = sum(len(t) for t in tokens)
    n_bigrams = sum(max(len(t) - 1, 0) for t in tokens)
    d1 = len({w for t in tokens for w in t}) / n_words
    d2 = len({b for t in tokens for b in pairwise(t)}) / (n_words if definition == "paper" else n_bigrams)
    got = stat(weights)
    assert got["distinct_1"] == pytest.approx(d1, abs=1e-12)
    assert got["distinct_2"] == pytest.approx(d2, abs=1e-12)


def test_the_bench_corpus_gives_one_gender_pair_per_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_scripts import BENCH, load_bench
    from fairtalk import read_corpus

    monkeypatch.syspath_prepend(str(BENCH))  # audit_scale imports bench/_machine.py
    bench = load_bench("audit_scale")
    path = tmp_path / "corpus.jsonl"
    bench.make_corpus(path, 300)
    pair_set = build_pairs(read_corpus(str(path)), Swapper(load_lexicon("gender")), limit=250, seed=0)
    pairs = list(pair_set)
    coverage = pair_set.coverage
    assert (coverage.n_read, coverage.n_matched, coverage.n_mixed, coverage.n_duplicates) == (300, 300, 0, 0)
    assert len(pairs) == 250
    assert 100 < sum(p.original_side == "a" for p in pairs) < 150
