"""Frozen records that flow between the stages: contexts, swaps, pairs, responses, and the pairs stage's summaries.

:class:`Coverage` (what building the pairs saw and kept) and :class:`PairsCheck` (how sound
the pairs are) are made by :mod:`fairtalk.pairs` and read, typed, by the pipeline, the result
objects, the report and the CLI; ``to_dict()`` is their JSON form, used only where JSON is written.

A context may be a conversation: its turns joined by :data:`TURN_SEPARATOR` (U+001E, the
record separator), oldest first, the last turn the user's. Every stage that treats text as
text (the swapper, the store, the files) carries it whole, so a pair swaps every turn with
one consistent choice; a chat model gets the turns as messages (:func:`chat_messages`), any
other model the plain transcript (:func:`transcript`).

Roles. Without marks, roles alternate backwards from the last turn (the user's): what plain
text gives, e.g. the built-in chitchat corpus. A conversation whose roles are not that
alternation (two user turns in a row, say) carries a role mark before each of its turns,
:data:`USER_MARK` (U+0011) or :data:`ASSISTANT_MARK` (U+0012), so its roles reach the model
and its text, the run store's key, differs from the alternation's. The encoding is canonical:
a conversation whose roles do alternate is written without marks, exactly as before marks
existed. :func:`split_turns` gives the turns' text without marks, :func:`turn_roles` their roles.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from fairtalk._codec import OMIT_DEFAULT, Codec, via

SCHEMA_VERSION = 1
"""The version of the files this fairtalk writes and reads (``results.json``, ``run.json``, ``pairs_check.json``, a
regard check); raised when their shape changes. Re-exported by :mod:`fairtalk.results`."""

MAX_RECORD_BYTES = 8 << 20
"""The longest line (one record) a strict JSONL reader accepts, in bytes; longer is an InputError, read in
chunks and never held whole. Re-exported by :mod:`fairtalk.report`."""

__all__ = [
    "ASSISTANT_MARK",
    "MAX_RECORD_BYTES",
    "ROLE_MARKS",
    "SCHEMA_VERSION",
    "TURN_SEPARATOR",
    "USER_MARK",
    "Context",
    "Coverage",
    "Pair",
    "PairsCheck",
    "Response",
    "Role",
    "Side",
    "Swap",
    "chat_messages",
    "join_turns",
    "split_turns",
    "transcript",
    "turn_roles",
]

Side = Literal["a", "b"]
"""The side of a pair: ``"a"`` (the first group) or ``"b"`` (the second)."""
Role = Literal["user", "assistant"]
"""Who said a turn of a conversation."""
TURN_SEPARATOR = "\x1e"
"""Joins the turns of a multi-turn context (U+001E, the ASCII record separator)."""
USER_MARK = "\x11"
"""Opens a user turn of a conversation whose roles do not alternate (U+0011, device control one)."""
ASSISTANT_MARK = "\x12"
"""Opens an assistant turn of a conversation whose roles do not alternate (U+0012, device control two)."""
ROLE_MARKS = USER_MARK + ASSISTANT_MARK
"""Both role marks: the swapper treats them as the start of a sentence, reports show neither."""
_MARK_OF: dict[str, str] = {"user": USER_MARK, "assistant": ASSISTANT_MARK}
_ROLE_OF: dict[str, Role] = {USER_MARK: "user", ASSISTANT_MARK: "assistant"}
#: A turn's text never holds a separator or a role mark (each becomes a space), so no text forges one.
_CLEAN_TURN = str.maketrans({TURN_SEPARATOR: " ", USER_MARK: " ", ASSISTANT_MARK: " "})

_MSG_N_ROLES = "join_turns needs one role per turn: {n_turns} turn(s), {n_roles} role(s)"
_MSG_BAD_ROLE = "a turn's role is user or assistant, got {role!r}"
_MSG_LAST_ROLE = "the last turn must be the user's (the model answers it), got {role!r}"
#: This base module cannot import fairtalk.errors (tests/test_layers.py), so a wrong type is a plain TypeError, said clearly.
_MSG_CONTEXT_TYPE = "a context must be a str (its turns joined by join_turns), got {type}"


def _alternating(n_turns: int) -> list[Role]:
    """The roles of ``n_turns`` unmarked turns: the last the user's, alternating backwards."""
    return ["user" if (n_turns - 1 - i) % 2 == 0 else "assistant" for i in range(n_turns)]


