"""Paper 004 (Aggarwal et al. 2022): bias measured on completions of syntactically diverse demographic prompts.

Modules, one concept each:

- :mod:`~fairtalk.prompts._templates`: Sheng et al.'s 10 verb phrases x groups, groups files;
- :mod:`~fairtalk.prompts._paraphrase`: the rule-based paraphraser (49 structures in 43 parse shapes) and model paraphrasers;
- :mod:`~fairtalk.prompts._aesop`: import of precomputed AESOP paraphrases;
- :mod:`~fairtalk.prompts._sources`: the prompt set of a run from one paraphrase source (:func:`paraphrase_prompts`);
- :mod:`~fairtalk.prompts._filters`: quality filters with counts;
- :mod:`~fairtalk.prompts._data`: labelled completions as one record (:class:`PromptData`), whichever reader;
- :mod:`~fairtalk.prompts._published`: import of the published labelled outputs;
- :mod:`~fairtalk.prompts._completions`: generation through the run store, completions JSONL, labelling;
- :mod:`~fairtalk.prompts._options`: :class:`PromptOptions`, every analysis option, validated once;
- :mod:`~fairtalk.prompts._records`: the records the stages return (gaps, regard, robustness, the certificate);
- :mod:`~fairtalk.prompts._tables`: per-group, pairwise (gaps, KL) and per-structure tables, one function each;
- :mod:`~fairtalk.prompts._bootstrap`: the template × seed bootstrap and the significant reversals it tests;
- :mod:`~fairtalk.prompts._robustness`: §7 cosine robustness, its shuffled-labels null, the variance decomposition;
- :mod:`~fairtalk.prompts._regard_probes`: the regard scorer's certificate on neutral probes;
- :mod:`~fairtalk.prompts._regard_check`: a regard scorer against gold labels;
- :mod:`~fairtalk.prompts._coverage`: what the completions cover, and the rows the analysis keeps (:func:`analysed_rows`);
- :mod:`~fairtalk.prompts._scope`: the completions of a file the analysis keeps, which ``fairtalk label`` samples;
- :mod:`~fairtalk.prompts._gold`: human labels' prediction-powered estimates, and whose labels count as gold;
- :mod:`~fairtalk.prompts._analysis` and :mod:`~fairtalk.prompts._labelling`: the entry (:func:`analyze`,
  :func:`analyze_prompts`), the only modules here that build a result.

The result is :class:`fairtalk.results.PromptAnalysis`; its report (results.json, CSV, HTML and
figures) is :mod:`fairtalk.report._prompt_analysis`. This package follows the layer rules of a
stage (``tests/test_layers.py``). Names load on first use (numpy and pandas stay unimported until needed).
"""

from fairtalk._lazy import lazy_names as _lazy_names

_LAZY: dict[str, str] = {
    "read_prompts": "_completions",
    "write_prompts": "_completions",
    "RegardCheck": "_regard_check",
    "check_labels": "_regard_check",
    "match_predicted": "_regard_check",
    "read_labels": "_regard_check",
    "write_labels": "_regard_check",
    "is_labels_file": "_regard_check",
    "is_regard_check": "_regard_check",
    "is_prompts_file": "_completions",
    "is_completions_file": "_completions",
    "TEMPLATES": "_templates",
    "DEFAULT_GROUPS": "_templates",
    "DEFAULT_PAIRS": "_templates",
    "GroupPair": "_templates",
    "GroupSet": "_templates",
    "Prompt": "_templates",
    "Template": "_templates",
    "build_prompts": "_templates",
    "default_groups": "_templates",
    "load_groups": "_templates",
    "STRUCTURES": "_paraphrase",
    "ModelParaphraser": "_paraphrase",
    "paraphrase": "_paraphrase",
    "read_aesop": "_aesop",
    "FilterResult": "_filters",
    "filter_prompts": "_filters",
    "mentions_group": "_filters",
    "DataSummary": "_data",
    "PromptData": "_data",
    "read_published": "_published",
    "AnalysisConfig": "_records",
    "AnalysisCounts": "_records",
    "Gap": "_records",
    "InferenceSettings": "_records",
    "NullRobustness": "_records",
    "PairCertificate": "_records",
    "RegardCertificate": "_records",
    "RegardStats": "_records",
    "Robustness": "_records",
    "Spread": "_records",
    "VarianceShares": "_records",
    "PromptOptions": "_options",
    "certify_regard": "_regard_probes",
    "analyze": "_analysis",
    "kl_matrix": "_frame",
    "CompletionSummary": "_completions",
    "generate_completions": "_completions",
    "label_completions": "_completions",
    "read_completions": "_completions",
    "PromptSet": "_sources",
    "make_prompts": "_sources",
    "paraphrase_prompts": "_sources",
    "analyze_prompts": "_labelling",
    "label_missing": "_labelling",
    "template_by_phrase": "_templates",
    "robustness": "_robustness",
    "robustness_null": "_robustness",
    "variance_decomposition": "_robustness",
    "gold_regard": "_gold",
    "refuse_machine_labels": "_gold",
    "unbalanced_warning": "_coverage",
    "AnalysedRows": "_coverage",
    "analysed_rows": "_coverage",
    "AnalysedCompletions": "_scope",
    "analysed_completions": "_scope",
    "holds_completions": "_scope",
    "GoldInput": "_gold",
    "gold_input": "_gold",
    "find_published_files": "_published",
    "parse_fixed_prompt": "_aesop",
    "join_completion": "_completions",
    "FILTERS": "_filters",
}

__all__ = [
    "template_by_phrase",
    "robustness",
    "robustness_null",
    "variance_decomposition",
    "gold_regard",
    "refuse_machine_labels",
    "unbalanced_warning",
    "AnalysedRows",
    "analysed_rows",
    "AnalysedCompletions",
    "analysed_completions",
    "holds_completions",
    "GoldInput",
    "gold_input",
    "find_published_files",
    "parse_fixed_prompt",
    "join_completion",
    "FILTERS",
    "read_prompts",
    "write_prompts",
    "RegardCheck",
    "check_labels",
    "match_predicted",
    "read_labels",
    "write_labels",
    "is_completions_file",
    "is_labels_file",
    "is_prompts_file",
    "is_regard_check",
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
    "PairCertificate",
    "Prompt",
    "PromptData",
    "PromptOptions",
    "PromptSet",
    "RegardCertificate",
    "RegardStats",
    "Robustness",
    "Spread",
    "Template",
    "VarianceShares",
    "analyze",
    "analyze_prompts",
    "build_prompts",
    "certify_regard",
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
]


__getattr__, __dir__ = _lazy_names("fairtalk.prompts", _LAZY, globals())
