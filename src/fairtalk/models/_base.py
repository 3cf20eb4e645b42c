"""The Responder base class, decoding settings, and helpers every adapter shares.

A responder maps a batch of dialogue contexts to one response each, in order::

    responses = responder.respond(contexts, settings, seeds=seeds)

``seeds[i]`` seeds item ``i`` alone, so that a sampled response depends only on
``(context, seed, settings)`` and never on how the items were batched.
An adapter that knows why generation stopped returns :class:`Reply` items, plain strings
that also carry ``finish_reason`` (``"length"`` when the token limit cut the answer off);
``respond_each`` is the error-tolerant form: it returns, per item, either the
response or the :class:`~fairtalk.errors.ResponderError` that item raised, so one
bad item never loses the rest of its batch (the run store uses it).

:class:`Responder` is an abstract base class: ``fingerprint`` and ``respond`` are abstract,
and every optional capability (per-item answers, streaming, preflight, input paths, Ray actors,
the counters of a server adapter) is a member with a default, so no stage asks a model
whether it has one. :class:`ModelFactory` is what a spec prefix is registered as.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import Any, ClassVar, Generic, Self, TypeAlias, TypeVar

from fairtalk._codec import Codec
from fairtalk.errors import ResponderError, ResponderTimeout, SpecError
from fairtalk.models._streaming import InFlight, RetryCounts
from fairtalk.records import transcript

__all__ = [
    "DEFAULT_MAX_NEW_TOKENS",
    "PAPER_MAX_NEW_TOKENS",
    "Closing",
    "DecodingSettings",
    "ModelFactory",
    "Reply",
    "Responder",
    "Stream",
    "check_batch",
    "close_stream",
    "collect_stream",
    "cut_at_stop",
    "UNKNOWN_STATE",
    "answered_before",
    "finish_reason",
    "identity_unknown",
    "keep_answered",
    "length_batches",
    "make_fingerprint",
    "raise_first_error",
    "respond_each_checked",
]

Stream: TypeAlias = Generator[tuple[int, str | ResponderError] | None, None, None]
"""What :meth:`Responder.respond_stream` returns: a generator of ``(index, response or error)`` as each item
finishes, or None when nothing finished for a while (a chance for the caller to commit what it holds);
closing it early stops further work."""

#: The default token limit of an answer: room for a chat model's whole answer (SmolLM2-135M-Instruct's
#: answers to chitchat end within it), where paper 001's 40 cut most of them off mid-sentence.
DEFAULT_MAX_NEW_TOKENS = 256
PAPER_MAX_NEW_TOKENS = 40
"""Paper 001's token limit, which ``reproduce`` keeps for its reference models."""
_MSG_TEMPERATURE = "temperature must be a finite number > 0, got {value!r}"
_MSG_TOP_K = "top_k must be a positive integer or None, got {value!r}"
_MSG_TOP_P = "top_p must be in (0, 1] or None, got {value!r}"
_MSG_MAX_NEW_TOKENS = "max_new_tokens must be a positive integer, got {value!r}"
_MSG_NUM_BEAMS = "num_beams must be a positive integer, got {value!r}"
_MSG_BEAMS_AND_SAMPLE = "num_beams > 1 needs do_sample=False (beam search is greedy)"
_MSG_PENALTY = "repetition_penalty must be > 0 or None, got {value!r}"
_MSG_STOP = "stop must be a list of non-empty strings, got {value!r}"
#: Sampling settings given without sampling: greedy decoding would ignore them without a word.
_MSG_GREEDY_ONLY = "{options} appl{s} only with {sample}; greedy decoding would ignore {them} (add {sample}, or leave {them} out)"
#: The sampling settings and the value each has when left out (greedy decoding ignores them).
_SAMPLING_DEFAULTS = (("temperature", 1.0), ("top_k", None), ("top_p", None))
#: Fields a cache key leaves out while unset (None, no stop strings), so that older stores keep their keys.
_KEYED_WHEN_SET = ("repetition_penalty", "stop")
_MSG_SEEDS = "got {n_contexts} contexts but {n_seeds} seeds (one seed per context)"
_MSG_RESULTS = "{who} returned {n_results} results for {n_contexts} contexts"


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True, slots=True)
class DecodingSettings(Codec):
    """How to decode: greedy by default, sampled with ``do_sample=True``.

    ``top_k``/``top_p``/``temperature`` apply only when sampling. ``repetition_penalty`` (None:
    the model's or server's own default, which differs between servers) and ``stop`` (strings
    that end an answer; they are not part of it) apply to both. ``max_new_tokens`` defaults to
    :data:`DEFAULT_MAX_NEW_TOKENS` (256), room for a chat answer. ``key`` is a canonical string of
    every field and ``digest`` its hash; both enter the run store's cache key. :meth:`sent`
    is what a model is asked for, as the manifest records it. ``to_dict()`` is every field in order
    (``stop`` as a list); ``DecodingSettings(**d)`` or ``from_dict(d)`` rebuilds the settings.
    """

    SAMPLING_KEYS: ClassVar[tuple[str, ...]] = tuple(key for key, _ in _SAMPLING_DEFAULTS)
    """The settings that apply only when sampling (greedy decoding ignores them)."""

    do_sample: bool = False
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    num_beams: int = 1
    repetition_penalty: float | None = None
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        r = self.repetition_penalty
        if r is not None and (isinstance(r, bool) or not isinstance(r, int | float) or not 0 < r < float("inf")):
            raise SpecError(_MSG_PENALTY.format(value=r))
        stop: object = self.stop  # a number, a bool, a table or a lone string: refused before it is iterated
        if not isinstance(stop, list | tuple) or not all(isinstance(x, str) and x for x in stop):
            raise SpecError(_MSG_STOP.format(value=self.stop))
        object.__setattr__(self, "stop", tuple(self.stop))
        if not isinstance(self.do_sample, bool):
            raise SpecError(f"do_sample must be True or False, got {self.do_sample!r}")
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t < float("inf"):  # NaN and inf refused
            raise SpecError(_MSG_TEMPERATURE.format(value=t))
        if self.top_k is not None and not _positive_int(self.top_k):
            raise SpecError(_MSG_TOP_K.format(value=self.top_k))
        p = self.top_p
        if p is not None and (isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p <= 1):
            raise SpecError(_MSG_TOP_P.format(value=p))
        if not _positive_int(self.max_new_tokens):
            raise SpecError(_MSG_MAX_NEW_TOKENS.format(value=self.max_new_tokens))
        if not _positive_int(self.num_beams):
            raise SpecError(_MSG_NUM_BEAMS.format(value=self.num_beams))
        if self.num_beams > 1 and self.do_sample:
            raise SpecError(_MSG_BEAMS_AND_SAMPLE)

    def check_sampling(self, names: Mapping[str, str] | None = None) -> None:
        """SpecError when a sampling setting (``temperature`` other than 1, ``top_k``, ``top_p``) is given without ``do_sample``.

        Greedy decoding would ignore it without a word, and the manifest would record it as if it
        had been applied. ``names`` renames the settings in the message (the CLI passes its flags:
        ``--temperature``, ``--sample``); left out, they are named as keys.

        >>> DecodingSettings(temperature=0.5).check_sampling()
        Traceback (most recent call last):
        ...
        fairtalk.errors.SpecError: temperature applies only with do_sample = true; greedy decoding would ignore it (add do_sample = true, or leave it out)
        >>> DecodingSettings(do_sample=True, temperature=0.5).check_sampling()
        """
        given = [key for key, default in _SAMPLING_DEFAULTS if getattr(self, key) != default]
        if given and not self.do_sample:
            named = {"do_sample": "do_sample = true", **(names or {})}
            one = len(given) == 1
            raise SpecError(
                _MSG_GREEDY_ONLY.format(
                    options=", ".join(named.get(key, key) for key in given),
                    s="ies" if one else "y",
                    sample=named["do_sample"],
                    them="it" if one else "them",
                )
            )

    def sent(self) -> dict[str, Any]:
        """What a model is asked for: greedy decoding has no temperature, top-k or top-p (they are None here)."""
        d = self.to_dict()
        if not self.do_sample:
            d.update(temperature=None, top_k=None, top_p=None)
        return d

    @property
    def key(self) -> str:
        """Canonical JSON of the settings; greedy decoding ignores the sampling knobs."""
        d = self.sent()
        for name in _KEYED_WHEN_SET:
            if d[name] is None or d[name] == []:
                del d[name]
        return json.dumps(d, sort_keys=True, separators=(",", ":"))

    @property
    def digest(self) -> str:
        """Short stable hash of :attr:`key`."""
        return hashlib.blake2b(self.key.encode(), digest_size=8).hexdigest()


