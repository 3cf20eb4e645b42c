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
    "check_checkpoint_folder": "fairtalk.training._checkpoints:check_checkpoint_folder",
    "RankerEncoder": "fairtalk.training._decoding:RankerEncoder",
    "Seq2SeqGenerator": "fairtalk.training._decoding:Seq2SeqGenerator",
    "shipped_checkpoint": "fairtalk.training._decoding:shipped_checkpoint",
    "TrainConfig": "fairtalk.training._loops:TrainConfig",
    "train_model": "fairtalk.training._loops:train_model",
    "Checkpoint": "fairtalk.training._checkpoints:Checkpoint",
    "load_checkpoint": "fairtalk.training._checkpoints:load_checkpoint",
    "save_checkpoint": "fairtalk.training._checkpoints:save_checkpoint",
    "Vocab": "fairtalk.training._vocab:Vocab",
    "Seq2Seq": "fairtalk.training._nets:Seq2Seq",
    "TransformerRanker": "fairtalk.training._nets:TransformerRanker",
    "read_dialogues": "fairtalk.training._data:read_dialogues",
    "split_dialogues": "fairtalk.training._data:split_dialogues",
    "TrainResult": "fairtalk.training._config:TrainResult",
    "MAX_LR": "fairtalk.training._config:MAX_LR",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_names("fairtalk.training", _LAZY, globals())
