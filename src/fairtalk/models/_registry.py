"""Model specs (``hf:gpt2``, ``openai:URL#MODEL``, ...) mapped lazily to responder factories.

Each prefix maps to a ``"module:attribute"`` string; the module is imported only when
a spec with that prefix is loaded. The spec is parsed once, here
(:func:`~fairtalk.models._spec.parse_model_spec`): ``PREFIX:TARGET?key=value&...``. Its
options, merged with the keyword options (``--model-arg KEY=VALUE`` on the command line),
are coerced to the types the adapter declares and passed to it as one frozen options
object:

- a :class:`~fairtalk.models._base.ModelFactory` subclass (every built-in adapter) names its
  options dataclass with ``options_for(target)`` and is built by ``from_spec(target, options)``;
  an option it does not declare is a SpecError naming those it does;
- anything else registered is a callable (a third party's function, or a Responder class)
  called as ``factory(target, **options)``, with the option values as given.

What it builds must be a :class:`~fairtalk.models.Responder` (a subclass: the base class is the
contract), else a SpecError says what it built. :func:`as_responder` is the one place a
``model=`` value (a spec, a Responder, or a plain, batched or async function) becomes a model.

The table is :data:`MODELS`, a :class:`~fairtalk._registry.Registry`. Third-party packages
register prefixes through the ``fairtalk.models`` entry-point group, whose values use the
same ``"module:attribute"`` form, or at run time with :func:`register_model`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from fairtalk._registry import Registry
from fairtalk.errors import SpecError
from fairtalk.models._base import ModelFactory, Responder
from fairtalk.models._credentials import hide_credentials
from fairtalk.models._spec import build_options, merge_spec_options, parse_model_spec
from fairtalk.models.python._responder import PythonOptions, PythonResponder

__all__ = [
    "ENTRY_POINT_GROUP",
    "MODELS",
    "Factory",
    "ReplyFunction",
    "as_responder",
    "load_responder",
    "model_prefixes",
    "register_model",
]

ENTRY_POINT_GROUP = "fairtalk.models"
"""Entry-point group through which other packages register model adapters."""

_MSG_UNKNOWN_PREFIX = "unknown model spec prefix {prefix!r} in {spec!r}"
_MSG_PREFIX = "model spec prefix must be an identifier, got {prefix!r}"
_MSG_NOT_RESPONDER = (
    "model spec prefix {prefix!r} built {kind}, which is not a Responder "
    "(a model subclasses fairtalk.models.Responder and implements fingerprint and respond)"
)
_MSG_MODEL_TYPE = (
    "model must be a spec string, a Responder or a function (one text -> one reply; a batched or async one), got {type}"
)
_MSG_CLASS = "model must be a Responder or a function, got the class {name}: pass an instance"
_MSG_OPTIONS_FOR_OBJECT = "model options ({names}) need a model spec or a function, not a Responder object"

#: What a spec prefix is registered as: a :class:`ModelFactory` subclass, or a callable ``(target, **options)``.
Factory: TypeAlias = type[ModelFactory[Any]] | Callable[..., Any]
ReplyFunction: TypeAlias = Callable[..., Any]
"""A function as a model: ``str -> str``, ``list[str] -> list[str]`` (batched) or ``async`` (see :func:`as_responder`)."""

#: Spec prefix -> the responder factory, imported on first use.
MODELS: Registry[Factory] = Registry(
    "model spec prefix",
    group=ENTRY_POINT_GROUP,
    base=Callable,  # type: ignore[arg-type]
    expected="a responder class or factory",
    builtins={
        "hf": "fairtalk.models._hf:HFResponder",
        "openai": "fairtalk.models.openai._responder:OpenAIResponder",
        "python": "fairtalk.models.python._responder:PythonResponder",
        "replay": "fairtalk.models._replay:ReplayResponder",
        "builtin": "fairtalk.models._builtin:BuiltinModels",
        "retrieval": "fairtalk.models._retrieval:RetrievalResponder",
        "vllm": "fairtalk.models.vllm._engine:VLLMResponder",
    },
)


def register_model(prefix: str, target: str | Factory) -> None:
    """Register a spec prefix for ``"module:attribute"`` (or the factory itself); a taken prefix is an error."""
    if not prefix.isidentifier():
        raise SpecError(_MSG_PREFIX.format(prefix=prefix))
    MODELS.add(prefix, target)


def model_prefixes() -> tuple[str, ...]:
    """Return every registered spec prefix, sorted."""
    return MODELS.names()


def _public_name(name: str) -> str:
    """A spec's name for messages, without ``user:password@`` in a URL or a credential in its query."""
    return hide_credentials(name)


def load_responder(spec: str, **options: Any) -> Responder:
    """Build the responder a spec names.

    Parameters
    ----------
    spec : str
        ``PREFIX:VALUE[?key=value&...]``: ``hf:NAME_OR_PATH?gguf_file=F``,
        ``openai:URL#MODEL?api_key_env=VAR``, ``python:module:function?batched=true``,
        ``replay:FILE``, ``builtin:echo?mode=upper``, ``retrieval:POOL``, or a prefix a third
        party registered.
    **options
        More adapter options (``device="cpu"``, ``max_concurrency=4``, or the strings of
        ``--model-arg``); an option given both here and in the spec is an error.

    Returns
    -------
    Responder

    Raises
    ------
    SpecError
        Unknown prefix (with "did you mean" and the choices), a malformed value, an
        option the adapter does not take (with the ones it does), or a value of the wrong type.

    Examples
    --------
    >>> from fairtalk.models import DecodingSettings, load_responder
    >>> with load_responder("builtin:echo") as model:
    ...     model.respond(["hello there"], DecodingSettings(), seeds=[0])
    ['there hello']
    """
    parsed = parse_model_spec(spec, prefixes=model_prefixes())
    factory = MODELS.get(parsed.prefix, message=_MSG_UNKNOWN_PREFIX.format(prefix=parsed.prefix, spec=_public_name(parsed.name)))
    given = merge_spec_options(parsed, options)
    responder: object
    if isinstance(factory, type) and issubclass(factory, ModelFactory):
        typed = build_options(factory.options_for(parsed.target), given, spec=_public_name(parsed.name))
        responder = factory.from_spec(parsed.target, typed)
    else:
        build: Callable[..., object] = factory  # a third party's function, or a Responder class
        responder = build(parsed.target, **given)
    if not isinstance(responder, Responder):
        raise SpecError(_MSG_NOT_RESPONDER.format(prefix=parsed.prefix, kind=type(responder).__name__))
    return responder