class Reply(str):
    """A response text that also says why generation stopped; it is a ``str`` everywhere else.

    ``finish_reason`` is what the server or the generation loop reported: ``"stop"`` (the model
    ended its answer), ``"length"`` (the token limit cut it off), another server value, or None
    when unknown. ``model`` is the model a server says answered (its reply's ``model``; None:
    not said). ``Reply("hi", "stop") == "hi"``.
    """

    finish_reason: str | None
    model: str | None

    def __new__(cls, text: str, finish_reason: str | None = None, model: str | None = None) -> Self:
        """The text, with why the model stopped (None: unknown) and the model the server says answered."""
        reply = super().__new__(cls, text)
        reply.finish_reason = finish_reason
        reply.model = model
        return reply

    def __reduce__(self) -> tuple[Any, ...]:
        return (Reply, (str(self), self.finish_reason, self.model))


def finish_reason(item: object) -> str | None:
    """The ``finish_reason`` of a :class:`Reply`; None for a plain string or an error."""
    reason = getattr(item, "finish_reason", None)
    return reason if isinstance(reason, str) and reason else None


class Closing:
    """A context manager that calls ``close()`` at the end of the block (responders, run stores)."""

    __slots__ = ()

    def close(self) -> None:
        """Release resources (nothing by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class Responder(Closing, ABC):
    """A dialogue model under test: contexts in, one response per context out, in order.

    The one base class of every model, in the manner of lm-evaluation-harness's ``LM``: an
    adapter (and a third party's model) subclasses it and implements the two abstract members,
    :attr:`fingerprint` and :meth:`respond`. Every optional capability is a member with a
    default here, so that a stage calls it on any model without asking whether it has it:

    - :meth:`respond_each`: per item, the response or the error it failed with (default:
      :meth:`respond`, split in halves around the failing items);
    - :meth:`respond_stream` and :attr:`supports_stream`: ``(index, response or error)`` as each
      item finishes, and whether it really does (default: the items of :meth:`respond_each`
      once the whole call is done; :attr:`supports_stream` is True when a subclass overrides
      :meth:`respond_stream`, and the run store then commits each item as it arrives);
    - :meth:`preflight`: fail before any work when the model cannot answer at all (default: nothing);
    - :meth:`check_settings`: fail before any answer when the model cannot decode with the settings (default: nothing);
    - :meth:`prompts_cut`: per context, the tokens of its prompt's start the model cuts off to fit (default None: none);
    - :attr:`input_paths`: the files the model was loaded from, which a run never writes over (default ``()``);
    - :attr:`n_actors`: the Ray actors answering (default None: not on Ray);
    - :attr:`in_flight`, :attr:`max_concurrency`, :attr:`retry_counts`, :attr:`tuning`: what a
      server adapter reports to the generation summary (default None, None, None and ``{}``);
    - :attr:`requested_model` and :attr:`served_models`: the model name a server adapter asks for,
      and the names its server said answered, counted (default None: a model that does not say);
    - :attr:`user_spec`: the spec a user types for it, when its fingerprint does not start with one (default None);
    - :attr:`resolved_target`: what a ``python:`` model's target names, resolved where it was loaded (default None);
    - :meth:`close` and the context manager (default: nothing to release).
    """

    #: The files the model was loaded from (a replay file, a candidate pool, the user's modules).
    input_paths: tuple[str, ...] = ()
    #: Requests in flight now and the most at once, for a model that keeps several in flight (None: it does not).
    in_flight: InFlight | None = None
    #: The requests it keeps in flight (None: not a model that does).
    max_concurrency: int | None = None
    #: Retries summed over its calls (None: a model that does not retry).
    retry_counts: RetryCounts | None = None
    #: What its preflight measured and chose (timeouts, concurrency); a record of the run, never part of the fingerprint.
    tuning: Mapping[str, object] = MappingProxyType({})
    #: The model name it asks its server for (None: not a server adapter).
    requested_model: str | None = None
    #: The model names its server said answered (each reply's ``model``), with how many answers, summed over its calls
    #: (None: a model that does not say).
    served_models: Mapping[str, int] | None = None
    #: The spec a user types for this model when its fingerprint's head (``kind:identity``) is not one (a built-in
    #: model keyed by its adapter's name): runs record and show it in that head's place; the
    #: run store keeps the fingerprint as it is (None: the fingerprint's head is the spec).
    user_spec: str | None = None
    #: Why its fingerprint cannot tell it from another model with the same code (a callable whose state cannot be
    #: read: :func:`identity_unknown` of the fingerprint is True); None: it can. A run store that outlives the run
    #: refuses such a model unless a model version names it.
    unknown_state: str | None = None
    #: What a ``python:`` model's target names, resolved where the model was loaded: its file's real path and the
    #: function (``/home/me/bot.py:reply``, for ``bot.py:reply``, ``./bot.py:reply`` or the module ``bot:reply``
    #: alike). A run records it, so that comparing two runs never resolves a relative target against the
    #: folder the comparison runs in (None: not a ``python:`` model, or its file is not known).
    resolved_target: str | None = None

    @property
    @abstractmethod
    def fingerprint(self) -> str:
        """Stable identity of the model and its adapter settings; never holds secrets."""

    @abstractmethod
    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Return one response per context, in order; raise ResponderError on failure."""

    def respond_each(
        self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]
    ) -> list[str | ResponderError]:
        """Like :meth:`respond`, but a failing item yields its error instead of failing the batch.

        By default a batch that raises :class:`ResponderError` is split in halves until the failing
        items stand alone, so every other item still gets its response; a batch that timed out
        (:class:`ResponderTimeout`) fails whole instead of hanging once per half. Adapters that
        report failures per item natively (HTTP, replay) override it. When something else stops
        the call midway (Ctrl-C, the model stopping the run), the items its halves had answered
        travel with that exception, for :func:`respond_each_checked` to hand to the run store.
        """
        check_batch(contexts, seeds)
        answered: dict[int, str | ResponderError] = {}
        try:
            return _bisect(self, list(contexts), settings, list(seeds), answered)
        except BaseException as stop:
            keep_answered(stop, self, contexts, settings, seeds, answered)
            raise

    @property
    def supports_stream(self) -> bool:
        """Whether :meth:`respond_stream` hands each item on as it finishes (True when a subclass overrides it)."""
        return type(self).respond_stream is not Responder.respond_stream

    def respond_stream(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> Stream:
        """Yield ``(index, response or error)`` for every context, and None while nothing finished.

        The default yields the items of :meth:`respond_each`, in order, once the whole call is
        done. An adapter that hands each item on as it finishes (HTTP, Ray, a single Python
        function) overrides it; closing the iterator early must then stop further work.
        """
        yield from enumerate(self.respond_each(contexts, settings, seeds=seeds))

    def check_settings(self, settings: DecodingSettings) -> None:
        """Raise SpecError before any answer when the model cannot decode with ``settings`` (nothing by default).

        The ``hf:`` adapter refuses a ``max_new_tokens`` that leaves no room for a prompt in its
        model's positions; the run store calls it before it asks for any answer.
        """

    #: Whether the model is given a multi-turn context as its transcript (``python:`` models), not as it is.
    gets_transcript: bool = False

    def keyed_text(self, context: str) -> str:
        """The text the run store keys this model's answer to ``context`` on: what the model is given.

        The context itself, or its transcript (one turn per line, which leaves a single-turn context
        unchanged) for a model that :attr:`gets_transcript`: answers given to one form of a
        multi-turn context are never served for another.
        """
        return transcript(context) if self.gets_transcript else context

    def prompts_cut(self, contexts: Sequence[str], settings: DecodingSettings) -> list[int] | None:
        """Per context, how many tokens of its prompt's start the model cuts off to fit (None by default: none known).

        The ``hf:`` adapter cuts a prompt longer than its model's positions less ``max_new_tokens``
        from the left; ``audit`` counts the pairs cut and warns. It tokenizes and generates nothing,
        so answers served from a run store are counted too.
        """
        return None

    def preflight(self) -> None:
        """Let the model say before any work that it cannot answer at all (nothing by default).

        The ``openai:`` adapter asks its server for its models: a server that is down, refuses the
        key or lacks the model is one clear error, not minutes of retries and an empty result.
        """

    @property
    def n_actors(self) -> int | None:
        """The Ray actors answering (None: the model runs in this process)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fingerprint!r})"


OptionsT = TypeVar("OptionsT")


class ModelFactory(ABC, Generic[OptionsT]):
    """What a model spec prefix is registered as: the options a target takes, and the responder built from them.

    :func:`~fairtalk.models.load_responder` parses ``PREFIX:TARGET?key=value``, builds the
    options object :meth:`options_for` names from the spec's and the keyword options (an option
    it does not declare is a SpecError naming those it does), and calls :meth:`from_spec`. A
    prefix registered as anything else is a callable called as ``factory(target, **options)``.
    Either way, what it builds must be a :class:`Responder`.
    """

    @classmethod
    @abstractmethod
    def options_for(cls, target: str) -> type[OptionsT]:
        """The frozen options dataclass ``TARGET`` takes."""

    @classmethod
    @abstractmethod
    def from_spec(cls, target: str, options: OptionsT) -> Responder:
        """The responder ``TARGET`` names, built with its options."""


def one_line(error: object) -> str:
    r"""An exception's text (or any text) on one line, its line breaks and runs of spaces made single spaces.

    An ``error:`` line is one line: a library's message (transformers' "We couldn't connect …\nCheck your
    internet connection …") is wrapped into it with this.

    Examples
    --------
    >>> one_line(OSError("We couldn't connect.\n  Check your connection."))
    "We couldn't connect. Check your connection."
    """
    return " ".join(str(error).split())


def raise_first_error(results: Sequence[str | ResponderError]) -> list[str]:
    """The responses of a ``respond_each`` call, or the first item's error raised."""
    out: list[str] = []
    for item in results:
        if isinstance(item, ResponderError):
            raise item
        out.append(item)
    return out


