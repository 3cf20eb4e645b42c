"""Where an axis' pairs and answers came from, one line each in ``report.md``, ``report.html`` and the console.

* the pairs: ``corpus c.txt: 23 contexts read, 23 mention a group (19 duplicate contexts dropped,
  1 mixed (both groups) dropped), 3 pairs taken``, the corpus lines the reader skipped, by reason
  (:func:`skipped_note`), and ``asked for 50 pairs; the corpus gave 10`` when the corpus gave
  fewer than asked (flagged); from the audit's coverage (``audit.coverage``);
* the answers: ``answers: 160 generated, 40 from the run store ../store.sqlite, 0 failed``, from the run's
  generation summary (``run.json``: :attr:`AxisRun.generation <fairtalk.results.AxisRun>`, and the
  run's store, named as the page reaches it: :func:`store_for_page`), which ``write_run`` hands to
  the pages: it varies between runs, so ``results.json``, the same for a run and its rerun, does not hold it.

A result scored from responses made elsewhere (``fairtalk score``) has neither line: its pages are
titled ``fairtalk score`` (:func:`report_title`) and name the responses file it read with the start
of its sha256, from the result's manifest (``input.sources``): ``scored from resp.jsonl (sha256
00e66d19253d…)`` (:func:`source_line`).
"""

from __future__ import annotations

import os
from pathlib import Path

from fairtalk.records import Coverage
from fairtalk.results import AuditResult, GenerationSummary

__all__ = [
    "answers_line",
    "corpus_line",
    "coverage_of",
    "report_title",
    "result_corpus",
    "skipped_note",
    "source_line",
    "store_for_page",
]

#: The reader's reasons are its own words; a reason that names a part left out (``system messages (left out; ...)``,
#: ``reply: missing ...``) kept its line without that part, as the console says (``kept N corpus line(s) without a
#: part``), which this layer cannot tell apart from a skip without the corpus reader's rule, so the note says both.
_SKIPPED_NOTE = "corpus lines skipped (or, where the reason names a part, kept without it): {items}"


#: How many hex digits of a responses file's sha256 a page shows (the whole is in results.json's manifest).
_SHORT_SHA = 12


def report_title(result: AuditResult) -> str:
    """The command a result's pages are titled by: ``fairtalk score`` for responses scored as given, else ``fairtalk audit``.

    A result records the responses it read (``input``) and, where an audit generated them, the
    audit (``audit``); one without either (built in Python, or an older file) keeps the audit's title.
    """
    provenance = result.provenance
    return "fairtalk score" if provenance.audit is None and provenance.input is not None else "fairtalk audit"


def source_line(result: AuditResult) -> str | None:
    """The responses files a result was scored from, as given, each with the start of its sha256; None: none recorded.

    Examples
    --------
    >>> from fairtalk.results import InputProvenance, Provenance, SourceRecord
    >>> read = InputProvenance(sources=(SourceRecord("resp.jsonl", "00e66d19253d3d7f0eab139ec4fa1f89"),))
    >>> source_line(AuditResult("gender", ("male", "female"), 100, (), provenance=Provenance(input=read)))
    'scored from resp.jsonl (sha256 00e66d19253d…)'
    """
    read = result.provenance.input
    sources = [s for s in (read.sources or ()) if s.path is not None] if read is not None else []
    if not sources:
        return None
    named = [f"{s.path} (sha256 {s.sha256[:_SHORT_SHA]}…)" if s.sha256 else s.path for s in sources]
    return "scored from " + " and ".join(str(n) for n in named)


def coverage_of(result: AuditResult) -> Coverage | None:
    """The coverage of the pairs stage an audit recorded (None: no audit, or a file without one)."""
    audit = result.provenance.audit
    if audit is None or not audit.coverage:
        return None
    try:
        return Coverage.from_dict(audit.coverage)
    except (KeyError, TypeError, ValueError):  # a hand-edited or older file: no line rather than a wrong one
        return None


def skipped_note(coverage: Coverage) -> str | None:
    """The corpus lines the reader skipped (or kept without a part), by reason; None: none.

    Briefly: where each reason first occurred is in the console's lines and ``results.json``
    (``manifest.audit.coverage.skipped_first``).

    Examples
    --------
    >>> cov = Coverage("gender", ("male", "female"), 5, 5, {"male": 5}, 0, 0, 5, (), skipped=(("malformed JSON", 10),))
    >>> skipped_note(cov)
    'corpus lines skipped (or, where the reason names a part, kept without it): 10 malformed JSON'
    """
    if not coverage.skipped:
        return None
    return _SKIPPED_NOTE.format(items="; ".join(f"{n:,} {reason}" for reason, n in coverage.skipped))


