"""Word-embedding regularization: the loss value, multi-token means, OOV skips, training, HF models."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fairtalk.debias import OUT_OF_VOCABULARY, SAME_TOKENS, EmbeddingRegularizer  # noqa: E402
from fairtalk.errors import SpecError  # noqa: E402
from fairtalk.lexicons import Lexicon, WordPair  # noqa: E402


def _lexicon(*pairs: tuple[str, str]) -> Lexicon:
    return Lexicon(
        axis="toy",
        groups=("a", "b"),
        pairs=tuple(WordPair(a, b, i + 1) for i, (a, b) in enumerate(pairs)),
        attributes=(),
        variant="custom",
        source="test",
        sha256="0",
    )


TOY = _lexicon(("he", "she"), ("father", "mother"), ("king", "queen"), ("son in law", "daughter in law"))
VOCAB = {"he": 0, "she": 1, "father": 2, "mother": 3, "son": 4, "in": 5, "law": 6, "daughter": 7, "cat": 8, "dog": 9}


def _distance(weight: torch.Tensor, a: list[int], b: list[int]) -> torch.Tensor:
    return torch.linalg.vector_norm(weight[a].mean(0) - weight[b].mean(0))


def test_value_is_k_times_the_sum_of_distances_with_multi_token_means() -> None:
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(10, 4)
    reg = EmbeddingRegularizer.from_vocab(embedding, TOY, VOCAB, k=0.5)
    w = embedding.weight
    expected = 0.5 * (_distance(w, [0], [1]) + _distance(w, [2], [3]) + _distance(w, [4, 5, 6], [7, 5, 6]))
    assert torch.allclose(reg(), expected)
    assert reg().dim() == 0
    assert reg.pairs == (("he", "she"), ("father", "mother"), ("son in law", "daughter in law"))
    assert (reg.n_pairs_used, reg.n_rows, reg.n_skipped) == (3, 3, 1)
    assert reg.skipped == (("king", "queen", OUT_OF_VOCABULARY),)


def test_k_zero_gives_zero_and_bad_k_is_rejected() -> None:
    embedding = torch.nn.Embedding(10, 4)
    assert EmbeddingRegularizer.from_vocab(embedding, TOY, VOCAB, k=0).forward().item() == 0.0
    for bad in (-1.0, float("nan"), float("inf"), True, "0.5"):
        with pytest.raises(SpecError, match="k must be a finite number"):
            EmbeddingRegularizer.from_vocab(embedding, TOY, VOCAB, k=bad)


def test_callable_vocab_and_identical_tokens_skipped() -> None:
    embedding = torch.nn.Embedding(10, 4)
    ids = {"he": [0], "she": [0], "father": [2, 8], "mother": [3, 8], "king": [], "queen": [9]}
    reg = EmbeddingRegularizer.from_vocab(embedding, TOY, lambda word: ids.get(word), k=1.0)
    assert reg.pairs == (("father", "mother"),)
    assert dict((a, why) for a, _, why in reg.skipped) == {
        "he": SAME_TOKENS,
        "king": OUT_OF_VOCABULARY,
        "son in law": OUT_OF_VOCABULARY,
    }
    assert torch.allclose(reg(), _distance(embedding.weight, [2, 8], [3, 8]))


def test_vocab_lookup_is_case_insensitive_and_no_pairs_gives_zero() -> None:
    embedding = torch.nn.Embedding(3, 2)
    reg = EmbeddingRegularizer.from_vocab(embedding, TOY, {"He": 0, "SHE": 1}, k=1.0)
    assert reg.n_pairs_used == 0 and reg.n_skipped == 4
    reg = EmbeddingRegularizer.from_vocab(embedding, _lexicon(("He", "She")), {"he": 0, "she": 1}, k=1.0)
    assert reg.n_pairs_used == 1
    empty = EmbeddingRegularizer.from_vocab(embedding, TOY, {}, k=1.0)
    assert empty().item() == 0.0 and empty.distances().shape == (0,)


def test_ids_out_of_range_and_non_embeddings_are_rejected() -> None:
    with pytest.raises(ValueError, match="outside the embedding"):
        EmbeddingRegularizer.from_vocab(torch.nn.Embedding(2, 2), TOY, VOCAB)
    with pytest.raises(TypeError, match="Embedding"):
        EmbeddingRegularizer.from_vocab(torch.nn.ReLU(), TOY, VOCAB)


def test_embedding_is_referenced_not_owned() -> None:
    embedding = torch.nn.Embedding(10, 4)
    model = torch.nn.Module()
    model.embedding = embedding
    model.reg = EmbeddingRegularizer.from_vocab(embedding, TOY, VOCAB)
    assert set(model.state_dict()) == {"embedding.weight"}
    assert model.reg.embedding is embedding


def test_training_with_the_term_shrinks_pair_distances_and_the_task_still_learns() -> None:
    """A bag-of-embeddings classifier: label 1 for texts with 'cat', 0 for 'dog'."""
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(10, 8)
    head = torch.nn.Linear(8, 2)
    reg = EmbeddingRegularizer.from_vocab(embedding, TOY, VOCAB, k=0.5)
    texts = torch.tensor([[0, 8, 2], [1, 9, 3], [0, 9, 2], [1, 8, 3], [4, 8, 5], [7, 9, 6]])
    labels = torch.tensor([1, 0, 0, 1, 1, 0])
    parameters = [*embedding.parameters(), *head.parameters()]

    def task_loss() -> torch.Tensor:
        return torch.nn.functional.cross_entropy(head(embedding(texts).mean(1)), labels)

    start_task, start_distances = task_loss().item(), reg.distances().detach().clone()
    for _ in range(200):  # plain gradient descent (torch.optim's first import costs seconds)
        for parameter in parameters:
            parameter.grad = None
        (task_loss() + reg()).backward()
        with torch.no_grad():
            for parameter in parameters:
                parameter -= 0.3 * parameter.grad
    end_distances = reg.distances().detach()
    assert task_loss().item() < 0.5 * start_task
    assert bool((end_distances < 0.2 * start_distances).all())
    assert reg().item() < 0.2 * (0.5 * start_distances.sum().item())


def test_hugging_face_model_with_an_offline_bpe_tokenizer() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    sentences = ["he is my father and she is my mother", "the king and the queen", "a man and a woman"] * 3
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|endoftext|>"]
    )
    tokenizer.train_from_iterator(sentences, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>")
    config = transformers.GPT2Config(
        vocab_size=len(fast), n_positions=16, n_embd=8, n_layer=1, n_head=2, bos_token_id=0, eos_token_id=0
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config)
    lexicon = _lexicon(("he", "she"), ("grandfather", "grandmother"))
    reg = EmbeddingRegularizer.from_hf(model, fast, lexicon, k=0.5)
    # byte-level BPE: every word is in vocabulary; bare and leading-space forms are both tied,
    # except where the space form is a lone "Ġ" plus the bare tokens (the blank token is dropped)
    assert reg.n_pairs_used == 2 and reg.n_skipped == 0

    def ids(text: str) -> list[int]:
        found = fast(text, add_special_tokens=False)["input_ids"]
        return [t for t in found if fast.decode([t]).strip()] or found

    weight = model.get_input_embeddings().weight
    assert len(ids("grandmother")) > 1  # the mean over several tokens is used
    words = (("he", "she"), ("grandfather", "grandmother"))
    rows = {(tuple(ids(p + a)), tuple(ids(p + b))) for a, b in words for p in ("", " ")}
    assert ((tuple(ids("he")), tuple(ids("she")))) in rows and (tuple(ids(" he")), tuple(ids(" she"))) in rows
    assert reg.n_rows == len(rows) == 3
    expected = 0.5 * sum(_distance(weight, list(a), list(b)) for a, b in rows)
    assert torch.allclose(reg(), expected)
    batch = fast(["he is my father"], return_tensors="pt")
    loss = model(**batch, labels=batch["input_ids"]).loss + reg()
    loss.backward()
    assert weight.grad is not None and torch.isfinite(weight.grad).all()


def test_hugging_face_unknown_token_is_out_of_vocabulary() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    from tokenizers import models, pre_tokenizers

    vocab = {"[UNK]": 0, "he": 1, "she": 2, "king": 3}
    tokenizer = tokenizers.Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]")

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(4, 3)

        def get_input_embeddings(self) -> torch.nn.Module:
            return self.embed

    model = Tiny()
    reg = EmbeddingRegularizer.from_hf(model, fast, _lexicon(("he", "she"), ("king", "queen")), k=1.0)
    assert reg.pairs == (("he", "she"),) and reg.n_rows == 1  # " he" tokenizes like "he": one row
    assert reg.skipped == (("king", "queen", OUT_OF_VOCABULARY),)
    assert torch.allclose(reg(), _distance(model.embed.weight, [1], [2]))
    with pytest.raises(TypeError, match="get_input_embeddings"):
        EmbeddingRegularizer.from_hf(torch.nn.Linear(2, 2), fast, "gender")
