"""The model contract is a base class: no stage probes a model with getattr, and the registry checks what it builds."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

import fairtalk.models._registry as registry
from fairtalk import SpecError
from fairtalk.models import DecodingSettings, ModelFactory, Responder, load_responder, register_model

SRC = Path(__file__).resolve().parents[1] / "src" / "fairtalk"
#: The optional capabilities of a Responder (and of a model factory): members with defaults, never probed.
CAPABILITIES = (
    "respond_each",
    "respond_stream",
    "retry_counts",
    "preflight",
    "input_paths",
    "n_actors",
    "options_for",
    "from_spec",
    "in_flight",
    "max_concurrency",
    "tuning",
    "fingerprint",
    "supports_stream",
)
_PROBE = re.compile(r"""(?:getattr|hasattr)\(\s*[^,()]+(?:\([^()]*\))?\s*,\s*["'](""" + "|".join(CAPABILITIES) + r""")["']""")


def test_no_module_probes_a_model_for_a_capability() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in _PROBE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.relative_to(SRC)}:{line}: {match.group(0)}")
    assert not found, "capabilities are Responder members with defaults, not getattr probes:\n" + "\n".join(found)


def test_the_probe_pattern_finds_what_it_must() -> None:
    assert _PROBE.search('paths = getattr(responder, "input_paths", ())')
    assert _PROBE.search("x = getattr(self.model, 'fingerprint', None)")
    assert _PROBE.search('n = hasattr(responder, "n_actors")')
    assert not _PROBE.search('getattr(fn, "batched", False)')


@dataclass(frozen=True, slots=True)
class _ShoutOptions:
    suffix: str = "!"


class _Shout(Responder, ModelFactory[_ShoutOptions]):
    """A third party's adapter: the base class and the factory contract, nothing else."""

    def __init__(self, target: str, options: _ShoutOptions) -> None:
        self.target, self.options = target, options

    @classmethod
    def options_for(cls, target: str) -> type[_ShoutOptions]:
        return _ShoutOptions

    @classmethod
    def from_spec(cls, target: str, options: _ShoutOptions) -> _Shout:
        return cls(target, options)

    @property
    def fingerprint(self) -> str:
        return f"shout:{self.target}{self.options.suffix}"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        return [c.upper() + self.options.suffix for c in contexts]


class _Duck:
    """A Responder's members without its base class."""

    def __init__(self, target: str) -> None:
        self.target = target

    fingerprint = "duck"

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        return list(contexts)

    def close(self) -> None:
        pass


def test_a_factory_subclass_gets_typed_options_and_anything_else_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "MODELS", registry.MODELS.fresh())
    register_model("shout", _Shout)
    with load_responder("shout:x?suffix=?!") as model:
        assert model.respond(["hi"], DecodingSettings(), seeds=[0]) == ["HI?!"]
    with pytest.raises(SpecError, match=r"unknown option 'sufix' for shout:x.*did you mean 'suffix'"):
        load_responder("shout:x?sufix=!")
    register_model("duck", _Duck)
    with pytest.raises(SpecError, match="built _Duck, which is not a Responder .*subclasses fairtalk.models.Responder"):
        load_responder("duck:x")
    register_model("plain", lambda target, **options: _Shout(target, _ShoutOptions(**options)))
    assert load_responder("plain:y", suffix="?").fingerprint == "shout:y?"
