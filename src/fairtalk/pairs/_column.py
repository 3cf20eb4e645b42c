"""Pairs held as columns (:class:`PairColumn`): a ``Pair`` record is built when one is read.

A million pairs held as ``Pair`` records cost about 650 bytes a pair: the record, its id string,
its origin string (``path:line``) and its two sides. A column holds the sides' strings in two
lists, the original sides in a byte array, the swaps as references (pairs that make the same
swaps share one tuple), the axis (and a cluster, when no pair has one) once, and an id of the
form ``{axis}-{16 hex digits}`` or an origin of the form ``{prefix}{number}`` as 8 bytes of a
number beside one prefix: a string that does not follow its column's pattern turns that column
into a list of strings.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Generic, TypeVar

from fairtalk._columns import RecordColumn
from fairtalk.errors import InputError
from fairtalk.records import Pair, Side, Swap

__all__ = ["PairColumn", "PairColumns"]

_DECIMAL = re.compile(r"(0|[1-9][0-9]{0,17})\Z")  # below 2**63: a line number, an index
_HEX = re.compile(r"[0-9a-f]{16}\Z")
_SIDES: tuple[Side, Side] = ("a", "b")
_T = TypeVar("_T")
_MSG_BAD_SIDE = "pair {id!r}: original_side must be 'a' or 'b', got {side!r}"


def _side(pair: Pair) -> int:
    """``pair``'s original side as the byte a column holds: 0 for a, 1 for b."""
    try:
        return _SIDES.index(pair.original_side)
    except ValueError:
        raise InputError(_MSG_BAD_SIDE.format(id=pair.id, side=pair.original_side)) from None


class _Numbered:
    """Strings ``prefix + number`` held as one prefix and an array of numbers, until one does not fit: then a list.

    ``hex_width``: the number is written in that many lowercase hex digits (a pair id's hash); 0:
    in decimal without leading zeros (a line number).
    """

    __slots__ = ("_hex_width", "_numbers", "_prefix", "_strings")

    def __init__(self, hex_width: int = 0) -> None:
        self._hex_width = hex_width
        self._prefix: str | None = None
        self._numbers = array("Q")
        self._strings: list[str] | None = None

    def __len__(self) -> int:
        return len(self._numbers) if self._strings is None else len(self._strings)

    def _number(self, text: str) -> int | None:
        """``text``'s number when it is this column's prefix and a number in its form, else None."""
        if self._hex_width:
            prefix, tail = text[: -self._hex_width], text[-self._hex_width :]
            fits = _HEX.match(tail) is not None
        else:
            prefix = text.rstrip("0123456789")
            tail = text[len(prefix) :]
            fits = _DECIMAL.match(tail) is not None
        if not fits:
            return None
        if self._prefix is None:
            self._prefix = prefix
        elif prefix != self._prefix:
            return None
        return int(tail, 16 if self._hex_width else 10)

    def _text(self, number: int) -> str:
        digits = format(number, f"0{self._hex_width}x") if self._hex_width else str(number)
        return f"{self._prefix}{digits}"

    def _as_strings(self) -> list[str]:
        if self._strings is None:
            self._strings = [self._text(n) for n in self._numbers]
            self._numbers = array("Q")
        return self._strings

    def append(self, text: str) -> None:
        number = None if self._strings is not None else self._number(text)
        if number is None:
            self._as_strings().append(text)
        else:
            self._numbers.append(number)

    def __setitem__(self, index: int, text: str) -> None:
        number = None if self._strings is not None else self._number(text)
        if number is None:
            self._as_strings()[index] = text
        else:
            self._numbers[index] = number

    def __getitem__(self, index: int) -> str:
        return self._text(self._numbers[index]) if self._strings is None else self._strings[index]

    def take(self, order: Sequence[int]) -> _Numbered:
        out = _Numbered(self._hex_width)
        out._prefix = self._prefix
        if self._strings is None:
            out._numbers = array("Q", [self._numbers[i] for i in order])
        else:
            out._strings = [self._strings[i] for i in order]
        return out


class _Same(Generic[_T]):
    """One value held once while every item has it (an axis, a missing cluster), else a list."""

    __slots__ = ("_n", "_value", "_values")

    def __init__(self, value: _T) -> None:
        self._value = value
        self._n = 0
        self._values: list[_T] | None = None

    def __len__(self) -> int:
        return self._n if self._values is None else len(self._values)

    @property
    def constant(self) -> bool:
        """Whether every item holds the first value."""
        return self._values is None

    def _as_list(self) -> list[_T]:
        if self._values is None:
            self._values = [self._value] * self._n
        return self._values

    def append(self, value: _T) -> None:
        if self._values is None and value == self._value:
            self._n += 1
        else:
            self._as_list().append(value)

    def __setitem__(self, index: int, value: _T) -> None:
        if self._values is not None or value != self._value:
            self._as_list()[index] = value

    def __getitem__(self, index: int) -> _T:
        return self._value if self._values is None else self._values[index]

    def take(self, order: Sequence[int]) -> _Same[_T]:
        out = _Same(self._value)
        if self._values is None:
            out._n = len(order)
        else:
            out._values = [self._values[i] for i in order]
        return out