def corpus_line(coverage: Coverage, corpus: str | None = None, *, sequential: bool = False) -> tuple[str, bool]:
    """What the corpus gave: contexts read, those that mention a group, those dropped, the pairs taken; flagged when short.

    ``sequential``: an ``--until-decided`` audit, whose looks take the pairs they need (no shortfall is said).

    Examples
    --------
    >>> cov = Coverage("gender", ("male", "female"), 23, 23, {"male": 2, "female": 1}, 1, 19, 3, (), limit=50)
    >>> corpus_line(cov, "c.txt")
    ('corpus c.txt: 23 contexts read, 23 mention a group (19 duplicate contexts dropped, 1 mixed (both groups) dropped), 3 pairs taken; asked for 50 pairs; the corpus gave 3', True)
    >>> skips = Coverage("gender", ("male", "female"), 5, 5, {"male": 5}, 0, 0, 5, (), skipped=(("empty line", 2),), skipped_first=(("empty line", "c.jsonl:4"),))
    >>> corpus_line(skips, "c.jsonl")
    ('corpus c.jsonl: 5 contexts read, 5 mention a group, 5 pairs taken; corpus lines skipped (or, where the reason names a part, kept without it): 2 empty line', False)
    """
    dropped = coverage.dropped_note()
    line = (
        f"corpus{'' if corpus is None else ' ' + corpus}: {coverage.n_read:,} contexts read, {coverage.n_matched:,} "
        f"mention a group{'' if dropped is None else f' ({dropped})'}, {coverage.n_pairs:,} pairs taken"
    )
    if (skipped := skipped_note(coverage)) is not None:
        line = f"{line}; {skipped}"
    short = None if sequential else coverage.shortfall()
    return (line, False) if short is None else (f"{line}; {short}", True)


def result_corpus(result: AuditResult) -> tuple[str, bool] | None:
    """:func:`corpus_line` of one axis' result (None for a result no audit generated)."""
    coverage = coverage_of(result)
    if coverage is None:
        return None
    audit = result.provenance.audit
    return corpus_line(coverage, None if audit is None else audit.corpus, sequential=result.provenance.sequential is not None)


def answers_line(generation: GenerationSummary, store: str | None) -> str:
    """Where an axis' answers (pair sides) came from: generated now, served by the run ``store`` (None: none kept), failed.

    ``store`` as the page names it (:func:`store_for_page`).

    Examples
    --------
    >>> summary = GenerationSummary("m", {}, 200, 40, 160, 0, 100, 0)
    >>> answers_line(summary, "../st.sqlite")
    'answers: 160 generated, 40 from the run store ../st.sqlite, 0 failed'
    >>> answers_line(summary, None)
    'answers: 160 generated, 0 failed; no run store file kept them'
    """
    n_generated, n_cached, n_errors = generation.n_generated, generation.n_cached, generation.n_errors
    if store is None or store in ("", ":memory:"):
        return f"answers: {n_generated:,} generated, {n_errors:,} failed; no run store file kept them"
    return f"answers: {n_generated:,} generated, {n_cached:,} from the run store {store}, {n_errors:,} failed"


def store_for_page(store: str | None, page_folder: Path) -> str | None:
    """The run ``store`` as a page in ``page_folder`` names it: its path from there.

    The run records the store as it was given (``run.json``: absolute, or relative to the shell's
    folder); a page names it from where the page lies, so that the name holds wherever the run's
    folder (with its store) is moved or shared, and no absolute path is in the page. None, ``""``
    and ``":memory:"`` (no file) come back as given; a store on another drive (Windows), to which
    no relative path leads, by its file name.

    Examples
    --------
    >>> store_for_page("/tmp/run/store.sqlite", Path("/tmp/run/gender"))
    '../store.sqlite'
    """
    if store is None or store in ("", ":memory:"):
        return store
    path = Path(store).resolve()
    try:
        return Path(os.path.relpath(path, page_folder.resolve())).as_posix()
    except ValueError:  # another drive
        return path.name
