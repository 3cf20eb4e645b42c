"""The ``fairtalk`` command line: one thin typer function per command.

Each module of this package holds the commands of one stage and registers them on
the shared ``app`` (``_app.py``); importing the package registers them all. New
command groups get a module here and an import below.
"""

# Importing each command module registers its commands; the order is the order of `fairtalk --help`.
from fairtalk.cli import (  # noqa: F401, I001
    _pairs,
    _respond,
    _score,
    _audit,
    _plan,
    _debias,
    _train,
    _prompts,
    _compare,
    _reproduce,
    _regard,
    _similarity,
    _label,
)
from fairtalk.cli._app import EXIT_BIAS, EXIT_INTERNAL, EXIT_USAGE, app, fail, main
from fairtalk.cli._panels import assign_panels

assign_panels(app)  # every command's options grouped into the panels of its --help

__all__ = ["EXIT_BIAS", "EXIT_INTERNAL", "EXIT_USAGE", "app", "fail", "main"]
