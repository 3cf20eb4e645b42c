"""Debiasing: counterpart data augmentation, word-embedding regularization and pool filtering.

Names load on first use: :mod:`fairtalk.debias.wer` imports torch, so it is imported only when
:class:`EmbeddingRegularizer` is asked for.
"""

from __future__ import annotations

from fairtalk.lazy import lazy_names

#: Public names: name -> "module:attribute" (loaded lazily).
_LAZY: dict[str, str] = {
    "AugmentSummary": "fairtalk.debias.cda:AugmentSummary",
    "Augmentation": "fairtalk.debias.cda:Augmentation",
    "AugmentedDialogue": "fairtalk.debias.cda:AugmentedDialogue",
    "augment": "fairtalk.debias.cda:augment",
    "write_dialogues": "fairtalk.debias.cda:write_dialogues",
    "EmbeddingRegularizer": "fairtalk.debias.wer:EmbeddingRegularizer",
    "PoolFilterResult": "fairtalk.debias.candidate_filter:PoolFilterResult",
    "DROP_REASONS": "fairtalk.debias.candidate_filter:DROP_REASONS",
    "filter_pool": "fairtalk.debias.candidate_filter:filter_pool",
    "read_pool": "fairtalk.debias.candidate_filter:read_pool",
    "write_pool": "fairtalk.debias.candidate_filter:write_pool",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_names("fairtalk.debias", _LAZY, globals())
