"""fairtalk where its users already work: pytest, inspect_ai and MLflow (each an optional extra).

- :mod:`fairtalk.integrations.pytest_plugin`: the ``fairtalk_audit`` fixture (entry point ``pytest11``);
  the assertions it uses are :mod:`fairtalk.testing`'s;
- :mod:`fairtalk.integrations._inspect_task`: the inspect_ai task ``fairtalk/counterfactual``
  (``pip install 'fairtalk[inspect]'``);
- :mod:`fairtalk.integrations.mlflow`: ``log_audit`` and ``make_metric`` (``pip install 'fairtalk[mlflow]'``).

Importing this package imports none of them, and nothing else in fairtalk imports this package:
each module sits on the public API, like the command line.
"""

__all__: list[str] = []
