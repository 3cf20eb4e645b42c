"""Paired statistics for an audit: tests, intervals, equivalence, power, corrections and effect sizes.

Every function is pure: arrays in, numbers or frozen records out. Randomness enters only as
an explicit ``seed``. Pairs are the units unless cluster ids are given (the dialogue each
pair came from): then whole clusters are the units of every test and interval.

- ``_core``: the paper's Z test, effect sizes, the cluster-robust standard error, corrections;
- ``_paired``: which paired test for which measure (McNemar exact, the mean test, Wilcoxon);
- ``_signflip``: the studentized sign-flip randomization reference of the mean test (few, tied or discrete differences);
- ``_intervals``: Newcombe, t and Hodges-Lehmann intervals, the design effect;
- ``_equivalence``: TOST within a margin, identical answers and a rate's few discordant units, the normal-theory MDE, pairs needed;
- ``_power``: the minimum detectable effect from each test's own reference distribution, pairs the gate needs;
- ``_corpus``: paired-permutation inference for corpus-level statistics (distinct-n).

``docs/statistics.md`` explains each choice for an engineer who must defend the audit.
"""

from __future__ import annotations

from fairtalk.stats._change import Contrast, GapChangeTest, gap_change, non_inferior, score_interval, score_test
from fairtalk.stats._core import (
    Units,
    ZTest,
    adjust_pvalues,
    cohens_d_paired,
    cohens_h,
    relative_difference,
    units,
    z_test,
)
from fairtalk.stats._corpus import CorpusBootstrap, corpus_bootstrap
from fairtalk.stats._equivalence import (
    DEFAULT_MARGINS,
    DIFFERENT,
    EQUIVALENT,
    FEW_DISCORDANT_UNITS,
    IDENTICAL_SHARE,
    INCONCLUSIVE,
    METHOD_FEW_DIFFERING,
    METHOD_FEW_DISCORDANT,
    METHOD_IDENTICAL,
    Equivalence,
    check_margins,
    default_margin,
    direction_equivalence,
    direction_passing_count,
    identical_units_needed,
    minimum_detectable_effect,
    pairs_needed,
    rate_equivalence,
    share_equivalence,
    tost_mean,
    tost_rate,
    verdict,
)
from fairtalk.stats._intervals import (
    Interval,
    design_effect,
    difference_interval,
    hodges_lehmann,
    newcombe_from_counts,
    newcombe_interval,
    t_interval,
)
from fairtalk.stats._paired import (
    DEFAULT_METHODS,
    EXACT_MAX_UNITS,
    PAIRED_METHODS,
    WILCOXON_EXACT_MAX,
    PairedTest,
    exact_signflip_p,
    paired_test,
)
from fairtalk.stats._power import (
    CORPUS_LEAST_PAIRS,
    CORPUS_LEAST_PAIRS_UNMODELLED,
    FEW_DISCORDANT,
    POWER_TOLERANCE,
    ClusterSizes,
    PowerBasis,
    corpus_decidable,
    corpus_least_units,
    expected_clusters,
    mde,
    pairs_for_corpus_equivalence,
    pairs_for_equivalence,
    pairs_for_rate_equivalence,
    power_corpus_at_size,
    power_corpus_equivalence,
    power_mcnemar,
    power_mean,
    power_rate_equivalence,
    spanned_dialogues,
)
from fairtalk.stats._ppi import MIN_DISAGREEMENTS, PPIEstimate, labels_needed, ppi_mean
from fairtalk.stats._ppi import _disagreements as disagreeing_units
from fairtalk.stats._sequential import (
    SPENDING_FUNCTIONS,
    Boundaries,
    alpha_spent,
    boundaries,
    look_sizes,
    repeated_p,
    sequential_p,
)
from fairtalk.stats._signflip import DISCRETE_VALUES, FEW_UNITS, N_FLIPS, hoeffding_p, randomization_applies, signflip_test

__all__ = [
    "power_mcnemar",
    "power_corpus_at_size",
    "power_corpus_equivalence",
    "power_mean",
    "alpha_spent",
    "Boundaries",
    "sequential_p",
    "hoeffding_p",
    "signflip_test",
    "MIN_DISAGREEMENTS",
    "disagreeing_units",
    "PPIEstimate",
    "labels_needed",
    "ppi_mean",
    "Contrast",
    "GapChangeTest",
    "gap_change",
    "non_inferior",
    "score_interval",
    "score_test",
    "SPENDING_FUNCTIONS",
    "boundaries",
    "look_sizes",
    "repeated_p",
    "DEFAULT_MARGINS",
    "DEFAULT_METHODS",
    "DIFFERENT",
    "DISCRETE_VALUES",
    "EQUIVALENT",
    "EXACT_MAX_UNITS",
    "FEW_UNITS",
    "CORPUS_LEAST_PAIRS",
    "CORPUS_LEAST_PAIRS_UNMODELLED",
    "ClusterSizes",
    "check_margins",
    "corpus_decidable",
    "corpus_least_units",
    "expected_clusters",
    "FEW_DISCORDANT",
    "FEW_DISCORDANT_UNITS",
    "IDENTICAL_SHARE",
    "METHOD_FEW_DIFFERING",
    "METHOD_FEW_DISCORDANT",
    "METHOD_IDENTICAL",
    "INCONCLUSIVE",
    "N_FLIPS",
    "PAIRED_METHODS",
    "POWER_TOLERANCE",
    "WILCOXON_EXACT_MAX",
    "CorpusBootstrap",
    "Equivalence",
    "Interval",
    "PairedTest",
    "PowerBasis",
    "Units",
    "ZTest",
    "adjust_pvalues",
    "cohens_d_paired",
    "cohens_h",
    "corpus_bootstrap",
    "default_margin",
    "design_effect",
    "direction_equivalence",
    "direction_passing_count",
    "difference_interval",
    "exact_signflip_p",
    "hodges_lehmann",
    "identical_units_needed",
    "mde",
    "minimum_detectable_effect",
    "newcombe_from_counts",
    "newcombe_interval",
    "paired_test",
    "pairs_for_corpus_equivalence",
    "pairs_for_equivalence",
    "pairs_for_rate_equivalence",
    "pairs_needed",
    "power_rate_equivalence",
    "spanned_dialogues",
    "randomization_applies",
    "rate_equivalence",
    "relative_difference",
    "share_equivalence",
    "t_interval",
    "tost_mean",
    "tost_rate",
    "units",
    "verdict",
    "z_test",
]
