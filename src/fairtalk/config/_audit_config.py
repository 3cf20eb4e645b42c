"""``AuditConfig``: what ``audit()`` does, in one frozen value validated once; buildable from a TOML/YAML file.

A config file (``fairtalk audit --config FILE``) holds the run's options at its top and the
scoring options either at its top too or in a ``[score]`` table::

    model = "builtin:echo"
    axes = ["gender"]
    n_pairs = 500
    seed = 1

    [score]
    alpha = 0.01
    margins = { offense_rate = 0.01 }

Keys are the keyword names of :func:`fairtalk.audit` (``n-pairs`` is read as ``n_pairs``;
a table giving both is a SpecError); an unknown key is a SpecError with "did you mean" and the
known keys, and an empty list (``axes = []``) one naming the choices. The file is read within
bounds (size, nesting, YAML aliases: see ``_options_file.py``).
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, field, fields
from types import MappingProxyType
from typing import Any, Final, Literal

from fairtalk.config._choices import CORRECTION_SCOPES
from fairtalk.config._score_options import (
    ScoreOptions,
    conflicts,
    file_named,
    load_mapping,
    merge_score_table,
    normal_keys,
    split_names,
    unknown_key,
)
from fairtalk.errors import SpecError
from fairtalk.lexicons import Lexicon, axis_names
from fairtalk.measures import SIMILARITY_METHODS
from fairtalk.models import DecodingSettings, RayEngine, ReplyFunction, Responder, resolve_engine
from fairtalk.pairs import MIXED_POLICIES
from fairtalk.stats import SPENDING_FUNCTIONS
from fairtalk.store import DEFAULT_MAX_CONSECUTIVE_FAILURES, RunStore

__all__ = ["DEFAULT_AXES", "DEFAULT_CORPUS", "DEFAULT_N_PAIRS", "HELDOUT_BY_DEFAULT", "NOT_GIVEN", "AuditConfig", "NotGiven"]

DEFAULT_CORPUS = "builtin:chitchat"
DEFAULT_AXES = ("gender", "race")
#: Pairs per axis by default: a bare audit with the built-in retrieval model takes a few minutes on 2 cores.
DEFAULT_N_PAIRS = 2000
#: Corpora whose held-out split is audited by default (so audit contexts are never training contexts).
HELDOUT_BY_DEFAULT = ("builtin:chitchat",)

_MSG_NO_AXES = "give at least one axis"
_MSG_AXIS_TYPE = "axes must be axis names, lexicon paths or Lexicon objects, got {type}"
_MSG_N_PAIRS = "{name} must be a positive int or None, got {value!r}"
_MSG_MAX_ERRORS = "{name} must be 0 or more, or None, got {value!r}"
_MSG_BATCH = "{name} must be a positive int, got {value!r}"
_MSG_TEXT = "{name} must be a string, got {value!r}"
_MSG_PATH = "{name} must be a path, got {value!r}"
_MSG_MODEL = "model must be a spec string, a Responder or a function (one text -> one reply; a batched or async one), got {type}"
_MSG_MODEL_CLASS = "model must be a Responder or a function, got the class {name}: pass an instance"
_MSG_STORE = "store must be a path or a RunStore, got {type}"
_MSG_MAPPING = "{name} must be a table of options, got {value!r}"
_MSG_SETTINGS_KEY = "unknown decoding setting {given!r}"
_MSG_SCOPE = "unknown {name} {given!r}"
_MSG_TURNS = "{name} must be an int >= 1 (turns of a chitchat dialogue per context), got {value!r}"
_MSG_SIMILARITY = "unknown {name} method {given!r}"
_MSG_FLAG = "{name} must be True or False, got {value!r}"
_MSG_LOOKS = "{name} must be an int >= 2 or None, got {value!r}"
_MSG_NEEDS_MAX = "{name} needs {max_pairs} N: the most pairs per axis the audit may use"
_MSG_NEEDS_FIRST = "{name} needs {n_pairs} n (the pairs of the first look), not every pair"
_MSG_MAX_BELOW = "{max_pairs} ({max}) is below the first look, {n_pairs} ({n}): give {max_pairs} >= {n_pairs}"
_MSG_ONLY_SEQUENTIAL = "{name} applies only with {until_decided}"
_MSG_BY_TURN_TURNS = (
    "{by_turn} reports the gap by the turns since the identity appeared, and needs conversations: with {corpus} "
    "give {turns} N with N >= 2 (each context then holds the last N turns of its dialogue), or give a JSONL corpus of "
    'conversations ("messages")'
)
_MSG_BY_TURN_SEQUENTIAL = (
    "{by_turn} does not combine with {until_decided}: its tests per bucket are fixed-sample tests, and a run that "
    "stops once the overall gaps are decided would leave their p-values and intervals invalid"
)
#: URL credentials (``//user:secret@host``) are never recorded.
_CREDENTIALS = re.compile(r"//[^/@\s]+@")


class NotGiven(enum.Enum):
    """The type of :data:`NOT_GIVEN`, the default of every option of ``audit()``: "not given", unlike None."""

    NOT_GIVEN = "NOT_GIVEN"

    def __repr__(self) -> str:
        return "NOT_GIVEN"


#: An option left out of ``audit()``: the config's value (or AuditConfig's default) stands.
NOT_GIVEN: Final = NotGiven.NOT_GIVEN


def _function_name(fn: ReplyFunction) -> str:
    """A function model's name, as ``python:`` specs write it: ``python:module:qualname``."""
    module = fn.__module__ if isinstance(getattr(fn, "__module__", None), str) else "?"
    return f"python:{module}:{getattr(fn, '__qualname__', type(fn).__name__)}"


