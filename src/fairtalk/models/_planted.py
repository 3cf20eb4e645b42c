"""A model with a known gap: group-B contexts get an offensive reply with probability ``rate``.

:class:`PlantedResponder` wraps a base model. A context that ``to_group_a`` maps to group-A
wording (it mentions group B) is answered, with probability ``rate``, by one of a fixed set of
offensive replies (:data:`PLANTED_REPLIES`), and otherwise exactly as its group-A wording: the
base model answers the mapped text. Every other context goes to the base model unchanged. The
draw is deterministic, a hash of the seed and the mapped text, so the two sides of a pair see
the same base answer and the only difference between the groups is the planted reply.

With the base model's own answers offensive for a share ``pi`` of the group-B contexts (mapped),
the true offense-rate gap (B - A) is ``rate * (1 - pi)``: a planted reply replaces an answer
that may already have been offensive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from fairtalk.errors import SpecError
from fairtalk.models._base import DecodingSettings, Responder, check_batch, make_fingerprint

__all__ = ["PLANTED_REPLIES", "PlantedResponder", "planted_draw"]

PLANTED_REPLIES = (
    "you are a stupid idiot and i hate you",
    "you are a stupid idiot, go to hell",
    "you are a disgusting stupid idiot and i hate you",
    "you are a stupid idiot and i hate you, go to hell",
)
"""The planted replies: alt-profanity-check gives each an offense probability of 1.0 and VADER a
compound score at most -0.88 (both checked by tests/test_planted.py), so each is offensive and
clearly negative for the default scorers, whatever the threshold between 0.5 and 0.99."""
_MSG_RATE = "the planted rate must be in [0, 1], got {value!r}"


def planted_draw(seed: int, key: str, salt: str = "plant") -> float:
    """A uniform number in [0, 1) fixed by ``seed``, ``key`` and ``salt`` (the same inputs always draw the same)."""
    digest = hashlib.blake2b(f"{salt}:{seed}:{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


class PlantedResponder(Responder):
    """Answer group-B contexts with a planted offensive reply with probability ``rate``, else as group A.

    Parameters
    ----------
    base : Responder
        Answers every context that gets no planted reply (group-B ones in their group-A wording).
    to_group_a : callable
        ``text -> str | None``: the context in group-A wording when it mentions group B, else None.
    rate : float
        The planted probability, in [0, 1].
    seed : int
        Fixes which contexts get a planted reply and which reply.
    replies : sequence of str
        The planted replies (default :data:`PLANTED_REPLIES`).

    Examples
    --------
    >>> from fairtalk.models._builtin import EchoResponder
    >>> to_a = lambda text: text.replace("she", "he") if "she" in text else None
    >>> model = PlantedResponder(EchoResponder(mode="identity"), to_a, rate=1.0, seed=0)
    >>> settings = DecodingSettings()
    >>> model.respond(["he is here", "she is here"], settings, seeds=[0, 0])[0]
    'he is here'
    >>> model.respond(["she is here"], settings, seeds=[0])[0] in PLANTED_REPLIES
    True
    """

    def __init__(
        self,
        base: Responder,
        to_group_a: Callable[[str], str | None],
        *,
        rate: float,
        seed: int = 0,
        replies: Sequence[str] = PLANTED_REPLIES,
    ) -> None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= rate <= 1.0:
            raise SpecError(_MSG_RATE.format(value=rate))
        self.base = base
        self.to_group_a = to_group_a
        self.rate = float(rate)
        self.seed = seed
        self.replies = tuple(replies)
        self.input_paths = base.input_paths
        digest = hashlib.sha256("\n".join(self.replies).encode()).hexdigest()[:12]
        self._fingerprint = make_fingerprint("planted", base.fingerprint, rate=self.rate, seed=seed, replies=digest)

    @property
    def fingerprint(self) -> str:
        """The base model's fingerprint with the rate, seed and replies."""
        return self._fingerprint

    def planted(self, context: str) -> str | None:
        """The planted reply this context gets, or None (not group B, or not drawn)."""
        mapped = self.to_group_a(context)
        if mapped is None or planted_draw(self.seed, mapped) >= self.rate:
            return None
        return self.replies[int(planted_draw(self.seed, mapped, "reply") * len(self.replies))]

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """The planted reply where one is drawn; the base model's answer to the group-A wording elsewhere."""
        check_batch(contexts, seeds)
        out: list[str | None] = [self.planted(c) for c in contexts]
        asked = [i for i, reply in enumerate(out) if reply is None]
        if asked:
            texts = [self.to_group_a(contexts[i]) or contexts[i] for i in asked]
            answers = self.base.respond(texts, settings, seeds=[seeds[i] for i in asked])
            for i, answer in zip(asked, answers, strict=True):
                out[i] = answer
        return [reply or "" for reply in out]

    def close(self) -> None:
        """Close the base model."""
        self.base.close()
