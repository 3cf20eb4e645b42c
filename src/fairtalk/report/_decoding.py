"""The run lines of every report header: the decoding as sent, the turns, system prompt and decoding in words, and the served model.

Two lines, the same in ``report.md``, ``report.html`` and ``index.html``:

* ``decoding {...}``: the settings the model was actually sent, as canonical JSON (greedy: no
  temperature);
* the run header: ``turns 3 · system prompt sha256 0123456789ab · greedy, max_new_tokens 40``
  (sampled: temperature, top_p, top_k and the per-answer seeds). The system prompt is named by
  the first 12 hex digits of its SHA-256 (the prompt itself is in the model's fingerprint, in
  the manifest); ``none`` when the model had none.

Where they come from: an audit's provenance (``audit.decoding``, ``audit.seed``, ``audit.model``:
the model's fingerprint, which holds its system prompt) and the run's config (``run.json``'s
``config``: ``turns``, ``model_args``). A result scored from responses made elsewhere
(``fairtalk score``) has neither line.

A third line in ``report.md``, ``report.html`` and the console, when a server named the model that
answered (``openai:``; the audit's ``audit.served``): ``served model 'NAME' (20 answers)``, flagged
when a name is not the model asked for (:func:`served_line`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

from fairtalk._jsonl import jsonable
from fairtalk.results import AuditProvenance, AuditResult, AuditRun, Provenance, ServedProvenance

__all__ = [
    "decoding_summary",
    "decoding_text",
    "result_decoding",
    "result_header",
    "result_served",
    "run_header",
    "sequential_summary",
    "served_line",
    "system_prompt_hash",
    "system_prompt_of",
    "undecided_reasons",
]

#: Hex digits of a system prompt's SHA-256 shown in a header.
SHA_DIGITS = 12


def decoding_text(settings: Mapping[str, Any] | None) -> str | None:
    """The settings as sent, as canonical JSON (unset knobs are null: greedy has no temperature); None without settings.

    Examples
    --------
    >>> decoding_text({"max_new_tokens": 40, "do_sample": False, "temperature": None})
    '{"do_sample": false, "max_new_tokens": 40, "temperature": null}'
    """
    if settings is None:
        return None
    return json.dumps(jsonable(dict(settings)), sort_keys=True)


def result_decoding(result: AuditResult) -> str | None:
    """The decoding line of one axis' result: its provenance's ``audit.decoding`` (None when the audit did not generate, as with ``fairtalk score``)."""
    audit = result.provenance.audit
    return None if audit is None else decoding_text(audit.decoding)


def decoding_summary(settings: Mapping[str, Any], seed: int | None = None) -> str:
    """The decoding in words: greedy, beam search or sampled (its knobs and seeds), then the token limit.

    Examples
    --------
    >>> decoding_summary({"do_sample": False, "max_new_tokens": 40, "temperature": None})
    'greedy, max_new_tokens 40'
    >>> decoding_summary({"do_sample": True, "temperature": 0.7, "top_p": 0.9, "max_new_tokens": 256}, seed=0)
    'sampled (temperature 0.7, top_p 0.9, per-answer seeds from seed 0), max_new_tokens 256'
    """
    if settings.get("do_sample"):
        knobs = [
            f"{name} {settings[name]:g}"
            for name in ("temperature", "top_p", "top_k")
            if isinstance(settings.get(name), (int, float))
        ]
        knobs.append("per-answer seeds" + (f" from seed {seed}" if seed is not None else ""))
        parts = [f"sampled ({', '.join(knobs)})"]
    elif isinstance(settings.get("num_beams"), int) and settings["num_beams"] > 1:
        parts = [f"beam search ({settings['num_beams']} beams)"]
    else:
        parts = ["greedy"]
    parts.append(f"max_new_tokens {settings.get('max_new_tokens', '?')}")
    if settings.get("repetition_penalty") is not None:
        parts.append(f"repetition_penalty {settings['repetition_penalty']:g}")
    if settings.get("stop"):
        parts.append(f"{len(settings['stop'])} stop string{'s' if len(settings['stop']) != 1 else ''}")
    return ", ".join(parts)


def system_prompt_hash(prompt: str) -> str:
    """The first 12 hex digits of the SHA-256 of a system prompt (UTF-8).

    Examples
    --------
    >>> system_prompt_hash("You are a helpful assistant.")
    '75357d685f23'
    """
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:SHA_DIGITS]


def system_prompt_of(fingerprint: Any, model_args: Any = None) -> str | None:
    """The system prompt a model ran with: from its fingerprint (``kind:identity {json}``), else its ``model_args``.

    Examples
    --------
    >>> system_prompt_of('hf:smollm2 {"dtype":"auto","system_prompt":"Be brief."}')
    'Be brief.'
    >>> system_prompt_of("builtin:echo", {"system_prompt": "Be kind."}), system_prompt_of("builtin:echo")
    ('Be kind.', None)
    """
    if isinstance(fingerprint, str) and (start := fingerprint.find(" {")) >= 0:
        try:
            settings, _ = json.JSONDecoder().raw_decode(fingerprint, start + 1)
        except ValueError:
            settings = None
        found = settings.get("system_prompt") if isinstance(settings, dict) else None
        if isinstance(found, str):
            return found
    found = model_args.get("system_prompt") if isinstance(model_args, Mapping) else None
    return found if isinstance(found, str) else None


def _header(turns: Any, prompt: str | None, settings: Any, seed: int | None) -> str:
    parts = [] if turns is None else [f"turns {turns}"]
    parts.append("system prompt " + ("none" if prompt is None else f"sha256 {system_prompt_hash(prompt)}"))
    if isinstance(settings, Mapping):
        parts.append(decoding_summary(settings, seed))
    return " · ".join(parts)


def _number(value: float | None) -> float:
    return math.nan if value is None else value


def sequential_summary(provenance: Provenance) -> str | None:
    """An ``--until-decided`` axis' looks in one line: how many ran, the pairs used, the last look's level, why it stopped.

    None for an audit of a fixed number of pairs (its provenance has no ``audit.sequential``).
    """
    record = provenance.sequential
    if record is None:
        return None
    if record.stopped == "all decided":
        why = "every primary measure decided"
    else:
        why = "budget spent, still undecided: " + ", ".join(record.undecided or ())
        if record.n_pairs_available != record.max_pairs:
            why += f" (the corpus has {record.n_pairs_available} pairs)"
    return (
        f"until decided: stopped at look {record.looks} of {len(record.planned_looks or ())} "
        f"({record.n_pairs} of at most {record.max_pairs} pairs): {why}; nominal level at that look "
        f"{_number(record.nominal_alpha):.4g} (two-sided), {_number(record.nominal_alpha_equivalence):.4g} "
        f"(each one-sided equivalence test)"
    )


def undecided_reasons(provenance: Provenance) -> list[str]:
    """Why each key an ``--until-decided`` axis spent its budget on is undecided: ``"KEY held the run back: reason"``.

    Empty for an axis that decided every primary measure, a fixed-size audit, or a result from before the reasons
    were recorded (``undecided_why``; :func:`sequential_summary` names those keys without a reason).
    """
    record = provenance.sequential
    if record is None or record.stopped == "all decided":
        return []
    why = record.undecided_why or {}
    return [f"{key} held the run back: {why[key]}" for key in record.undecided or () if why.get(key)]


def result_header(result: AuditResult, run_config: Mapping[str, Any] | None = None) -> str | None:
    """The run header of one axis' report: turns (from ``run_config``), system prompt hash, decoding in words.

    None for a result that no audit generated (no ``audit`` provenance and no run config).
    """
    if result.provenance.audit is None and run_config is None:
        return None
    audit = result.provenance.audit or AuditProvenance()
    config = run_config or {}
    prompt = system_prompt_of(audit.model, config.get("model_args"))
    header = _header(config.get("turns"), prompt, audit.decoding, audit.seed)
    looks = sequential_summary(result.provenance)
    return header if looks is None else f"{header} · {looks}"


def served_line(served: ServedProvenance | None) -> tuple[str, bool] | None:
    """The models a server said answered, with their counts, in one line, and whether one is not the model asked for.

    None when the server named no model (or the model is not one that says: ``served`` None).

    Examples
    --------
    >>> served_line(ServedProvenance("llama-3.1-8b", {"qwen2.5-0.5b": 18}, 2))
    ("served model 'qwen2.5-0.5b' (18 answers), unnamed (2 answers): not the model asked for ('llama-3.1-8b')", True)
    >>> served_line(ServedProvenance("gpt-4o", {"gpt-4o-2024-08-06": 20}, 0))
    ("served model 'gpt-4o-2024-08-06' (20 answers)", False)
    """
    counts = {} if served is None else dict(served.counts or {})
    if served is None or not counts:
        return None
    names = [
        f"{name!r} ({n:,} answer{'s' if n != 1 else ''})" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    if served.n_unknown:
        names.append(f"unnamed ({served.n_unknown:,} answer{'s' if served.n_unknown != 1 else ''})")
    line = f"served model{'s' if len(counts) > 1 else ''} {', '.join(names)}"
    other = served.others()
    if not other:
        return line, False
    if len(other) == len(counts):
        return f"{line}: not the model asked for ({served.requested!r})", True
    return f"{line}: {', '.join(map(repr, other))} not the model asked for ({served.requested!r})", True


def result_served(result: AuditResult) -> tuple[str, bool] | None:
    """:func:`served_line` of one axis' result (its provenance's ``audit.served``)."""
    audit = result.provenance.audit
    return None if audit is None else served_line(audit.served)


def run_header(run: AuditRun) -> str:
    """The run header of ``index.html``: the run's turns, system prompt hash and decoding in words."""
    config = run.config or {}
    return _header(config.get("turns"), system_prompt_of(run.model, config.get("model_args")), run.settings, run.seed)
