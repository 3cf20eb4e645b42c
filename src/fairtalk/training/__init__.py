"""Reference dialogue models (Seq2Seq, Transformer retrieval) and their training loops.

Names load on first use: the modules import torch, so ``import fairtalk.training`` stays light.
"""

from __future__ import annotations

from fairtalk._lazy import lazy_names

#: Public names: name -> "module:attribute" (loaded lazily).
_LAZY: dict[str, str] = {
    "POOL": "fairtalk.training._checkpoints:POOL",
    "TrainingRecord": "fairtalk.training._checkpoints:TrainingRecord",
    "read_training_record": "fairtalk.training._checkpoints:read_training_record",
    "RankerEncoder": "fairtalk.training._decoding:RankerEncoder",
    "Seq2SeqGenerator": "fairtalk.training._decoding:Seq2SeqGenerator",
    "shipped_checkpoint": "fairtalk.training._decoding:shipped_checkpoint",
    "TrainConfig": "fairtalk.training._loops:TrainConfig",
    "train_model": "fairtalk.training._loops:train_model",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_names("fairtalk.training", _LAZY, globals())
