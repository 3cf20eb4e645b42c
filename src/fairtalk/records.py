"""Frozen records that flow between the stages: contexts, swaps, pairs and responses.

A context may be a conversation: its turns joined by :data:`TURN_SEPARATOR` (U+001E, the
record separator), oldest first, the last turn the user's. Every stage that treats text as
text (the swapper, the store, the files) carries it whole, so a pair swaps every turn with
one consistent choice; a chat model gets the turns as messages (:func:`chat_messages`), any
other model the plain transcript (:func:`transcript`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "TURN_SEPARATOR", "Context", "Pair", "Response", "Side", "Swap", "chat_messages", "join_turns", "split_turns",
    "transcript",
]  # fmt: skip

Side = Literal["a", "b"]
#: Joins the turns of a multi-turn context (U+001E, the ASCII record separator).
TURN_SEPARATOR = "\x1e"


def join_turns(turns: Sequence[str]) -> str:
    """One context from a conversation's turns, oldest first (the last is the user's)."""
    return TURN_SEPARATOR.join(turn.replace(TURN_SEPARATOR, " ") for turn in turns)


def split_turns(context: str) -> list[str]:
    """The turns of a context, oldest first (a single-turn context is one turn)."""
    return context.split(TURN_SEPARATOR)


def transcript(context: str) -> str:
    """The context as plain text, one turn per line (what a model without chat messages reads)."""
    return "\n".join(split_turns(context))


def chat_messages(context: str, system_prompt: str | None = None) -> list[dict[str, str]]:
    """Chat messages of a context: the last turn is the user's and roles alternate backwards.

    Examples
    --------
    >>> [m["role"] for m in chat_messages(join_turns(["hi", "hello!", "how are you?"]), "Be kind.")]
    ['system', 'user', 'assistant', 'user']
    """
    turns = split_turns(context)
    roles = ["user" if (len(turns) - 1 - i) % 2 == 0 else "assistant" for i in range(len(turns))]
    system = [] if system_prompt is None else [{"role": "system", "content": system_prompt}]
    return system + [{"role": role, "content": turn} for role, turn in zip(roles, turns)]


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
