"""A sequence of records held as columns: what a million pairs' records cost without one Python object each.

:class:`RecordColumn` gives a subclass that holds its records' fields as columns (lists, arrays)
the whole read-only ``Sequence`` protocol from two methods, ``__len__`` and ``_record(i)`` (the
record of row ``i``, built when read): indexing (negative too), slices (a tuple of records),
iteration, and equality with any sequence of the same records (a tuple of them), as the records
it replaces would have.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import ClassVar, SupportsIndex, TypeVar, overload

__all__ = ["RecordColumn"]

_R = TypeVar("_R")


class RecordColumn(Sequence[_R]):
    """Records held as columns; a subclass gives ``__len__`` and ``_record(i)``, and names itself in ``_name``."""

    __slots__ = ()
    #: How an index error names the column ("pair column index out of range").
    _name: ClassVar[str] = "column"

    def __len__(self) -> int:
        raise NotImplementedError

    def _record(self, i: int) -> _R:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: SupportsIndex) -> _R: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[_R, ...]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> _R | tuple[_R, ...]:
        if isinstance(index, slice):
            return tuple(self._record(i) for i in range(*index.indices(len(self))))
        i = operator.index(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"{self._name} index out of range")
        return self._record(i)

    def __iter__(self) -> Iterator[_R]:
        return (self._record(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(x == y for x, y in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))
