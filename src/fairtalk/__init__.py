"""fairtalk: audit dialogue systems and text generators for demographic bias, and help remove it.

Heavy names (anything that imports numpy-based stages) are loaded on first use, so that
``import fairtalk`` and ``fairtalk --help`` stay fast.
"""

from importlib import import_module as _import_module
from typing import Any as _Any

from fairtalk.errors import (
    BadResponse,
    CorpusError,
    FairtalkError,
    InputError,
    LexiconError,
    OutputError,
    RateLimited,
    ResponderAborted,
    ResponderError,
    ResponderTimeout,
    SpecError,
    StoreError,
    TransportError,
)
from fairtalk.records import Context, Pair, Response, Swap

__version__ = "0.1.0"

#: Public names loaded lazily: name -> "module:attribute".
_LAZY: dict[str, str] = {
    "AttributeList": "fairtalk.lexicons:AttributeList",
    "Lexicon": "fairtalk.lexicons:Lexicon",
    "WordPair": "fairtalk.lexicons:WordPair",
    "builtin_axes": "fairtalk.lexicons:builtin_axes",
    "load_attributes": "fairtalk.lexicons:load_attributes",
    "load_lexicon": "fairtalk.lexicons:load_lexicon",
    "Corpus": "fairtalk.corpora:Corpus",
    "ReadSummary": "fairtalk.corpora:ReadSummary",
    "read_corpus": "fairtalk.corpora:read_corpus",
    "Coverage": "fairtalk.pairs:Coverage",
    "PairSet": "fairtalk.pairs:PairSet",
    "build_pairs": "fairtalk.pairs:build_pairs",
    "read_pairs": "fairtalk.pairs:read_pairs",
    "write_pairs": "fairtalk.pairs:write_pairs",
    "ResponseSet": "fairtalk.responses:ResponseSet",
    "read_responses": "fairtalk.responses:read_responses",
    "write_responses": "fairtalk.responses:write_responses",
    "jsonable": "fairtalk.jsonl:jsonable",
    "score": "fairtalk.audit:score",
    "run_audit": "fairtalk.audit:audit",
    "respond": "fairtalk.audit:respond",
    "reproduce_debias": "fairtalk.audit:reproduce_debias",
    "AuditResult": "fairtalk.results:AuditResult",
    "MeasureResult": "fairtalk.results:MeasureResult",
    "ScorerCheck": "fairtalk.results:ScorerCheck",
    "responses_from_texts": "fairtalk.responses:responses_from_texts",
    "DebiasComparison": "fairtalk.results:DebiasComparison",
    "ComparedModel": "fairtalk.results:ComparedModel",
    "Generation": "fairtalk.audit:Generation",
    "AuditRun": "fairtalk.results:AuditRun",
    "AxisRun": "fairtalk.results:AxisRun",
    "GenerationSummary": "fairtalk.results:GenerationSummary",
    "write_report": "fairtalk.report:write_report",
    "Measure": "fairtalk.measures:Measure",
    "CorpusMeasure": "fairtalk.measures:CorpusMeasure",
    "default_measures": "fairtalk.measures:default_measures",
    "get_measure": "fairtalk.measures:get_measure",
    "measure_names": "fairtalk.measures:measure_names",
    "score_unique": "fairtalk.measures:score_unique",
    "SwapResult": "fairtalk.counterfactual:SwapResult",
    "Swapper": "fairtalk.counterfactual:Swapper",
    "AugmentSummary": "fairtalk.debias.cda:AugmentSummary",
    "Augmentation": "fairtalk.debias.cda:Augmentation",
    "AugmentedDialogue": "fairtalk.debias.cda:AugmentedDialogue",
    "augment": "fairtalk.debias.cda:augment",
    "write_dialogues": "fairtalk.debias.cda:write_dialogues",
    "EmbeddingRegularizer": "fairtalk.debias.wer:EmbeddingRegularizer",
    "PoolFilterResult": "fairtalk.debias.candidate_filter:PoolFilterResult",
    "filter_pool": "fairtalk.debias.candidate_filter:filter_pool",
    "read_pool": "fairtalk.debias.candidate_filter:read_pool",
    "write_pool": "fairtalk.debias.candidate_filter:write_pool",
    "BaseResponder": "fairtalk.models:BaseResponder",
    "DecodingSettings": "fairtalk.models:DecodingSettings",
    "Responder": "fairtalk.models:Responder",
    "load_responder": "fairtalk.models:load_responder",
    "completion_options": "fairtalk.models:completion_options",
    "parse_model_args": "fairtalk.models:parse_model_args",
    "model_prefixes": "fairtalk.models:model_prefixes",
    "CachingResponder": "fairtalk.store:CachingResponder",
    "RunStore": "fairtalk.store:RunStore",
    "TrainConfig": "fairtalk.training.loops:TrainConfig",
    "TrainResult": "fairtalk.training.loops:TrainResult",
    "train_model": "fairtalk.training.loops:train_model",
    "load_checkpoint": "fairtalk.training.checkpoints:load_checkpoint",
    "Prompt": "fairtalk.prompts.templates:Prompt",
    "GroupSet": "fairtalk.prompts.templates:GroupSet",
    "build_prompts": "fairtalk.prompts.templates:build_prompts",
    "default_groups": "fairtalk.prompts.templates:default_groups",
    "load_groups": "fairtalk.prompts.templates:load_groups",
    "STRUCTURES": "fairtalk.prompts.paraphrase:STRUCTURES",
    "ModelParaphraser": "fairtalk.prompts.paraphrase:ModelParaphraser",
    "paraphrase_prompts": "fairtalk.prompts.paraphrase:paraphrase",
    "make_prompts": "fairtalk.prompts.sources:make_prompts",
    "read_aesop": "fairtalk.prompts.aesop:read_aesop",
    "filter_prompts": "fairtalk.prompts.filters:filter_prompts",
    "read_published": "fairtalk.prompts.published:read_published",
    "PromptAnalysis": "fairtalk.prompts.analysis:PromptAnalysis",
    "analyze_prompts": "fairtalk.prompts.analysis:analyze",
    "write_prompts_report": "fairtalk.prompts.output:write_prompts_report",
    "PROMPTS_REPORT_FILES": "fairtalk.prompts.output:REPORT_FILES",
    "generate_completions": "fairtalk.prompts.completions:generate_completions",
    "read_completions": "fairtalk.prompts.completions:read_completions",
    "label_completions": "fairtalk.prompts.completions:label_completions",
    "read_prompts": "fairtalk.prompts.completions:read_prompts",
    "write_prompts": "fairtalk.prompts.completions:write_prompts",
    "Regard": "fairtalk.measures.regard:Regard",
    "train_regard": "fairtalk.measures.regard_model:train_regard",
    "RegardCheck": "fairtalk.prompts.regard_check:RegardCheck",
    "certify_regard": "fairtalk.prompts.certify:certify_regard",
    "identity_terms": "fairtalk.lexicons.identity:identity_terms",
    "check_regard_labels": "fairtalk.prompts.regard_check:check_labels",
    "read_regard_labels": "fairtalk.prompts.regard_check:read_labels",
    "write_regard_labels": "fairtalk.prompts.regard_check:write_labels",
    "pairs_needed": "fairtalk.stats:pairs_needed",
}

__all__ = [
    "BadResponse",
    "Context",
    "CorpusError",
    "FairtalkError",
    "InputError",
    "LexiconError",
    "OutputError",
    "Pair",
    "RateLimited",
    "Response",
    "ResponderAborted",
    "ResponderError",
    "ResponderTimeout",
    "SpecError",
    "StoreError",
    "Swap",
    "TransportError",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> _Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'fairtalk' has no attribute {name!r}")
    module_name, _, attribute = target.partition(":")
    value = getattr(_import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
