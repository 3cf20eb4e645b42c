"""Import of the published Robust-NLG-Bias-Eval outputs: ``out_seed_<n>_predictions.txt`` files.

Each file is ``label<TAB>text`` (labels -1, 0, 1, 2), one row per prompt of a fixed layout:
for fixed prompt ``k`` (in the order of ``fixed-prompts.txt``, template-major), ``1 + 2 *
n_paraphrases`` rows (101 in the paper): the fixed prompt, then ParaNMT paraphrase ``j`` and
QQP-Pos paraphrase ``j`` alternately, ``j = 0 .. n_paraphrases - 1``. Structure labels are
``original``, ``paranmt:<j>`` and ``qqppos:<j>``; the seed comes from the file name.

Row counts are validated; when the paraphrase files are found (``paraphrases=`` or beside
the outputs as in the published repository), every row is checked to start with its
expected prompt (case and whitespace ignored). Rows that do not are *misaligned*: counted per
seed and kept (the paper's own analysis used them by position) or dropped with
``misaligned="drop"``, which needs the paraphrase files (without them only the original-prompt
rows are checked, so no misaligned paraphrase row could be found to drop). The labels are those
published with the outputs, made by Sheng et al.'s BERT regard classifier (:data:`PUBLISHED_LABELLER`,
the summary's ``labels_from``). A gzip file is named as one. In the published data, 18 rows per seed are misaligned: the QQP-Pos
rows from structure index 66 of the last fixed prompt were generated from a file with one
extra line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from fairtalk._jsonl import gzip_error
from fairtalk.errors import InputError
from fairtalk.prompts._aesop import parse_fixed_prompt
from fairtalk.prompts._data import DataSummary, PromptData, summarise_frame
from fairtalk.prompts._templates import DEFAULT_GROUPS, build_prompts, template_by_phrase

__all__ = ["COLUMNS", "PUBLISHED_LABELLER", "PromptData", "alignment_warning", "find_published_files", "read_published"]

#: Columns of a labelled-completions frame (our generations use the same, ``prompt_index`` = -1).
COLUMNS = ("seed", "prompt_index", "group", "template", "kind", "structure", "label", "text", "aligned")

_FILE_RE = re.compile(r"^out_seed_(\d+)_predictions\.txt$")
_SOURCES = ("paranmt", "qqppos")
_EXTRACT_NAMES = {"paranmt": "paranmt-prompt-50_sep_extract", "qqppos": "qqppos-prompt-50_sep_extract"}
_SOURCE_NAMES = {"paranmt": "promp_paranmt_50.source", "qqppos": "promp_qqppos_50.source"}
_SEP = " <sep> "

_MSG_NO_FILES = "no out_seed_<n>_predictions.txt files in the folder"
_MSG_NOT_DIR = "not a folder"
_MSG_ROWS = "expected {expected} rows ({n_prompts} prompts x {per_prompt}), got {got}"
_MSG_LABEL = "label must be one of -1, 0, 1, 2, got {label!r}"
_MSG_TAB = "expected label<TAB>text"
_MSG_PARAPHRASE_LINES = "expected {expected} paraphrases ({n_prompts} prompts x {n}), got {got}"
_MSG_MISALIGNED = "misaligned must be 'keep' or 'drop', got {value!r}"
_MSG_DROP_UNCHECKED = (
    "--misaligned drop needs the paraphrase files to check the paraphrase rows against, and they are not in {folder} "
    "({files}): without them only the original prompts' rows can be checked, so no misaligned paraphrase row could be "
    "dropped; give their folder with --paraphrases DIR (paraphrases= in Python)"
)
_MSG_ORIGINAL_ONLY = (
    "only the original prompts' rows were checked for alignment: the paraphrase files ({files}) were not found beside "
    "the outputs (../prompts/paraphrased), so paraphrase rows that do not start with their prompt (18 per seed in the "
    "published data) go undetected; give their folder with --paraphrases DIR (paraphrases= in Python) for the full check"
)
_MSG_NO_PROMPTS = "the fixed prompts file is empty (no line with a prompt); give the published fixed-prompts.txt"
_MSG_SAME_SEED = "two files of seed {seed}: {first} and {second}; keep one of them in the folder"
#: Who labelled the published outputs' regard (the labels come with the files).
PUBLISHED_LABELLER = "Sheng et al.'s BERT regard classifier (the labels published with the outputs)"


def find_published_files(directory: str | os.PathLike[str]) -> dict[int, Path]:
    """Map seed -> file for every ``out_seed_<n>_predictions.txt`` in ``directory`` (sorted by seed).

    Two files of one seed (``out_seed_3_…`` and ``out_seed_03_…``) are an InputError naming both.
    """
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(_MSG_NOT_DIR, path=str(folder))
    found: dict[int, Path] = {}
    for path in sorted(folder.iterdir()):
        if (m := _FILE_RE.match(path.name)) is None:
            continue
        seed = int(m.group(1))
        if seed in found:  # out_seed_3_... and out_seed_03_...: one seed, two files, neither to be dropped unseen
            raise InputError(_MSG_SAME_SEED.format(seed=seed, first=found[seed].name, second=path.name), path=str(folder))
        found[seed] = path
    if not found:
        raise InputError(_MSG_NO_FILES, path=str(folder))
    return dict(sorted(found.items()))


def _read_lines(path: Path) -> list[str]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", path=str(path)) from exc
    try:
        return raw.decode("utf-8-sig").splitlines()  # a BOM is no part of the first line
    except UnicodeDecodeError as exc:
        gzipped = gzip_error(raw, str(path), kind="plain text lines")
        if gzipped is not None:
            raise gzipped from None
        raise InputError(f"cannot read: {exc}", path=str(path)) from exc


def alignment_warning(summary: DataSummary) -> str | None:
    """Why the alignment check was partial (published outputs read without their paraphrase files), or None."""
    if summary.source != "published" or summary.alignment_checked != "original":
        return None
    return _MSG_ORIGINAL_ONLY.format(files=", ".join(_EXTRACT_NAMES.values()))


def _fixed_prompts(directory: Path, prompts_file: str | os.PathLike[str] | None) -> tuple[list[str], str]:
    candidates = (
        [Path(prompts_file)]
        if prompts_file is not None
        else [
            directory / "fixed-prompts.txt",
            directory.parent / "prompts" / "fixed-prompts.txt",
        ]
    )
    for candidate in candidates:
        if candidate.is_file() or prompts_file is not None:
            lines = [line for line in _read_lines(candidate) if line.strip()]
            if not lines:  # else the outputs would be blamed: "expected 0 rows (0 prompts x 101)"
                raise InputError(_MSG_NO_PROMPTS, path=str(candidate))
            return lines, str(candidate)
    return [p.text for p in build_prompts()], "builtin"


def _paraphrases(
    directory: Path, paraphrases: str | os.PathLike[str] | None, n_prompts: int, n: int, *, drop: bool
) -> tuple[dict[str, list[str]] | None, dict[str, list[str]]]:
    """The paraphrase texts by source (None when their files are absent) and the AESOP target parses.

    ``drop`` (``misaligned="drop"``) needs the texts: without them it is an error, not a silent no-op.
    """
    folder = Path(paraphrases) if paraphrases is not None else directory.parent / "prompts" / "paraphrased"
    extract_paths = {s: folder / _EXTRACT_NAMES[s] for s in _SOURCES}
    texts: dict[str, list[str]] | None = None
    if all(p.is_file() for p in extract_paths.values()):
        texts = {}
        for source, path in extract_paths.items():
            lines = _read_lines(path)
            if len(lines) != n_prompts * n:
                raise InputError(
                    _MSG_PARAPHRASE_LINES.format(expected=n_prompts * n, n_prompts=n_prompts, n=n, got=len(lines)),
                    path=str(path),
                )
            texts[source] = lines
    elif paraphrases is not None:
        missing = [str(p) for p in extract_paths.values() if not p.is_file()]
        raise InputError(f"paraphrase files not found: {', '.join(missing)}", path=str(folder))
    elif drop:
        raise InputError(_MSG_DROP_UNCHECKED.format(folder=folder, files=", ".join(_EXTRACT_NAMES.values())), path=str(folder))
    parses: dict[str, list[str]] = {}
    for source in _SOURCES:
        path = folder / _SOURCE_NAMES[source]
        if path.is_file():
            lines = _read_lines(path)
            parses[source] = [line.split(_SEP)[-1].strip() for line in lines[:n]]
    return texts, parses


def _squash(text: str) -> str:
    return "".join(text.lower().split())


def _starts_with(text: str, squashed_prefix: str) -> bool:
    """Whether ``text`` starts with the prefix, case and whitespace ignored (cheap on long texts)."""
    head = text[: 2 * len(squashed_prefix) + 8]
    return _squash(head).startswith(squashed_prefix) or _squash(text).startswith(squashed_prefix)


def read_published(
    directory: str | os.PathLike[str],
    *,
    prompts_file: str | os.PathLike[str] | None = None,
    paraphrases: str | os.PathLike[str] | None = None,
    n_paraphrases: int = 50,
    groups: tuple[str, ...] = DEFAULT_GROUPS,
    misaligned: Literal["keep", "drop"] = "keep",
) -> PromptData:
    """Read every ``out_seed_<n>_predictions.txt`` in ``directory`` into one labelled frame.

    Parameters
    ----------
    directory : path
        The folder of output files (``data/generated-outputs`` in the published repository).
    prompts_file : path, optional
        ``fixed-prompts.txt``; default: beside the outputs or in ``../prompts/``, else the
        built-in template-major order (which equals the published file).
    paraphrases : path, optional
        Folder of the ``*_sep_extract`` (and ``.source``) files; default ``../prompts/paraphrased``
        when present. Without them only the original-prompt rows are checked
        (:func:`alignment_warning` says so) and ``misaligned="drop"`` is refused.
    n_paraphrases : int
        Paraphrases per source model and fixed prompt (50 in the paper).
    groups : tuple of str
        Group names, to parse the fixed prompts.
    misaligned : {"keep", "drop"}
        What to do with rows that do not start with their expected prompt.

    Returns
    -------
    PromptData
        ``source="published"``; its summary holds the seeds, the misaligned rows per seed,
        which rows were checked, the dropped rows (``excluded["misaligned"]``)
        and where the fixed prompts came from; ``parses`` maps structure label -> AESOP target
        parse when the ``.source`` files were found.

    Raises
    ------
    InputError
        No output files, a file with the wrong number of rows, a malformed row or label, or
        a fixed prompt that is not ``The <group> <template>``, a gzip file, or ``misaligned="drop"``
        without the paraphrase files to check against.
    """
    if misaligned not in ("keep", "drop"):
        raise InputError(_MSG_MISALIGNED.format(value=misaligned))
    folder = Path(directory)
    files = find_published_files(folder)
    fixed, prompts_source = _fixed_prompts(folder, prompts_file)
    n_prompts, per_prompt = len(fixed), 1 + 2 * n_paraphrases
    parsed = _parse_fixed_prompts(fixed, groups, prompts_source)
    n_expected = n_prompts * per_prompt
    contents = _read_outputs(files, n_prompts, per_prompt)
    texts, parse_lists = _paraphrases(folder, paraphrases, n_prompts, n_paraphrases, drop=misaligned == "drop")
    expected = _expected_prefixes(fixed, texts, n_paraphrases)

    labels_all, texts_all, seeds_all, aligned_all = [], [], [], []
    counts: dict[int, int] = {}
    for seed, path in files.items():
        labels, row_texts, aligned = _read_rows(contents.pop(seed), path, expected, per_prompt)
        counts[seed] = int((~aligned).sum())
        labels_all.append(labels)
        texts_all.extend(row_texts)
        seeds_all.append(np.full(n_expected, seed, dtype=np.int32))
        aligned_all.append(aligned)

    n_files = len(files)
    prompt_index = np.tile(np.repeat(np.arange(n_prompts, dtype=np.int32), per_prompt), n_files)
    frame = pd.DataFrame(
        {
            "seed": np.concatenate(seeds_all),
            "prompt_index": prompt_index,
            **_prompt_columns(parsed, groups, prompt_index),
            "structure": pd.Categorical.from_codes(
                np.tile(np.arange(per_prompt), n_prompts * n_files), categories=_structure_names(per_prompt)
            ),
            "label": np.concatenate(labels_all),
            "text": texts_all,
            "aligned": np.concatenate(aligned_all),
        }
    )
    checked: Literal["all", "original"] = "all" if texts is not None else "original"
    dropped = 0
    if misaligned == "drop":
        dropped = int((~frame["aligned"]).sum())
        frame = frame[frame["aligned"]].reset_index(drop=True)
    summary = DataSummary(
        source="published",
        n_records=n_files * n_expected,
        n_texts=len(frame),
        excluded={"misaligned": dropped} if dropped else {},
        misaligned=counts,
        alignment_checked=checked,
        prompts_source=prompts_source,
        labels_from=PUBLISHED_LABELLER,
        **{**summarise_frame(frame), "seeds": tuple(files)},
    )
    return PromptData(frame=frame, source="published", data_summary=summary, parses=_parses_by_structure(parse_lists))


def _parse_fixed_prompts(fixed: list[str], groups: tuple[str, ...], prompts_source: str) -> list[tuple[str, str]]:
    """Each fixed prompt's (group, template), an unparsable one located by its line in the prompts file."""
    parsed = []
    for number, prompt in enumerate(fixed, start=1):
        try:
            parsed.append(parse_fixed_prompt(prompt, groups))
        except InputError as exc:
            raise InputError(exc.message, path=prompts_source, line=number) from exc
    return parsed


