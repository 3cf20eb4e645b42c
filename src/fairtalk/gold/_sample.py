"""The blind sample a person labels: read an audit's responses, a completions file or plain texts; draw, stratified and seeded; mask.

Three inputs are read (:func:`read_items`):

- an audit's ``responses.jsonl`` (or its axis folder): items are ``(pair_id, side)``; the sample
  draws ``n / 2`` pairs uniformly and labels **both** sides of each, so that the sample holds as
  many texts of each group and every labelled pair can give a paired gap (prediction-powered
  inference needs the pair as its unit). The pairs come in random order, the two sides of a
  pair one after the other (which side first drawn at random for each pair), so every two
  labels complete a pair: a session stopped early still gives ``score --gold`` whole pairs;
- a JSONL of texts (paper 004's completions from ``fairtalk prompts generate``, or ``{"id",
  "text", "group"?}`` records): an item's id is its ``id`` field, else its line number; records
  without a text (failed completions) are left out;
- a plain text file, one text per line: an item's id is its line number (blank lines left out).

A caller may name the items to draw from (``keep``: id -> group): ``fairtalk label`` on a
completions file passes the completions ``prompts analyze`` keeps
(:func:`fairtalk.prompts.analysed_completions`), each in its group as the analysis spells it, so
that no label goes to a completion the analysis leaves out; the others are counted in
:attr:`Sample.n_left_out`.

Where items have groups, the sample takes the same number from each (the remainder of ``n``
spread over groups drawn at random), uniformly within each group, in an order shuffled across
groups. Everything random comes from ``seed``, so the same input, seed, size and measures always
give the same sample (:attr:`Sample.digest`), which is how a restart finds its place again.

What the page shows is :attr:`SampleItem.shown`: the text with every identity term replaced by
``XYZ``, with the audit's lexicon (as ``score(mask_groups=True)`` masks, via
:meth:`fairtalk.counterfactual.Swapper.mask`) and the identity vocabulary of paper 004
(:func:`fairtalk.lexicons._identity.identity_terms`).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from fairtalk._jsonl import first_record, numbered_lines, open_input, read_json_file, read_objects
from fairtalk._responses import read_responses
from fairtalk.counterfactual import Swapper
from fairtalk.errors import InputError, SpecError
from fairtalk.lexicons import Lexicon, expand_axis, identity_masker, identity_terms, load_lexicon, recorded_lexicon
from fairtalk.records import TURN_SEPARATOR

__all__ = ["MASK_TOKEN", "Sample", "SampleItem", "draw_sample", "read_items", "resolve_input"]

#: The token that replaces identity terms on the page (the one ``score(mask_groups=True)`` uses).
MASK_TOKEN = "XYZ"
InputKind = Literal["responses", "texts"]
_WORD = re.compile(r"\S+")

_MSG_NO_RESPONSES = "a folder INPUT must be an audit's axis folder, holding responses.jsonl"
_MSG_NOT_JSONL = "INPUT is JSONL, but its records are neither responses (pair_id, side, response) nor texts (a text field)"
_MSG_NOTHING = "no text to label in INPUT"
_MSG_N = "--n must be at least 1, got {n}"
_MSG_EVEN = "--n must be even for responses: both sides of each sampled pair are labelled (got {n})"
_MSG_TOO_MANY = "--n {n} is more than the {available} {what} available"
_MSG_GROUP_SHORT = "--n {n} needs {quota} texts of group {group!r}, which has only {available}"
_MSG_ID = 'each record\'s "id" must be a string or an integer, got {value!r}'
_MSG_DUPLICATE_ID = "id {id!r} appears twice"
_MSG_TEXT = 'field "text" must be a string, got {value!r}'
_MSG_RESULTS_FIELD = "field {field!r} must be {what}, got {got}"
_MSG_RESULTS_OBJECT = "expected a JSON object, got {got}"
_MSG_KEEP_RESPONSES = "keep names the texts to draw from: it applies to texts and completions, not to an audit's responses"
_MSG_NOTHING_KEPT = "none of the {n:,} texts of INPUT is among those to keep"
_HINT_AXIS = "name the lexicon file with --axis FILE (draw_sample(axes=[FILE]))"
RESULTS_FILE = "results.json"


@dataclass(frozen=True, slots=True)
class SampleItem:
    """One text to label: its ``id`` (a pair's id for responses), ``side`` (responses only), ``group``, and what is shown.

    ``group`` and ``text`` are never shown on the page; ``shown`` (and ``context``, a response's
    masked context) are.
    """

    id: str
    side: Literal["a", "b"] | None
    group: str | None
    text: str
    shown: str
    context: str | None = None


@dataclass(frozen=True, slots=True)
class Sample:
    """The drawn items in the order they are labelled, and what drew them (input, its sha256, seed, size).

    ``n_available`` counts the items drawn from; ``n_left_out`` those of the input left out
    because ``keep`` did not name them (0 without ``keep``).
    """

    kind: InputKind
    source: str
    source_sha256: str
    seed: int
    n_available: int
    items: tuple[SampleItem, ...]
    n_left_out: int = 0

    @property
    def digest(self) -> str:
        """The sha256 of the kind and the items' ids and sides in order: equal for the same sample, whatever the path."""
        keys = [[item.id, item.side] for item in self.items]
        return hashlib.sha256(json.dumps([self.kind, keys]).encode("utf-8")).hexdigest()


def resolve_input(path: str | os.PathLike[str]) -> Path:
    """The file to read: ``path``, or ``path/responses.jsonl`` for an audit's axis folder (InputError when missing)."""
    given = Path(path)
    if given.is_dir():
        inner = given / "responses.jsonl"
        if not inner.is_file():
            raise InputError(_MSG_NO_RESPONSES, path=str(given))
        return inner
    open_input(given, what="INPUT").close()  # a missing or unreadable file fails here, naming it
    return given


def _axis_lexicons(folder: Path) -> list[Lexicon]:
    """The audit's lexicon, from results.json beside the responses; gender and race when there is none.

    The results.json is read as hostile input (its size and depth are checked first, the
    fields read are checked), and no path it names is opened: a custom lexicon comes from the
    copy its manifest keeps (:func:`fairtalk.lexicons.recorded_lexicon`), a built-in one by name.
    """
    path = folder / RESULTS_FILE
    if not os.path.lexists(path):
        return [load_lexicon("gender"), load_lexicon("race")]
    results = read_json_file(path, what=RESULTS_FILE)
    where = str(path)
    if not isinstance(results, dict):
        raise InputError(_MSG_RESULTS_OBJECT.format(got=_kind(results)), path=where)
    manifest = results.get("manifest")
    if manifest is not None and not isinstance(manifest, dict):
        raise InputError(_MSG_RESULTS_FIELD.format(field="manifest", what="an object", got=_kind(manifest)), path=where)
    record = None if manifest is None else manifest.get("lexicon")
    if record is None:  # written without a manifest: as if none
        return [load_lexicon("gender"), load_lexicon("race")]
    axis = results.get("axis")
    if not isinstance(axis, str):
        raise InputError(_MSG_RESULTS_FIELD.format(field="axis", what="a string", got=_kind(axis)), path=where)
    return [recorded_lexicon(record, axis=axis, path=where, hint=_HINT_AXIS, attributes=False)]


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _masker(lexicons: Sequence[Lexicon], groups: Sequence[str]) -> Callable[[str], str]:
    """Mask each lexicon's terms (both sides), then the identity vocabulary, turn by turn; runs of tokens in a turn merge into one."""
    swappers = [Swapper(lexicon) for lexicon in lexicons]
    identity = identity_masker(identity_terms(groups), MASK_TOKEN)
    runs = re.compile(rf"{MASK_TOKEN}(?:\s+{MASK_TOKEN})+")

    def mask_turn(text: str) -> str:
        for swapper in swappers:
            text = swapper.mask(text, MASK_TOKEN)
        return runs.sub(MASK_TOKEN, identity(text))

    def mask(text: str) -> str:  # turn by turn: tokens never merge across turns (U+001E is whitespace to a regex)
        return TURN_SEPARATOR.join(mask_turn(turn) for turn in text.split(TURN_SEPARATOR))

    return mask


def _same_contexts(items: list[SampleItem], mask: Callable[[str], str]) -> list[SampleItem]:
    """The items with each pair's two masked contexts made one: where they still differ, the differing words masked on both.

    A pair's contexts differ only by the swap, which the mask covers; what it cannot (a term the
    swap reads in one side that overlaps another term in the other: ``does he work`` ->
    ``does they work``) would tell the sides apart, as the two come one after the other.
    """
    by_pair: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        by_pair.setdefault(item.id, []).append(i)
    out = list(items)
    for indices in by_pair.values():
        contexts = [items[i].context for i in indices]
        if len(indices) == 2 and contexts[0] is not None and contexts[1] is not None and contexts[0] != contexts[1]:
            merged = mask(_common_words(contexts[0], contexts[1]))
            for i in indices:
                out[i] = dataclasses.replace(items[i], context=merged)
    return out


def _common_words(a: str, b: str) -> str:
    """``a`` with every run of words that ``b`` does not share replaced by the mask token, turn by turn."""
    turns_a, turns_b = a.split(TURN_SEPARATOR), b.split(TURN_SEPARATOR)
    if len(turns_a) != len(turns_b):
        return TURN_SEPARATOR.join(MASK_TOKEN for _ in turns_a)
    merged = []
    for turn_a, turn_b in zip(turns_a, turns_b, strict=True):
        spans = [m.span() for m in _WORD.finditer(turn_a)]
        words_b = _WORD.findall(turn_b)
        parts: list[str] = []
        position = 0
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(
            None, [turn_a[s:e] for s, e in spans], words_b, autojunk=False
        ).get_opcodes():
            if tag == "equal":
                continue
            start = spans[i1][0] if i1 < len(spans) else len(turn_a)
            end = spans[i2 - 1][1] if i2 > i1 else start
            parts += (turn_a[position:start], MASK_TOKEN if i2 > i1 else MASK_TOKEN + " ")
            position = end
        parts.append(turn_a[position:])
        merged.append("".join(parts))
    return TURN_SEPARATOR.join(merged)


def _text_id(value: object, line: int, path: Path) -> str:
    if value is None:
        return str(line)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(_MSG_ID.format(value=value), path=str(path), line=line)
    return str(value)


def _read_texts(path: Path, jsonl: bool) -> tuple[list[tuple[str, str | None, str]], str]:
    """``(id, group, text)`` of every text of a JSONL or plain text file, and the file's sha256."""
    digest = hashlib.sha256()
    rows: list[tuple[str, str | None, str]] = []
    seen: set[str] = set()
    if jsonl:
        for line, record in read_objects(path, what="INPUT", digest=digest):
            text = record.get("text")
            if text is not None and not isinstance(text, str):
                raise InputError(_MSG_TEXT.format(value=text), path=str(path), line=line)
            if text is None or not text.strip():  # a failed completion: nothing to label
                continue
            rid = _text_id(record.get("id"), line, path)
            if rid in seen:
                raise InputError(_MSG_DUPLICATE_ID.format(id=rid), path=str(path), line=line)
            seen.add(rid)
            group = record.get("group")
            rows.append((rid, None if group is None else str(group), text))
    else:
        with open_input(path, what="INPUT") as handle:
            for line, text in numbered_lines(handle, str(path), digest):
                if text.strip():
                    rows.append((str(line), None, text))
    return rows, digest.hexdigest()


def read_items(path: str | os.PathLike[str], *, axes: Sequence[str] = ()) -> tuple[InputKind, list[SampleItem], str]:
    """Every labellable item of INPUT, masked, with the input's kind and sha256.

    ``axes`` (lexicon names or paths; a multi-way one, ``religion``, with every group's terms) are masked
    besides the identity vocabulary; by default, for responses, the audit's own lexicon (from
    ``results.json`` beside them), else gender and race.

    Raises
    ------
    InputError
        A missing file, a folder without ``responses.jsonl``, malformed records, no text, or a
        results.json beside the responses that cannot be read or names no lexicon this
        installation can rebuild without opening a file (a custom one written before its copy
        was kept: pass it in ``axes``).
    """
    file = resolve_input(path)
    lexicons = [load_lexicon(pair) for axis in axes for pair in expand_axis(axis)]  # religion: every group's terms
    record = first_record(file)
    if record is not None and {"pair_id", "side", "response"} <= record.keys():
        responses = read_responses(file)
        lexicons = lexicons or _axis_lexicons(file.parent)
        mask = _masker(lexicons, ())
        groups = lexicons[0].groups
        items = [
            SampleItem(
                id=r.pair_id,
                side=r.side,
                group=groups[0 if r.side == "a" else 1],
                text=r.response,
                shown=mask(r.response),
                context=None if r.context is None else mask(r.context),
            )
            for pair in responses
            for r in pair
        ]
        items = _same_contexts(items, mask)
        sha = responses.sources[0][1] if responses.sources else ""
        if not items:
            raise InputError(_MSG_NOTHING, path=str(file))
        return "responses", items, sha
    if record is not None and record and "text" not in record:
        raise InputError(_MSG_NOT_JSONL, path=str(file))
    rows, sha = _read_texts(file, jsonl=record is not None and bool(record))
    if not rows:
        raise InputError(_MSG_NOTHING, path=str(file))
    mask = _masker(lexicons, sorted({g for _, g, _ in rows if g is not None}))
    return "texts", [SampleItem(id=i, side=None, group=g, text=t, shown=mask(t)) for i, g, t in rows], sha


def draw_sample(
    path: str | os.PathLike[str],
    *,
    n: int,
    seed: int = 0,
    axes: Sequence[str] = (),
    keep: Mapping[str, str] | None = None,
) -> Sample:
    r"""Read INPUT and draw ``n`` items: both sides of ``n / 2`` pairs (a pair's sides together), or ``n`` texts equally over groups.

    ``keep`` (texts and completions only) maps the ids of the texts to draw from to their
    groups (stratified by these, in place of the records' own): the other texts are left out,
    counted in :attr:`Sample.n_left_out`.

    Raises
    ------
    InputError
        ``n`` below 1, odd for responses, larger than what INPUT holds (or a group holds), no
        text ``keep`` names, or anything :func:`read_items` refuses.
    SpecError
        ``keep`` given for an audit's responses.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> texts = pathlib.Path(tempfile.mkdtemp()) / "texts.txt"
    >>> _ = texts.write_text("She is kind.\nHe was rude.\nThey left.\n", encoding="utf-8")
    >>> sample = draw_sample(texts, n=2, seed=0)
    >>> sample.kind, len(sample.items), draw_sample(texts, n=2, seed=0).digest == sample.digest
    ('texts', 2, True)
    >>> sorted(item.shown for item in draw_sample(texts, n=3).items)
    ['They left.', 'XYZ is kind.', 'XYZ was rude.']
    """
    if n < 1:
        raise InputError(_MSG_N.format(n=n))
    kind, items, sha = read_items(path, axes=axes)
    n_read = len(items)
    if keep is not None:
        if kind == "responses":
            raise SpecError(_MSG_KEEP_RESPONSES)
        items = [dataclasses.replace(item, group=keep[item.id]) for item in items if item.id in keep]
        if not items:
            raise InputError(_MSG_NOTHING_KEPT.format(n=n_read), path=str(resolve_input(path)))
    rng = np.random.default_rng(seed)
    if kind == "responses":
        if n % 2:
            raise InputError(_MSG_EVEN.format(n=n))
        pair_ids = list(dict.fromkeys(item.id for item in items))
        if n // 2 > len(pair_ids):
            raise InputError(_MSG_TOO_MANY.format(n=n, available=2 * len(pair_ids), what="responses (both sides of each pair)"))
        chosen = [pair_ids[int(i)] for i in rng.choice(len(pair_ids), size=n // 2, replace=False)]
        ordered = _pairs_together(items, chosen, rng)
    else:
        picked = _stratified(items, n, rng)
        ordered = [picked[i] for i in rng.permutation(len(picked))]
    return Sample(
        kind=kind,
        source=str(resolve_input(path)),
        source_sha256=sha,
        seed=seed,
        n_available=len(items),
        items=tuple(ordered),
        n_left_out=n_read - len(items),
    )


def _pairs_together(items: list[SampleItem], chosen: list[str], rng: np.random.Generator) -> list[SampleItem]:
    """Both sides of each chosen pair, the pairs in ``chosen``'s (random) order, which side first drawn for each pair."""
    sides: dict[str, list[SampleItem]] = {pair_id: [] for pair_id in chosen}
    for item in items:
        if item.id in sides:
            sides[item.id].append(item)
    flips = rng.integers(0, 2, size=len(chosen))
    return [item for pair_id, flip in zip(chosen, flips) for item in (sides[pair_id][::-1] if flip else sides[pair_id])]


def _stratified(items: list[SampleItem], n: int, rng: np.random.Generator) -> list[SampleItem]:
    """``n`` texts, as many from each group as can be (the remainder to groups drawn at random), uniformly within each."""
    if n > len(items):
        raise InputError(_MSG_TOO_MANY.format(n=n, available=len(items), what="texts"))
    by_group: dict[str | None, list[SampleItem]] = {}
    for item in items:
        by_group.setdefault(item.group, []).append(item)
    groups = list(by_group)
    quota = dict.fromkeys(groups, n // len(groups))
    for i in rng.choice(len(groups), size=n % len(groups), replace=False):
        quota[groups[int(i)]] += 1
    picked: list[SampleItem] = []
    for group in groups:
        members = by_group[group]
        if quota[group] > len(members):
            raise InputError(_MSG_GROUP_SHORT.format(n=n, quota=quota[group], group=group, available=len(members)))
        picked += [members[int(i)] for i in sorted(rng.choice(len(members), size=quota[group], replace=False))]
    return picked
