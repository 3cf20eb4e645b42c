"""Which panel of a command's ``--help`` each option shows in, declared once for every command.

A newcomer's options (the model, the corpus, the axes, the pairs, the output and the gates) stay in
the first panel, ``Options``; the rest are grouped by what they tune, so that ``fairtalk audit
--help`` opens with what a first audit needs. :func:`assign_panels` sets each option's
``rich_help_panel`` from :data:`PANELS` by its flag, for every command of the app, so a new option
lands in its panel by its flag alone (one not named here stays in ``Options``).
"""

from __future__ import annotations

import inspect

import typer
from typer.models import OptionInfo

__all__ = ["PANELS", "assign_panels"]

#: Panel -> the flags it holds (their first long name), in the order the panels are printed.
PANELS: dict[str, tuple[str, ...]] = {
    "Model and decoding": (
        "--model-arg",
        "--model-version",
        "--system-prompt",
        "--batch-size",
        "--max-new-tokens",
        "--sample",
        "--temperature",
        "--top-k",
        "--top-p",
        "--stop",
        "--repetition-penalty",
    ),
    "Pairs and measures": (
        "--seed",
        "--split",
        "--turns",  # how the pairs are cut from the corpus: in `pairs`, which asks no model, too
        "--mixed",
        "--balance",
        "--measures",
        "--mask-groups",
        "--distinct",
        "--offense",
        "--offense-threshold",
        "--sentiment-threshold",
        "--drop-empty",
        "--exclude-truncated",
        "--gold",
        "--scorer-check",
        "--judge-rubric",
        "--judge-scale",
        "--by-turn",
        "--similarity",
        "--divergent",
    ),
    "Statistics": (
        "--alpha",
        "--correction",
        "--correction-scope",
        "--resamples",
        "--binary-test",
        "--count-test",
        "--clusters",
        "--margin",
        "--primary",
        "--power",
    ),
    "Stop when decided": ("--until-decided", "--max-pairs", "--looks", "--spending"),
    "Compare with a baseline": ("--baseline-model", "--fail-if-worse"),
    "Scale and failures": (
        "--store",
        "--engine",
        "--ray-address",
        "--ray-actors",
        "--max-errors",
        "--max-consecutive-failures",
    ),
}
_PANEL_OF = {flag: panel for panel, flags in PANELS.items() for flag in flags}


def _flag(info: OptionInfo) -> str | None:
    """An option's first long flag (``--max-consecutive-failures`` of ``--max-consecutive-failures/-F``)."""
    for declaration in info.param_decls or ():
        for name in declaration.split("/"):
            if name.startswith("--"):
                return name
    return None


def assign_panels(app: typer.Typer) -> None:
    """Put each option of every command of ``app`` (and of its groups) in its panel of :data:`PANELS`."""
    for command in app.registered_commands:
        if command.callback is None:
            continue
        for parameter in inspect.signature(command.callback).parameters.values():
            info = parameter.default
            if isinstance(info, OptionInfo) and info.rich_help_panel is None:
                flag = _flag(info)
                info.rich_help_panel = _PANEL_OF.get(flag) if flag is not None else None
    for group in app.registered_groups:
        if group.typer_instance is not None:
            assign_panels(group.typer_instance)