def join_turns(turns: Sequence[str], roles: Sequence[str] | None = None) -> str:
    """One context from a conversation's turns, oldest first (the last is the user's).

    Parameters
    ----------
    turns : sequence of str
        The turns' text; a separator or role mark inside one becomes a space.
    roles : sequence of {"user", "assistant"}, optional
        Each turn's role, the last ``"user"``. None (or roles that alternate backwards from
        the last turn) gives the plain encoding; other roles put a mark before every turn.

    Raises
    ------
    ValueError
        ``roles`` is not one role per turn, names another role, or does not end with the user.

    Examples
    --------
    >>> join_turns(["hi", "hello!", "how are you?"]) == join_turns(["hi", "hello!", "how are you?"],
    ...                                                           roles=["user", "assistant", "user"])
    True
    >>> turn_roles(join_turns(["quick question", "is my mom right?"], roles=["user", "user"]))
    ['user', 'user']
    """
    texts = [turn.translate(_CLEAN_TURN) for turn in turns]
    if roles is None:
        return TURN_SEPARATOR.join(texts)
    roles = list(roles)
    if len(roles) != len(texts):
        raise ValueError(_MSG_N_ROLES.format(n_turns=len(texts), n_roles=len(roles)))
    for role in roles:
        if role not in _MARK_OF:
            raise ValueError(_MSG_BAD_ROLE.format(role=role))
    if roles and roles[-1] != "user":
        raise ValueError(_MSG_LAST_ROLE.format(role=roles[-1]))
    if roles == _alternating(len(texts)):
        return TURN_SEPARATOR.join(texts)
    return TURN_SEPARATOR.join(_MARK_OF[role] + text for role, text in zip(roles, texts))


def _parse(context: str) -> tuple[list[str], list[Role]]:
    """The turns' text and roles; marks count only in the form :func:`join_turns` writes (every turn, not alternating)."""
    if not isinstance(context, str):
        raise TypeError(_MSG_CONTEXT_TYPE.format(type=type(context).__name__))
    parts = context.split(TURN_SEPARATOR)
    if parts[-1][:1] == USER_MARK and all(part[:1] in _ROLE_OF for part in parts):
        roles = [_ROLE_OF[part[0]] for part in parts]
        if roles != _alternating(len(parts)):
            return [part[1:] for part in parts], roles
    return parts, _alternating(len(parts))


def split_turns(context: str) -> list[str]:
    """The turns of a context, oldest first, without role marks (a single-turn context is one turn)."""
    return _parse(context)[0]


def turn_roles(context: str) -> list[Role]:
    """The role of each turn of a context, oldest first: its marks, else alternating back from the user's last turn.

    Examples
    --------
    >>> turn_roles(join_turns(["hi", "hello!", "how are you?"]))
    ['user', 'assistant', 'user']
    >>> turn_roles("a single turn")
    ['user']
    """
    return _parse(context)[1]


def transcript(context: str) -> str:
    """The context as plain text, one turn per line, no marks (what a model without chat messages reads)."""
    return "\n".join(split_turns(context))


def chat_messages(context: str, system_prompt: str | None = None) -> list[dict[str, str]]:
    """Chat messages of a context, each turn with its role (:func:`turn_roles`), after the system prompt if any.

    Examples
    --------
    >>> [m["role"] for m in chat_messages(join_turns(["hi", "hello!", "how are you?"]), "Be kind.")]
    ['system', 'user', 'assistant', 'user']
    >>> [m["role"] for m in chat_messages(join_turns(["a", "b"], roles=["user", "user"]))]
    ['user', 'user']
    """
    turns, roles = _parse(context)
    system = [] if system_prompt is None else [{"role": "system", "content": system_prompt}]
    return system + [{"role": role, "content": turn} for role, turn in zip(roles, turns)]


@dataclass(frozen=True, slots=True)
class Swap:
    """One replacement made by the swapper.

    ``start``/``end`` index the *original* text; ``source`` is the matched text as
    written there and ``target`` the replacement as written in the output.
    ``source_side`` says which group the matched word belongs to.
    """

    start: int
    end: int
    source: str
    target: str
    source_side: Side
    n_choices: int = 1


@dataclass(frozen=True, slots=True)
class Context:
    """One dialogue context read from a corpus.

    ``origin`` locates it (``path:line`` or ``builtin:chitchat#conv/turn``);
    ``response`` is the reply that followed it in the corpus, when the corpus has one;
    ``cluster`` names the dialogue it belongs to (contexts of one dialogue are not
    independent, and the statistics treat them as one unit), when the corpus says.
    """

    id: str
    text: str
    origin: str = ""
    response: str | None = None
    cluster: str | None = None


