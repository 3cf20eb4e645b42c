"""Models of one code and different state, for test_callable_identity (a module of their own: cheap to fingerprint)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Bot:
    """A model whose answers depend on its instance."""

    def __init__(self, words: int) -> None:
        self.words = words

    def reply(self, text: str) -> str:
        return " ".join(["w"] * self.words)


class LockedBot:
    """A model holding what has no value to read (a lock, as a torch model or an open file would be)."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.lock = threading.Lock()

    def reply(self, text: str) -> str:
        return self.word


def styled(text: str, style: str) -> str:
    return "that is " + style


def make_bot(suffix: str) -> Callable[[str], str]:
    def reply(text: str) -> str:
        return "That sounds nice" + suffix

    return reply


def plain(text: str) -> str:
    return text


class WordsBot(dict[str, str]):
    """A model whose state is a dict's items, not attributes: fairtalk cannot read it as a dict subclass's."""

    def reply(self, text: str) -> str:
        return self.get(text, "")


class CallbackBot:
    """A model holding a callback bound to itself: its state refers back to itself."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.answer = self.say

    def say(self, text: str) -> str:
        return self.word

    def reply(self, text: str) -> str:
        return self.answer(text)


class Counting:
    """A model that counts its calls (its own state changes as it runs), interrupted once at call ``stop``."""

    def __init__(self, stop: int = 0) -> None:
        self.calls = 0
        self.stop = stop

    def reply(self, text: str) -> str:
        self.calls += 1
        if self.calls == self.stop:
            raise KeyboardInterrupt
        return f"ok {len(text) % 5}"


class Memo:
    """A model that memoizes its answers into ``self.cache``."""

    def __init__(self) -> None:
        self.cache: dict[str, str] = {}

    def reply(self, text: str) -> str:
        if text not in self.cache:
            self.cache[text] = f"ok {len(text) % 5}"
        return self.cache[text]


class SlottedCounting:
    """Counting without a ``__dict__`` or a ``__weakref__``: no weak reference can be made to it."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls = 0

    def reply(self, text: str) -> str:
        self.calls += 1
        return "ok"
