"""Reading an options file (TOML or YAML) within bounds: its size, how deep its values nest, how far YAML aliases expand.

An options file holds a few dozen values, so each bound is far above any real one and far
below what it takes to tie up a machine: a "billion laughs" of YAML aliases, 100,000 nested
brackets or a file of gigabytes is refused at once as an :class:`~fairtalk.InputError`,
never parsed into memory or met as a RecursionError. A YAML key given twice in one table is
refused as well (TOML refuses it itself).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from fairtalk.errors import InputError, SpecError

__all__ = ["FILE_FORMATS", "MAX_ALIAS_VALUES", "MAX_BYTES", "MAX_DEPTH", "load_mapping"]

#: Options files by suffix.
FILE_FORMATS = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}
#: The largest options file read, in bytes (1 MiB).
MAX_BYTES = 1 << 20
#: How deep values may nest (the top table is level 1; ``[score]`` with ``margins`` reaches 3).
MAX_DEPTH = 32
#: How many values YAML aliases may stand for, all aliases of a file together.
MAX_ALIAS_VALUES = 10_000

_MSG_FILE_FORMAT = "{path}: options files are TOML (.toml) or YAML (.yaml, .yml)"
_MSG_NO_YAML = "reading a YAML options file needs PyYAML (pip install pyyaml); or write it as TOML (.toml)"
_MSG_FILE_ROOT = "the options file must hold a table of options at its top, not {type}"
_MSG_FILE_READ = "cannot read the options file ({reason})"
_MSG_NOT_UTF8 = "the options file is not valid UTF-8 (byte {byte} at offset {offset})"
_MSG_NOT_REGULAR = "the options file is not a regular file (a pipe, a device or a socket); save it to a file first"
_MSG_FILE_PARSE = "malformed {format} ({reason})"
_MSG_FILE_SIZE = "the options file is larger than {limit} MiB; an options file holds a few dozen values"
_MSG_NESTING = "values nest deeper than {limit} levels; an options file needs a few"
_MSG_ALIASES = "YAML aliases expand to more than {limit:,} values; an options file needs a few"
_MSG_ALIAS_LOOP = "a YAML alias refers to the value it is part of"
_MSG_KEY_TWICE = "key {key!r} is given twice in one table"

#: One part of a dotted TOML key: bare, "basic" or 'literal'.
_KEY_PART = r"""[A-Za-z0-9_-]+|"(?:\\.|[^"\\\n])*"|'[^'\n]*'"""
#: What the depth of a TOML text is counted on: dotted keys (``a.b.c = 1`` nests three tables), strings
#: and comments (skipped), brackets and braces.
_TOML_TOKENS = re.compile(
    rf"(?P<dotted>(?:{_KEY_PART})(?:[ \t]*\.[ \t]*(?:{_KEY_PART}))+)"
    r"""|""\"(?:\\.|[^\\])*?""\"|'''.*?'''|"(?:\\.|[^"\\\n])*"|'[^'\n]*'|#[^\n]*|[\[\]{}]""",
    re.DOTALL,
)
_KEY_PARTS = re.compile(_KEY_PART)


