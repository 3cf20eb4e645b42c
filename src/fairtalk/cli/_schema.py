"""Command-line options built from the options schema (:mod:`fairtalk.options`): a flag's default and help are its field's.

``fairtalk score`` and ``fairtalk audit`` declare each option that sets a field of
:class:`~fairtalk.ScoreOptions` or :class:`~fairtalk.AuditConfig` with :func:`score_option` or
:func:`run_option`, under the field's own name (``n_resamples: int = score_option("n_resamples",
"--resamples")``), so :func:`given_options` needs no table of names; ``tests/test_options_schema.py``
holds every such flag to its field. A command that passes such an option to another function of the
library (``similarity --alpha``, ``prompts analyze --alpha``) declares it the same way and checks it
with :func:`check_options` before any work, so a bad value gets the error ``audit`` gives it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import typer

from fairtalk.cli._axes import AUDIT_AXES, AUDIT_AXIS_NAMES
from fairtalk.cli._choices import plain
from fairtalk.options import RUN_FIELDS, SCORE_FIELDS

__all__ = [
    "CLI_FORMS",
    "DEFAULT_SCORE_OUTPUT",
    "check_options",
    "cli_default",
    "cli_help",
    "given_options",
    "run_option",
    "score_option",
]

#: The fields whose flag differs from the field, and what differs: the command line's own default or help.
CLI_FORMS: Mapping[str, Mapping[str, Any]] = {
    # a run writes its report: to this folder unless told otherwise (the library writes none by default)
    "out_dir": {"default": "fairtalk-report"},
    # the help lists the axes (built-in and registered ones) when it is shown
    "axes": {"help": f"Axes to audit or lexicon files, comma-separated: {AUDIT_AXIS_NAMES}. The axes: {AUDIT_AXES}."},
}
#: ``fairtalk score``'s output folder when ``-o`` is not given: a folder of its own, as ``fairtalk audit``'s
#: (``fairtalk-report``) holds another command's report, which each command refuses to write into.
DEFAULT_SCORE_OUTPUT = "fairtalk-score"
#: The side of click's range each bound of a field sets.
_SIDES = {"ge": "min", "gt": "min", "le": "max", "lt": "max"}
#: Where a parameter's value came from when nobody gave it.
_DEFAULT_SOURCES = ("DEFAULT", "DEFAULT_MAP")


def _field(key: str) -> Any:
    return SCORE_FIELDS[key] if key in SCORE_FIELDS else RUN_FIELDS[key]


def cli_default(key: str) -> Any:
    """The default of the option ``key`` as the command line writes it.

    Names are one comma-separated string; a table (given as repeated ``KEY=VALUE``) is None.
    """
    form = CLI_FORMS.get(key, {})
    if "default" in form:
        return form["default"]
    default = _field(key).get_default(call_default_factory=True)
    if isinstance(default, tuple) and all(isinstance(item, str) for item in default):
        return ",".join(default)
    if isinstance(default, Mapping):
        return None
    return default


def cli_help(key: str) -> str:
    """The help text of the option ``key`` on the command line: its field's description."""
    return str(CLI_FORMS.get(key, {}).get("help", _field(key).description))


def _bounds(key: str) -> dict[str, Any]:
    """The metavar of a ranged option: its field's bounds as an interval (``<float in [0, 1]>``, ``<int >= 0>``).

    click gets no range: its range check names a bound in its own words (``Input should be greater
    than or equal to 0``, after a usage block), and lets NaN through a float's. The schema checks
    every value and says what it must be, naming the flag, in the words the library and a config
    file get (``--seed must be an integer >= 0, got -1``, ``--alpha must be between 0 and 1
    (exclusive) ..., got nan``). A command that passes such an option on to a function of its own
    checks it with :func:`check_options` before any work.
    """
    found = {bound: getattr(meta, bound) for meta in _field(key).metadata for bound in _SIDES if hasattr(meta, bound)}
    if not found:
        return {}
    if not isinstance(cli_default(key), float) and not {"le", "lt"} & found.keys():  # a whole number with a least value
        return {"metavar": f"<int >= {found['ge']}>" if "ge" in found else f"<int > {found['gt']}>"}
    kind = "float" if isinstance(cli_default(key), float) else "int"
    low = f"[{found['ge']}" if "ge" in found else f"({found['gt']}" if "gt" in found else "(-inf"
    high = f"{found['le']}]" if "le" in found else f"{found['lt']})" if "lt" in found else "inf)"
    return {"metavar": f"<{kind} in {low}, {high}>"}


