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

import os
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_core import ArgsKwargs

from fairtalk._schema import keys_of, label, options_schema
from fairtalk.config._score_options import (
    ScoreOptions,
    ScoreOverrides,
    conflicts,
    merge_score_table,
    normal_keys,
    options_from_file,
    split_names,
    unknown_key,
)
from fairtalk.config._stages import (
    CorrectionScope,
    GenerationOptions,
    InferenceOptions,
    Mixed,
    OutputOptions,
    PairsOptions,
    SequentialOptions,
    Spending,
)
from fairtalk.errors import SpecError
from fairtalk.lexicons import Lexicon, axis_names
from fairtalk.measures import SIMILARITY_METHODS
from fairtalk.models import DecodingSettings, RayEngine, ReplyFunction, Responder, hide_credentials, resolve_engine
from fairtalk.options import DEFAULT_AXES, DEFAULT_CORPUS, DEFAULT_N_PAIRS, RUN_FIELDS
from fairtalk.store import RunStore

__all__ = [
    "DEFAULT_AXES",
    "DEFAULT_CORPUS",
    "DEFAULT_N_PAIRS",
    "HELDOUT_BY_DEFAULT",
    "AuditConfig",
    "AuditOverrides",
    "Axes",
    "RunOverrides",
]

#: Corpora whose held-out split is audited by default (so audit contexts are never training contexts).
HELDOUT_BY_DEFAULT = ("builtin:chitchat",)

_MSG_NO_AXES = "give at least one axis"
_MSG_AXIS_TYPE = "axes must be axis names, lexicon paths or Lexicon objects, got {type}"
_MSG_MODEL = "model must be a spec string, a Responder or a function (one text -> one reply; a batched or async one), got {type}"
_MSG_MODEL_CLASS = "model must be a Responder or a function, got the class {name}: pass an instance"
_MSG_STORE = "store must be a path or a RunStore, got {type}"
_MSG_MAPPING = "{name} must be a table of options, got {value!r}"
_MSG_SETTINGS_KEY = "unknown decoding setting {given!r}"
_MSG_SIMILARITY = "unknown {name} method {given!r}"
_MSG_NEEDS_MAX = "{name} needs {max_pairs} N: the most pairs per axis the audit may use"
_MSG_NEEDS_FIRST = "{name} needs {n_pairs} n (the pairs of the first look), not every pair"
_MSG_MAX_BELOW = "{max_pairs} ({max}) is below the first look, {n_pairs} ({n}): give {max_pairs} >= {n_pairs}"
_MSG_ONLY_SEQUENTIAL = "{name} applies only with {until_decided}"
_MSG_LOOKS_ROOM = (
    "{looks} {k}: from {n_pairs} {n} to {max_pairs} {max} the looks after the first add at most {room} pairs, at least "
    "one each, so at most {most} looks fit; give {looks} {most} or fewer (or a larger {max_pairs})"
)
_MSG_LOOKS_NO_ROOM = (
    "{looks} {k}: from {n_pairs} {n} to {max_pairs} {max} no look after the first can add a pair; leave {looks} out "
    "(one fixed-sample look) or give a larger {max_pairs}"
)
_MSG_BY_TURN_TURNS = (
    "{by_turn} reports the gap by the turns since the identity appeared, and needs conversations: with {corpus} "
    "give {turns} N with N >= 2 (each context then holds the last N turns of its dialogue), or give a JSONL corpus of "
    'conversations ("messages")'
)
_MSG_BY_TURN_SEQUENTIAL = (
    "{by_turn} does not combine with {until_decided}: its tests per bucket are fixed-sample tests, and a run that "
    "stops once the overall gaps are decided would leave their p-values and intervals invalid"
)


def _function_name(fn: ReplyFunction) -> str:
    """A function model's name, as ``python:`` specs write it: ``python:module:qualname``."""
    module = fn.__module__ if isinstance(getattr(fn, "__module__", None), str) else "?"
    return f"python:{module}:{getattr(fn, '__qualname__', type(fn).__name__)}"


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


#: What ``audit(axes=...)`` accepts: a name (``"gender,race"``: split at commas), a lexicon file or object, or several.
Axes = str | os.PathLike[str] | Lexicon | Sequence[str | os.PathLike[str] | Lexicon]


