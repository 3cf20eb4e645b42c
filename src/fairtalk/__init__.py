"""fairtalk: audit dialogue systems and text generators for demographic bias, and help remove it.

The names here are what a user needs first: the errors to catch, the records, the stages
(``audit``, ``score``, ``respond``, ``similarity_test``, paper 004's ``analyze_prompts``) with
their options and results, and the readers and writers between them. Everything else lives in
a documented submodule and is listed in its ``__all__``:

- :mod:`fairtalk.errors`: the whole exception tree (``TransportError``, ``RateLimited``, ...);
- :mod:`fairtalk.records`: ``Swap``, ``TURN_SEPARATOR``, ``chat_messages``, the role marks;
- :mod:`fairtalk.lexicons`: axes and word lists (``builtin_axes``, ``expand_axis``, ``load_attributes``);
- :mod:`fairtalk.corpora`, :mod:`fairtalk.counterfactual`, :mod:`fairtalk.pairs`, :mod:`fairtalk._responses`;
- :mod:`fairtalk.models`: adapters and specs (``RayEngine``, ``parse_model_args``, ``register_model``);
- :mod:`fairtalk.store`: the run store and ``CachingResponder``;
- :mod:`fairtalk.measures`: the measures and their registry (``measure_names``, ``score_unique``);
- :mod:`fairtalk.stats`: paired tests, intervals, equivalence, power;
- :mod:`fairtalk.config`, :mod:`fairtalk.run`, :mod:`fairtalk.compare`: the options, the stages wired, two runs compared;
- :mod:`fairtalk.gates`: the release gates, decided once; :mod:`fairtalk.results`, :mod:`fairtalk.report`: the records, the files;
- :mod:`fairtalk.debias`, :mod:`fairtalk.training`: CDA, WER, pool filtering; the reference models;
- :mod:`fairtalk.prompts`: paper 004's stages (templates, paraphrases, completions, regard checks);
- :mod:`fairtalk.progress`: ``ProgressEvent`` and the progress-callback type.

Every name here loads on first use, so that ``import fairtalk`` and ``fairtalk --help`` stay
fast. ``_LAZY`` is the one list of them: ``__init__.pyi`` is generated from it
(``python tools/write_stub.py``; ``tests/test_public_api.py`` checks it is current).
"""

from fairtalk._lazy import lazy_names as _lazy_names
from fairtalk._version import __version__

#: The public names, loaded lazily: name -> "module:attribute" (the module that defines it).
_LAZY: dict[str, str] = {
    # errors and records
    "FairtalkError": "fairtalk.errors:FairtalkError",
    "SpecError": "fairtalk.errors:SpecError",
    "InputError": "fairtalk.errors:InputError",
    "CorpusError": "fairtalk.errors:CorpusError",
    "ResponderError": "fairtalk.errors:ResponderError",
    "OutputError": "fairtalk.errors:OutputError",
    "Context": "fairtalk.records:Context",
    "Pair": "fairtalk.records:Pair",
    "Response": "fairtalk.records:Response",
    "join_turns": "fairtalk.records:join_turns",
    "split_turns": "fairtalk.records:split_turns",
    # the stages of paper 001, their options and results
    "audit": "fairtalk.pipeline:audit",
    "score": "fairtalk.pipeline:score",
    "respond": "fairtalk.pipeline:respond",
    "similarity_test": "fairtalk.pipeline:similarity_test",
    "compare_runs": "fairtalk.pipeline:compare_runs",
    "reproduce_debias": "fairtalk.pipeline:reproduce_debias",
    "AuditConfig": "fairtalk.pipeline:AuditConfig",
    "ScoreOptions": "fairtalk.pipeline:ScoreOptions",
    "AuditResult": "fairtalk.results:AuditResult",
    "AuditRun": "fairtalk.results:AuditRun",
    "SimilarityResult": "fairtalk.results:SimilarityResult",
    "ModelComparison": "fairtalk.results:ModelComparison",
    "DebiasComparison": "fairtalk.results:DebiasComparison",
    "Verdict": "fairtalk.results:Verdict",
    "write_report": "fairtalk.report:write_report",
    "pairs_needed": "fairtalk.stats:pairs_needed",
    # corpora, pairs and responses
    "read_corpus": "fairtalk.corpora:read_corpus",
    "Coverage": "fairtalk.pairs:Coverage",
    "PairsCheck": "fairtalk.pairs:PairsCheck",
    "build_pairs": "fairtalk.pairs:build_pairs",
    "check_pairs": "fairtalk.pairs:check_pairs",
    "read_pairs": "fairtalk.pairs:read_pairs",
    "write_pairs": "fairtalk.pairs:write_pairs",
    "read_responses": "fairtalk._responses:read_responses",
    "write_responses": "fairtalk._responses:write_responses",
    "responses_from_texts": "fairtalk._responses:responses_from_texts",
    # axes and the swapper
    "Lexicon": "fairtalk.lexicons:Lexicon",
    "load_lexicon": "fairtalk.lexicons:load_lexicon",
    "axis_names": "fairtalk.lexicons:axis_names",
    "Swapper": "fairtalk.counterfactual:Swapper",
    # models and the run store
    "Responder": "fairtalk.models:Responder",
    "DecodingSettings": "fairtalk.models:DecodingSettings",
    "load_responder": "fairtalk.models:load_responder",
    "RunStore": "fairtalk.store:RunStore",
    # measures
    "Measure": "fairtalk.measures:Measure",
    "CorpusMeasure": "fairtalk.measures:CorpusMeasure",
    "get_measure": "fairtalk.measures:get_measure",
    "default_measures": "fairtalk.measures:default_measures",
    "Regard": "fairtalk.measures._regard:Regard",
    # debiasing and the reference models
    "augment": "fairtalk.debias._cda:augment",
    "TrainConfig": "fairtalk.training._config:TrainConfig",
    "train_model": "fairtalk.training._loops:train_model",
    # paper 004
    "build_prompts": "fairtalk.prompts._templates:build_prompts",
    "generate_completions": "fairtalk.prompts._completions:generate_completions",
    "read_published": "fairtalk.prompts._published:read_published",
    "analyze_prompts": "fairtalk.prompts._labelling:analyze_prompts",
    "PromptOptions": "fairtalk.prompts._options:PromptOptions",
    "PromptAnalysis": "fairtalk.results:PromptAnalysis",
}

__all__ = ["__version__", *_LAZY]

__getattr__, __dir__ = _lazy_names("fairtalk", _LAZY, globals())
