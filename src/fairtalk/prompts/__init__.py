"""Paper 004 (Aggarwal et al. 2022): bias measured on completions of syntactically diverse demographic prompts.

Modules, one concept each:

- :mod:`~fairtalk.prompts.templates`: Sheng et al.'s 10 verb phrases x groups, groups files;
- :mod:`~fairtalk.prompts.paraphrase`: the rule-based paraphraser (49 structures in 43 parse shapes) and model paraphrasers;
- :mod:`~fairtalk.prompts.aesop`: import of precomputed AESOP paraphrases;
- :mod:`~fairtalk.prompts.sources`: the prompt set of a run from one paraphrase source (:func:`paraphrase_prompts`);
- :mod:`~fairtalk.prompts.filters`: quality filters with counts;
- :mod:`~fairtalk.prompts.data`: labelled completions as one record (:class:`PromptData`), whichever reader;
- :mod:`~fairtalk.prompts.published`: import of the published labelled outputs;
- :mod:`~fairtalk.prompts.completions`: generation through the run store, completions JSONL, labelling;
- :mod:`~fairtalk.prompts.labelling`: the labelling policy and :func:`analyze_prompts`, the analysis entry point;
- :mod:`~fairtalk.prompts.analysis`: per-group, pairwise (gaps, KL) and per-structure analysis, one function per table;
- :mod:`~fairtalk.prompts.result`: :class:`PromptAnalysis` and its read-only records;
- :mod:`~fairtalk.prompts.robustness`: §7 cosine robustness and the variance decomposition;
- :mod:`~fairtalk.prompts.output` and :mod:`~fairtalk.prompts.plots`: results.json, CSV, HTML.

Names load on first use (numpy, pandas and matplotlib stay unimported until needed).
"""

from fairtalk.lazy import lazy_names as _lazy_names

_LAZY: dict[str, str] = {
    "TEMPLATES": "templates",
    "DEFAULT_GROUPS": "templates",
    "DEFAULT_PAIRS": "templates",
    "GroupPair": "templates",
    "GroupSet": "templates",
    "Prompt": "templates",
    "Template": "templates",
    "build_prompts": "templates",
    "default_groups": "templates",
    "load_groups": "templates",
    "STRUCTURES": "paraphrase",
    "ModelParaphraser": "paraphrase",
    "paraphrase": "paraphrase",
    "read_aesop": "aesop",
    "FilterResult": "filters",
    "filter_prompts": "filters",
    "mentions_group": "filters",
    "PublishedImport": "published",
    "DataSummary": "data",
    "PromptData": "data",
    "read_published": "published",
    "PromptAnalysis": "result",
    "AnalysisConfig": "result",
    "AnalysisCounts": "result",
    "Gap": "result",
    "InferenceSettings": "result",
    "NullRobustness": "result",
    "RegardStats": "result",
    "Robustness": "result",
    "Spread": "result",
    "VarianceShares": "result",
    "analyze": "analysis",
    "kl_matrix": "analysis",
    "write_prompts_report": "output",
    "CompletionSummary": "completions",
    "generate_completions": "completions",
    "label_completions": "completions",
    "read_completions": "completions",
    "PromptSet": "sources",
    "make_prompts": "sources",
    "paraphrase_prompts": "sources",
    "analyze_prompts": "labelling",
    "label_missing": "labelling",
}

__all__ = [
    "AnalysisConfig",
    "AnalysisCounts",
    "DEFAULT_GROUPS",
    "DEFAULT_PAIRS",
    "STRUCTURES",
    "TEMPLATES",
    "CompletionSummary",
    "DataSummary",
    "FilterResult",
    "Gap",
    "GroupPair",
    "InferenceSettings",
    "GroupSet",
    "ModelParaphraser",
    "NullRobustness",
    "Prompt",
    "PromptAnalysis",
    "PromptData",
    "PromptSet",
    "PublishedImport",
    "RegardStats",
    "Robustness",
    "Spread",
    "Template",
    "VarianceShares",
    "analyze",
    "analyze_prompts",
    "build_prompts",
    "default_groups",
    "filter_prompts",
    "generate_completions",
    "kl_matrix",
    "label_completions",
    "label_missing",
    "load_groups",
    "make_prompts",
    "mentions_group",
    "paraphrase",
    "paraphrase_prompts",
    "read_aesop",
    "read_completions",
    "read_published",
    "write_prompts_report",
]


__getattr__, __dir__ = _lazy_names("fairtalk.prompts", _LAZY, globals())