def _path(value: Any, name: str, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise SpecError(_MSG_PATH.format(name=name, value=value))


def _settings(value: Any, base: DecodingSettings, name: str) -> DecodingSettings:
    """DecodingSettings from a settings object, or a table of fields over ``base``."""
    if isinstance(value, DecodingSettings):
        return value
    if not isinstance(value, Mapping):
        raise SpecError(_MSG_MAPPING.format(name=name, value=value))
    given = normal_keys(value)
    known = tuple(f.name for f in fields(DecodingSettings))
    for key in given:
        if key not in known:
            raise SpecError(_MSG_SETTINGS_KEY.format(given=key), choices=known, given=key)
    return DecodingSettings(**{**base.to_dict(), **given})


@dataclass(frozen=True, slots=True)
class AuditConfig:
    """What an audit does: the corpus, axes, model, generation and store, plus its :class:`ScoreOptions`.

    Every field is a keyword of :func:`fairtalk.audit` (see it for their meaning); the
    scoring options are in ``score``. Built from keyword arguments, :meth:`from_mapping`,
    :meth:`from_file` (TOML, or YAML with PyYAML) or the CLI, and validated once, here.
    ``engine`` (``"local"``, ``"ray"``, a :class:`~fairtalk.models.RayEngine` or a table of its options)
    becomes a RayEngine, or None for this process.
    ``to_dict()`` is what ``run.json`` records as ``config``. ``names`` only renames the
    options in error messages (the CLI passes its flags).

    Raises
    ------
    SpecError
        An unknown choice, a value of the wrong type or out of range.

    Examples
    --------
    >>> config = AuditConfig.from_mapping({"axes": "gender", "n_pairs": 100, "alpha": 0.01})
    >>> config.axes, config.n_pairs, config.score.alpha
    (('gender',), 100, 0.01)
    """

    corpus: str = DEFAULT_CORPUS
    axes: tuple[str | Lexicon, ...] = DEFAULT_AXES
    model: str | Responder | ReplyFunction | None = None
    model_args: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    model_version: str | None = None
    n_pairs: int | None = DEFAULT_N_PAIRS
    split: str | None = None
    mixed: Literal["drop", "keep"] = "drop"
    balance: bool = False
    batch_size: int = 64
    engine: RayEngine | str | None = None
    max_errors: int | None = None
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES
    store: str | RunStore | None = None
    out_dir: str | None = None
    settings: DecodingSettings = field(default_factory=DecodingSettings)
    correction_scope: str = "axis"
    similarity: tuple[str, ...] | None = None
    turns: int = 1
    by_turn: bool = False
    until_decided: bool = False
    max_pairs: int | None = None
    looks: int | None = None
    spending: str = "obrien-fleming"
    score: ScoreOptions = field(default_factory=ScoreOptions)
    names: InitVar[Mapping[str, str] | None] = None

    def __post_init__(self, names: Mapping[str, str] | None) -> None:  # noqa: C901, PLR0915
        label = dict(names or {})

        def name(key: str) -> str:
            return label.get(key, key)

        object.__setattr__(self, "corpus", _path(self.corpus, name("corpus"), optional=False))
        given: object = self.axes  # anything until checked here
        if isinstance(given, (Lexicon, os.PathLike)):
            given = (given,)
        axes = split_names(given, name("axes"), choices=axis_names)
        if not axes:
            raise SpecError(_MSG_NO_AXES)
        for item in axes:
            if not isinstance(item, (str, os.PathLike, Lexicon)):
                raise SpecError(_MSG_AXIS_TYPE.format(type=type(item).__name__))
        object.__setattr__(self, "axes", tuple(os.fspath(a) if isinstance(a, os.PathLike) else a for a in axes))
        if isinstance(self.model, type):
            raise SpecError(_MSG_MODEL_CLASS.format(name=self.model.__name__))
        if self.model is not None and not isinstance(self.model, (str, Responder)) and not callable(self.model):
            raise SpecError(_MSG_MODEL.format(type=type(self.model).__name__))
        if not isinstance(self.model_args, Mapping):
            raise SpecError(_MSG_MAPPING.format(name=name("model_args"), value=self.model_args))
        object.__setattr__(self, "model_args", MappingProxyType(dict(self.model_args)))
        for key in ("model_version", "split"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), str):
                raise SpecError(_MSG_TEXT.format(name=name(key), value=getattr(self, key)))
        n = self.n_pairs
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise SpecError(_MSG_N_PAIRS.format(name=name("n_pairs"), value=n))
        m = self.max_errors
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 0):
            raise SpecError(_MSG_MAX_ERRORS.format(name=name("max_errors"), value=m))
        c = self.max_consecutive_failures
        if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 0):
            raise SpecError(_MSG_MAX_ERRORS.format(name=name("max_consecutive_failures"), value=c))
        b = self.batch_size
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise SpecError(_MSG_BATCH.format(name=name("batch_size"), value=b))
        engine = normal_keys(self.engine) if isinstance(self.engine, Mapping) else self.engine  # one spelling per key
        object.__setattr__(self, "engine", resolve_engine(engine, name=name("engine")))
        if self.mixed not in MIXED_POLICIES:
            raise SpecError(
                _MSG_SCOPE.format(name=name("mixed"), given=self.mixed), choices=MIXED_POLICIES, given=str(self.mixed)
            )
        if isinstance(self.turns, bool) or not isinstance(self.turns, int) or self.turns < 1:
            raise SpecError(_MSG_TURNS.format(name=name("turns"), value=self.turns))
        if not isinstance(self.by_turn, bool):
            raise SpecError(_MSG_FLAG.format(name=name("by_turn"), value=self.by_turn))
        if self.by_turn and self.corpus.startswith("builtin:") and self.turns < 2:  # single turns: nothing to count
            raise SpecError(_MSG_BY_TURN_TURNS.format(by_turn=name("by_turn"), corpus=self.corpus, turns=name("turns")))
        if self.by_turn and self.until_decided is True:
            raise SpecError(_MSG_BY_TURN_SEQUENTIAL.format(by_turn=name("by_turn"), until_decided=name("until_decided")))
        methods = split_names(self.similarity, name("similarity"), choices=lambda: SIMILARITY_METHODS)
        for method in methods or ():
            if method not in SIMILARITY_METHODS:
                raise SpecError(
                    _MSG_SIMILARITY.format(name=name("similarity"), given=method), choices=SIMILARITY_METHODS, given=str(method)
                )
        object.__setattr__(self, "similarity", tuple(methods) if methods else None)
        if self.correction_scope not in CORRECTION_SCOPES:
            raise SpecError(
                _MSG_SCOPE.format(name=name("correction_scope"), given=self.correction_scope),
                choices=CORRECTION_SCOPES,
                given=str(self.correction_scope),
            )
        if self.store is not None and not isinstance(self.store, RunStore):
            if not isinstance(self.store, (str, os.PathLike)):
                raise SpecError(_MSG_STORE.format(type=type(self.store).__name__))
            object.__setattr__(self, "store", os.fspath(self.store))
        object.__setattr__(self, "out_dir", _path(self.out_dir, name("out_dir"), optional=True))
        self._check_sequential(name)
        object.__setattr__(self, "settings", _settings(self.settings, DecodingSettings(), name("settings")))
        if isinstance(self.score, Mapping):
            object.__setattr__(self, "score", ScoreOptions.from_mapping(self.score, names=names))
        elif not isinstance(self.score, ScoreOptions):
            raise SpecError(_MSG_MAPPING.format(name=name("score"), value=self.score))

    def _check_sequential(self, name: Callable[[str], str]) -> None:
        """``until_decided`` needs ``max_pairs`` >= ``n_pairs``; ``max_pairs``, ``looks`` and ``spending`` need it."""
        if not isinstance(self.until_decided, bool):
            raise SpecError(_MSG_FLAG.format(name=name("until_decided"), value=self.until_decided))
        n = self.max_pairs
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise SpecError(_MSG_N_PAIRS.format(name=name("max_pairs"), value=n))
        k = self.looks
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 2):
            raise SpecError(_MSG_LOOKS.format(name=name("looks"), value=k))
        if self.spending not in SPENDING_FUNCTIONS:
            raise SpecError(
                _MSG_SCOPE.format(name=name("spending"), given=self.spending),
                choices=SPENDING_FUNCTIONS,
                given=str(self.spending),
            )
        if not self.until_decided:
            for key, value in (("max_pairs", n), ("looks", k), ("spending", None if self.spending == "obrien-fleming" else 1)):
                if value is not None:
                    raise SpecError(_MSG_ONLY_SEQUENTIAL.format(name=name(key), until_decided=name("until_decided")))
            return
        if n is None:
            raise SpecError(_MSG_NEEDS_MAX.format(name=name("until_decided"), max_pairs=name("max_pairs")))
        if self.n_pairs is None:
            raise SpecError(_MSG_NEEDS_FIRST.format(name=name("until_decided"), n_pairs=name("n_pairs")))
        if n < self.n_pairs:
            raise SpecError(_MSG_MAX_BELOW.format(max_pairs=name("max_pairs"), max=n, n_pairs=name("n_pairs"), n=self.n_pairs))

    @property
    def seed(self) -> int:
        """The run's one seed: the pair sample, the swapper, the per-item generation seeds and the bootstrap."""
        return self.score.seed

    @property
    def effective_split(self) -> str:
        """The corpus split read: ``split``, else ``heldout`` for ``builtin:chitchat`` and ``all`` otherwise."""
        if self.split is not None:
            return self.split
        return "heldout" if self.corpus in HELDOUT_BY_DEFAULT else "all"

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The run's option names (the scoring options are :meth:`ScoreOptions.keys`)."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], *, names: Mapping[str, str] | None = None) -> AuditConfig:
        """The config a mapping gives: run options and scoring options at its top, or scoring ones under ``score``.

        Raises
        ------
        SpecError
            An unknown key (with "did you mean" and the known keys), a key given both at the
            top and under ``score``, or a bad value.
        """
        return cls().updated(mapping, names=names)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AuditConfig:
        """The config of a TOML or YAML file (see the module docstring for its layout).

        Raises
        ------
        InputError
            The file cannot be read or parsed.
        SpecError
            An unknown key or a bad value (the message names the file).
        """
        mapping = load_mapping(path)
        with file_named(path):
            return cls.from_mapping(mapping)

    @classmethod
    def resolve(cls, config: AuditConfig | None, options: Mapping[str, Any]) -> AuditConfig:
        """``config``, or the config keyword ``options`` give; SpecError when both give a key differently."""
        if config is None:
            return cls.from_mapping(options)
        if not isinstance(config, AuditConfig):
            raise SpecError(_MSG_MAPPING.format(name="config", value=config))
        if options:
            given = normal_keys(options)
            other = config.updated(given)
            top = [k for k in given if k in cls.keys() and k != "score"]
            conflicts(config, other, top, "config")
            conflicts(config.score, other.score, [k for k in given if k in ScoreOptions.keys()], "config")
            if "score" in given:
                conflicts(config, other, ["score"], "config")
        return config

    def updated(self, changes: Mapping[str, Any], *, names: Mapping[str, str] | None = None) -> AuditConfig:
        """A copy with ``changes`` applied (run or scoring options; ``settings`` and ``score`` tables update theirs)."""
        given = normal_keys(changes)
        score_keys = ScoreOptions.keys()
        unknown_key(given, (*self.keys(), *score_keys), "audit")
        top = {key: value for key, value in given.items() if key in self.keys()}
        flat = {key: value for key, value in given.items() if key in score_keys}
        score = top.pop("score", None)
        if isinstance(score, ScoreOptions):
            base = score
        elif isinstance(score, Mapping):
            flat = merge_score_table(flat, score)
            base = self.score
        elif score is None:
            base = self.score
        else:
            raise SpecError(_MSG_MAPPING.format(name="score", value=score))
        values = {key: getattr(self, key) for key in self.keys()}
        if isinstance(top.get("settings"), Mapping):
            top["settings"] = _settings(top["settings"], self.settings, "settings")
        options = base.updated(flat, names=names) if flat or names else base
        return AuditConfig(**{**values, **top, "score": options}, names=names)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the config (``run.json``'s ``config``): lexicons by their source, no credentials."""
        out: dict[str, Any] = {key: getattr(self, key) for key in self.keys()}
        out["axes"] = [a if isinstance(a, str) else (a.source if a.variant == "custom" else a.axis) for a in self.axes]
        if isinstance(self.model, str):
            out["model"] = _CREDENTIALS.sub("//***@", self.model)
        elif isinstance(self.model, Responder):
            out["model"] = self.model.fingerprint
        elif self.model is not None:  # a function: its name here; a run records the fingerprint it ran under
            out["model"] = _function_name(self.model)
        out["model_args"] = {key: str(value) for key, value in self.model_args.items()}
        if isinstance(self.store, RunStore):
            out["store"] = str(self.store.path)
        out["settings"] = self.settings.to_dict()
        out["engine"] = self.engine.to_dict() if isinstance(self.engine, RayEngine) else "local"
        out["score"] = self.score.to_dict()
        return out