#: ``score_option``'s ``default`` when none is given: the field's own.
_FIELD_DEFAULT: Any = object()


def _option(key: str, flags: tuple[str, ...], ranged: bool, kwargs: dict[str, Any]) -> Any:
    return typer.Option(cli_default(key), *flags, help=cli_help(key), **{**(_bounds(key) if ranged else {}), **kwargs})


def score_option(
    key: str,
    *flags: str,
    ranged: bool = False,
    default: Any = _FIELD_DEFAULT,
    note: str = "",
    lead: str = "",
    **kwargs: Any,
) -> Any:
    """``typer.Option`` of the :class:`~fairtalk.ScoreOptions` field ``key``: its default and help, the ``flags``.

    ``ranged``: the help shows the field's bounds (:func:`_bounds`; the schema checks them). A
    command whose option means the field but defaults otherwise (``plan --alpha``: the earlier
    audit's) gives its ``default``, and says what it is in ``note``, added to the field's help. One
    whose first sentence would mislead there (``plan --power`` plans for a power, it reports no
    minimum detectable effect) gives its own in ``lead``, in place of the field's first sentence,
    which ``--help`` shows alone (:func:`~fairtalk.cli._help_layout.short_help`).
    """
    if key not in SCORE_FIELDS:
        raise KeyError(key)
    option = _option(key, flags, ranged, kwargs)
    if default is not _FIELD_DEFAULT:
        option.default = default
    if lead:
        from fairtalk.cli._help_layout import short_help

        option.help = lead + option.help[len(short_help(option.help)) :]
    if note:
        option.help = f"{option.help} {note}"
    return option


def run_option(key: str, *flags: str, ranged: bool = False, **kwargs: Any) -> Any:
    """``typer.Option`` of the :class:`~fairtalk.AuditConfig` field ``key`` (see :func:`score_option`)."""
    if key not in RUN_FIELDS:
        raise KeyError(key)
    return _option(key, flags, ranged, kwargs)


def given_options(
    ctx: typer.Context,
    keys: Iterable[str],
    convert: Mapping[str, Callable[[Any], Any]] | None = None,
    *,
    named: Iterable[str] = (),
) -> tuple[dict[str, Any], dict[str, str]]:
    """The options of ``keys`` given on the command line (not left at their defaults), and each one's flag.

    A command's parameter has its option's name; ``convert`` turns a parameter's value into the
    option's (``--margin`` strings into a mapping). The flags name the options in error
    messages, so a bad ``--resamples 0`` is reported as ``--resamples``; those of ``named`` are
    named by their flags even when left at their defaults (options checked together).
    """
    flags = {
        param.name: max((o for o in param.opts if o.startswith("--")), key=len, default=param.opts[0])
        for param in ctx.command.params
        if param.name
    }
    values: dict[str, Any] = {}
    names = {key: flags[key] for key in named if key in flags}
    for key in keys:
        source = ctx.get_parameter_source(key)
        if key not in ctx.params or source is None or source.name in _DEFAULT_SOURCES:
            continue
        values[key] = (convert or {}).get(key, lambda v: v)(plain(ctx.params[key]))
        names[key] = flags.get(key, key)
    return values, names


def check_options(ctx: typer.Context, *keys: str) -> None:
    """Check the options of ``keys`` given on the command line against their fields, as ``audit`` checks them.

    For a command that declares an option with :func:`score_option` or :func:`run_option` but
    passes it to a function of its own: a bad value is the schema's SpecError, naming the flag and
    what it must be (``--alpha must be between 0 and 1 (exclusive) and at least 1e-10, got 0.0``),
    in the words ``audit`` and ``score`` use. Options left at their defaults are not checked.
    """
    values, names = given_options(ctx, keys)
    scoring = {key: value for key, value in values.items() if key in SCORE_FIELDS}
    if scoring:
        from fairtalk import ScoreOptions

        ScoreOptions.from_mapping(scoring, names=names)
    if len(scoring) < len(values):
        from fairtalk import AuditConfig

        AuditConfig.from_mapping({key: value for key, value in values.items() if key not in scoring}, names=names)