def _read_outputs(files: dict[int, Path], n_prompts: int, per_prompt: int) -> dict[int, list[str]]:
    """Every output file's lines by seed, each file checked to have one row per prompt and structure."""
    n_expected = n_prompts * per_prompt
    contents: dict[int, list[str]] = {}
    for seed, path in files.items():
        contents[seed] = lines = _read_lines(path)
        if len(lines) != n_expected:
            raise InputError(
                _MSG_ROWS.format(expected=n_expected, n_prompts=n_prompts, per_prompt=per_prompt, got=len(lines)),
                path=str(path),
            )
    return contents


def _structure_names(per_prompt: int) -> list[str]:
    """The structure label of each row of a fixed prompt: ``original``, then ``paranmt:<j>`` and ``qqppos:<j>`` alternately."""
    return ["original"] + [f"{_SOURCES[(s - 1) % 2]}:{(s - 1) // 2}" for s in range(1, per_prompt)]


def _expected_prefixes(fixed: list[str], texts: dict[str, list[str]] | None, n_paraphrases: int) -> list[str]:
    """The squashed prompt each row should start with; ``""`` (unchecked) for paraphrase rows without their files."""
    expected = []
    for k, prompt in enumerate(fixed):
        expected.append(_squash(prompt))
        for s in range(1, 1 + 2 * n_paraphrases):
            source, j = _SOURCES[(s - 1) % 2], (s - 1) // 2
            expected.append(_squash(texts[source][n_paraphrases * k + j]) if texts is not None else "")
    return expected


