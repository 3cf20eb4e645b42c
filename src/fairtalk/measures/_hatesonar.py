"""HateSonar (MIT, ONNX, 1 MB) as an offense scorer: P(hate speech) + P(offensive language) per text.

The wheel's ONNX graph normalises strings under the ``en_US.UTF-8`` locale, which many machines
(containers, CI) do not have; the graph is loaded with ``onnx`` and given the ``C.UTF-8``
locale instead (lower-casing of ASCII text is the same). Needs ``pip install hatesonar``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fairtalk.errors import FairtalkError

__all__ = ["HateSonar"]

_MSG_MISSING = "the hatesonar offense scorer needs the hatesonar package: pip install hatesonar"
#: Class indices of the model: 0 hate speech, 1 offensive language, 2 neither.
_OFFENSIVE_CLASSES = (0, 1)


class HateSonar:
    """The hatesonar model with a portable locale; ``probabilities(texts)`` is P(hate) + P(offensive)."""

    def __init__(self) -> None:
        try:
            import hatesonar
            import onnx
            import onnxruntime
            from onnx import helper
        except ImportError as exc:
            raise FairtalkError(_MSG_MISSING) from exc
        model = onnx.load(str(Path(hatesonar.__file__).parent / "model" / "model.onnx"))
        for node in model.graph.node:
            if node.op_type == "StringNormalizer" and not any(a.name == "locale" for a in node.attribute):
                node.attribute.append(helper.make_attribute("locale", "C.UTF-8"))
        self._session: Any = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """P(hate speech) + P(offensive language) for each text, in order."""
        if not texts:
            return np.zeros(0, dtype=np.float64)
        _, probs = self._session.run(None, {"text": np.array(list(texts), dtype=object)})
        return np.array([sum(float(p[k]) for k in _OFFENSIVE_CLASSES) for p in probs], dtype=np.float64)
