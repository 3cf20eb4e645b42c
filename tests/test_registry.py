"""Tests for _registry.py: the one generic Registry[T] behind models, measures, corpus formats and axes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import EntryPoint
from typing import Protocol, runtime_checkable

import pytest

import fairtalk._registry
from fairtalk._registry import Registry
from fairtalk.errors import SpecError

GROUP = "fairtalk.tests"


def _colours() -> Registry[Callable[..., object]]:
    return Registry(
        "colour",
        group=GROUP,
        base=Callable,
        expected="a colour function",  # type: ignore[arg-type]
        builtins={"red": "builtins:str", "blue": str.upper},
    )


@pytest.fixture(autouse=True)
def _no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: [])


def test_builtins_runtime_names_and_the_decorator() -> None:
    colours = _colours()
    colours.add("green", "builtins:repr")

    @colours.register("shout")
    def shout(text: str) -> str:
        return text.upper() + "!"

    assert colours.names() == ("blue", "green", "red", "shout")
    assert "green" in colours and "purple" not in colours
    assert colours.get("red") is str and colours.get("blue")("x") == "X" and colours.get("shout") is shout


def test_a_name_is_registered_once() -> None:
    colours = _colours()
    with pytest.raises(
        SpecError,
        match=r"colour 'red' is already registered \(builtins:str\), so it cannot be "
        r"registered twice \(builtins:len\)",
    ):
        colours.add("red", "builtins:len")
    colours.add("green", len)
    with pytest.raises(SpecError, match=r"'green' is already registered \(builtins:len\)"):
        colours.register("green")(str)
    assert colours.get("green") is len  # the first registration stands


def test_malformed_names_and_targets_are_refused() -> None:
    colours = _colours()
    with pytest.raises(SpecError, match="colour target 'no_colon' must look like 'package.module:Name'"):
        colours.add("grey", "no_colon")
    for bad in ("", "a:b", "two words"):
        with pytest.raises(SpecError, match="colour name must be"):
            colours.add(bad, str)


def test_an_unknown_name_says_did_you_mean_and_lists_the_names() -> None:
    colours = _colours()
    with pytest.raises(SpecError, match=r"^unknown colour 'rde'; did you mean 'red'\? \(choose from: blue, red\)$") as info:
        colours.get("rde")
    assert info.value.choices == ("blue", "red") and info.value.given == "rde"
    with pytest.raises(SpecError, match=r"^no colour 'xyz' here \(choose from: blue, red\)$"):
        colours.get("xyz", message="no colour 'xyz' here")
    assert str(colours.unknown("bleu")) == "unknown colour 'bleu'; did you mean 'blue'? (choose from: blue, red)"


def test_a_loaded_object_of_the_wrong_type_is_a_clear_error() -> None:
    colours = _colours()
    colours.add("pi", "math:pi")
    with pytest.raises(SpecError, match=r"colour 'pi' \(math:pi\) is float 3\.14159\d*, which is not a colour function"):
        colours.get("pi")
    numbers: Registry[type] = Registry("number type", base=int, builtins={"bool": "builtins:bool", "str": "builtins:str"})
    assert numbers.get("bool") is bool  # a subclass of the base passes
    with pytest.raises(SpecError, match=r"number type 'str' \(builtins:str\) is class str, which is not int"):
        numbers.get("str")


def test_a_protocol_base_checks_instances_and_classes() -> None:
    @runtime_checkable
    class Greets(Protocol):
        def greet(self) -> str: ...

    class Hello:
        def greet(self) -> str:
            return "hello"

    greeters: Registry[object] = Registry("greeter", base=Greets, builtins={"hello": Hello, "instance": Hello(), "dict": dict})
    assert greeters.get("hello") is Hello and isinstance(greeters.get("instance"), Hello)
    with pytest.raises(SpecError, match=r"greeter 'dict' \(builtins:dict\) is class dict, which is not Greets"):
        greeters.get("dict")


def test_a_target_that_cannot_be_imported() -> None:
    colours = _colours()
    colours.add("gone", "fairtalk_no_such_module:paint")
    colours.add("typo", "builtins:strr")
    with pytest.raises(SpecError, match="cannot load colour 'gone' from 'fairtalk_no_such_module:paint': No module"):
        colours.get("gone")
    with pytest.raises(SpecError, match="cannot load colour 'typo' from 'builtins:strr'"):
        colours.get("typo")


def test_a_string_target_is_imported_only_when_looked_up(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fairtalk_lazy_colour.py").write_text("def paint(text):\n    return 'painted ' + text\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fairtalk_lazy_colour", raising=False)
    colours = _colours()
    colours.add("lazy", "fairtalk_lazy_colour:paint")
    assert "lazy" in colours.names() and not colours.is_loaded("lazy")
    assert "fairtalk_lazy_colour" not in sys.modules
    assert colours.get("lazy")("wall") == "painted wall"
    assert "fairtalk_lazy_colour" in sys.modules and colours.is_loaded("lazy")


def test_entry_points_are_read_once_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    points = [EntryPoint("green", "builtins:repr", GROUP), EntryPoint("nested", "os.path:join", GROUP)]

    def fake(group: str) -> list[EntryPoint]:
        calls.append(group)
        return points if group == GROUP else []

    monkeypatch.setattr(fairtalk._registry, "entry_points", fake)
    colours = _colours()
    assert calls == []  # nothing read at construction
    assert colours.names() == ("blue", "green", "nested", "red")
    assert colours.get("green") is repr and colours.get("nested").__name__ == "join"
    colours.add("grey", str)
    assert calls == [GROUP]
    with pytest.raises(SpecError, match=r"'green' is already registered \(entry point builtins:repr\)"):
        colours.add("green", str)


def test_an_entry_point_may_not_shadow_a_name_and_a_clash_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    points = [EntryPoint("green", "builtins:repr", GROUP), EntryPoint("red", "evil:red", GROUP)]
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: points)
    colours = _colours()
    for _ in range(2):  # the same error each time: the registry is left as it was
        with pytest.raises(SpecError, match=r"colour 'red' is already registered \(builtins:str\), .*\(entry point evil:red\)"):
            colours.names()
    points.pop()
    assert colours.names() == ("blue", "green", "red")


def test_fresh_keeps_the_builtins_only_and_reads_entry_points_again(monkeypatch: pytest.MonkeyPatch) -> None:
    colours = _colours()
    colours.add("green", str)
    colours.get("red")
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: [EntryPoint("pink", "builtins:str", GROUP)])
    again = colours.fresh()
    assert again.names() == ("blue", "pink", "red") and colours.names() == ("blue", "green", "red")
    assert not again.is_loaded("red") and (again.kind, again.group, again.expected) == ("colour", GROUP, "a colour function")


def test_a_registry_without_a_group_reads_no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fairtalk._registry, "entry_points", lambda group: pytest.fail("read entry points"))
    plain: Registry[object] = Registry("thing", builtins={"one": 1})
    assert plain.names() == ("one",) and plain.get("one") == 1
    assert repr(plain) == "Registry('thing', group=None, names=1)"


def test_fairtalk_registries_share_the_class() -> None:
    from fairtalk.corpora import CORPUS_FORMATS
    from fairtalk.lexicons import AXES
    from fairtalk.measures import MEASURES
    from fairtalk.models._builtin import BUILTIN_MODELS
    from fairtalk.models._registry import MODELS

    for registry, group in (
        (MODELS, "fairtalk.models"),
        (MEASURES, "fairtalk.measures"),
        (CORPUS_FORMATS, "fairtalk.corpora"),
        (AXES, "fairtalk.axes"),
        (BUILTIN_MODELS, None),
    ):
        assert isinstance(registry, Registry) and registry.group == group
    assert {"hf", "openai", "python", "replay", "builtin", "retrieval"} <= set(MODELS.names())
    assert {"jsonl", "csv", "parquet"} <= set(CORPUS_FORMATS.names()) and {"gender", "race"} <= set(AXES.names())
