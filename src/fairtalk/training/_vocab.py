"""Word-level tokenizer and vocabulary for the reference models (built from the training corpus).

Tokens are lowercase words (apostrophes inside a word are kept: ``don't``, ``o'clock``) and
single punctuation marks. Ids 0–3 are the special tokens ``<pad> <unk> <bos> <eos>``; the
rest are words by descending count, ties alphabetical, so a vocabulary is a pure function of
its corpus and its limits. It is saved as JSON (``{"version", "tokens", "min_count",
"max_size", "n_texts"}``).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from fairtalk._codec import SKIP, Codec, via
from fairtalk.errors import InputError, SpecError

__all__ = ["BOS", "EOS", "PAD", "SPECIALS", "UNK", "Vocab", "detokenize", "tokenize"]

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
VOCAB_VERSION = 1

_TOKEN = re.compile(r"\w+(?:'\w+)*|[^\w\s]")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})
_NO_SPACE_BEFORE = frozenset(".,!?;:%)]}'")
_NO_SPACE_AFTER = frozenset("([{$#")

_MSG_LIMITS = "min_count must be >= 1 and max_size >= {n} (the special tokens), got {min_count!r}, {max_size!r}"
_MSG_BAD_JSON = "not a fairtalk vocabulary file ({reason})"
_MSG_MISSING = "vocabulary file not found"


def tokenize(text: str) -> list[str]:
    """Lowercase ``text`` and split it into words (apostrophes kept) and punctuation marks.

    Examples
    --------
    >>> tokenize("Don't worry, I'm FINE!!")
    ["don't", 'worry', ',', "i'm", 'fine', '!', '!']
    """
    return _TOKEN.findall(text.translate(_QUOTES).lower())


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens into readable text: no space before closing punctuation or after opening.

    Examples
    --------
    >>> detokenize(["i'm", "fine", ",", "thanks", "!"])
    "i'm fine, thanks!"
    """
    out: list[str] = []
    glue = True
    for token in tokens:
        if out and not glue and token[0] not in _NO_SPACE_BEFORE:
            out.append(" ")
        out.append(token)
        glue = token in _NO_SPACE_AFTER
    return "".join(out)


#: A count of how a vocabulary was built, written as it is and read as ``int()`` reads it (as vocabulary files always were).
_COUNT = via(lambda n: n, int)


@dataclass(frozen=True, eq=False, repr=False)
class Vocab(Codec):
    """Token <-> id mapping with the four special tokens first.

    Its JSON (``to_dict()``) is ``{"version", "tokens", "min_count", "max_size", "n_texts"}``.

    Parameters
    ----------
    tokens : sequence of str
        Every token, specials first, in id order.
    min_count, max_size, n_texts : int
        How it was built (kept in the JSON for the record).
    """

    pad_id, unk_id, bos_id, eos_id = 0, 1, 2, 3

    tokens: tuple[str, ...]
    _: KW_ONLY
    min_count: int = field(default=1, metadata=_COUNT)
    max_size: int = field(default=0, metadata=_COUNT)
    n_texts: int = field(default=0, metadata=_COUNT)
    index: dict[str, int] = field(init=False, metadata=SKIP)

    #: The format of the JSON form.
    version: ClassVar[int] = VOCAB_VERSION
    _codec_keys: ClassVar[tuple[str, ...]] = ("version", "tokens", "min_count", "max_size", "n_texts")

    def __post_init__(self) -> None:
        if tuple(self.tokens[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with {SPECIALS}")
        object.__setattr__(self, "tokens", tuple(self.tokens))
        object.__setattr__(self, "index", {t: i for i, t in enumerate(self.tokens)})
        if len(self.index) != len(self.tokens):
            raise ValueError("duplicate token in vocabulary")

    @classmethod
    def build(cls, texts: Iterable[str], *, min_count: int = 2, max_size: int = 8000) -> Vocab:
        """Count the tokens of ``texts``; keep those seen ``min_count`` times, most frequent first."""
        if min_count < 1 or max_size < len(SPECIALS):
            raise SpecError(_MSG_LIMITS.format(n=len(SPECIALS), min_count=min_count, max_size=max_size))
        counts: Counter[str] = Counter()
        n_texts = 0
        for text in texts:
            counts.update(tokenize(text))
            n_texts += 1
        for special in SPECIALS:
            counts.pop(special, None)
        ranked = sorted((item for item in counts.items() if item[1] >= min_count), key=lambda kv: (-kv[1], kv[0]))
        words = [word for word, _ in ranked[: max_size - len(SPECIALS)]]
        return cls(SPECIALS + tuple(words), min_count=min_count, max_size=max_size, n_texts=n_texts)

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"Vocab(n_tokens={len(self)}, min_count={self.min_count}, max_size={self.max_size})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.tokens == other.tokens

    __hash__ = None  # type: ignore[assignment]

    @property
    def words(self) -> Mapping[str, int]:
        """Word -> id for the ordinary words (specials excluded): the mapping WER looks terms up in."""
        return {t: i for t, i in self.index.items() if i >= len(SPECIALS)}

    def encode(self, text: str, *, max_len: int | None = None, keep: str = "start") -> list[int]:
        """Token ids of ``text`` (unknown words -> ``<unk>``), cut to ``max_len`` keeping the start or end."""
        unk = self.unk_id
        ids = [self.index.get(t, unk) for t in tokenize(text)]
        if max_len is not None and len(ids) > max_len:
            ids = ids[-max_len:] if keep == "end" else ids[:max_len]
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids`` up to the first ``<eos>``, without ``<pad>``/``<bos>``."""
        words: list[str] = []
        for i in ids:
            i = int(i)
            if i == self.eos_id:
                break
            if i in (self.pad_id, self.bos_id):
                continue
            words.append(self.tokens[i] if 0 <= i < len(self.tokens) else UNK)
        return detokenize(words)

    @classmethod
    def from_dict(cls, data: Any, *, path: str | None = None) -> Self:
        """Rebuild from :meth:`to_dict` output; InputError (naming ``path``) when it is malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("tokens"), list):
            raise InputError(_MSG_BAD_JSON.format(reason="expected an object with a 'tokens' list"), path=path)
        if not all(isinstance(t, str) for t in data["tokens"]):
            raise InputError(_MSG_BAD_JSON.format(reason="tokens must be strings"), path=path)
        try:
            return super().from_dict(data)
        except (ValueError, TypeError) as exc:
            raise InputError(_MSG_BAD_JSON.format(reason=exc), path=path) from exc

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the JSON form to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Vocab:
        """Read a vocabulary JSON file; InputError when it is missing or malformed."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(_MSG_MISSING, path=str(path)) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(_MSG_BAD_JSON.format(reason=exc), path=str(path)) from exc
        return cls.from_dict(data, path=str(path))
