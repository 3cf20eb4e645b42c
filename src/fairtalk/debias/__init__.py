"""Debiasing: counterpart data augmentation, word-embedding regularization and pool filtering.

Names load on first use: :mod:`fairtalk.debias._wer` imports torch, so it is imported only when
:class:`EmbeddingRegularizer` is asked for.
"""

from __future__ import annotations

from fairtalk._lazy import lazy_names

#: Public names: name -> "module:attribute" (loaded lazily).
_LAZY: dict[str, str] = {
    "plant_corpus": "fairtalk.debias._planted:plant_corpus",
    "write_planted": "fairtalk.debias._planted:write_planted",
    "AugmentSummary": "fairtalk.debias._cda:AugmentSummary",
    "Augmentation": "fairtalk.debias._cda:Augmentation",
    "AugmentedDialogue": "fairtalk.debias._cda:AugmentedDialogue",
    "augment": "fairtalk.debias._cda:augment",
    "write_dialogues": "fairtalk.debias._cda:write_dialogues",
    "is_dialogues_file": "fairtalk.debias._cda:is_dialogues_file",
    "is_augmented_corpus": "fairtalk.debias._cda:is_augmented_corpus",
    "check_not_augmented": "fairtalk.debias._cda:check_not_augmented",
    "check_counterparts": "fairtalk.debias._cda:check_counterparts",
    "is_filtered_pool": "fairtalk.debias._candidate_filter:is_filtered_pool",
    "pool_lexicons": "fairtalk.debias._candidate_filter:pool_lexicons",
    "EmbeddingRegularizer": "fairtalk.debias._wer:EmbeddingRegularizer",
    "PoolFilterResult": "fairtalk.debias._candidate_filter:PoolFilterResult",
    "DROP_REASONS": "fairtalk.debias._candidate_filter:DROP_REASONS",
    "filter_pool": "fairtalk.debias._candidate_filter:filter_pool",
    "read_pool": "fairtalk.debias._candidate_filter:read_pool",
    "read_pool_lines": "fairtalk.debias._candidate_filter:read_pool_lines",
    "PoolLines": "fairtalk.debias._candidate_filter:PoolLines",
    "write_pool": "fairtalk.debias._candidate_filter:write_pool",
    "ROLE_RESOLVED": "fairtalk.debias._cda:ROLE_RESOLVED",
    "swap_dialogue": "fairtalk.debias._cda:swap_dialogue",
    "OUT_OF_VOCABULARY": "fairtalk.debias._wer:OUT_OF_VOCABULARY",
    "SAME_TOKENS": "fairtalk.debias._wer:SAME_TOKENS",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_names("fairtalk.debias", _LAZY, globals())