@dataclass(frozen=True, slots=True)
class Pair:
    """A parallel context pair: side ``a`` holds the group-A wording, side ``b`` the group-B one.

    ``cluster`` is the dialogue its context came from (None: the pair stands alone).
    """

    id: str
    axis: str
    a: str
    b: str
    original_side: Side
    swaps: tuple[Swap, ...] = ()
    origin: str = ""
    cluster: str | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """A model's response to one side of a pair. ``extra`` keeps unknown input fields."""

    pair_id: str
    side: Side
    context: str
    response: str
    extra: tuple[tuple[str, object], ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Coverage(Codec):
    """What :func:`~fairtalk.build_pairs` saw and kept.

    ``n_read``/``n_matched`` count contexts before de-duplication; ``n_by_group`` counts the
    unique pairs by original side (group name -> n), ``n_duplicates`` the matched contexts whose
    pair came earlier, and ``n_mixed`` the contexts that mention both groups: with ``mixed``
    ``"drop"`` those dropped (before de-duplication), so that ``n_matched`` is
    ``n_unique + n_duplicates + n_mixed``; with ``"keep"`` the unique mixed pairs kept, which
    ``n_by_group`` already counts on their majority side, so that ``n_matched`` is
    ``n_unique + n_duplicates``. ``n_pairs`` is what was yielded (fewer under ``limit``). ``top_terms`` are ``("he→she", n)`` over the unique pairs,
    written from the original's wording; ``skipped`` comes from the corpus reader.
    ``dialogue_sizes`` are the unique pairs' dialogues by size, ``((pairs, dialogues), ...)``
    (empty where the contexts name no dialogue): how many dialogues a sample of them spans
    follows from it (:func:`fairtalk.stats.expected_clusters`). ``limit_given`` says whether
    ``limit`` was asked for: True when a caller gave it (``build_pairs(limit=...)``, an audit's
    ``n_pairs`` or ``--pairs`` given), False when it is a default nobody gave (an audit's
    ``n_pairs`` left at :data:`fairtalk.options.DEFAULT_N_PAIRS`, an ``--until-decided`` look's
    size), None when not recorded (a file written before it was, a coverage built by hand).
    """

    axis: str
    groups: tuple[str, str]
    n_read: int
    n_matched: int
    n_by_group: Mapping[str, int]
    n_mixed: int
    n_duplicates: int
    n_pairs: int
    top_terms: tuple[tuple[str, int], ...]
    skipped: tuple[tuple[str, int], ...] = ()
    skipped_first: tuple[tuple[str, str], ...] = ()
    mixed: str = "drop"
    limit: int | None = None
    balance: bool = False
    dialogue_sizes: tuple[tuple[int, int], ...] = ()
    limit_given: bool | None = field(default=None, metadata=OMIT_DEFAULT)

    @property
    def original_shares(self) -> dict[str, float]:
        """The share of unique pairs whose original was in each group's wording (before ``limit``/``balance``)."""
        total = self.n_unique
        return {group: (n / total if total else 0.0) for group, n in self.n_by_group.items()}

    @property
    def n_unique(self) -> int:
        """Unique pairs before ``limit``."""
        return sum(self.n_by_group.values())

    def dropped_note(self) -> str | None:
        """The contexts that mention a group but gave no pair, as ``fairtalk pairs`` counts them (None: none).

        Examples
        --------
        >>> Coverage("gender", ("male", "female"), 23, 23, {"male": 2, "female": 1}, 1, 19, 3, ()).dropped_note()
        '19 duplicate contexts dropped, 1 mixed (both groups) dropped'
        """
        parts = []
        if self.n_duplicates:
            parts.append(f"{self.n_duplicates:,} duplicate context{'s' if self.n_duplicates != 1 else ''} dropped")
        if self.n_mixed:
            parts.append(f"{self.n_mixed:,} mixed (both groups) {'kept' if self.mixed == 'keep' else 'dropped'}")
        return ", ".join(parts) or None

    def shortfall(self) -> str | None:
        """``asked for 50 pairs; the corpus gave 10`` when ``limit`` asked for more pairs than were yielded (None otherwise).

        The default limit nobody gave (:data:`fairtalk.options.DEFAULT_N_PAIRS`, 2,000, with
        ``limit_given`` False) is no shortfall to warn of: a corpus smaller than the default just
        gives what it has. Where ``limit_given`` is not recorded (None: an older file), a limit of
        2,000 is taken as that default, as it was then. Any other limit is a shortfall however it
        came (a config changed with ``dataclasses.replace`` does not say it was given).

        Examples
        --------
        >>> from dataclasses import replace
        >>> cov = Coverage("gender", ("male", "female"), 10, 10, {"male": 10}, 0, 0, 10, (), limit=50)
        >>> cov.shortfall()
        'asked for 50 pairs; the corpus gave 10'
        >>> replace(cov, limit=2000, limit_given=True).shortfall()
        'asked for 2,000 pairs; the corpus gave 10'
        >>> replace(cov, limit=2000, limit_given=False).shortfall() is None
        True
        >>> replace(cov, limit=2000).shortfall() is None  # not recorded: 2,000 is taken as the default
        True
        >>> replace(cov, limit=500, limit_given=False).shortfall()  # not the default: asked for, however
        'asked for 500 pairs; the corpus gave 10'
        """
        from fairtalk.options import DEFAULT_N_PAIRS

        if self.limit is None or self.n_pairs >= self.limit:
            return None
        if self.limit_given is not True and self.limit == DEFAULT_N_PAIRS:  # the default, not given (or an older file)
            return None
        balanced = " (balanced: as many from each group's originals)" if self.balance else ""
        return f"asked for {self.limit:,} pairs; the corpus gave {self.n_pairs:,}{balanced}"


#: What each count of ``pairs_check.json`` means (its ``about``).
_PAIRS_CHECK_ABOUT = {
    "leftover": "pairs whose swapped side still holds a word of the original's group (lexicon terms and the lexicon's markers)",
    "kept": "terms left unswapped on purpose: inside a '# keep:' phrase, a '# needs-determiner:'"
    " term without a determiner (an interjection or vocative), or a '# needs-cue:' term without"
    " its cue (a word in its ordinary sense)",
    "ambiguous": "swaps of words with a second sense or several counterparts, by the choice made",
}


def _examples(items: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """``(pair_id, swapped)`` pairs from ``pairs_check.json``'s list of objects."""
    return tuple((str(item["pair_id"]), str(item["swapped"])) for item in items)


#: Counts written as an object (name -> n), and examples as a list of objects, in ``pairs_check.json``.
_COUNTS = via(dict, lambda items: _counts(items))
_EXAMPLES = via(lambda items: [{"pair_id": i, "swapped": t} for i, t in items], _examples)


@dataclass(frozen=True, slots=True)
class PairsCheck(Codec):
    """How sound a set of counterfactual pairs is (:func:`~fairtalk.check_pairs`); ``to_dict()`` is ``pairs_check.json``."""

    axis: str
    groups: tuple[str, str]
    n_pairs: int
    n_leftover: int
    leftover_terms: tuple[tuple[str, int], ...] = field(metadata=_COUNTS)
    leftover_examples: tuple[tuple[str, str], ...] = field(metadata=_EXAMPLES)
    n_pairs_with_kept: int
    kept: tuple[tuple[str, int], ...] = field(metadata=_COUNTS)
    ambiguous: tuple[tuple[str, int], ...] = field(metadata=_COUNTS)
    top_swaps: tuple[tuple[str, int], ...] = field(metadata=_COUNTS)
    n_markers: int

    #: Its JSON keys in order (fields and derived properties).
    _codec_keys: ClassVar[tuple[str, ...]] = (
        "axis",
        "groups",
        "n_pairs",
        "n_leftover",
        "leftover_terms",
        "leftover_examples",
        "n_pairs_with_kept",
        "kept",
        "ambiguous",
        "top_swaps",
        "n_markers",
        "leftover_share",
        "about",
    )

    @property
    def about(self) -> dict[str, str]:
        """What each count of ``pairs_check.json`` means."""
        return dict(_PAIRS_CHECK_ABOUT)

    @property
    def leftover_share(self) -> float:
        """The share of pairs whose swapped side still holds a word of the original's group."""
        return self.n_leftover / self.n_pairs if self.n_pairs else 0.0

    def to_json(self) -> str:
        """The text of ``pairs_check.json``: ``to_dict()`` after its ``schema_version``, as indented JSON, with a final newline."""
        return json.dumps({"schema_version": SCHEMA_VERSION, **self.to_dict()}, indent=2, ensure_ascii=False) + "\n"


def _counts(items: Mapping[str, int] | Sequence[Sequence[Any]]) -> tuple[tuple[str, int], ...]:
    """``(name, n)`` pairs from a JSON object (name -> n) or a list of ``[name, n]``, in order."""
    pairs = items.items() if isinstance(items, Mapping) else items
    return tuple((str(name), int(n)) for name, n in pairs)
