"""Two runs side by side: the change in gap between a baseline and a candidate (:func:`compare_runs`).

``_runs.py`` compares two audits of the same pairs (paper 001), ``_prompts.py`` two paper-004
analyses of the same prompts, ``_inputs.py`` reads the two folders.
"""

from __future__ import annotations

from fairtalk.compare._inputs import is_prompt_analysis, python_target, same_model, same_model_configs
from fairtalk.compare._prompts import compare_prompt_analyses
from fairtalk.compare._runs import compare_runs

__all__ = [
    "compare_prompt_analyses",
    "compare_runs",
    "is_prompt_analysis",
    "python_target",
    "same_model",
    "same_model_configs",
]
