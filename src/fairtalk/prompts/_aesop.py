"""Import of precomputed AESOP paraphrases (the layout of the Robust-NLG-Bias-Eval data).

Two line-aligned files: a ``.source`` file whose lines are
``prompt <sep> source parse <sep> target parse``, and the ``_sep_extract`` file with one
paraphrase a line (lowercased, PTB-tokenised, leading space). The target parse is the
structure label. The group and template come from the source prompt ``The <group> <phrase>``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from fairtalk.errors import InputError
from fairtalk.prompts._templates import DEFAULT_GROUPS, TEMPLATES, Prompt, Template

__all__ = ["detokenize", "parse_fixed_prompt", "read_aesop"]

_SEP = " <sep> "
_MSG_LINES = "the paraphrase file has {n_extract} lines but the .source file has {n_source} (they must be line-aligned)"
_MSG_FIELDS = "expected 'prompt <sep> source parse <sep> target parse', got {n} fields"
_MSG_PROMPT = "cannot tell the group and template of the prompt {prompt!r} (groups: {groups})"

_DETOK = (
    (re.compile(r" (n't|'s|'m|'re|'ve|'ll|'d)\b"), r"\1"),
    (re.compile(r" ([.,!?;:%)\]])"), r"\1"),
    (re.compile(r"([(\[$]) "), r"\1"),
    (re.compile(r"\. \. \."), "..."),
    (re.compile(r"`` ?| ?''"), '"'),
)


def detokenize(text: str) -> str:
    """Undo PTB tokenisation roughly (``i 'm`` -> ``i'm``, ``known for ?`` -> ``known for?``).

    Examples
    --------
    >>> detokenize(" what was the man known for ? i 'm not sure . . .")
    "what was the man known for? i'm not sure..."
    """
    text = text.strip()
    for pattern, replacement in _DETOK:
        text = pattern.sub(replacement, text)
    return text


def parse_fixed_prompt(
    prompt: str, groups: Sequence[str] = DEFAULT_GROUPS, templates: Sequence[Template] = TEMPLATES
) -> tuple[str, str]:
    """Split ``The <group> <phrase>`` into (group, template phrase); case-insensitive.

    Raises
    ------
    InputError
        When no (group, template) pair renders to the prompt.
    """
    wanted = " ".join(prompt.split()).lower()
    for template in templates:
        for group in groups:
            if template.render(group).lower() == wanted:
                return group, template.phrase
    raise InputError(_MSG_PROMPT.format(prompt=prompt, groups=", ".join(groups)))


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()  # a BOM is no part of the first line
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path=str(path)) from exc


def read_aesop(
    source: str | os.PathLike[str],
    extract: str | os.PathLike[str],
    *,
    groups: Sequence[str] = DEFAULT_GROUPS,
    prefix: str = "",
    detok: bool = True,
) -> tuple[Prompt, ...]:
    """Read AESOP paraphrases as prompts labelled by their target parse.

    Parameters
    ----------
    source, extract : path
        The ``.source`` file and its line-aligned ``_sep_extract`` paraphrases.
    groups : sequence of str
        Groups to recognise in the source prompts.
    prefix : str
        Prepended to each structure label (``"paranmt:"`` keeps two models' parses apart).
    detok : bool
        Undo the PTB tokenisation of the paraphrases (:func:`detokenize`).

    Raises
    ------
    InputError
        Files that are not line-aligned, a malformed ``.source`` line, or a prompt whose
        group or template is unknown (located by path and line).
    """
    source_path, extract_path = Path(source), Path(extract)
    source_lines, extract_lines = _lines(source_path), _lines(extract_path)
    if len(source_lines) != len(extract_lines):
        raise InputError(_MSG_LINES.format(n_extract=len(extract_lines), n_source=len(source_lines)), path=str(extract_path))
    known: dict[str, tuple[str, str]] = {}
    out = []
    for number, (line, paraphrased) in enumerate(zip(source_lines, extract_lines), start=1):
        fields = line.split(_SEP)
        if len(fields) != 3:
            raise InputError(_MSG_FIELDS.format(n=len(fields)), path=str(source_path), line=number)
        prompt, _, target = (f.strip() for f in fields)
        if prompt not in known:
            try:
                known[prompt] = parse_fixed_prompt(prompt, groups)
            except InputError as exc:
                raise InputError(exc.message, path=str(source_path), line=number) from exc
        group, phrase = known[prompt]
        text = detokenize(paraphrased) if detok else paraphrased.strip()
        out.append(Prompt(group, phrase, prefix + target, text))
    return tuple(out)
