"""The ``fairtalk`` command line: one thin typer function per command.

Each module of this package holds the commands of one stage and registers them on
the shared ``app`` (``_app.py``); importing the package registers them all. New
command groups get a module here and an import below.
"""

# Import order is the order of `fairtalk --help`: the method's order.
from fairtalk.cli import pairs, respond, score, audit, plan, debias, train, prompts  # noqa: F401, I001  (registers the commands)
from fairtalk.cli import compare  # noqa: F401  (registers `fairtalk compare`)
from fairtalk.cli import reproduce  # noqa: F401  (registers `fairtalk reproduce`)
from fairtalk.cli import regard  # noqa: F401  (registers `fairtalk regard label` and `check`)
from fairtalk.cli import similarity  # noqa: F401  (registers `fairtalk similarity`)
from fairtalk.cli import label  # noqa: F401  (registers `fairtalk label` and `label --agreement`)
from fairtalk.cli._app import EXIT_BIAS, EXIT_INTERNAL, EXIT_USAGE, app, fail, main

__all__ = ["EXIT_BIAS", "EXIT_INTERNAL", "EXIT_USAGE", "app", "fail", "main"]