def check_model_spec(spec: str, **options: Any) -> None:
    """Raise SpecError when :func:`load_responder` could not build ``spec``, found without building it.

    The prefix, the target's options (``builtin:NAME``: the name; the spec's and ``options``' keys and
    values) and, for ``python:``, the file or module are checked; no weights are loaded and no user
    code runs, so a spec checked here can still fail to load (a missing function, a server down).

    Examples
    --------
    >>> check_model_spec("builtin:echo?mode=upper")
    >>> try:
    ...     check_model_spec("builtin:nosuch")
    ... except SpecError as exc:
    ...     print(str(exc).partition(" (")[0])
    unknown builtin model 'nosuch'
    """
    from fairtalk.models.python._loading import check_target

    parsed = parse_model_spec(spec, prefixes=model_prefixes())
    factory = MODELS.get(parsed.prefix, message=_MSG_UNKNOWN_PREFIX.format(prefix=parsed.prefix, spec=_public_name(parsed.name)))
    given = merge_spec_options(parsed, options)
    if isinstance(factory, type) and issubclass(factory, ModelFactory):
        build_options(factory.options_for(parsed.target), given, spec=_public_name(parsed.name))
    if factory is PythonResponder:
        check_target(parsed.target)


def as_responder(model: str | Responder | ReplyFunction, **options: object) -> Responder:
    """The model ``model=`` names: a spec loaded, a Responder as it is, a function wrapped.

    A function is a model in one of three forms, told apart as the ``python:`` adapter does:

    - *single*: ``def reply(text: str) -> str``, called once per context;
    - *batched*: ``def reply(texts: list[str]) -> list[str]``, one reply per context, in order;
      marked with the :func:`~fairtalk.models.batched` decorator (or ``reply.batched = True``, or
      the option ``batched=True``);
    - *async*: ``async def reply(text: str) -> str``, awaited for ``max_concurrency`` contexts
      at once (default 8).

    A ``seed`` (``seeds`` when batched) or ``settings`` parameter is passed as a keyword. A
    function's fingerprint is ``python:module:qualname`` plus a hash of its source and the user
    modules it imports, the same in every run, so a run store resumes; a partial, a bound method
    of an instance with attributes, a callable object or a closure adds a digest of that state
    (``Bot(2).reply`` and ``Bot(9).reply`` are two models). A state that cannot be read (an
    instance holding a torch model) makes the fingerprint say ``"state":"unknown"``: a store that
    outlives the run then needs ``model_version`` (:class:`~fairtalk.store.CachingResponder`).

    Parameters
    ----------
    model : str, Responder or callable
        A model spec (``builtin:echo``, ``openai:URL#MODEL``, ...), a responder, or a function.
    **options
        The spec's adapter options (as ``?key=value``), or a function's: ``batched``,
        ``timeout`` (seconds a call may take) and ``max_concurrency`` (an async function's).

    Returns
    -------
    Responder

    Raises
    ------
    SpecError
        Anything else (a class, a number), options given with a Responder object, or a bad spec or option.

    Examples
    --------
    >>> from fairtalk.models import DecodingSettings, as_responder
    >>> def shout(text):
    ...     return text.upper() + "!"
    >>> model = as_responder(shout)
    >>> model.respond(["hi there"], DecodingSettings(), seeds=[0])
    ['HI THERE!']
    """
    if isinstance(model, str):
        return load_responder(model, **options)
    if isinstance(model, Responder):
        if options:
            raise SpecError(_MSG_OPTIONS_FOR_OBJECT.format(names=", ".join(sorted(options))))
        return model
    if isinstance(model, type):
        raise SpecError(_MSG_CLASS.format(name=model.__name__))
    if not callable(model):
        raise SpecError(_MSG_MODEL_TYPE.format(type=type(model).__name__))
    return PythonResponder(model, options=build_options(PythonOptions, options, spec="a function model"))


def completion_options(spec: str, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The options that make ``spec`` continue a prefix instead of answering it as a chat turn.

    ``hf:``, ``vllm:`` and ``builtin:smollm2``: ``chat_template=never``; ``openai:``: ``mode=completion``.
    Options already in the spec or in ``given`` are left as they are; other adapters need none.

    Examples
    --------
    >>> completion_options("hf:gpt2"), completion_options("openai:http://h/v1#m"), completion_options("builtin:echo")
    ({'chat_template': 'never'}, {'mode': 'completion'}, {})
    """
    parsed = parse_model_spec(spec, prefixes=model_prefixes())
    chosen = {**dict(parsed.options), **dict(given or {})}
    wanted: dict[str, str] = {}
    if parsed.prefix in ("hf", "vllm") or (parsed.prefix == "builtin" and parsed.target == "smollm2"):
        wanted = {"chat_template": "never"}
    elif parsed.prefix == "openai":
        wanted = {"mode": "completion"}
    return {key: value for key, value in wanted.items() if key not in chosen}
