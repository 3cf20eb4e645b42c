"""Hostile values at the public entry points: a fairtalk error naming the argument, never a bare error from deep inside.

Review findings: ``[settings] stop = 5`` was an internal error (exit 3) and ``stop = {a = 1}`` read as ``("a",)``;
a ``SpecError`` given a number as the name it could not find raised TypeError itself (its close-match search);
``check_pairs`` took no Lexicon, ``default_measures`` no axis name; ``write_pairs(p, None)``, ``read_pairs(None)``,
``load_lexicon(5)``, ``RunStore(None)`` and the like failed inside pathlib; ``split_turns(None)`` raised
AttributeError; ``build_pairs("he went home", lexicon)`` read twelve one-character contexts.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fairtalk
from fairtalk.cli import app
from fairtalk.errors import SpecError

runner = CliRunner()

CONTEXTS = ["he went home", "she is my mother", "my brother likes his dog"]


@pytest.fixture(scope="module")
def lexicon() -> fairtalk.Lexicon:
    return fairtalk.load_lexicon("gender")


@pytest.fixture(scope="module")
def pairs(lexicon: fairtalk.Lexicon) -> list[fairtalk.Pair]:
    return list(fairtalk.build_pairs(CONTEXTS, lexicon))


# 1. [settings] stop that is not a list


@pytest.mark.parametrize("stop", [5, True, 1.5, None, {"a": 1}, "User:"], ids=["int", "bool", "float", "none", "table", "str"])
def test_a_stop_that_is_not_a_list_of_strings_is_a_spec_error(stop: object) -> None:
    with pytest.raises(SpecError, match=r"^stop must be a list of non-empty strings, got "):
        fairtalk.DecodingSettings(stop=stop)  # type: ignore[arg-type]


def test_a_stop_list_or_tuple_is_still_taken() -> None:
    assert fairtalk.DecodingSettings(stop=["User:", "\n\n"]).stop == ("User:", "\n\n")  # type: ignore[arg-type]
    assert fairtalk.DecodingSettings(stop=("User:",)).stop == ("User:",)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("b.toml", 'model = "builtin:echo"\ncorpus = "c.txt"\naxes = "gender"\nout_dir = "o"\n[settings]\nstop = {value}\n'),
        ("b.yaml", "model: builtin:echo\ncorpus: c.txt\naxes: gender\nout_dir: o\nsettings:\n  stop: {value}\n"),
    ],
    ids=["toml", "yaml"],
)
@pytest.mark.parametrize("value", ["5", "true", "1.5", "{a = 1}"], ids=["int", "bool", "float", "table"])
def test_a_config_files_stop_that_is_not_a_list_is_an_error_naming_the_file(
    name: str, text: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if name.endswith(".yaml"):
        value = {"{a = 1}": "{a: 1}"}.get(value, value)
    monkeypatch.chdir(tmp_path)
    Path("c.txt").write_text("he went home\n", encoding="utf-8")
    Path(name).write_text(text.format(value=value), encoding="utf-8")
    result = runner.invoke(app, ["audit", "--config", name])
    assert result.exit_code == 2, result.output
    assert f"error: {name}: stop must be a list of non-empty strings, got " in result.output
    assert not Path("o").exists()


def test_a_yaml_stop_of_null_is_an_error_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("c.txt").write_text("he went home\n", encoding="utf-8")
    Path("b.yaml").write_text("model: builtin:echo\ncorpus: c.txt\naxes: gender\nout_dir: o\nsettings:\n  stop: null\n")
    result = runner.invoke(app, ["audit", "--config", "b.yaml"])
    assert result.exit_code == 2, result.output
    assert "error: b.yaml: stop must be a list of non-empty strings, got None" in result.output


# 2. SpecError given a name that is not a str


def test_a_spec_error_given_a_name_with_no_choices_adds_no_type_note() -> None:
    """A str ``given`` with nothing to match against is what was expected: no "(got type str, expected a str)"."""
    assert str(SpecError("axis religion is multi-way", given="religion")) == "axis religion is multi-way"
    with pytest.raises(SpecError) as caught:
        fairtalk.load_lexicon("religion")
    assert str(caught.value).endswith("an audit of religion runs christian against each"), caught.value


def test_a_spec_error_given_a_number_says_its_type_instead_of_looking_for_a_close_match() -> None:
    error = SpecError("unknown measure 5", choices=("diversity", "offense"), given=5)
    assert str(error) == "unknown measure 5 (got type int, expected a str) (choose from: diversity, offense)"
    assert error.given == 5


def test_a_spec_error_still_suggests_a_close_string_match() -> None:
    error = SpecError("unknown measure 'ofense'", choices=("diversity", "offense"), given="ofense")
    assert str(error) == "unknown measure 'ofense'; did you mean 'offense'? (choose from: diversity, offense)"


@pytest.mark.parametrize(
    ("call", "start"),
    [
        (lambda pairs, tmp: fairtalk.get_measure(5), "unknown measure 5"),
        (lambda pairs, tmp: fairtalk.read_corpus(str(tmp / "c.txt"), split=5), "unknown split 5"),
        (lambda pairs, tmp: fairtalk.load_lexicon("gender", variant=5), "unknown lexicon variant 5"),
        (lambda pairs, tmp: fairtalk.similarity_test(pairs, model="builtin:echo", methods=[5]), "unknown similarity method 5"),
        (lambda pairs, tmp: fairtalk.compare_runs(tmp, tmp, correction=5), "unknown correction 5"),
    ],
    ids=["get_measure", "read_corpus-split", "load_lexicon-variant", "similarity_test-methods", "compare_runs-correction"],
)
def test_a_number_where_a_name_is_expected_is_a_spec_error(
    call: Callable[[list[fairtalk.Pair], Path], object], start: str, pairs: list[fairtalk.Pair], tmp_path: Path
) -> None:
    (tmp_path / "c.txt").write_text("he went home\n", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        call(pairs, tmp_path)
    assert str(caught.value).startswith(f"{start} (got type int, expected a str) (choose from: ")


# 3. The public entry points


def test_check_pairs_takes_a_lexicon_as_build_pairs_does(pairs: list[fairtalk.Pair], lexicon: fairtalk.Lexicon) -> None:
    from fairtalk.counterfactual import Swapper

    assert fairtalk.check_pairs(pairs, lexicon) == fairtalk.check_pairs(pairs, Swapper(lexicon))
    assert fairtalk.check_pairs(pairs, lexicon).n_pairs == len(pairs) > 0


@pytest.mark.parametrize("who", ["check_pairs", "build_pairs"])
def test_check_pairs_and_build_pairs_refuse_what_is_no_swapper_nor_lexicon(who: str, pairs: list[fairtalk.Pair]) -> None:
    message = f"{who} needs a Swapper or a Lexicon (fairtalk.load_lexicon('gender')), got str"
    with pytest.raises(SpecError) as caught:
        if who == "check_pairs":
            fairtalk.check_pairs(pairs, "gender")  # type: ignore[arg-type]
        else:
            fairtalk.build_pairs(CONTEXTS, "gender")  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_default_measures_takes_an_axis_name(lexicon: fairtalk.Lexicon) -> None:
    by_name = fairtalk.default_measures("gender")
    assert [type(m).__name__ for m in by_name] == [type(m).__name__ for m in fairtalk.default_measures(lexicon)]
    assert "AttributeWords" in [type(m).__name__ for m in by_name]


@pytest.mark.parametrize("given", [5, None])
def test_default_measures_refuses_what_is_no_lexicon(given: object) -> None:
    with pytest.raises(
        SpecError, match=r"^default_measures: lexicon must be a Lexicon, an axis name \('gender'\) or a lexicon path, got "
    ):
        fairtalk.default_measures(given)  # type: ignore[arg-type]


def test_default_measures_names_an_unknown_axis() -> None:
    with pytest.raises(SpecError, match="gendr"):
        fairtalk.default_measures("gendr")


@pytest.mark.parametrize("writer", ["write_pairs", "write_responses"])
@pytest.mark.parametrize("path", [None, 5], ids=["none", "int"])
def test_the_writers_refuse_what_is_no_path_nor_stream(writer: str, path: object, pairs: list[fairtalk.Pair]) -> None:
    records = pairs if writer == "write_pairs" else []  # no response at all: it wrote nothing and returned None
    with pytest.raises(SpecError) as caught:
        getattr(fairtalk, writer)(records, path)
    assert str(caught.value) == f"{writer}: path must be a str or os.PathLike, or an open text stream, got {type(path).__name__}"


def test_the_writers_still_write_to_a_stream(pairs: list[fairtalk.Pair]) -> None:
    out = io.StringIO()
    assert fairtalk.write_pairs(pairs, out) == len(pairs)
    assert [json.loads(line)["id"] for line in out.getvalue().splitlines()] == [p.id for p in pairs]


@pytest.mark.parametrize("given", [None, 5], ids=["none", "int"])
def test_similarity_test_says_what_pairs_it_takes_as_respond_does(given: object) -> None:
    message = "pairs must be a pairs JSONL path or Pair records (what fairtalk.build_pairs yields), got " + type(given).__name__
    with pytest.raises(TypeError) as caught:
        fairtalk.similarity_test(given, model="builtin:echo")  # type: ignore[arg-type]
    assert str(caught.value) == f"similarity_test: {message}"
    with pytest.raises(TypeError) as caught:
        fairtalk.respond(given, model="builtin:echo")  # type: ignore[arg-type]
    assert str(caught.value) == f"respond: {message}"


def test_similarity_test_names_a_text_among_its_pairs(pairs: list[fairtalk.Pair]) -> None:
    with pytest.raises(TypeError, match=r"^similarity_test: pairs item 1 is of type str, not a Pair"):
        fairtalk.similarity_test([pairs[0], "he said hi"], model="builtin:echo")  # type: ignore[list-item]


PATH_TAKERS: dict[str, tuple[Callable[[object], object], str]] = {
    "read_corpus": (
        lambda p: fairtalk.read_corpus(p),
        "read_corpus: spec must be a corpus spec or a path (a str or os.PathLike)",
    ),  # type: ignore[arg-type]
    "read_pairs": (lambda p: fairtalk.read_pairs(p), "read_pairs: path must be a str or os.PathLike"),  # type: ignore[arg-type]
    "load_lexicon": (
        lambda p: fairtalk.load_lexicon(p),  # type: ignore[arg-type]
        "load_lexicon: axis_or_path must be an axis name or a lexicon path (a str or os.PathLike)",
    ),
    "RunStore": (lambda p: fairtalk.RunStore(p), "RunStore: path must be a str or os.PathLike"),  # type: ignore[arg-type]
    "AuditConfig.from_file": (
        lambda p: fairtalk.AuditConfig.from_file(p),  # type: ignore[arg-type]
        "from_file: path must be a config file path (a str or os.PathLike)",
    ),
    "ScoreOptions.from_file": (
        lambda p: fairtalk.ScoreOptions.from_file(p),  # type: ignore[arg-type]
        "from_file: path must be a config file path (a str or os.PathLike)",
    ),
    "compare_runs": (
        lambda p: fairtalk.compare_runs(p, p),  # type: ignore[arg-type]
        "compare_runs: baseline and candidate must be run folders (a str or os.PathLike)",
    ),
}


@pytest.mark.parametrize("given", [None, 5, b"corpus.txt"], ids=["none", "int", "bytes"])
@pytest.mark.parametrize("taker", list(PATH_TAKERS))
def test_a_path_argument_that_is_no_path_is_a_spec_error_naming_it(
    taker: str, given: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    call, message = PATH_TAKERS[taker]
    with pytest.raises(SpecError) as caught:
        call(given)
    assert str(caught.value) == f"{message}, got {type(given).__name__}"
    assert list(tmp_path.iterdir()) == []  # nothing made of it (RunStore would have created a file named "5")


@pytest.mark.parametrize("function", ["split_turns", "turn_roles", "transcript"])
def test_the_turn_readers_say_a_context_is_a_str(function: str) -> None:
    import fairtalk.records

    with pytest.raises(TypeError) as caught:
        getattr(fairtalk.records, function)(None)
    assert str(caught.value) == "a context must be a str (its turns joined by join_turns), got NoneType"


def test_build_pairs_refuses_one_text_for_its_contexts(lexicon: fairtalk.Lexicon) -> None:
    message = (
        "build_pairs: contexts must be a list of texts or Contexts, or a corpus (fairtalk.read_corpus(spec) for a file "
        "or a corpus spec), got {type}"
    )
    for given in ("he went home", None, 5):
        with pytest.raises(SpecError) as caught:
            fairtalk.build_pairs(given, lexicon)  # type: ignore[arg-type]
        assert str(caught.value) == message.format(type=type(given).__name__)
    assert [p.a for p in fairtalk.build_pairs(["he went home"], lexicon)] == ["he went home"]
