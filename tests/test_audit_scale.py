"""Issue 40: what an audit holds per pair stays compact, and the generation stage works in bounded chunks.

Structural checks, no timings: pairs that make the same swaps share one swap record; the pair
sample keeps its input positions in an array, not a tuple per pair; ``generate`` hands the
model at most ``_CHUNK`` pair sides per call; its response set is what ``read_responses``
builds from the same records, held as columns (texts, contexts, an int64 array of seeds), not
a ``Response`` record per pair side; scoring finds the distinct answers once; the diversity
index and the offense scorer work in blocks with the same values; the audit holds its pairs as a
``PairColumn`` (columns, a ``Pair`` built when read) equal to the tuple of its records.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import fairtalk.pairs as pairs_module
import fairtalk.run._generate as generate_module
from fairtalk import Swapper, build_pairs, load_lexicon, read_responses
from fairtalk._responses import ResponseColumn, aligned_responses, response_texts, write_responses
from fairtalk.models import DecodingSettings
from fairtalk.pairs import PairColumn, read_pairs
from fairtalk.progress import ProgressReporter
from fairtalk.records import Context, Pair, Response, Swap
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


def _generated(pairs: list[Pair]):  # type: ignore[no-untyped-def]
    with cached_model("builtin:echo", None, batch_size=4, max_errors=None) as cached:
        return generate(cached, pairs, DecodingSettings(), seed=0, progress=ProgressReporter(None))


def test_generation_holds_answers_as_columns_not_a_record_per_pair_side(gender: Swapper, tmp_path: Path) -> None:
    import numpy as np

    pairs = list(build_pairs(_texts(30), gender))
    rs = _generated(pairs).responses
    for side, column in (("a", rs.a), ("b", rs.b)):
        assert isinstance(column, ResponseColumn)
        assert column.pair_ids is rs.pair_ids
        held = [getattr(column, name) for name in ResponseColumn.__slots__]
        assert not any(isinstance(item, Response) for value in held if isinstance(value, list) for item in value)
        assert isinstance(column._seeds, np.ndarray) and column._seeds.dtype == np.int64
        assert column._rest is None  # no cluster, no finish reason: nothing per pair beside the seed
        assert column.axis == "gender"  # the pairs' axis, held once per column
        assert list(column.texts) == [r.response for r in column] == list(response_texts(column))
        assert [r.context for r in column] == [getattr(p, side) for p in pairs]
    first = rs.a[0]
    assert first == Response(pairs[0].id, "a", pairs[0].a, rs.a.texts[0])
    assert first.extra == (("seed", generate_module.item_seed(0, pairs[0].id, "a")), ("axis", "gender"))
    assert rs.a[-1] == rs.a[len(rs.a) - 1] and rs.b[1:3] == (rs.b[1], rs.b[2])
    with pytest.raises(IndexError):
        rs.a[len(rs.a)]
    assert rs.a == tuple(rs.a) and tuple(rs.a) == rs.a and rs.a != rs.b
    written = write_responses(rs, tmp_path / "responses.jsonl")
    back = read_responses(written)
    assert isinstance(back.a, tuple)
    assert (back.pair_ids, back.a, back.b) == (rs.pair_ids, rs.a, rs.b)
    assert back.b == rs.b and rs.b == back.b
    assert [r.extra for r in back.a] == [r.extra for r in rs.a]


def test_a_column_keeps_clusters_and_a_set_of_columns_filters_like_one_of_records() -> None:
    pairs = [Pair(f"p{i}", "gender", f"he said {i}", f"she said {i}", "a", cluster=f"dialogue{i // 2}") for i in range(5)]
    pairs.append(Pair("p5", "gender", "he said", "", "a", cluster="dialogue2"))
    rs = _generated(pairs).responses
    assert isinstance(rs.a, ResponseColumn)
    seed = generate_module.item_seed(0, "p3", "a")
    assert rs.a[3].extra == (("seed", seed), ("axis", "gender"), ("cluster", "dialogue1"))
    assert rs.clusters == tuple(f"dialogue{i // 2}" for i in range(6))
    records = read_responses([r for pair in zip(rs.a, rs.b) for r in pair])
    assert (rs.pair_ids, rs.a, rs.b) == (records.pair_ids, records.a, records.b)
    assert rs.clusters == records.clusters
    kept, kept_records = read_responses(rs, drop_empty=True), read_responses(records, drop_empty=True)
    assert (kept.pair_ids, kept.a, kept.b) == (kept_records.pair_ids, kept_records.a, kept_records.b)
    assert rs.summary["n_empty"] == records.summary["n_empty"] == 1  # pair p5's side b answers ""
    assert kept.pair_ids == ("p0", "p1", "p2", "p3", "p4")
    assert kept.summary["n_empty_dropped"] == kept_records.summary["n_empty_dropped"] == 1


def test_scoring_finds_the_distinct_answers_once_and_measures_keep_them() -> None:
    import numpy as np

    from fairtalk.measures import DistinctTexts, Length, dedupe, score_unique
    from fairtalk.run._score import _index

    uniques, ia, ib = _index(["x y", "z", "x y"], ["z", "w", "x y"])
    assert isinstance(uniques, DistinctTexts)
    assert uniques == ["x y", "z", "w"] and ia.tolist() == [0, 1, 0] and ib.tolist() == [1, 2, 0]
    kept, inverse = dedupe(uniques)
    assert kept is uniques and inverse.tolist() == [0, 1, 2]
    assert dedupe(["x y", "z", "x y"])[1].tolist() == [0, 1, 0]  # a plain list is still deduplicated
    assert np.array_equal(score_unique(Length(), uniques)["length"], [2.0, 1.0, 1.0])


def test_the_diversity_index_built_in_blocks_counts_what_sets_of_ngrams_count() -> None:
    import random
    from itertools import pairwise

    import numpy as np

    from fairtalk.measures import Diversity, tokenize

    rng = random.Random(11)
    words = "a b c d e f g h".split()
    n = (1 << 16) + 999  # more texts than one block of the packed index
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))) + f" w{i % 5000}" for i in range(n)]
    stat = Diversity().prepare(texts)
    weights = np.random.default_rng(1).integers(0, 2, n)
    tokens = [tokenize(t) for t, w in zip(texts, weights) if w]
    n_words = sum(len(t) for t in tokens)
    got = stat(weights)
    assert got["distinct_1"] == pytest.approx(len({w for t in tokens for w in t}) / n_words, abs=1e-12)
    assert got["distinct_2"] == pytest.approx(len({b for t in tokens for b in pairwise(t)}) / n_words, abs=1e-12)


def test_offense_scored_in_blocks_gives_the_same_probabilities(monkeypatch: pytest.MonkeyPatch) -> None:
    profanity_check = pytest.importorskip("profanity_check")
    import numpy as np

    from fairtalk.measures import Offense

    texts = [f"you are a {w} number {i}" for i, w in enumerate(["nice", "damn", "stupid", "kind", "fool"] * 13200)]
    whole = np.asarray(profanity_check.predict_prob(texts), dtype=np.float64)
    calls: list[int] = []
    original = profanity_check.predict_prob

    def counted(batch: list[str]) -> object:
        calls.append(len(batch))
        return original(batch)

    monkeypatch.setattr(profanity_check, "predict_prob", counted)
    assert np.array_equal(Offense().probabilities(texts), whole)
    assert calls == [1 << 16, len(texts) - (1 << 16)]


def _contexts(n: int) -> list[Context]:
    """Contexts as a JSONL corpus reads them: an origin ``path:line``, and a cluster on some."""
    return [
        Context(id=f"c.jsonl:{i + 1}", text=text, origin=f"/data/c.jsonl:{i + 1}", cluster=f"d{i // 3}" if i % 4 else None)
        for i, text in enumerate(_texts(n))
    ]


@pytest.mark.parametrize(("limit", "balance"), [(None, False), (7, False), (500, False), (None, True), (6, True)])
def test_a_pass_held_as_a_pair_column_equals_the_tuple_of_its_records(gender: Swapper, limit: int | None, balance: bool) -> None:
    pair_set = build_pairs([*_contexts(60), "she is a nurse"], gender, limit=limit, seed=2, balance=balance)
    records = tuple(pair_set)
    coverage = pair_set.coverage
    column = pair_set.column()
    assert isinstance(column, PairColumn) and not isinstance(column, tuple)
    assert pair_set.coverage == coverage  # the same pass, counted alike
    assert column == records and records == column and column == list(records)
    assert len(column) == len(records) and list(column) == list(records)
    assert [column[i] for i in range(len(column))] == list(records)
    assert column[-1] == records[-1] and column[-len(column)] == records[0]
    assert column[1:4] == records[1:4] and column[::-2] == records[::-2] and column[5:2] == ()
    for out_of_range in (len(column), -len(column) - 1):
        with pytest.raises(IndexError):
            column[out_of_range]
    assert column != records[:-1] and column != (*records[:-1], replace(records[-1], cluster="other"))
    assert hash(column) == hash(records)
    assert list(column.a) == [p.a for p in records] and list(column.b) == [p.b for p in records]
    assert column.clusters == [p.cluster for p in records]


def test_a_pair_column_holds_no_pair_record_and_one_axis(gender: Swapper) -> None:
    from array import array

    pair_set = build_pairs(_contexts(80), gender, limit=30, seed=1)
    records = tuple(pair_set)
    column = pair_set.column()
    columns = column._columns
    held = [getattr(columns, name) for name in type(columns).__slots__]
    assert not any(isinstance(item, Pair) for value in held if isinstance(value, list) for item in value)
    assert columns._axes.constant and len(columns._axes) == 30  # the axis once
    assert isinstance(columns._sides, bytearray)  # a byte a pair
    assert columns._ids._strings is None and isinstance(columns._ids._numbers, array)  # "gender-<hash>": 8 bytes
    assert columns._origins._strings is None and list(columns._origins._numbers) == [
        int(p.origin.rpartition(":")[2]) for p in records
    ]
    assert columns._a == [p.a for p in records] and all(column[i].b is columns._b[i] for i in range(30))  # no copy
    assert len({id(s) for s in columns._swaps}) == 2  # shared swap records
    assert column == records


def test_a_pair_column_keeps_any_pairs_exactly() -> None:
    swap = (Swap(0, 2, "he", "she", "a"),)
    odd = [
        Pair("gender-00000000000000ff", "gender", "he", "she", "a", swap, "f.jsonl:7", None),
        Pair("gender-00000000000000FF", "gender", "he x", "she x", "b", (), "f.jsonl:007", "c"),  # not its id pattern
        Pair("mine", "race", "a", "b", "a", (), "", None),  # another axis, no origin
        Pair("gender-0000000000000001", "gender", "", "", "b", swap, "other.jsonl:3", "c"),
    ]
    column = PairColumn.of(odd)
    assert column == tuple(odd) and list(column) == odd and PairColumn.of(column) is column
    assert [p.id for p in column] == [p.id for p in odd] and [p.origin for p in column] == [p.origin for p in odd]
    assert column.clusters == [None, "c", None, "c"]
    assert PairColumn.of([]) == () and len(PairColumn.of([])) == 0 and PairColumn.of([]).clusters is None


@pytest.mark.parametrize("chunk", [1, 3, 4096])
def test_the_reservoir_held_as_columns_draws_the_iterated_sample(
    gender: Swapper, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(pairs_module, "_RESERVOIR_CHUNK", chunk)
    pair_set = build_pairs(_contexts(300), gender, limit=50, seed=3)
    assert pair_set.column() == tuple(pair_set)
    assert len(pair_set.column()) == 50 and pair_set.coverage.n_pairs == 50


def test_the_audit_holds_its_pairs_as_a_pair_column(gender: Swapper, tmp_path: Path) -> None:
    from fairtalk import audit, read_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"context": text}) + "\n" for text in _texts(40)), encoding="utf-8")
    run = audit(corpus=str(corpus), axes="gender", model="builtin:echo", n_pairs=25, n_resamples=200, out_dir=tmp_path / "r")
    pairs = run.axes["gender"].pairs
    assert isinstance(pairs, PairColumn)  # not a list or tuple of Pair records
    expected = tuple(build_pairs(read_corpus(str(corpus)), Swapper(load_lexicon("gender"), seed=0), limit=25, seed=0))
    assert pairs == expected and len(pairs) == 25
    written = list(read_pairs(tmp_path / "r" / "gender" / "pairs.jsonl"))
    assert [(p.id, p.a, p.b, p.original_side, p.origin) for p in written] == [
        (p.id, p.a, p.b, p.original_side, p.origin) for p in expected
    ]


# Off the bare audit's path: the sequential audit's ranking, the similarity test's placebo pairs, pairs given
# ready-made to run_axes() / respond() / similarity_test(), and `fairtalk respond`'s pairs file (issue 40).


def _old_ranking(pairs: list[Pair], seed: int, budget: int, balance: bool) -> tuple[list[Pair], dict[str, int]]:
    """The ranking as ``nested_pairs`` made it before it held its pairs as columns: ``Pair`` records and an id dict."""
    import hashlib
    import heapq

    def rank(pair: Pair) -> bytes:
        return hashlib.blake2b(f"{seed}\x1f{pair.id}".encode("utf-8", "surrogatepass"), digest_size=8).digest()

    positions = {pair.id: index for index, pair in enumerate(pairs)}
    if balance:
        sides = [sorted((p for p in pairs if p.original_side == side), key=rank) for side in "ab"]
        ranked = [pair for both in zip(*sides) for pair in both][:budget]
    else:
        ranked = heapq.nsmallest(budget, pairs, key=rank)
    return ranked, positions


@pytest.mark.parametrize("balance", [False, True])
@pytest.mark.parametrize("budget", [1, 2, 7, 40, 123, 10_000])
def test_the_sequential_ranking_is_a_pair_column_equal_to_the_ranked_records(tmp_path: Path, balance: bool, budget: int) -> None:
    from fairtalk import read_corpus
    from fairtalk.config import PairsOptions
    from fairtalk.run._sequential import nested_pairs

    corpus = tmp_path / "corpus.jsonl"
    texts = [*_texts(150), *(f"she is a nurse number {i}" for i in range(40))]  # more side-b originals
    corpus.write_text("".join(json.dumps({"context": text}) + "\n" for text in texts), encoding="utf-8")
    pairing = PairsOptions(corpus=str(corpus), split="all", turns=1, n_pairs=1, mixed="drop", balance=balance, seed=5)
    nested = nested_pairs(read_corpus(str(corpus)), load_lexicon("gender"), pairing, budget)
    pairs = list(build_pairs(read_corpus(str(corpus)), Swapper(load_lexicon("gender"), seed=5), seed=5, balance=balance))
    ranked, positions = _old_ranking(pairs, 5, budget, balance)
    assert isinstance(nested.ranked, PairColumn)  # not a tuple of Pair records
    assert nested.ranked == tuple(ranked) and list(nested.ranked) == ranked  # record by record, in rank order
    assert nested.positions.tolist() == [positions[p.id] for p in ranked]
    for n in sorted({1, 2, len(ranked) // 2, len(ranked)} & set(range(1, len(ranked) + 1))):
        look, coverage = nested.look(n)
        assert isinstance(look, PairColumn)
        assert look == tuple(sorted(ranked[:n], key=lambda p: positions[p.id]))  # the old look: corpus order
        assert coverage.n_pairs == n and coverage.limit == n


def test_a_sequential_audit_holds_its_pairs_as_a_pair_column(tmp_path: Path) -> None:
    from fairtalk import audit

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"context": text}) + "\n" for text in _texts(60)), encoding="utf-8")
    run = audit(
        corpus=str(corpus), axes="gender", model="builtin:echo", until_decided=True, n_pairs=10, max_pairs=20, n_resamples=200
    )
    pairs = run.axes["gender"].pairs
    assert isinstance(pairs, PairColumn) and len(pairs) == run.results["gender"].n_pairs


def test_the_placebo_column_holds_the_replaced_records(gender: Swapper) -> None:
    column = build_pairs(_contexts(40), gender, limit=15, seed=4).column()
    placebo = column.placebo()
    assert isinstance(placebo, PairColumn)
    assert placebo == tuple(replace(pair, b=pair.a, swaps=()) for pair in column)
    assert column == tuple(build_pairs(_contexts(40), gender, limit=15, seed=4))  # the column it came from is unchanged
    assert placebo._columns._a is column._columns._a  # shared strings, no copy
    picked = placebo.take([3, 0, 14])
    assert isinstance(picked, PairColumn) and picked == (placebo[3], placebo[0], placebo[14])


class _Seen:
    """Wraps ``generate``: the pairs each call was given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: object) -> None:
        self.calls: list[object] = []
        real = generate

        def seen(cached: object, pairs: object, *args: object, **kwargs: object) -> object:
            self.calls.append(pairs)
            return real(cached, pairs, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(module, "generate", seen)


@pytest.mark.parametrize("sample", [False, True])
def test_the_similarity_test_asks_pairs_and_placebo_pairs_held_as_columns(
    gender: Swapper, monkeypatch: pytest.MonkeyPatch, sample: bool
) -> None:
    import fairtalk
    import fairtalk.run._similarity_test as similarity_module

    given = list(build_pairs(_contexts(60), gender))
    seen = _Seen(monkeypatch, similarity_module)
    settings = DecodingSettings(do_sample=True, temperature=1.0) if sample else DecodingSettings()
    result = fairtalk.similarity_test(given, model=lambda text: f"{text} ok", settings=settings)
    assert result.rows and all(isinstance(pairs, PairColumn) for pairs in seen.calls)
    counterfactual, baseline = seen.calls[0], seen.calls[1]
    assert counterfactual == tuple(given)
    placebo = tuple(replace(pair, b=pair.a, swaps=()) for pair in given)
    if sample:  # every pair's placebo
        assert baseline == placebo
    else:  # the determinism check: a sample of the placebo pairs
        assert len(baseline) == 20 and set(baseline) <= set(placebo)  # type: ignore[arg-type]


def test_pairs_given_ready_made_are_held_as_a_pair_column(gender: Swapper, monkeypatch: pytest.MonkeyPatch) -> None:
    import fairtalk
    from fairtalk import AuditConfig, ScoreOptions
    from fairtalk.run import run_axes

    pair_set = build_pairs(_contexts(50), gender)
    given = list(pair_set)
    config = AuditConfig(axes=("gender",), model="builtin:echo", n_pairs=None, score=ScoreOptions(n_resamples=200))
    run = run_axes(config, [load_lexicon("gender")], ProgressReporter(None), pairs={"gender": (given, pair_set.coverage)})
    assert isinstance(run.axes["gender"].pairs, PairColumn) and run.axes["gender"].pairs == tuple(given)

    seen = _Seen(monkeypatch, generate_module)
    generation = fairtalk.respond(iter(given), model="builtin:echo")
    assert isinstance(seen.calls[0], PairColumn) and seen.calls[0] == tuple(given)
    assert [ra.pair_id for ra, _ in generation.responses] == [pair.id for pair in given]


def test_the_respond_command_holds_its_pairs_file_as_a_pair_column(
    gender: Swapper, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from fairtalk.cli import app
    from fairtalk.pairs import write_pairs

    given = list(build_pairs(_contexts(30), gender))
    write_pairs(given, tmp_path / "pairs.jsonl")
    seen = _Seen(monkeypatch, generate_module)
    out = tmp_path / "responses.jsonl"
    result = CliRunner().invoke(
        app, ["respond", "--pairs", str(tmp_path / "pairs.jsonl"), "--model", "builtin:echo", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert isinstance(seen.calls[0], PairColumn) and seen.calls[0] == tuple(given)
    assert [r.pair_id for r in read_responses(out).a] == [pair.id for pair in given]


def test_a_pair_with_no_side_a_or_b_is_a_clear_error() -> None:
    import fairtalk

    odd = Pair("p1", "gender", "he", "she", "c", (), "", None)  # type: ignore[arg-type]
    with pytest.raises(fairtalk.InputError, match=r"pair 'p1': original_side must be 'a' or 'b', got 'c'"):
        fairtalk.respond([odd], model="builtin:echo")