class _Refused(Exception):
    """A bound of this module was crossed (its message says which), at ``line`` where known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def _check_toml_depth(text: str) -> None:
    """_Refused when brackets, braces and dotted keys outside strings and comments nest deeper than :data:`MAX_DEPTH`."""
    depth = 1  # the top table
    for match in _TOML_TOKENS.finditer(text):
        token = match.group()
        if match.lastgroup == "dotted":
            deepest = depth + len(_KEY_PARTS.findall(token)) - 1
        else:
            depth += (token in "[{") - (token in "]}")
            deepest = depth
        if deepest > MAX_DEPTH:
            raise _Refused(_MSG_NESTING.format(limit=MAX_DEPTH), line=text.count("\n", 0, match.start()) + 1)


def _check_depth(data: Any) -> None:
    """_Refused when parsed values (tables in tables, lists in lists) nest deeper than :data:`MAX_DEPTH`."""
    todo = [(data, 1)]
    while todo:
        value, depth = todo.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_DEPTH:
                    raise _Refused(_MSG_NESTING.format(limit=MAX_DEPTH))
                todo.append((child, depth + 1))


def _yaml_loader() -> Any:
    """A ``yaml.SafeLoader`` that counts as it composes: nesting, alias expansion, keys given twice."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
        """Refuses nesting past MAX_DEPTH, aliases standing for more than MAX_ALIAS_VALUES values, and repeated keys."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0
            self._n_values = 0  # values composed so far, each alias counted as the values it stands for
            self._n_aliased = 0
            self._sizes: dict[int, int] = {}  # id(node) -> values it holds, itself included (nodes live until done)

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                line = self.peek_event().start_mark.line + 1
                node = super().compose_node(parent, index)
                size = self._sizes.get(id(node))
                if size is None:  # an anchor still being composed: the value would contain itself
                    raise _Refused(_MSG_ALIAS_LOOP, line=line)
                self._n_aliased += size
                self._n_values += size
                if self._n_aliased > MAX_ALIAS_VALUES:
                    raise _Refused(_MSG_ALIASES.format(limit=MAX_ALIAS_VALUES), line=line)
                return node
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _Refused(_MSG_NESTING.format(limit=MAX_DEPTH), line=self.peek_event().start_mark.line + 1)
            before = self._n_values
            node = super().compose_node(parent, index)
            self._depth -= 1
            self._n_values += 1
            self._sizes[id(node)] = self._n_values - before
            return node

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():
                if key_node.tag == "tag:yaml.org,2002:merge":  # <<: a merged table's keys may be overridden
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    repeated = key in seen
                    seen.add(key)
                except TypeError:  # unhashable: the constructor below says so
                    continue
                if repeated:
                    raise _Refused(_MSG_KEY_TWICE.format(key=key), line=key_node.start_mark.line + 1)
            return super().construct_mapping(node, deep=deep)

    return BoundedLoader


def _read(where: Path) -> str:
    """The file's text (a UTF-8 BOM dropped), reading no more than :data:`MAX_BYTES` (plus one, to know it is larger); a regular file only."""
    try:
        if not stat.S_ISREG(os.stat(where).st_mode):  # opening a FIFO would wait for a writer; a device never ends
            raise InputError(_MSG_NOT_REGULAR, path=str(where))
        with where.open("rb") as stream:
            raw = stream.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise InputError(_MSG_FILE_SIZE.format(limit=MAX_BYTES >> 20), path=str(where))
        return raw.decode("utf-8-sig")  # a BOM (Windows editors write one) is no part of the TOML or YAML
    except UnicodeDecodeError as exc:
        message = _MSG_NOT_UTF8.format(byte=f"0x{exc.object[exc.start]:02x}", offset=exc.start)
        raise InputError(message, path=str(where)) from None
    except OSError as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError(_MSG_FILE_READ.format(reason=reason), path=str(where)) from exc


def load_mapping(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The table at the top of a TOML (``tomllib``) or YAML (PyYAML, when installed) file, read within bounds.

    Raises
    ------
    InputError
        The file cannot be read or parsed, is not a regular file (a FIFO, a device), holds no table at its top, is larger than
        :data:`MAX_BYTES`, nests deeper than :data:`MAX_DEPTH`, has YAML aliases standing for
        more than :data:`MAX_ALIAS_VALUES` values (or for themselves), or gives a YAML key twice.
    SpecError
        Neither a ``.toml`` nor a ``.yaml``/``.yml`` file, or YAML without PyYAML.
    """
    where = Path(path)
    kind = FILE_FORMATS.get(where.suffix.lower())
    if kind is None:
        raise SpecError(_MSG_FILE_FORMAT.format(path=where), choices=tuple(FILE_FORMATS), given=where.suffix)
    if kind == "yaml":
        try:
            import yaml
        except ImportError:
            raise SpecError(_MSG_NO_YAML) from None
    text = _read(where)
    try:
        if kind == "toml":
            import tomllib

            _check_toml_depth(text)  # before parsing: tomllib recurses once per level
            try:
                data: Any = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise InputError(_MSG_FILE_PARSE.format(format="TOML", reason=exc), path=str(where)) from exc
        else:
            try:
                data = yaml.load(text, Loader=_yaml_loader())  # a SafeLoader, with bounds
            except yaml.YAMLError as exc:
                raise InputError(_MSG_FILE_PARSE.format(format="YAML", reason=exc), path=str(where)) from exc
            data = {} if data is None else data
        _check_depth(data)  # dotted TOML keys nest without brackets
    except _Refused as exc:
        raise InputError(str(exc), path=str(where), line=exc.line) from None
    except RecursionError:  # a nesting the checks above did not foresee
        raise InputError(_MSG_NESTING.format(limit=MAX_DEPTH), path=str(where)) from None
    if not isinstance(data, dict):
        raise InputError(_MSG_FILE_ROOT.format(type=type(data).__name__), path=str(where))
    return data
