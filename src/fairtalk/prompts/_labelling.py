"""The labelling policy of a prompts analysis: whose labels count, which scorer fills or doubles them, and its certificate.

Labels that came with the data (the published outputs, a labelled completions file) are the
main ones. Rows without a label are labelled with the chosen regard scorer, its identity terms
masked (:func:`~fairtalk.prompts._completions.label_completions`); with ``relabel`` every row is
labelled a second time with that scorer and analysed beside the given labels. Whenever the
scorer labelled anything, it is certified on neutral probes
(:func:`~fairtalk.prompts._regard_probes.certify_regard`), so that a gap the scorer makes by itself
shows. Empty and echoing completions, and records without a text, were already left out by
the reader (counted in the data summary); the ones without a text are also named among the
analysis' warnings, which the report and the CLI show, as is a published import whose alignment
could be checked on the original prompts' rows only. With :mod:`fairtalk.prompts._analysis`, the
entry of ``prompts/`` that wires stages (scorers, labelling, the analysis) into a result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import pandas as pd

from fairtalk.lexicons import identity_terms
from fairtalk.measures import Regard
from fairtalk.models import RayEngine, resolve_engine
from fairtalk.progress import ProgressCallback, progress_callback
from fairtalk.prompts._analysis import analyze
from fairtalk.prompts._completions import label_completions
from fairtalk.prompts._coverage import analysed_rows
from fairtalk.prompts._data import PromptData
from fairtalk.prompts._gold import CLUSTERS, GoldFile, check_texts, check_usable, gold_input, gold_regard
from fairtalk.prompts._options import PromptOptions
from fairtalk.prompts._published import alignment_warning
from fairtalk.prompts._regard_probes import certify_regard
from fairtalk.prompts._templates import GroupSet, default_groups
from fairtalk.results import PromptAnalysis

__all__ = ["analyze_prompts", "label_missing"]

_MSG_NO_TEXT = '{n:,} completions with no text (a null or empty "text") were left out: nothing to label'


def _scorer(regard: str) -> Regard | None:
    """The regard measure of a scorer spec (None: the shipped classifier, masked for the frame's groups)."""
    return None if regard == "builtin" else Regard(scorer=regard)


def label_missing(
    data: PromptData,
    *,
    regard: str = "builtin",
    progress: ProgressCallback | None = None,
    engine: str | RayEngine | Mapping[str, object] | None = None,
) -> PromptData:
    """``data`` with its unlabelled rows (label -9) labelled by the ``regard`` scorer; as is when none lacks a label.

    The summary's ``labelled_with`` names the scorer when it labelled anything. With a Ray
    ``engine`` a large set is labelled in batches of Ray tasks (see :func:`label_completions`).
    """
    if not data.data_summary.n_unlabelled:
        return data
    frame = label_completions(data.frame, _scorer(regard), only_missing=True, progress=progress, engine=resolve_engine(engine))
    return data.with_frame(frame, labelled_with=regard)


def analyze_prompts(
    data: PromptData | pd.DataFrame,
    *,
    groups: GroupSet | None = None,
    options: PromptOptions | None = None,
    regard: str = "builtin",
    relabel: bool = False,
    include_other: bool = False,
    smoothing: float = 1e-6,
    n_best: int = 5,
    seed: int = 0,
    n_sampled: int = 10,
    n_draws: int = 100,
    alpha: float = 0.05,
    n_resamples: int = 1000,
    balanced_only: bool = False,
    progress: ProgressCallback | None = None,
    engine: str | RayEngine | Mapping[str, object] | None = None,
    gold: Mapping[str, Sequence[object]] | GoldFile | None = None,
    gold_source: str = "",
    gold_texts: Sequence[tuple[str, str]] = (),
) -> PromptAnalysis:
    """Label what lacks a label, certify the scorer that labelled, and analyse (paper 004, §4, §5, §7).

    Parameters
    ----------
    data : PromptData or DataFrame
        What :func:`fairtalk.prompts.read_published` or :func:`fairtalk.prompts.read_completions`
        returned, or a labelled frame.
    groups : GroupSet, optional
        Groups and pairs; default: the six groups and three pairs of the paper.
    options : PromptOptions, optional
        Every option below (``regard`` to ``n_resamples``) in one validated value; then leave
        those keywords at their defaults.
    regard : str
        The regard scorer for unlabelled rows and for ``relabel``: ``builtin``, ``path:DIR`` or ``hf:MODEL``.
    relabel : bool
        Also label every row with ``regard`` and analyse those labels beside the given ones
        (``relabelled`` in the result; the given labels stay the main ones).
    include_other, smoothing, n_best, seed, n_sampled, n_draws, alpha, n_resamples, balanced_only
        As for :class:`~fairtalk.prompts._options.PromptOptions` (validated once, there).
        ``balanced_only`` leaves out the template × structure cells that lack a group, for the
        labelled estimates too (:func:`~fairtalk.prompts._coverage.analysed_rows`).
    progress : callable, optional
        Receives :class:`~fairtalk.progress.ProgressEvent` values while texts are labelled.
    engine : {"local", "ray"}, RayEngine or mapping, optional
        Where the regard scorer labels: with ``"ray"``, sets of at least two ``score_batch``
        texts are labelled in batches of Ray tasks (the same labels; the certificate's probes
        stay in this process).
    gold : Gold, mapping, optional
        Human regard labels of a sample of the completions: a ``fairtalk label`` gold file as
        :func:`fairtalk.gold.read_gold` returns it, its ``regard_labels()``, or a mapping id ->
        the labels its annotators gave. Each group's mean regard and label shares and each
        pair's gap then also get a prediction-powered estimate
        (:func:`~fairtalk.prompts._gold.gold_regard`; ``gold`` in the result, ``gold_source``
        naming the file: by default the file read). Labels read from a file that fairtalk's own
        scorer wrote (``fairtalk regard label``) are refused, as ``prompts analyze --gold``
        refuses them (:func:`~fairtalk.prompts._gold.gold_input`); a plain mapping names no
        annotator, and is taken as a person's labels.
    gold_texts : sequence of (id, text), optional
        The texts the labels were given on (by default those the gold file read keeps,
        :meth:`fairtalk.gold.Gold.texts`): a labelled id whose completion holds another text is
        an error, not a silent join.

    Returns
    -------
    PromptAnalysis
        The analysis, holding its ``data_summary`` (what was read, left out and how it was
        labelled), the labelled ``frame``, ``relabelled`` and the scorer's ``scorer_check``
        (None when no scorer labelled anything).

    Raises
    ------
    InputError
        Data the analysis cannot use (see :func:`~fairtalk.prompts._analysis.analyze`), ``gold``
        for completions without ids (the published outputs), ``gold`` read from a file that
        holds fairtalk's own machine labels, ``gold_texts`` that are not the
        labelled completions' texts, or ``gold`` with no label of regard's four on an analysed completion.
    SpecError
        An unknown regard scorer, or an option out of its range (``alpha=7``, ``n_draws=-3``).

    Examples
    --------
    >>> import pandas as pd
    >>> from fairtalk.prompts._templates import GroupPair, GroupSet
    >>> rows = pd.DataFrame([{"group": g, "template": "t", "structure": s, "seed": k, "label": (k % 3) - 1}
    ...                      for g in ("a", "b") for s in ("original", "x") for k in range(6)])
    >>> result = analyze_prompts(rows, groups=GroupSet(("a", "b"), (GroupPair("ab", "a", "b"),)),
    ...                          n_draws=2, n_resamples=0)
    >>> result.regard["a"].n, result.data_summary.source, result.scorer_check is None
    (12, 'frame', True)
    """
    o = PromptOptions.resolve(
        options,
        regard=regard,
        relabel=relabel,
        include_other=include_other,
        smoothing=smoothing,
        n_best=n_best,
        seed=seed,
        n_sampled=n_sampled,
        n_draws=n_draws,
        alpha=alpha,
        n_resamples=n_resamples,
        balanced_only=balanced_only,
    )
    # a machine's labels read from a file: refused before anything else
    given = None if gold is None else gold_input(gold, texts=gold_texts, source=gold_source)
    if isinstance(data, pd.DataFrame):
        data = PromptData.from_frame(data)
    if given is not None and "id" in data.frame.columns:  # before the scorer labels anything: labels of other texts fail now
        check_texts(data.frame, given.texts, given.source or None)
        check_usable(data.frame["id"].astype(str).tolist(), given.labels, given.source or None)  # none of regard's four
    group_set = groups or default_groups()
    progress = progress_callback(progress)
    ray = resolve_engine(engine)
    data = label_missing(data, regard=o.regard, progress=progress, engine=ray)
    certificate = None
    if o.relabel or data.data_summary.labelled_with is not None:  # the scorer that labelled is here: certify it
        checker = Regard(scorer=o.regard, mask_terms=identity_terms(group_set.groups))
        certificate = certify_regard(checker.labels, group_set, alpha=o.alpha)
    parses = dict(data.parses)
    result = analyze(data.frame, groups=group_set, options=o, parses=parses)
    relabelled = None
    if o.relabel:
        relabelled = analyze(
            label_completions(data.frame, _scorer(o.regard), progress=progress, engine=ray),
            groups=group_set,
            options=o,
            parses=parses,
        )
        data = data.with_frame(data.frame, relabelled_with=o.regard)
    n_no_text = data.data_summary.excluded.get("no_text", 0)
    partial_check = alignment_warning(data.data_summary)
    warnings = ((_MSG_NO_TEXT.format(n=n_no_text),) if n_no_text else ()) + ((partial_check,) if partial_check else ())
    result = dataclasses.replace(
        result,
        data_summary=data.data_summary,
        frame=data.frame,
        relabelled=relabelled,
        relabelled_with=o.regard if o.relabel else None,
        scorer_check=certificate,
        warnings=warnings + result.warnings,
    )
    if given is None:
        return result
    analysed = analysed_rows(data.frame, result.groups, balanced_only=o.balanced_only)  # the cells the analysis kept
    found = gold_regard(
        data.frame[~analysed.unbalanced],
        given.labels,
        groups=result.groups,
        pairs=result.pairs,
        include_other=o.include_other,
        texts=given.texts,
        source=given.source or None,
    )
    return result.with_gold(
        source=given.source,
        n_labels=found.n_labels,
        clusters=CLUSTERS,
        regard=found.regard,
        rates=found.rates,
        gaps=found.gaps,
        warnings=found.warnings,
    )