class PairColumns:
    """The columns of a pair set being built: append a pair, or put one in a slot (a reservoir's), then :meth:`column`."""

    __slots__ = ("_a", "_axes", "_b", "_clusters", "_ids", "_origins", "_sides", "_swaps")

    def __init__(self, axis: str) -> None:
        self._axes: _Same[str] = _Same(axis)
        self._ids = _Numbered(hex_width=16)
        self._a: list[str] = []
        self._b: list[str] = []
        self._sides = bytearray()  # 0: the original was side a, 1: side b
        self._swaps: list[tuple[Swap, ...]] = []
        self._origins = _Numbered()
        self._clusters: _Same[str | None] = _Same(None)

    def __len__(self) -> int:
        return len(self._a)

    @property
    def sides(self) -> bytearray:
        """Each pair's original side: 0 for a, 1 for b."""
        return self._sides

    def append(self, pair: Pair) -> None:
        """Add ``pair`` after the others."""
        side = _side(pair)  # before any column grows
        self._axes.append(pair.axis)
        self._ids.append(pair.id)
        self._a.append(pair.a)
        self._b.append(pair.b)
        self._sides.append(side)
        self._swaps.append(pair.swaps)
        self._origins.append(pair.origin)
        self._clusters.append(pair.cluster)

    def __setitem__(self, index: int, pair: Pair) -> None:
        """Put ``pair`` in place of pair ``index``."""
        side = _side(pair)
        self._axes[index] = pair.axis
        self._ids[index] = pair.id
        self._a[index] = pair.a
        self._b[index] = pair.b
        self._sides[index] = side
        self._swaps[index] = pair.swaps
        self._origins[index] = pair.origin
        self._clusters[index] = pair.cluster

    def take(self, order: Sequence[int]) -> PairColumns:
        """The pairs at the positions ``order``, in that order."""
        out = PairColumns.__new__(PairColumns)
        out._axes, out._clusters = self._axes.take(order), self._clusters.take(order)
        out._ids, out._origins = self._ids.take(order), self._origins.take(order)
        out._a = [self._a[i] for i in order]
        out._b = [self._b[i] for i in order]
        out._sides = bytearray(self._sides[i] for i in order)
        out._swaps = [self._swaps[i] for i in order]
        return out

    def column(self) -> PairColumn:
        """The pairs as a :class:`PairColumn` (which takes these columns: add no pair after)."""
        return PairColumn(self)


class PairColumn(RecordColumn[Pair]):
    """Pairs held as columns (see the module docstring): item ``i`` is the ``Pair`` built from row ``i`` when read.

    It equals any sequence of the same records (the tuple of them). :attr:`a`, :attr:`b` and
    :attr:`clusters` read a column without building a record.
    """

    __slots__ = ("_columns",)
    _name = "pair column"

    def __init__(self, columns: PairColumns) -> None:
        self._columns = columns

    @classmethod
    def of(cls, pairs: Iterable[Pair]) -> PairColumn:
        """The column of ``pairs`` (itself when it is one already)."""
        if isinstance(pairs, PairColumn):
            return pairs
        items = iter(pairs)
        first = next(items, None)
        columns = PairColumns("" if first is None else first.axis)
        if first is not None:
            columns.append(first)
            for pair in items:
                columns.append(pair)
        return columns.column()

    @property
    def a(self) -> Sequence[str]:
        """Side a's contexts, in order (no record built)."""
        return self._columns._a

    @property
    def b(self) -> Sequence[str]:
        """Side b's contexts, in order (no record built)."""
        return self._columns._b

    @property
    def clusters(self) -> Sequence[str | None] | None:
        """Each pair's cluster, or None when no pair has one (no record built)."""
        clusters = self._columns._clusters
        return None if clusters.constant and clusters[0] is None else [clusters[i] for i in range(len(self))]

    def __len__(self) -> int:
        return len(self._columns)

    def pair_ids(self) -> Iterator[str]:
        """Each pair's id, in order (no record built)."""
        ids = self._columns._ids
        return (ids[i] for i in range(len(ids)))

    def take(self, order: Sequence[int]) -> PairColumn:
        """The pairs at the positions ``order``, in that order: a column of its own (its strings shared, no record built)."""
        return PairColumn(self._columns.take(order))

    def placebo(self) -> PairColumn:
        """Each pair with side a on both sides and no swap: ``replace(pair, b=pair.a, swaps=())``, held as columns.

        The similarity test's no-effect baseline (one context asked twice). It shares this
        column's strings and numbers: a list of references to the empty swaps is all it adds.
        """
        c = self._columns
        out = PairColumns.__new__(PairColumns)
        out._axes, out._clusters, out._ids, out._origins = c._axes, c._clusters, c._ids, c._origins
        out._a = out._b = c._a
        out._sides = c._sides
        out._swaps = [()] * len(c)
        return PairColumn(out)

    def _record(self, i: int) -> Pair:
        c = self._columns
        return Pair(
            id=c._ids[i],
            axis=c._axes[i],
            a=c._a[i],
            b=c._b[i],
            original_side=_SIDES[c._sides[i]],
            swaps=c._swaps[i],
            origin=c._origins[i],
            cluster=c._clusters[i],
        )

    def __repr__(self) -> str:
        return f"PairColumn(n={len(self)})"