def collect_stream(stream: Iterable[tuple[int, str | ResponderError] | None], n_items: int) -> list[str | ResponderError]:
    """The ``(index, result)`` items of a ``respond_stream`` put in order (its heartbeat Nones skipped)."""
    out: list[str | ResponderError | None] = [None] * n_items
    for done in stream:
        if done is not None:
            out[done[0]] = done[1]
    return out  # type: ignore[return-value]


def respond_each_checked(
    responder: Responder,
    contexts: Sequence[str],
    settings: DecodingSettings,
    *,
    seeds: Sequence[int],
    answered: dict[int, str | ResponderError] | None = None,
) -> list[str | ResponderError]:
    """``responder.respond_each``, with one seed per context checked first and one result per context after.

    Raises SpecError for a seed count that does not match, ResponderError when the model returned
    another number of results than it was given contexts. When the call is stopped midway by an
    exception (Ctrl-C, :class:`~fairtalk.errors.ResponderAborted`, a bug), ``answered`` (when
    given) receives, before it propagates, the items that call had answered by then (index ->
    response or error): with the default ``respond_each``, the halves of a failed batch already
    answered, so that the run store keeps them and a re-run does not ask for them again. A model
    whose ``respond_each`` returns all its items at once or none leaves it empty.
    """
    check_batch(contexts, seeds)
    try:
        out = responder.respond_each(contexts, settings, seeds=seeds)
    except BaseException as stop:
        if answered is not None:
            answered.update(answered_before(stop, responder, contexts, settings, seeds))
        raise
    if len(out) != len(contexts):
        raise ResponderError(_MSG_RESULTS.format(who=responder.fingerprint, n_results=len(out), n_contexts=len(contexts)))
    return list(out)


