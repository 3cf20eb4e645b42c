"""Lexicon file format: the records, the message templates, and parsing with validation.

Internal to :mod:`fairtalk.lexicons` (which documents the format and re-exports the records);
tests match the ``_MSG_*`` templates defined here.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass

from fairtalk.errors import LexiconError

__all__ = ["AttributeList", "Lexicon", "WordPair", "lexicon_text", "normalize", "parse_attributes", "parse_lexicon"]

_METADATA_KEYS: tuple[str, ...] = (
    "axis",
    "groups",
    "attributes",
    "variant",
    "both-sides",
    "keep",
    "needs-determiner",
    "needs-cue",
    "markers-a",
    "markers-b",
)
#: One-way separators: ``guy -> girl`` swaps guy to girl only; ``guy <- gal`` swaps gal to guy only.
_ONE_WAY = {" -> ": "a>b", " <- ": "b>a", "->": "a>b", "<-": "b>a"}
_ATTRIBUTE_KEYS: tuple[str, ...] = ("attribute", "name")

_MSG_NOT_UTF8 = "not UTF-8 text (byte {byte:#04x})"
#: Messages name the file and line and give a short reason, never the line's content: a file read by mistake (a
#: ``.env``) must not be copied into a log.
_MSG_NO_SEPARATOR = "malformed line: no TAB or ' - ' between the two sides"
_MSG_TOO_MANY_COLUMNS = "malformed line: {n} columns, expected 2 (group A, group B)"
_MSG_EMPTY_SIDE = "empty side: no word for group {group!r}"
_MSG_DUPLICATE_PAIR = "duplicate pair {a!r} - {b!r} (first on line {first})"
_MSG_BOTH_SIDES = (
    "{word!r} is on both sides (group {group_a!r} on line {line_a}, group {group_b!r} on line "
    "{line_b}); a swap could not tell its direction (list it under '# both-sides:' to allow it)"
)
_MSG_BAD_GROUPS = "'# groups:' needs exactly two distinct names, separated by spaces"
_MSG_BAD_AXIS = "'# axis:' needs one name, without spaces"
_MSG_NO_PAIRS = "no word pairs in the file"
_MSG_NO_GROUPS = (
    "a pair before any '# groups:' line: name the two groups first, with a line '# groups: A B' above the pairs "
    "(the left side's group first, as in '# groups: male female')"
)
_MSG_NO_WORDS = "no words in the attribute list"
_MSG_TAB_IN_WORD = "malformed line: an attribute list holds one word or phrase a line, found a TAB"
_MSG_DUPLICATE_WORD = "duplicate word {word!r} (first on line {first})"
_MSG_UNKNOWN_SENSE_WORD = "'# needs-determiner:' lists {word!r}, which no pair of the file holds"
_MSG_UNKNOWN_CUE_WORD = "'# needs-cue:' lists {word!r}, which no pair of the file holds"
_MSG_SETTING_AFTER_PAIRS = "'# {key}:' after the first {entry} is not read: settings go before the {entries}; move it up"
_MSG_UNKNOWN_SETTING = (
    "'# {key}:' is not a setting (did you mean '# {near}:'?); the settings are {known}. "
    "A comment must not look like one: write it without the ':'"
)
_MSG_SETTING_NOT_READ = (
    "'# {key}:' is not a setting of a {kind} (its settings are {known}); remove it, or write a comment without the ':'"
)
_MSG_SETTING_TWICE = "'# {key}:' given twice (first on line {first}); give it once"
_MSG_FORBIDDEN_CHARACTER = "holds the character {code}, which no report can show (XML, JUnit included, forbids it); remove it"
_MSG_FORBIDDEN_IN_NAME = (
    "the file name (the name without a '# {header}:' line) holds the character {code}, which no report can show; "
    "give a name with '# {header}:'"
)

_WS = re.compile(r"\s+")
#: What XML 1.0 forbids and a lexicon could hold: C0 controls but TAB, LF and CR, and the noncharacters U+FFFE, U+FFFF.
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class WordPair:
    """One lexicon line: ``a`` (a group-A word or phrase) <-> ``b`` (its group-B counterpart)."""

    a: str
    b: str
    line: int
    #: ``"both"``, or one way only: ``"a>b"`` (written ``a -> b``) or ``"b>a"`` (``a <- b``).
    direction: str = "both"


@dataclass(frozen=True, slots=True)
class Lexicon:
    """A validated word-pair lexicon for one axis.

    Attributes
    ----------
    axis : str
        ``"gender"``, ``"race"`` or the user's axis name.
    groups : tuple[str, str]
        Names of group A and group B, e.g. ``("male", "female")``.
    pairs : tuple[WordPair, ...]
        The pairs in file order; a word may occur in several pairs (many-to-many).
    attributes : tuple[str, ...]
        Default attribute lists for this axis, e.g. ``("career", "family")``.
    variant : str
        ``"default"``, ``"paper"`` or ``"custom"`` (a user's file).
    source : str
        The path read, or ``"builtin:gender"`` / ``"builtin:gender-paper"``.
    sha256 : str
        Hex SHA-256 of the file bytes: the lexicon's version for manifests.
    keep : tuple[str, ...]
        Fixed phrases whose words are never swapped (``oh my god``, ``spider man``): ``# keep:``.
    needs_determiner : tuple[str, ...]
        Terms swapped only after a determiner or possessive (``the man``, not ``oh man``):
        ``# needs-determiner:``.
    markers : tuple[tuple[str, ...], tuple[str, ...]]
        Further words that mark group A and group B (``# markers-a:``, ``# markers-b:``); not
        swapped, only looked for by the counterfactual validity check.
    needs_cue : tuple[tuple[str, tuple[str, ...]], ...]
        Terms swapped only where they stand alone as a sentence or right after one of their cue
        words (``that's sick``, ``Sick!``; not ``I feel sick``), each with its cues:
        ``# needs-cue: sick, lit = that's, it's`` (no ``=``: alone only).
    """

    axis: str
    groups: tuple[str, str]
    pairs: tuple[WordPair, ...]
    attributes: tuple[str, ...]
    variant: str
    source: str
    sha256: str
    keep: tuple[str, ...] = ()
    needs_determiner: tuple[str, ...] = ()
    markers: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    needs_cue: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class AttributeList:
    """A named set of attribute words (lowercase), e.g. the paper's career words."""

    name: str
    words: frozenset[str]
    source: str
    sha256: str


def normalize(text: str) -> str:
    """Normalise a word or phrase for comparisons: casefolded, whitespace collapsed."""
    return _WS.sub(" ", text).strip().casefold()


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        message = _MSG_NOT_UTF8.format(byte=data[exc.start])
        raise LexiconError(message, path=source, line=line) from exc


def _code(character: str) -> str:
    """``U+0001``."""
    return f"U+{ord(character):04X}"


def _lines(text: str, source: str) -> list[tuple[int, str]]:
    """Split text into (1-based line number, line without its terminator) at LF, CRLF or CR, as editors number them.

    A line that holds a character XML 1.0 forbids (a C0 control but TAB, U+FFFE, U+FFFF) is a
    LexiconError naming it: an axis, group or word holding one would make every report that
    shows it (the JUnit XML, the job summary) unreadable.
    """
    lines = _NEWLINE.split(text)
    if lines and not lines[-1]:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if found := _FORBIDDEN.search(line):
            raise LexiconError(_MSG_FORBIDDEN_CHARACTER.format(code=_code(found.group())), path=source, line=number)
    return list(enumerate(lines, start=1))


def _metadata(line: str) -> tuple[str, str] | None:
    """Parse a ``# key: value`` comment line; None for other comments."""
    body = line.lstrip().lstrip("#").strip()
    key, sep, value = body.partition(":")
    key = key.strip().lower()
    if not sep:
        return None
    return key, value.strip()


#: How a setting's key is spelt: what a comment's ``word:`` must look like to be taken for a misspelt setting.
_KEY = re.compile(r"[a-z][a-z0-9-]*")


def _near(key: str, known: tuple[str, ...]) -> str | None:
    """The known setting ``key`` looks like a misspelling of (``keeps``, ``both_sides``, ``axes``); None when none.

    Comments such as ``# Source: ...`` or ``# Format: ...`` look like no setting and stay comments.
    """
    spelled = re.sub(r"[\s_]+", "-", key)
    if not _KEY.fullmatch(spelled):
        return None
    if spelled in known:
        return spelled
    if close := difflib.get_close_matches(spelled, known, n=1, cutoff=0.8):
        return close[0]
    return next((k for k in known if len(k) == len(spelled) and sum(x != y for x, y in zip(k, spelled)) == 1), None)


@dataclass(frozen=True, slots=True)
class _Settings:
    """The ``# key:`` settings of one file format: the one set of rules every format's header is read by."""

    keys: tuple[str, ...]
    #: What the settings go before: ``pair`` (a two-group lexicon), ``word`` (an attribute list), ``row``.
    entry: str
    #: The format in words, for :data:`_MSG_SETTING_NOT_READ`.
    kind: str = "lexicon"
    #: Settings of another format this one does not read (a multi-way file's ``# both-sides:``): an error.
    unread: tuple[str, ...] = ()
    #: Settings a file gives at most once: a second ``# groups:`` is an error, never an override.
    once: tuple[str, ...] = ()


_LEXICON_SETTINGS = _Settings(_METADATA_KEYS, "pair", once=("axis", "groups"))
_ATTRIBUTE_SETTINGS = _Settings(_ATTRIBUTE_KEYS, "word", kind="attribute list")


class _Header:
    """Reads a file's ``#`` lines as settings or comments, by one :class:`_Settings`' rules.

    A known key after the first entry (``started``) is a LexiconError, and so are a key that
    looks like a misspelt setting, a setting of another format and a once-only setting given
    twice: none is ever silently taken for a comment or an override. Other ``#`` lines are comments.
    """

    def __init__(self, settings: _Settings, source: str) -> None:
        self._settings = settings
        self._source = source
        self._first: dict[str, int] = {}

    def given(self, key: str) -> bool:
        """Whether a once-only setting ``key`` (``groups``) was read."""
        return key in self._first

    def setting(self, line: str, *, number: int, started: bool) -> tuple[str, str] | None:
        """The ``# key: value`` line as (key, value); None for a comment."""
        settings, source = self._settings, self._source
        meta = _metadata(line)
        if meta is None:
            return None
        key, value = meta
        if key not in settings.keys:
            near = _near(key, settings.keys + settings.unread)
            if near is None:
                return None
            known = ", ".join(settings.keys)
            if near in settings.unread:
                message = _MSG_SETTING_NOT_READ.format(key=key, kind=settings.kind, known=known)
            else:
                message = _MSG_UNKNOWN_SETTING.format(key=key, near=near, known=known)
            raise LexiconError(message, path=source, line=number)
        if started:
            message = _MSG_SETTING_AFTER_PAIRS.format(key=key, entry=settings.entry, entries=settings.entry + "s")
            raise LexiconError(message, path=source, line=number)
        if key in settings.once and (first := self._first.setdefault(key, number)) != number:
            raise LexiconError(_MSG_SETTING_TWICE.format(key=key, first=first), path=source, line=number)
        return key, value


def _axis(value: str, *, source: str, number: int) -> str:
    """The value of a ``# axis:`` line: one name, without spaces."""
    if not value or len(value.split()) != 1:
        raise LexiconError(_MSG_BAD_AXIS.format(value=value), path=source, line=number)
    return value


def _split_pair(line: str, *, source: str, number: int) -> tuple[str, str, str]:
    """The two sides of a pair line and its direction (``both``, ``a>b`` or ``b>a``)."""
    if "\t" in line:
        columns = line.split("\t")
        if len(columns) == 3 and columns[1].strip() in _ONE_WAY:
            direction = _ONE_WAY[columns[1].strip()]
            return _WS.sub(" ", columns[0]).strip(), _WS.sub(" ", columns[2]).strip(), direction
    elif arrow := next((a for a in (" -> ", " <- ") if a in line), None):
        columns = line.split(arrow)
        if len(columns) == 2:
            return _WS.sub(" ", columns[0]).strip(), _WS.sub(" ", columns[1]).strip(), _ONE_WAY[arrow]
    else:
        columns = line.split(" - ")
        if len(columns) == 1:
            raise LexiconError(_MSG_NO_SEPARATOR.format(text=line.strip()), path=source, line=number)
    if len(columns) != 2:
        message = _MSG_TOO_MANY_COLUMNS.format(n=len(columns), text=line.strip())
        raise LexiconError(message, path=source, line=number)
    return _WS.sub(" ", columns[0]).strip(), _WS.sub(" ", columns[1]).strip(), "both"


def _word_list(value: str) -> list[str]:
    """A comma-separated header value as normalised words or phrases."""
    return [normalize(word) for word in value.split(",") if word.strip()]


def parse_lexicon(data: bytes, *, source: str, stem: str, variant: str) -> Lexicon:  # noqa: C901, PLR0915
    """Parse and validate lexicon file bytes into a Lexicon."""
    text = _decode(data, source)
    axis, groups, attributes = stem, ("a", "b"), tuple[str, ...]()
    allowed: set[str] = set()
    keep: list[str] = []
    determined: list[str] = []
    cued: dict[str, list[str]] = {}
    markers: tuple[list[str], list[str]] = ([], [])
    pairs: list[WordPair] = []
    seen_pairs: dict[tuple[str, str], int] = {}
    first_a: dict[str, int] = {}
    first_b: dict[str, int] = {}
    header = _Header(_LEXICON_SETTINGS, source)
    for number, line in _lines(text, source):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            meta = header.setting(stripped, number=number, started=bool(pairs))
            if meta is None:
                continue
            key, value = meta
            if key == "axis":
                axis = _axis(value, source=source, number=number)
            elif key == "groups":
                names = value.split()
                if len(names) != 2 or names[0] == names[1]:
                    message = _MSG_BAD_GROUPS.format(value=value)
                    raise LexiconError(message, path=source, line=number)
                groups = (names[0], names[1])
            elif key == "attributes":
                attributes = tuple(value.split())
            elif key == "both-sides":
                allowed.update(_word_list(value))
            elif key == "keep":
                keep += _word_list(value)
            elif key == "needs-determiner":
                determined += _word_list(value)
            elif key == "needs-cue":
                terms, _, cues = value.partition("=")
                for term in _word_list(terms):
                    cued.setdefault(term, []).extend(_word_list(cues))
            elif key in ("markers-a", "markers-b"):
                markers[key == "markers-b"].extend(_word_list(value))
            continue
        a, b, direction = _split_pair(line, source=source, number=number)
        for side, group in ((a, groups[0]), (b, groups[1])):
            if not side:
                raise LexiconError(_MSG_EMPTY_SIDE.format(group=group), path=source, line=number)
        key_a, key_b = normalize(a), normalize(b)
        first = seen_pairs.setdefault((key_a, key_b), number)
        if first != number:
            message = _MSG_DUPLICATE_PAIR.format(a=a, b=b, first=first)
            raise LexiconError(message, path=source, line=number)
        first_a.setdefault(key_a, number)
        first_b.setdefault(key_b, number)
        for word in (key_a, key_b):
            if word in first_a and word in first_b and word not in allowed:
                message = _MSG_BOTH_SIDES.format(
                    word=word,
                    group_a=groups[0],
                    line_a=first_a[word],
                    group_b=groups[1],
                    line_b=first_b[word],
                )
                raise LexiconError(message, path=source, line=number)
        pairs.append(WordPair(a=a, b=b, line=number, direction=direction))
    if not pairs:
        raise LexiconError(_MSG_NO_PAIRS, path=source)
    if found := _FORBIDDEN.search(axis):  # from the file name: a header's was checked with its line
        raise LexiconError(_MSG_FORBIDDEN_IN_NAME.format(header="axis", code=_code(found.group())), path=source)
    for word in determined:
        if word not in first_a and word not in first_b:
            raise LexiconError(_MSG_UNKNOWN_SENSE_WORD.format(word=word), path=source)
    for word in cued:
        if word not in first_a and word not in first_b:
            raise LexiconError(_MSG_UNKNOWN_CUE_WORD.format(word=word), path=source)
    if not header.given("groups"):  # after every other check, at the first pair: where the header goes above
        raise LexiconError(_MSG_NO_GROUPS, path=source, line=pairs[0].line)
    return Lexicon(
        axis=axis,
        groups=groups,
        pairs=tuple(pairs),
        attributes=attributes,
        variant=variant,
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
        keep=tuple(dict.fromkeys(keep)),
        needs_determiner=tuple(dict.fromkeys(determined)),
        markers=(tuple(dict.fromkeys(markers[0])), tuple(dict.fromkeys(markers[1]))),
        needs_cue=tuple((term, tuple(dict.fromkeys(cues))) for term, cues in cued.items()),
    )


def parse_attributes(data: bytes, *, source: str, stem: str) -> AttributeList:
    """Parse and validate attribute list bytes (one word or phrase a line)."""
    text = _decode(data, source)
    name = stem
    header = _Header(_ATTRIBUTE_SETTINGS, source)
    first_seen: dict[str, int] = {}
    for number, line in _lines(text, source):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            meta = header.setting(stripped, number=number, started=bool(first_seen))
            if meta is not None and meta[1]:
                name = meta[1]
            continue
        if "\t" in stripped:
            raise LexiconError(_MSG_TAB_IN_WORD.format(text=stripped), path=source, line=number)
        word = normalize(stripped)
        first = first_seen.setdefault(word, number)
        if first != number:
            message = _MSG_DUPLICATE_WORD.format(word=word, first=first)
            raise LexiconError(message, path=source, line=number)
    if not first_seen:
        raise LexiconError(_MSG_NO_WORDS, path=source)
    if found := _FORBIDDEN.search(name):
        raise LexiconError(_MSG_FORBIDDEN_IN_NAME.format(header="attribute", code=_code(found.group())), path=source)
    return AttributeList(
        name=name,
        words=frozenset(first_seen),
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
    )


_ARROWS = {"a>b": "\t->\t", "b>a": "\t<-\t", "both": "\t"}


def lexicon_text(lexicon: Lexicon) -> str:
    r"""``lexicon`` written in the lexicon file format, so that :func:`parse_lexicon` reads the same pairs and settings back.

    What a run folder keeps of a lexicon that is no built-in one (its manifest's
    ``lexicon.text``), so that a reader never opens the path it was read from. The text is
    canonical (metadata first, one TAB-separated pair a line, no comments), not the file's bytes.

    Examples
    --------
    >>> pairs = (WordPair("he", "she", 1), WordPair("guy", "girl", 2, "a>b"))
    >>> lexicon = Lexicon("g", ("male", "female"), pairs, ("career",), "custom", "g.tsv", "", keep=("oh my god",))
    >>> lexicon_text(lexicon).splitlines()
    ['# axis: g', '# groups: male female', '# attributes: career', '# keep: oh my god', 'he\tshe', 'guy\t->\tgirl']
    """
    both = sorted({normalize(p.a) for p in lexicon.pairs} & {normalize(p.b) for p in lexicon.pairs})
    lines = [f"# axis: {lexicon.axis}", f"# groups: {lexicon.groups[0]} {lexicon.groups[1]}"]
    lists = {
        "attributes": " ".join(lexicon.attributes),
        "both-sides": ", ".join(both),
        "keep": ", ".join(lexicon.keep),
        "needs-determiner": ", ".join(lexicon.needs_determiner),
        "markers-a": ", ".join(lexicon.markers[0]),
        "markers-b": ", ".join(lexicon.markers[1]),
    }
    lines += [f"# {key}: {value}" for key, value in lists.items() if value]
    lines += [f"# needs-cue: {term}" + (f" = {', '.join(cues)}" if cues else "") for term, cues in lexicon.needs_cue]
    lines += [f"{pair.a}{_ARROWS[pair.direction]}{pair.b}" for pair in lexicon.pairs]
    return "\n".join(lines) + "\n"