class RunOverrides(TypedDict, total=False):
    """The run's options as keyword arguments (of ``AuditConfig(...)``), in every form accepted.

    The keys are :class:`AuditConfig`'s fields (a test holds them equal); the types are what a
    caller may pass. Type, default, bounds and help are the fields'.
    """

    corpus: str | os.PathLike[str]
    axes: Axes
    model: str | Responder | ReplyFunction | None
    model_args: Mapping[str, object]
    model_version: str | None
    n_pairs: int | None
    split: str | None
    mixed: str
    balance: bool
    batch_size: int
    engine: str | RayEngine | Mapping[str, object] | None
    max_errors: int | None
    max_consecutive_failures: int | None
    store: str | os.PathLike[str] | RunStore | None
    out_dir: str | os.PathLike[str] | None
    settings: DecodingSettings | Mapping[str, object]
    correction_scope: str
    similarity: str | Sequence[str] | None
    turns: int
    by_turn: bool
    until_decided: bool
    max_pairs: int | None
    looks: int | None
    spending: str
    score: ScoreOptions | Mapping[str, object]


class AuditOverrides(RunOverrides, ScoreOverrides, total=False):
    """The keyword options of ``audit()``: the run's (:class:`RunOverrides`) and the scoring ones (:class:`ScoreOverrides`)."""