def _bisect(
    responder: Responder,
    contexts: list[str],
    settings: DecodingSettings,
    seeds: list[int],
    answered: dict[int, str | ResponderError],
    start: int = 0,
) -> list[str | ResponderError]:
    """The items of ``contexts``, a failing batch split in halves until its failing items stand alone.

    Each part's items also go in ``answered`` (by index, from ``start``) as soon as the part is
    done, so that a call stopped midway still tells what it had answered.
    """
    if not contexts:
        return []
    try:
        out = responder.respond(contexts, settings, seeds=seeds)
    except ResponderError as exc:
        if len(contexts) == 1 or isinstance(exc, ResponderTimeout):  # a hung model is not retried by halves
            failed: list[str | ResponderError] = [exc] * len(contexts)
            answered.update(enumerate(failed, start))
            return failed
        mid = len(contexts) // 2
        return _bisect(responder, contexts[:mid], settings, seeds[:mid], answered, start) + _bisect(
            responder, contexts[mid:], settings, seeds[mid:], answered, start + mid
        )
    if len(out) != len(contexts):
        raise ResponderError(_MSG_RESULTS.format(who=responder.fingerprint, n_results=len(out), n_contexts=len(contexts)))
    answered.update(enumerate(out, start))
    return list(out)


#: The attribute of an exception that stopped ``respond_each`` calls midway: an :class:`_Answered` per call.
_ANSWERED = "_fairtalk_answered"


