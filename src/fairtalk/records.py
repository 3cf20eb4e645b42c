"""Frozen records that flow between the stages: contexts, swaps, pairs and responses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Context", "Pair", "Response", "Side", "Swap"]

Side = Literal["a", "b"]


@dataclass(frozen=True, slots=True)
class Swap:
    """One replacement made by the swapper.

    ``start``/``end`` index the *original* text; ``source`` is the matched text as
    written there and ``target`` the replacement as written in the output.
    ``source_side`` says which group the matched word belongs to.
    """

    start: int
    end: int
    source: str
    target: str
    source_side: Side
    n_choices: int = 1


@dataclass(frozen=True, slots=True)
class Context:
    """One dialogue context read from a corpus.

    ``origin`` locates it (``path:line`` or ``builtin:chitchat#conv/turn``);
    ``response`` is the reply that followed it in the corpus, when the corpus has one;
    ``cluster`` names the dialogue it belongs to (contexts of one dialogue are not
    independent, and the statistics treat them as one unit), when the corpus says.
    """

    id: str
    text: str
    origin: str = ""
    response: str | None = None
    cluster: str | None = None


@dataclass(frozen=True, slots=True)
class Pair:
    """A parallel context pair: side ``a`` holds the group-A wording, side ``b`` the group-B one.

    ``cluster`` is the dialogue its context came from (None: the pair stands alone).
    """

    id: str
    axis: str
    a: str
    b: str
    original_side: Side
    swaps: tuple[Swap, ...] = ()
    origin: str = ""
    cluster: str | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """A model's response to one side of a pair. ``extra`` keeps unknown input fields."""

    pair_id: str
    side: Side
    context: str
    response: str
    extra: tuple[tuple[str, object], ...] = field(default=(), compare=False)
