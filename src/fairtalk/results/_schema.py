"""The version every result file carries, and the one reader of result files (``results.json``, ``run.json``).

Every JSON result file fairtalk writes (an audit's per-axis ``results.json`` and its ``run.json``,
``score``, ``compare``, ``prompts analyze``, ``similarity``, ``reproduce``) starts with
``"schema_version": SCHEMA_VERSION``, put there by :func:`versioned` (through
:meth:`fairtalk.results.Result.to_json` or the writer of a file that is no single result).
Every reader goes through :func:`read_result_file`, which treats the file as hostile input and
raises :class:`~fairtalk.errors.InputError` naming the file (and the field) for anything it
cannot use. The shapes it checks are declared once, as pydantic models, in
:mod:`fairtalk.results._file_models`, which also give the published JSON Schema
(``docs/reference/results.schema.json``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from fairtalk._jsonl import read_json_file
from fairtalk.errors import InputError
from fairtalk.results._version import SCHEMA_VERSION, describe

__all__ = ["SCHEMA_VERSION", "ResultKind", "describe", "read_result_file", "versioned"]


#: What a result file is read as: an audit's (or ``score``'s) ``results.json``, an audit's ``run.json``, the parts of a
#: ``results.json`` that ``plan --results`` reads (``planning``: only ``measures`` is required), the parts of a
#: ``prompts analyze`` ``results.json`` that ``compare`` reads (``prompts``), or any other result file (only its
#: version and its being an object are checked; its reader checks the rest).
ResultKind = Literal["audit", "run", "planning", "prompts", "any"]

_MSG_NOT_OBJECT = "expected a JSON object, got {got}"
_MSG_VERSION_TYPE = "field 'schema_version' must be an integer, got {got}"
_MSG_NEWER = (
    "schema_version {found}, but this fairtalk reads schema_version {ours} "
    "(written by a newer fairtalk? upgrade, or rerun the audit)"
)
_MSG_UNKNOWN = (
    "schema_version {found}, but this fairtalk reads schema_version {ours} (no fairtalk writes {found}; rerun the audit)"
)


def versioned(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` with ``"schema_version": SCHEMA_VERSION`` as its first key (any other ``schema_version`` dropped).

    Examples
    --------
    >>> versioned({"axis": "gender"})
    {'schema_version': 1, 'axis': 'gender'}
    """
    return {"schema_version": SCHEMA_VERSION, **{k: v for k, v in payload.items() if k != "schema_version"}}


def file_version(data: Mapping[str, Any], path: str) -> int:
    """The ``schema_version`` of a parsed result file: 0 when it has none (written before versioning).

    Raises
    ------
    InputError
        Not an integer, or a version other than 0 and :data:`SCHEMA_VERSION` (the message names both).
    """
    found = data.get("schema_version", 0)
    if isinstance(found, bool) or not isinstance(found, int):
        raise InputError(_MSG_VERSION_TYPE.format(got=describe(found)), path=path)
    if found not in (0, SCHEMA_VERSION):
        message = _MSG_NEWER if found > SCHEMA_VERSION else _MSG_UNKNOWN
        raise InputError(message.format(found=found, ours=SCHEMA_VERSION), path=path)
    return found


def read_result_file(path: str | os.PathLike[str], kind: ResultKind = "any") -> dict[str, Any]:
    """A result file fairtalk wrote, read as hostile input: parsed, its version checked, its shape validated.

    The file may be at most :data:`fairtalk._jsonl.MAX_JSON_FILE_BYTES` (refused by its size
    before it is read) and nest at most :data:`fairtalk._jsonl.MAX_DEPTH` levels; it must hold a
    JSON object. Its ``schema_version`` must be :data:`SCHEMA_VERSION`; a file without one was
    written before result files were versioned (fairtalk 0.1, version 0) and is read as
    version 1 when it otherwise validates, so existing output folders stay readable. For an
    ``audit`` (``results.json`` of ``audit`` or ``score``) or a ``run`` (``run.json``), the
    fields readers use are then checked against the declared shape
    (:mod:`fairtalk.results._file_models`), and the first that does not fit is named:
    ``results.json: field 'measures' must be an object, got a list of 2``.

    Parameters
    ----------
    path
        The file.
    kind
        ``"audit"``, ``"run"``, ``"planning"`` (the measures' spreads and margins ``plan`` reads),
        ``"prompts"`` (the gaps and regard ``compare`` reads of a prompts analysis), or ``"any"``
        (only the version is checked).

    Returns
    -------
    dict
        The parsed object as written (``schema_version`` included; ``from_dict`` ignores it).

    Raises
    ------
    InputError
        Missing, too large, not JSON, too deep, not an object, another ``schema_version``, or a
        field of the wrong shape.
    """
    where = str(path)
    data = read_json_file(path, what=os.path.basename(where) or where)
    if not isinstance(data, dict):
        raise InputError(_MSG_NOT_OBJECT.format(got=describe(data)), path=where)
    file_version(data, where)
    if kind != "any":
        from fairtalk.results._file_models import validate  # pydantic loads only when a file is read

        validate(data, kind, where)
    return data