@dataclass(frozen=True, slots=True)
class _Answered:
    """What one ``respond_each`` call of ``responder`` had answered (index -> item) when an exception stopped it."""

    responder: Responder
    contexts: Sequence[str]
    seeds: Sequence[int]
    settings: DecodingSettings
    items: dict[int, str | ResponderError]


def keep_answered(
    stop: BaseException,
    responder: Responder,
    contexts: Sequence[str],
    settings: DecodingSettings,
    seeds: Sequence[int],
    items: Mapping[int, str | ResponderError],
) -> None:
    """Say, on the exception ``stop`` that ends a call of ``responder`` midway, which of its items it had answered.

    ``items`` maps an index of ``contexts`` to its response or error. A ``respond_each`` or
    ``respond_stream`` call stopped by Ctrl-C (or by the caller: an error budget spent) attaches
    what it holds this way before the exception propagates; :func:`answered_before` reads it back
    for the run store, so that a re-run does not ask for them again. Nothing for no item.
    """
    if not items:
        return
    record = _Answered(responder, contexts, seeds, settings, dict(items))
    try:
        setattr(stop, _ANSWERED, (*getattr(stop, _ANSWERED, ()), record))  # beside a nested call's
    except (AttributeError, TypeError):  # an exception that takes no attribute: its answers are asked again
        pass


