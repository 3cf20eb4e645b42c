"""The built-in chitchat corpus (the ``chitchat-dataset`` package, MIT): each turn with the one after it as its response."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from fairtalk.corpora._readers import EMPTY_VALUE
from fairtalk.corpora._tally import Tally
from fairtalk.errors import CorpusError
from fairtalk.records import Context, join_turns

__all__ = ["read_chitchat"]

_MSG_NO_CHITCHAT = "built-in corpus chitchat needs the chitchat-dataset package (pip install chitchat-dataset)"
_MSG_BAD_CHITCHAT = "cannot read the chitchat dataset ({reason})"


def _join_turn(turn: object) -> str:
    """Join the messages of one chitchat turn with a space."""
    if not isinstance(turn, list):
        return ""
    texts = (m.get("text") for m in turn if isinstance(m, dict))
    return " ".join(t.strip() for t in texts if isinstance(t, str) and t.strip())


def _window(texts: list[str], last: int, n_turns: int) -> str:
    """The last ``n_turns`` turns up to ``last`` (the user's; speakers alternate back from it), empty ones left out."""
    kept = [j for j in range(max(0, last - n_turns + 1), last + 1) if texts[j]]
    return join_turns([texts[j] for j in kept], ["user" if (last - j) % 2 == 0 else "assistant" for j in kept])


def read_chitchat(tally: Tally, *, split: str, split_of: Callable[[str], str], turns: int = 1) -> Iterator[Context]:
    """Built-in chitchat: each turn with the one after it as its response; ``turns`` > 1 gives the conversation so far.

    With ``turns=N`` a context is the last N turns up to that one (fewer at the start of a
    dialogue), joined by :data:`~fairtalk.records.TURN_SEPARATOR`; empty turns are left out.
    The speakers alternate, the last turn the user's; a left-out turn shifts no role.
    """
    try:
        import chitchat_dataset
    except ImportError as exc:
        raise CorpusError(_MSG_NO_CHITCHAT) from exc
    data_path = Path(chitchat_dataset.__file__).with_name("dataset.json")
    try:
        with open(data_path, "rb") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise CorpusError(_MSG_BAD_CHITCHAT.format(reason=exc), path=str(data_path)) from exc
    for conv_id, conv in data.items():
        if split != "all" and split_of(conv_id) != split:
            continue
        messages = conv.get("messages", ()) if isinstance(conv, dict) else ()
        texts = [_join_turn(turn) for turn in messages]
        for i in range(len(texts) - 1):
            where = f"builtin:chitchat#{conv_id}/{i}"
            if not texts[i]:
                tally.skip(EMPTY_VALUE, where)
                continue
            tally.emit()
            text = texts[i] if turns == 1 else _window(texts, i, turns)
            yield Context(
                id=f"chitchat:{conv_id}/{i}",
                text=text,
                origin=where,
                response=texts[i + 1] or None,
                cluster=f"chitchat:{conv_id}",
            )
