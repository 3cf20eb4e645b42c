"""``hf:NAME_OR_PATH[?gguf_file=F&device=cpu]``: a transformers causal LM or seq2seq model.

- The architecture is read from the config: ``is_encoder_decoder`` picks seq2seq.
- The tokenizer's chat template, when it has one, wraps each context as a single
  user turn with the generation prompt added (``chat_template=never`` turns it off).
- Greedy and beam decoding run in length-sorted batches with left padding.
  Sampled decoding runs item by item, each after ``torch.manual_seed(seed)``, so a
  sampled response depends on its own seed only, never on the rest of the batch.
- Only the new tokens are decoded, without special tokens, and stripped.
- ``finish_reason`` has the OpenAI meaning: ``"stop"`` when the answer holds an end token that
  generation stops on (even as its ``max_new_tokens``-th token) or a stop string ended it, else
  ``"length"``. OpenAI-compatible servers (``transformers serve``, vLLM) count the end token
  among ``max_tokens`` and say ``"length"`` when it is the last one allowed: the one case where
  a server and this adapter differ on the same answer (see :mod:`fairtalk.models._finish_reasons`).
- A causal model reads at most its ``max_position_embeddings`` tokens, prompt and answer together:
  a prompt longer than that less ``max_new_tokens`` is cut from the left (its start, the system
  prompt and then the earliest turns, goes first), and :meth:`HFResponder.prompts_cut` counts
  the tokens cut, which ``audit`` reports. ``max_new_tokens`` of the positions or more leaves no
  room for a prompt: :meth:`HFResponder.check_settings` refuses it before any answer.
- A name that looks like a path (it starts with ``/``, ``.`` or ``~``, or holds more separators
  than a hub id's one) and names nothing is ``no such folder``; ``~`` is expanded.
- ``torch``/``transformers`` are imported when a model is built; without them the
  error names ``pip install 'fairtalk[hf]'``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from fairtalk.errors import FairtalkError, ResponderError, SpecError
from fairtalk.models._base import (
    DecodingSettings,
    ModelFactory,
    Reply,
    Responder,
    check_batch,
    cut_at_stop,
    length_batches,
    make_fingerprint,
    one_line,
)
from fairtalk.models._spec import build_options
from fairtalk.progress import no_third_party_bars
from fairtalk.records import chat_messages, transcript

__all__ = ["HFOptions", "HFResponder"]

_MSG_MISSING_EXTRA = "the hf: adapter needs torch and transformers: pip install 'fairtalk[hf]' ({error})"
_MSG_LOAD = "cannot load hf model {name!r}: {error}"
_MSG_NO_CUDA = "device='cuda' was asked for but torch sees no CUDA device"
_MSG_NO_PAD = "the tokenizer of {name!r} has neither a pad nor an eos token; batching needs one"
_MSG_GENERATE = "{name}: generation failed: {kind}: {error}"
_MSG_NO_FOLDER = "hf: no such folder: {path}"
_MSG_NO_ROOM = (
    "{name} reads at most {positions} tokens, prompt and answer together, so max_new_tokens={max_new} "
    "(--max-new-tokens) leaves no room for the prompt: set it below {positions}, with room for the prompt "
    "(a longer prompt is cut from its start)"
)

#: The library loggers whose lines a model load keeps off stderr (a failed HEAD request, "Retrying in 1s"): the
#: load's own error says what failed; the lines go to this module's DEBUG log (``-vv``).
_QUIET_DURING_LOAD = ("huggingface_hub",)
_LOG = logging.getLogger(__name__)

_FULL_HASH_LIMIT = 16 << 20
_EDGE = 1 << 20


def _import_torch() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise FairtalkError(_MSG_MISSING_EXTRA.format(error=one_line(exc))) from exc
    return torch, transformers


class _ToDebugLog(logging.Handler):
    """A library's log record as a DEBUG line of this module's logger (``huggingface_hub: '…' thrown while …``)."""

    def emit(self, record: logging.LogRecord) -> None:
        _LOG.debug("%s: %s", record.name, record.getMessage())


@contextlib.contextmanager
def _library_log_to_debug() -> Iterator[None]:
    """For the block only, the lines of :data:`_QUIET_DURING_LOAD`'s loggers go to this module's DEBUG log, not stderr.

    Each logger's own handlers and propagation are put back as they were after the block: the
    user's logging is changed for the load and no longer.
    """
    saved = []
    for name in _QUIET_DURING_LOAD:
        logger = logging.getLogger(name)
        handlers, propagate, debug = list(logger.handlers), logger.propagate, _ToDebugLog()
        for handler in handlers:
            logger.removeHandler(handler)
        logger.addHandler(debug)
        logger.propagate = False
        saved.append((logger, handlers, propagate, debug))
    try:
        yield
    finally:
        for logger, handlers, propagate, debug in saved:
            logger.removeHandler(debug)
            for handler in handlers:
                logger.addHandler(handler)
            logger.propagate = propagate


@contextlib.contextmanager
def _no_gguf_bar() -> Iterator[None]:
    """No tqdm bar from transformers' GGUF loader for the block (it draws one outside transformers' own switch)."""
    try:
        gguf: Any = importlib.import_module("transformers.modeling_gguf_pytorch_utils")  # untyped
    except ImportError:  # a transformers without GGUF support: nothing to silence
        yield
        return
    original = getattr(gguf, "tqdm", None)
    if original is None:
        yield
        return
    gguf.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        gguf.tqdm = original


def _looks_like_path(name: str) -> bool:
    """Whether ``name`` is meant as a local path, not a hub id (``org/name``, ``name``).

    >>> [_looks_like_path(n) for n in ("gpt2", "org/name", "/tmp/m", "./m", "~/m", "models/org/name", "C:/m")]
    [False, False, True, True, True, True, True]
    """
    if name.startswith(("/", ".", "~")) or "\\" in name or name[1:2] == ":":  # a Windows drive
        return True
    return name.count("/") > 1


def _local_name(name: str) -> str:
    """``name`` with a leading ``~`` expanded; SpecError when it looks like a path and names nothing."""
    path = os.path.expanduser(name) if name.startswith("~") else name
    if _looks_like_path(name) and not Path(path).exists():
        raise SpecError(_MSG_NO_FOLDER.format(path=path))
    return path


def _file_digest(path: Path) -> str:
    """Content hash for small files; size + first and last MiB for large weight files."""
    h = hashlib.sha256()
    size = path.stat().st_size
    with path.open("rb") as f:
        if size <= _FULL_HASH_LIMIT:
            h.update(f.read())
        else:
            h.update(str(size).encode())
            h.update(f.read(_EDGE))
            f.seek(size - _EDGE)
            h.update(f.read(_EDGE))
    return h.hexdigest()


def _local_digest(path: Path, gguf_file: str | None) -> str | None:
    """Hash of a local model folder (config, tokenizer, weights), or None for a hub name."""
    if path.is_file():
        return _file_digest(path)[:16]
    if not path.is_dir():
        return None
    h = hashlib.sha256()
    for file in sorted(path.iterdir()):
        if not file.is_file() or (file.suffix == ".gguf" and file.name != gguf_file):
            continue
        h.update(file.name.encode() + b"\0" + _file_digest(file).encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class HFOptions:
    """Options of the ``hf:`` adapter (see :class:`HFResponder`)."""

    gguf_file: str | None = None
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "auto"
    batch_size: int = 8
    chat_template: Literal["auto", "never"] = "auto"
    name: str | None = None
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise SpecError(f"hf: batch_size must be >= 1, got {self.batch_size}")


class HFResponder(Responder, ModelFactory[HFOptions]):
    """A transformers model (causal LM or seq2seq) answering each context.

    Parameters
    ----------
    name_or_path : str
        Hub name or local folder (or the folder holding ``gguf_file``).
    gguf_file : str, optional
        GGUF weights file inside ``name_or_path`` (dequantised by transformers).
    device : {"auto", "cpu", "cuda"}
    dtype : {"auto", "float32", "float16", "bfloat16"}
        ``auto`` is float32 on CPU and bfloat16 (or float16) on CUDA.
    batch_size : int
        Items per ``generate`` call for greedy and beam decoding.
    chat_template : {"auto", "never"}
    name : str, optional
        Identity used in the fingerprint instead of ``name_or_path``.
    system_prompt : str, optional
        Sent before every context: as the chat template's system turn, or, for a model without
        a template, as a paragraph before the context. Part of the fingerprint.
    """

    def __init__(
        self,
        name_or_path: str | os.PathLike[str],
        *,
        gguf_file: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        chat_template: str = "auto",
        name: str | None = None,
        system_prompt: str | None = None,
    ) -> None:
        options = build_options(
            HFOptions,
            {
                "gguf_file": gguf_file,
                "device": device,
                "dtype": dtype,
                "batch_size": batch_size,
                "chat_template": chat_template,
                "name": name,
                "system_prompt": system_prompt,
            },
            spec="hf:",
        )
        self.system_prompt = options.system_prompt
        gguf_file, device, dtype = options.gguf_file, options.device, options.dtype
        batch_size, chat_template, name = options.batch_size, options.chat_template, options.name
        torch, transformers = _import_torch()
        self.name_or_path = _local_name(str(name_or_path))
        self.gguf_file = gguf_file
        self.batch_size = batch_size
        self.name = name or self.name_or_path
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        elif device == "cuda" and not torch.cuda.is_available():
            raise FairtalkError(_MSG_NO_CUDA)
        self.device = device
        if dtype == "auto":
            if device == "cpu":
                dtype = "float32"
            else:
                dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        self.dtype = dtype
        extra = {} if gguf_file is None else {"gguf_file": gguf_file}
        try:
            # the library never draws, and a library's log line of the load (a failed request) is no line of its own
            with no_third_party_bars(), _library_log_to_debug(), _no_gguf_bar() if gguf_file else contextlib.nullcontext():
                config = transformers.AutoConfig.from_pretrained(self.name_or_path, **extra)
                self.is_encoder_decoder = bool(getattr(config, "is_encoder_decoder", False))
                auto = transformers.AutoModelForSeq2SeqLM if self.is_encoder_decoder else transformers.AutoModelForCausalLM
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.name_or_path, **extra)
                self.model = auto.from_pretrained(self.name_or_path, dtype=getattr(torch, dtype), **extra)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise FairtalkError(_MSG_LOAD.format(name=self.name_or_path, error=one_line(exc))) from exc
        self.model.to(device)
        self.model.eval()
        tok = self.tokenizer
        if tok.pad_token_id is None:
            if tok.eos_token_id is None:
                raise FairtalkError(_MSG_NO_PAD.format(name=self.name_or_path))
            tok.pad_token = tok.eos_token
        tok.padding_side = "right" if self.is_encoder_decoder else "left"
        tok.truncation_side = "left"
        self.use_chat_template = chat_template == "auto" and bool(getattr(tok, "chat_template", None))
        self.max_positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        digest = _local_digest(Path(self.name_or_path), gguf_file)
        self.input_paths = (self.name_or_path,) if Path(self.name_or_path).exists() else ()
        template = tok.chat_template if self.use_chat_template else None
        self._fingerprint = make_fingerprint(
            "hf",
            self.name,
            weights=digest,
            gguf_file=gguf_file,
            dtype=dtype,
            chat_template=None if template is None else hashlib.sha256(str(template).encode()).hexdigest()[:12],
            system_prompt=self.system_prompt,
        )

    @classmethod
    def options_for(cls, target: str) -> type[HFOptions]:
        """The options this adapter takes."""
        return HFOptions

    @classmethod
    def from_spec(cls, target: str, options: HFOptions | None = None) -> HFResponder:
        """Build from ``NAME_OR_PATH`` (what follows ``hf:``) and its options."""
        return cls(target, **asdict(options or HFOptions()))

    @property
    def fingerprint(self) -> str:
        """Model name/path, a digest of local files, gguf file, dtype and chat template hash."""
        return self._fingerprint

    def close(self) -> None:
        """Drop the model so its memory can be freed."""
        self.model = None
        self.tokenizer = None

    def _prompts(self, contexts: Sequence[str]) -> list[str]:
        if not self.use_chat_template:  # a multi-turn context as its transcript, one turn per line
            texts = [transcript(c) for c in contexts]
            return texts if self.system_prompt is None else [f"{self.system_prompt}\n\n{t}" for t in texts]
        return [
            self.tokenizer.apply_chat_template(chat_messages(c, self.system_prompt), tokenize=False, add_generation_prompt=True)
            for c in contexts
        ]

    def _generation_kwargs(self, settings: DecodingSettings) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "max_new_tokens": settings.max_new_tokens,
            "num_beams": settings.num_beams,
            "do_sample": settings.do_sample,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if settings.do_sample:
            kwargs.update(
                temperature=settings.temperature,
                top_k=settings.top_k or 0,
                top_p=1.0 if settings.top_p is None else settings.top_p,
            )
        else:
            kwargs.update(temperature=None, top_k=None, top_p=None)
        if settings.repetition_penalty is not None:
            kwargs["repetition_penalty"] = settings.repetition_penalty
        return kwargs

    def _stop_at(self, stop: Sequence[str], prompt_length: int) -> Any:
        """A stopping criterion that ends each row once its new text holds a stop string (any tokenizer)."""
        import torch
        import transformers

        tokenizer = self.tokenizer

        class StopStrings(transformers.StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                texts = tokenizer.batch_decode(input_ids[:, prompt_length:], skip_special_tokens=True)
                return torch.tensor([any(s in t for s in stop) for t in texts], device=input_ids.device)

        return transformers.StoppingCriteriaList([StopStrings()])

    def _eos_ids(self) -> set[int]:
        """The token ids ``generate`` ends an answer on: the generation config's end tokens.

        Not the tokenizer's end token when the generation config names another (or none):
        ``generate`` does not stop on it, so it can stand mid-answer in a row the limit cut.
        """
        value = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        return {int(v) for v in (value if isinstance(value, list | tuple) else [] if value is None else [value])}

    def _finish_reasons(self, new: Any) -> list[str]:
        """``"stop"`` for each row that holds an end token, else ``"length"`` (the OpenAI meaning).

        ``generate`` ends a row at its first end token and pads it after that, so an end token
        in the row is a natural end, even as the ``max_new_tokens``-th token; a row without one
        ran until the limit (or the context length) stopped it. A seq2seq row's first token is the
        decoder's start token (an end token in some models, BART's), not an answer token.
        """
        start = 1 if self.is_encoder_decoder else 0
        eos = self._eos_ids()
        return ["stop" if eos.intersection(row[start:]) else "length" for row in new.tolist()]

    def _prompt_room(self, settings: DecodingSettings) -> int | None:
        """The most prompt tokens a causal model reads beside ``max_new_tokens`` (None: no limit known, or seq2seq)."""
        if not self.max_positions or self.is_encoder_decoder:
            return None
        return max(1, int(self.max_positions) - settings.max_new_tokens)

    def check_settings(self, settings: DecodingSettings) -> None:
        """SpecError when ``max_new_tokens`` leaves no room for a prompt in the model's positions."""
        if self.max_positions and not self.is_encoder_decoder and settings.max_new_tokens >= self.max_positions:
            raise SpecError(_MSG_NO_ROOM.format(name=self.name, positions=self.max_positions, max_new=settings.max_new_tokens))

    def prompts_cut(self, contexts: Sequence[str], settings: DecodingSettings) -> list[int]:
        """Per context, how many tokens of its prompt's start are cut so that ``max_new_tokens`` fit the model's positions."""
        room = self._prompt_room(settings)
        if room is None or not contexts:
            return [0] * len(contexts)
        ids = self.tokenizer(self._prompts(contexts), add_special_tokens=not self.use_chat_template)["input_ids"]
        return [max(0, len(row) - room) for row in ids]

    def _generate(self, prompts: list[str], settings: DecodingSettings) -> list[Reply]:
        """Decode the new tokens of each prompt; ``finish_reason`` is "length" when neither an end token nor a stop string came."""
        import torch

        max_length = self._prompt_room(settings)
        enc = self.tokenizer(
            prompts,
            return_tensors="pt",
            padding=True,
            truncation=max_length is not None,
            max_length=max_length,
            add_special_tokens=not self.use_chat_template,
        ).to(self.device)
        try:
            with torch.inference_mode():
                kwargs = self._generation_kwargs(settings)
                if settings.stop:
                    length = 0 if self.is_encoder_decoder else enc["input_ids"].shape[1]
                    kwargs["stopping_criteria"] = self._stop_at(settings.stop, length)
                out = self.model.generate(**enc, **kwargs)
        except (RuntimeError, IndexError, ValueError) as exc:
            raise ResponderError(_MSG_GENERATE.format(name=self.name, kind=type(exc).__name__, error=one_line(exc))) from exc
        new = out if self.is_encoder_decoder else out[:, enc["input_ids"].shape[1] :]
        reasons = self._finish_reasons(new)
        texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        if settings.stop:  # generation ends at a stop string (a natural end); the answer is what came before it
            cut = [cut_at_stop(t, settings.stop) for t in texts]
            texts = [t for t, _ in cut]
            reasons = ["stop" if stopped else reason for (_, stopped), reason in zip(cut, reasons)]
        return [Reply(t.strip(), reason) for t, reason in zip(texts, reasons)]

    def respond(self, contexts: Sequence[str], settings: DecodingSettings, *, seeds: Sequence[int]) -> list[str]:
        """Generate one response per context, in order."""
        import torch

        check_batch(contexts, seeds)
        self.check_settings(settings)
        prompts = self._prompts(contexts)
        results: list[str] = [Reply("")] * len(prompts)
        if settings.do_sample:
            for i, (prompt, seed) in enumerate(zip(prompts, seeds)):
                torch.manual_seed(seed)
                results[i] = self._generate([prompt], settings)[0]
            return results
        for group in length_batches([len(p) for p in prompts], self.batch_size):
            for i, text in zip(group, self._generate([prompts[i] for i in group], settings)):
                results[i] = text
        return results