class _StreamClosed(GeneratorExit):
    """What :func:`close_stream` throws into a stream: a GeneratorExit, which the stream answers as ``close()``'s."""


def close_stream(
    stream: Stream, responder: Responder, contexts: Sequence[str], settings: DecodingSettings, seeds: Sequence[int]
) -> dict[int, str | ResponderError]:
    """Close ``stream`` as ``stream.close()`` does, and return what it had answered but not yet yielded (index -> item).

    ``stream`` is ``responder.respond_stream(contexts, settings, seeds=seeds)``. It gets a
    GeneratorExit at the point where it waits, as with ``close()`` (it stops its work; an
    exception it raises instead propagates, and a stream that yields again is a RuntimeError), and
    an adapter that holds items already finished (``openai:``, the answers on their way from its
    requests' thread) attaches them to it (:func:`keep_answered`), so that the run store keeps them.
    """
    closing = _StreamClosed()
    try:
        stream.throw(closing)
    except (GeneratorExit, StopIteration):
        return answered_before(closing, responder, contexts, settings, seeds)
    raise RuntimeError("generator ignored GeneratorExit")


def answered_before(
    stop: BaseException, responder: Responder, contexts: Sequence[str], settings: DecodingSettings, seeds: Sequence[int]
) -> dict[int, str | ResponderError]:
    """The items (index -> response or error) a call of ``responder`` on ``contexts`` had answered when ``stop`` ended it.

    What :func:`keep_answered` attached, for that very call only (the same responder object,
    contexts, seeds and settings): the answers a wrapping model's inner model gave, or another
    call's, are never taken for its own. Empty when none were.
    """
    for record in getattr(stop, _ANSWERED, ()):
        if (
            isinstance(record, _Answered)
            and record.responder is responder
            and record.settings == settings
            and list(record.seeds) == list(seeds)
            and list(record.contexts) == list(contexts)
        ):
            return dict(record.items)
    return {}


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the first of the ``stop`` strings, and whether one was found.

    >>> cut_at_stop("Fine, thanks. User: and you?", [" User:"])
    ('Fine, thanks.', True)
    """
    found = [i for i in (text.find(s) for s in stop) if i >= 0]
    return (text[: min(found)], True) if found else (text, False)


def check_batch(contexts: Sequence[str], seeds: Sequence[int]) -> None:
    """Raise SpecError unless there is exactly one seed per context."""
    if len(contexts) != len(seeds):
        raise SpecError(_MSG_SEEDS.format(n_contexts=len(contexts), n_seeds=len(seeds)))


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Yield index groups of at most ``batch_size``, longest items first (like lm-eval's Collator).

    Sorting by length keeps padding small; callers write results back by index, which
    restores the original order.
    """
    if batch_size < 1:
        raise SpecError(f"batch_size must be >= 1, got {batch_size!r}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def make_fingerprint(kind: str, identity: str, **settings: object) -> str:
    """Build ``kind:identity {json settings}``: readable, stable, and free of secrets by construction."""
    extra = {k: v for k, v in sorted(settings.items()) if v is not None}
    if not extra:
        return f"{kind}:{identity}"
    return f"{kind}:{identity} " + json.dumps(extra, sort_keys=True, separators=(",", ":"), default=str)


#: The ``state`` a fingerprint holds when the model's state cannot be read (its last setting: ``state`` sorts last).
UNKNOWN_STATE = "unknown"
_UNKNOWN_END = json.dumps({"state": UNKNOWN_STATE}, separators=(",", ":"))[1:]


def identity_unknown(fingerprint: str) -> bool:
    """Whether ``fingerprint`` cannot tell its model from another with the same code (its state is unknown).

    A callable whose state cannot be read (an instance holding a torch model, an open file)
    has ``"state":"unknown"`` in its fingerprint; a model version appended after it
    (``version=TAG``, the run store's key) names the model, which is then known.

    Examples
    --------
    >>> identity_unknown('python:bot:Bot.reply {"batched":false,"code":"ab12","state":"unknown"}')
    True
    >>> identity_unknown('python:bot:Bot.reply {"batched":false,"code":"ab12","state":"unknown"} version=v2')
    False
    >>> identity_unknown('python:bot:reply {"batched":false,"code":"ab12"}')
    False
    """
    return fingerprint.endswith(_UNKNOWN_END)