@options_schema(kw_only=False)
class AuditConfig:
    """What an audit does: the corpus, axes, model, generation and store, plus its :class:`ScoreOptions`.

    Every field is a keyword of :func:`fairtalk.audit`, declared once: its type here, its
    default, bounds and help text in :data:`fairtalk.options.RUN_FIELDS` (``fairtalk audit
    --help`` reads them); the scoring options
    are in ``score``. Built from keyword arguments, :meth:`from_mapping`, :meth:`from_file`
    (TOML, or YAML with PyYAML) or the CLI, and validated once, here.
    ``engine`` (``"local"``, ``"ray"``, a :class:`~fairtalk.models.RayEngine` or a table of its options)
    becomes a RayEngine, or None for this process.
    ``to_dict()`` is what ``run.json`` records as ``config``. ``names`` only renames the
    options in error messages (the CLI passes its flags).

    The options are held flat (as they are given and recorded) and handed to the stages by
    stage, each a frozen value of its own (``_stages.py``): :attr:`pairs`
    (:class:`PairsOptions`), :attr:`generation` (:class:`GenerationOptions`), :attr:`inference`
    (:class:`InferenceOptions`, holding ``score``), :attr:`sequential`
    (:class:`SequentialOptions`) and :attr:`output` (:class:`OutputOptions`). A stage receives
    its own, never the whole config.

    ``n_pairs_given`` is no option (not among :meth:`keys`, not in ``to_dict()``): it says
    whether ``n_pairs`` was given (by keyword, in a mapping or a file, by :meth:`updated`, by
    ``--pairs``) rather than left at its default, so that a corpus with fewer pairs than asked
    for is said to be short, and one with fewer than the default (2,000) is not.

    Raises
    ------
    SpecError
        An unknown choice, a value of the wrong type or out of range.

    Examples
    --------
    >>> config = AuditConfig.from_mapping({"axes": "gender", "n_pairs": 100, "alpha": 0.01})
    >>> config.axes, config.n_pairs, config.score.alpha
    (('gender',), 100, 0.01)
    >>> config.pairs.n_pairs, config.sequential.alpha, config.inference.score is config.score
    (100, 0.01, True)
    >>> config.n_pairs_given, AuditConfig().n_pairs_given, AuditConfig().updated({"n_pairs": 2000}).n_pairs_given
    (True, False, True)
    """

    # the pairs
    corpus: str = RUN_FIELDS["corpus"]
    axes: tuple[str | Lexicon, ...] = RUN_FIELDS["axes"]
    # the model and its generation
    model: str | Responder | ReplyFunction | None = RUN_FIELDS["model"]
    model_args: Mapping[str, object] = RUN_FIELDS["model_args"]
    model_version: str | None = RUN_FIELDS["model_version"]
    n_pairs: int | None = RUN_FIELDS["n_pairs"]
    split: str | None = RUN_FIELDS["split"]
    mixed: Mixed = RUN_FIELDS["mixed"]
    balance: bool = RUN_FIELDS["balance"]
    batch_size: int = RUN_FIELDS["batch_size"]
    engine: RayEngine | str | None = RUN_FIELDS["engine"]
    max_errors: int | None = RUN_FIELDS["max_errors"]
    max_consecutive_failures: int | None = RUN_FIELDS["max_consecutive_failures"]
    # where it goes
    store: str | RunStore | None = RUN_FIELDS["store"]
    out_dir: str | None = RUN_FIELDS["out_dir"]
    settings: DecodingSettings = Field(default_factory=DecodingSettings, description="Decoding settings (a table of them).")
    # what is tested, and how
    correction_scope: CorrectionScope = RUN_FIELDS["correction_scope"]
    similarity: tuple[str, ...] | None = RUN_FIELDS["similarity"]
    turns: int = RUN_FIELDS["turns"]
    by_turn: bool = RUN_FIELDS["by_turn"]
    # sequential: until decided
    until_decided: bool = RUN_FIELDS["until_decided"]
    max_pairs: int | None = RUN_FIELDS["max_pairs"]
    looks: int | None = RUN_FIELDS["looks"]
    spending: Spending = RUN_FIELDS["spending"]
    score: ScoreOptions = Field(default_factory=ScoreOptions, description="The scoring options (a [score] table).")
    names: InitVar[Mapping[str, str] | None] = None
    #: Whether ``n_pairs`` was given, not left at its default (not an option: see the class docstring).
    n_pairs_given: bool = field(default=False, compare=False, repr=False)

    if TYPE_CHECKING:  # what a caller may pass (validated and normalised into the fields above)

        def __init__(self, *, names: Mapping[str, str] | None = None, **options: Unpack[RunOverrides]) -> None: ...

    @model_validator(mode="before")
    @classmethod
    def _given(cls, value: Any) -> Any:
        """``n_pairs_given``, unless passed: whether ``n_pairs`` was (by keyword, or by position)."""
        if not isinstance(value, ArgsKwargs):
            return value
        kwargs = dict(value.kwargs or {})
        if "n_pairs_given" not in kwargs:
            kwargs["n_pairs_given"] = "n_pairs" in kwargs or len(value.args) > _N_PAIRS_AT
        return ArgsKwargs(value.args, kwargs)

    @field_validator("corpus", "out_dir", mode="before")
    @classmethod
    def _path(cls, value: Any) -> Any:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @field_validator("axes", mode="before")
    @classmethod
    def _axes(cls, value: Any, info: ValidationInfo) -> tuple[str | Lexicon, ...]:
        """Names (split at commas), lexicon paths or Lexicon objects; at least one."""
        given = (value,) if isinstance(value, (Lexicon, os.PathLike)) else value
        axes = split_names(given, label(info), choices=axis_names)
        if not axes:
            raise SpecError(_MSG_NO_AXES)
        for item in axes:
            if not isinstance(item, (str, os.PathLike, Lexicon)):
                raise SpecError(_MSG_AXIS_TYPE.format(type=type(item).__name__))
        return tuple(os.fspath(a) if isinstance(a, os.PathLike) else a for a in axes)

    @field_validator("model", mode="plain")
    @classmethod
    def _model(cls, value: Any) -> str | Responder | ReplyFunction | None:
        """A spec, a Responder or a function (an instance: a class is refused)."""
        if isinstance(value, type):
            raise SpecError(_MSG_MODEL_CLASS.format(name=value.__name__))
        if value is not None and not isinstance(value, (str, Responder)) and not callable(value):
            raise SpecError(_MSG_MODEL.format(type=type(value).__name__))
        return typing.cast("str | Responder | ReplyFunction | None", value)

    @field_validator("model_args", mode="plain")
    @classmethod
    def _model_args(cls, value: Any, info: ValidationInfo) -> Mapping[str, object]:
        if not isinstance(value, Mapping):
            raise SpecError(_MSG_MAPPING.format(name=label(info), value=value))
        return MappingProxyType(dict(value))

    @field_validator("engine", mode="plain")
    @classmethod
    def _engine(cls, value: Any, info: ValidationInfo) -> RayEngine | None:
        engine = normal_keys(value) if isinstance(value, Mapping) else value  # one spelling per key
        return resolve_engine(engine, name=label(info))

    @field_validator("store", mode="plain")
    @classmethod
    def _store(cls, value: Any) -> str | RunStore | None:
        if value is None or isinstance(value, RunStore):
            return value
        if not isinstance(value, (str, os.PathLike)):
            raise SpecError(_MSG_STORE.format(type=type(value).__name__))
        return os.fspath(value)

    @field_validator("settings", mode="plain")
    @classmethod
    def _decoding(cls, value: Any, info: ValidationInfo) -> DecodingSettings:
        return _settings(value, DecodingSettings(), label(info))

    @field_validator("similarity", mode="before")
    @classmethod
    def _similarity(cls, value: Any, info: ValidationInfo) -> tuple[str, ...] | None:
        methods = split_names(value, label(info), choices=lambda: SIMILARITY_METHODS)
        for method in methods or ():
            if method not in SIMILARITY_METHODS:
                raise SpecError(
                    _MSG_SIMILARITY.format(name=label(info), given=method), choices=SIMILARITY_METHODS, given=str(method)
                )
        return tuple(methods) if methods else None

    @field_validator("score", mode="plain")
    @classmethod
    def _score(cls, value: Any, info: ValidationInfo) -> ScoreOptions:
        if isinstance(value, Mapping):
            return ScoreOptions.from_mapping(value, names=(info.context or {}).get("names"))
        if not isinstance(value, ScoreOptions):
            raise SpecError(_MSG_MAPPING.format(name=label(info), value=value))
        return value

    @model_validator(mode="after")
    def _together(self, info: ValidationInfo) -> AuditConfig:
        """The options checked together: ``by_turn`` needs conversations; ``until_decided`` and its options."""
        names = (info.context or {}).get("names") or {}

        def name(key: str) -> str:
            return str(names.get(key, key))

        if self.by_turn and self.corpus.startswith("builtin:") and self.turns < 2:  # single turns: nothing to count
            raise SpecError(_MSG_BY_TURN_TURNS.format(by_turn=name("by_turn"), corpus=self.corpus, turns=name("turns")))
        if self.by_turn and self.until_decided:
            raise SpecError(_MSG_BY_TURN_SEQUENTIAL.format(by_turn=name("by_turn"), until_decided=name("until_decided")))
        self._check_sequential(name)
        self.settings.check_sampling(names)  # greedy decoding would ignore a temperature, top_k or top_p
        return self

    def _check_sequential(self, name: Callable[[str], str]) -> None:
        """``until_decided`` needs ``max_pairs`` >= ``n_pairs``; ``max_pairs``, ``looks`` and ``spending`` need it.

        ``looks`` is at most ``max_pairs - n_pairs + 1``: each look after the first adds a pair at
        the least (``--looks 1000`` from 100 to 300 pairs once ran some 200 looks of one pair each).
        """
        n = self.max_pairs
        if not self.until_decided:
            for key, value in (
                ("max_pairs", n),
                ("looks", self.looks),
                ("spending", None if self.spending == "obrien-fleming" else 1),
            ):
                if value is not None:
                    raise SpecError(_MSG_ONLY_SEQUENTIAL.format(name=name(key), until_decided=name("until_decided")))
            return
        if n is None:
            raise SpecError(_MSG_NEEDS_MAX.format(name=name("until_decided"), max_pairs=name("max_pairs")))
        if self.n_pairs is None:
            raise SpecError(_MSG_NEEDS_FIRST.format(name=name("until_decided"), n_pairs=name("n_pairs")))
        if n < self.n_pairs:
            raise SpecError(_MSG_MAX_BELOW.format(max_pairs=name("max_pairs"), max=n, n_pairs=name("n_pairs"), n=self.n_pairs))
        room = n - self.n_pairs  # the pairs the looks after the first can add, one at the least each
        if self.looks is not None and self.looks - 1 > room:
            raise SpecError(
                (_MSG_LOOKS_ROOM if room else _MSG_LOOKS_NO_ROOM).format(
                    looks=name("looks"),
                    k=self.looks,
                    n_pairs=name("n_pairs"),
                    n=self.n_pairs,
                    max_pairs=name("max_pairs"),
                    max=n,
                    room=room,
                    most=room + 1,
                )
            )

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

    @property
    def pairs(self) -> PairsOptions:
        """The pairs stage's options (all the pairs stage receives)."""
        return PairsOptions(
            corpus=self.corpus,
            split=self.effective_split,
            turns=self.turns,
            n_pairs=self.n_pairs,
            mixed=self.mixed,
            balance=self.balance,
            seed=self.seed,
            n_pairs_given=self.n_pairs_given,
        )

    @property
    def generation(self) -> GenerationOptions:
        """The generation stage's options (all the model and its run store receive)."""
        return GenerationOptions(
            model=self.model,
            model_args=self.model_args,
            model_version=self.model_version,
            batch_size=self.batch_size,
            engine=resolve_engine(self.engine),
            max_errors=self.max_errors,
            max_consecutive_failures=self.max_consecutive_failures,
            store=self.store,
            settings=self.settings,
            seed=self.seed,
        )

    @property
    def inference(self) -> InferenceOptions:
        """The scoring and inference stage's options: ``score`` and the audit's correction, baseline and by-turn."""
        return InferenceOptions(
            score=self.score, correction_scope=self.correction_scope, similarity=self.similarity, by_turn=self.by_turn
        )

    @property
    def sequential(self) -> SequentialOptions:
        """The options of ``until_decided`` (with the level and correction it spends and names)."""
        return SequentialOptions(
            until_decided=self.until_decided,
            n_pairs=self.n_pairs,
            max_pairs=self.max_pairs,
            looks=self.looks,
            spending=self.spending,
            alpha=self.score.alpha,
            correction=self.score.correction,
        )

    @property
    def output(self) -> OutputOptions:
        """Where the run's report goes."""
        return OutputOptions(out_dir=self.out_dir)

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The run's option names (the scoring options are :meth:`ScoreOptions.keys`)."""
        return tuple(key for key in keys_of(cls) if key != "n_pairs_given")

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
    def from_file(
        cls,
        path: str | os.PathLike[str],
        overrides: Mapping[str, Any] | None = None,
        *,
        names: Mapping[str, str] | None = None,
    ) -> AuditConfig:
        """The config of a TOML or YAML file (see the module docstring for its layout), ``overrides`` over it.

        ``overrides`` (the command line's options, as :meth:`updated` takes them) win over the
        file's values, and a table among them (``margins``, ``model_args``, ``settings``) over the
        file's key by key: ``--margin a=0.02`` keeps the file's margin of ``b``, ``--sample`` the
        file's ``temperature``. The config is validated once, merged.

        Raises
        ------
        InputError
            The file cannot be read or parsed.
        SpecError
            An unknown key or a bad value (the message names the file when the file's values alone give it).
        """
        return options_from_file(
            path, overrides, names, lambda m, n: cls.from_mapping(m, names=n), lambda m, n: cls().updated(m, names=n)
        )

    @classmethod
    def resolve(cls, config: AuditConfig | None, options: Mapping[str, Any]) -> AuditConfig:
        """``config``, or the config keyword ``options`` give; SpecError when both give a key differently.

        ``options`` that give ``config``'s own ``n_pairs`` mark it given (:attr:`n_pairs_given`).
        """
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
            if other.n_pairs_given and not config.n_pairs_given:  # the same n_pairs, given now
                return other
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
        asked = self.n_pairs_given or "n_pairs" in top  # given here or before (every field is passed on)
        return AuditConfig(**{**values, **top, "score": options, "n_pairs_given": asked}, names=names)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the config (``run.json``'s ``config``): lexicons by their source, no credentials.

        A URL's ``user:password@`` (``//***@``) and the value of a credential in its query
        (``?api-key=***``: see :func:`~fairtalk.models.hide_credentials`) are masked in the model
        spec, in every model option (``--model-arg base_url=...``) and in a judge's spec.
        """
        out: dict[str, Any] = {key: getattr(self, key) for key in self.keys()}
        out["axes"] = [a if isinstance(a, str) else (a.source if a.variant == "custom" else a.axis) for a in self.axes]
        if isinstance(self.model, str):
            out["model"] = hide_credentials(self.model)
        elif isinstance(self.model, Responder):
            out["model"] = self.model.fingerprint
        elif self.model is not None:  # a function: its name here; a run records the fingerprint it ran under
            out["model"] = _function_name(self.model)
        out["model_args"] = {key: hide_credentials(str(value)) for key, value in self.model_args.items()}
        if isinstance(self.store, RunStore):
            out["store"] = str(self.store.path)
        out["settings"] = self.settings.to_dict()
        out["engine"] = self.engine.to_dict() if isinstance(self.engine, RayEngine) else "local"
        out["score"] = self.score.to_dict()
        if out["score"]["measures"] is not None:  # a judge's spec (judge:openai:URL#MODEL) may name its server
            out["score"]["measures"] = [hide_credentials(name) for name in out["score"]["measures"]]
        return out


#: Where ``n_pairs`` stands among the positional arguments of ``AuditConfig(...)``.
_N_PAIRS_AT = AuditConfig.keys().index("n_pairs")