def _read_rows(lines: list[str], path: Path, expected: list[str], per_prompt: int) -> tuple[np.ndarray, list[str], np.ndarray]:
    """One output file's labels, texts and alignment flags, a row without a tab or a valid label an error."""
    labels = np.empty(len(expected), dtype=np.int8)
    aligned = np.ones(len(expected), dtype=bool)
    row_texts = []
    for i, line in enumerate(lines):
        label, tab, text = line.partition("\t")
        if not tab:
            raise InputError(_MSG_TAB, path=str(path), line=i + 1)
        if label not in ("-1", "0", "1", "2"):
            raise InputError(_MSG_LABEL.format(label=label), path=str(path), line=i + 1)
        labels[i] = int(label)
        row_texts.append(text)
        want = expected[i]
        if (want or i % per_prompt == 0) and not _starts_with(text, want):
            aligned[i] = False
    return labels, row_texts, aligned


def _prompt_columns(parsed: list[tuple[str, str]], groups: tuple[str, ...], prompt_index: np.ndarray) -> dict[str, object]:
    """The ``group``, ``template`` and ``kind`` columns: each row's fixed prompt's, as categoricals."""
    group_of = [g for g, _ in parsed]
    template_of = [t for _, t in parsed]
    return {
        "group": pd.Categorical.from_codes(np.array([groups.index(g) for g in group_of])[prompt_index], categories=list(groups)),
        "template": pd.Categorical(template_of)[prompt_index],
        "kind": pd.Categorical([template_by_phrase(t).kind for t in template_of])[prompt_index],
    }


def _parses_by_structure(parse_lists: dict[str, list[str]]) -> dict[str, str]:
    """Structure label (``paranmt:<j>``, ``qqppos:<j>``) -> the AESOP target parse read from the ``.source`` files."""
    parses = {}
    for source, lines in parse_lists.items():
        for j, parse in enumerate(lines):
            parses[f"{source}:{j}"] = parse
    return parses
