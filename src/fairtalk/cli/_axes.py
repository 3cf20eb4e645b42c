"""The axes ``--axis`` takes, listed in help texts from the one axis registry, so that the two never drift.

An option's help holds a placeholder (:data:`AXES`, or :data:`AUDIT_AXES` where a multi-way axis
means every group against the first); :func:`fill_axes_help` puts the registry's axes in its place
when a command's help is shown, not at import, so that ``import fairtalk.cli`` and ``fairtalk
--help`` never read the registry's entry points.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typer._click import Command

__all__ = [
    "AUDIT_AXES",
    "AUDIT_AXIS_NAMES",
    "AXES",
    "AXIS_NAMES",
    "WORD_AXES",
    "axes_text",
    "axis_names_text",
    "fill_axes",
    "fill_axes_help",
]

#: Placeholder in a help text for the axes one lexicon stands for (a multi-way axis: two of its groups, named).
AXES = "{axes}"
#: Placeholder in a help text for the axes an audit takes (a multi-way axis: every group against the first).
AUDIT_AXES = "{audit-axes}"
#: Placeholder in a help text for the axes whose words are looked for (a multi-way axis: every group's words).
WORD_AXES = "{word-axes}"
#: Placeholder for the axes' names alone, a multi-way one as ``NAME:A-B`` (the short list an option's first sentence shows).
AXIS_NAMES = "{axis-names}"
#: The same where a multi-way axis's bare name is taken (audit: every group against the first; pool-filter: every group).
AUDIT_AXIS_NAMES = "{audit-axis-names}"
#: Every placeholder, in the order :func:`fill_axes` fills them.
_PLACEHOLDERS = (AXES, AUDIT_AXES, WORD_AXES, AXIS_NAMES, AUDIT_AXIS_NAMES)


def axes_text(*, audit: bool = False, words: bool = False) -> str:
    """The axes ``--axis`` takes, in words: the built-in ones in their order, then registered ones.

    A multi-way axis says how to pick two of its groups, and what its bare name stands for
    (``audit``: every group against the first; ``words``: every group's words, as pool-filter
    looks for them; elsewhere it is refused).

    Examples
    --------
    >>> text = axes_text(audit=True)
    >>> text.startswith("gender, race, religion (every group against christian; religion:A-B for two of")
    True
    >>> "nonbinary, neopronouns" in text
    True
    """
    from fairtalk.lexicons import axis_groups, axis_names, builtin_axes, expand_axis

    parts = []
    for name in dict.fromkeys((*builtin_axes(), *axis_names())):
        if len(expand_axis(name)) == 1:
            parts.append(name)
            continue
        groups = axis_groups(name)
        if audit:
            parts.append(f"{name} (every group against {groups[0]}; {name}:A-B for two of {', '.join(groups)})")
        elif words:
            parts.append(f"{name} (every group's words; {name}:A-B for two of {', '.join(groups)})")
        else:  # a single-pair command refuses the bare name (:func:`~fairtalk.cli._app.check_two_groups`)
            parts.append(
                f"{name} ({name}:A-B for two of {', '.join(groups)}; a bare {name} only in audit: {groups[0]} against each)"
            )
    return ", ".join(parts)


def axis_names_text(*, bare: bool = False) -> str:
    """The axes' names, comma-separated: a multi-way one as ``NAME:A-B``, or its bare name where ``bare`` (audit).

    Examples
    --------
    >>> axis_names_text().startswith("gender, race, religion:A-B, orientation, age")
    True
    >>> axis_names_text(bare=True).startswith("gender, race, religion, orientation")
    True
    """
    from fairtalk.lexicons import axis_names, builtin_axes, expand_axis

    names = dict.fromkeys((*builtin_axes(), *axis_names()))
    return ", ".join(name if bare or len(expand_axis(name)) == 1 else f"{name}:A-B" for name in names)


def fill_axes(text: str) -> str:
    """``text`` with the registry's axes in place of each placeholder (:data:`AXES`, :data:`AXIS_NAMES`, ...)."""
    if "{" not in text:
        return text
    filled: dict[str, Callable[[], str]] = {
        AXES: axes_text,
        AUDIT_AXES: partial(axes_text, audit=True),
        WORD_AXES: partial(axes_text, words=True),
        AXIS_NAMES: axis_names_text,
        AUDIT_AXIS_NAMES: partial(axis_names_text, bare=True),
    }
    for placeholder in _PLACEHOLDERS:
        if placeholder in text:
            text = text.replace(placeholder, filled[placeholder]())
    return text


def fill_axes_help(command: Command) -> None:
    """Have ``command`` (every command of a group) fill its help texts' axis placeholders when its help is shown.

    Idempotent. Commands without a placeholder are left as they are.
    """
    subcommands = getattr(command, "commands", None)
    if subcommands is not None:  # a group (typer brings its own click, so no isinstance check)
        for sub in subcommands.values():
            fill_axes_help(sub)
        return
    params = [p for p in command.params if any(mark in (getattr(p, "help", None) or "") for mark in _PLACEHOLDERS)]
    if not params or getattr(command, "_fairtalk_axes", False):
        return
    format_help = command.format_help

    def format_with_axes(ctx: Any, formatter: Any) -> None:
        for param in params:
            param.help = fill_axes(getattr(param, "help", None) or "")  # type: ignore[attr-defined]
        format_help(ctx, formatter)

    command.format_help = format_with_axes  # type: ignore[method-assign]
    command._fairtalk_axes = True  # type: ignore[attr-defined]
