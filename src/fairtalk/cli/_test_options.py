"""The inference options `score` and `audit` share: tests, margins, primary measures, and the two CI gates."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import typer

from fairtalk.cli._app import check_output_file, info, junit_on_error, say
from fairtalk.options import SCORE_FIELDS

if TYPE_CHECKING:
    from fairtalk import AuditResult, Lexicon, ModelComparison, ScoreOptions
    from fairtalk.gates import Gate
    from fairtalk.report import Findings

_MSG_MARGIN = "malformed --margin {given!r} (expected MEASURE=VALUE, e.g. offense_rate=0.01)"
_MSG_MARGIN_VALUE = "--margin {name}={value!r}: the margin must be a finite number > 0"
_MSG_REPEATED = "--margin {name} is given twice"

FAIL_ON_BIAS = typer.Option(
    False, "--fail-on-bias", help="Exit 1 when any primary measure shows a difference. A difference: adjusted p < alpha."
)
JUNIT = typer.Option(
    None,
    "--junit",
    help="Also write a JUnit XML file: one testsuite per axis, one testcase per measure. A testcase fails where a "
    "gate given fails: with --fail-on-bias and --fail-unless-equivalent both given, where either fails, the failure "
    "typed by its gate; with none given, the testcases follow --fail-on-bias's rule and the exit code does not "
    "depend on them. An existing FILE is replaced only when it "
    "is a JUnit file fairtalk wrote; never an input or another file of the run. A run that stops on an error "
    "(exit 2 or 3) or is interrupted (130) once FILE was checked leaves in it one testcase in error, never an "
    "earlier run's pass. With $GITHUB_STEP_SUMMARY set, "
    "the findings and tables are appended to the job summary too (best effort: a summary that cannot be appended "
    "is a warning, and the exit code stays the gate's).",
)
_MSG_JUNIT_FOLDER = "--junit {path} is the output folder (-o); give the JUnit file a name of its own"
#: The warning when the job summary cannot be appended (the gate decides the exit code, never the summary).
_MSG_SUMMARY = "warning: the job summary was not appended to $GITHUB_STEP_SUMMARY ({error}); the exit code is the gate's"
FAIL_UNLESS_EQUIVALENT = typer.Option(
    False,
    "--fail-unless-equivalent",
    help="Exit 1 unless every primary measure is shown equivalent (the release gate). Equivalent: its interval "
    "lies within its margin.",
)


SYSTEM_PROMPT = typer.Option(
    None,
    "--system-prompt",
    help="A chat model's system prompt, TEXT or @FILE. It reaches openai: models and hf: ones with a chat "
    "template, and is part of the model's fingerprint.",
)
_MSG_CONFIG_TWICE = "--config given twice ({files}); merge the files into one"


def one_config(given: Sequence[str] | None) -> str | None:
    """The one ``--config`` file given (None: none); SpecError when it is given twice, which would drop the first file's values.

    :data:`CONFIG`'s callback (the parameter is declared a list, so that a second ``--config`` is
    seen at all); a command calls it on its parameter for the one path.
    """
    if given is not None and len(given) > 1:
        import fairtalk

        raise fairtalk.SpecError(_MSG_CONFIG_TWICE.format(files=", ".join(given)))
    return given[0] if given else None


def _config_once(given: Sequence[str] | None) -> Sequence[str] | None:
    one_config(given)
    return given


#: A command declares its ``--config`` parameter ``list[str] | None`` (a second ``--config`` is refused).
CONFIG = typer.Option(
    None,
    "--config",
    metavar="<str>",  # one file, as before it was declared a list
    callback=_config_once,
    help="Read option defaults from a TOML (or YAML) file. Its keys are the library's keywords "
    "(alpha, n_resamples, ...; an audit's also n_pairs, model, ...); options given on the command line override "
    "them (a table, such as --margin, key by key). Give it once.",
)
#: The scoring options, by field name: the parameters of `score` and `audit` that set them have these names.
SCORE_KEYS = tuple(SCORE_FIELDS)
#: How a parameter's value becomes its option's: ``--margin KEY=VALUE`` strings a table, ``@FILE`` its text.
SCORE_CONVERTERS: Mapping[str, Callable[[Any], Any]] = {
    "margins": lambda given: parse_margins(given),
    "judge_rubric": lambda given: text_or_file(given, "--judge-rubric"),
}

#: The judge's options, by field: they change nothing without a ``judge:`` measure.
_JUDGE_OPTIONS = {"judge_rubric": "--judge-rubric", "judge_scale": "--judge-scale"}
MSG_JUDGE_ONLY = (
    "{options} appl{s} only with a judge: --measures names no judge:SPEC, so {they} would be ignored "
    "(add a judge: measure, or leave {them} out)"
)


def check_judge_options(options: ScoreOptions) -> None:
    """SpecError for ``--judge-rubric`` or ``--judge-scale`` (on the command line or in ``--config``) with no ``judge:`` measure.

    As ``--temperature`` without ``--sample``: an option that would change nothing is an error,
    never recorded in the manifest as if it had been applied.
    """
    from fairtalk import SpecError
    from fairtalk.config import JUDGE_PREFIX
    from fairtalk.measures import Judge

    measures = options.measures or ()
    if any(isinstance(m, Judge) or (isinstance(m, str) and m.startswith(JUDGE_PREFIX)) for m in measures):
        return
    unused = [flag for key, flag in _JUDGE_OPTIONS.items() if getattr(options, key) is not None]
    if unused:
        one = len(unused) == 1
        words = {"s": "ies", "they": "it", "them": "it"} if one else {"s": "y", "they": "they", "them": "them"}
        raise SpecError(MSG_JUDGE_ONLY.format(options=", ".join(unused), **words))


#: The most an ``@FILE`` option's file may hold (a prompt or a rubric), in bytes.
MAX_TEXT_FILE_BYTES = 1 << 20


def text_or_file(value: str | None, option: str) -> str | None:
    """An option's text, or the content of the file after ``@`` (``--system-prompt @prompt.txt``).

    The file must be a regular one of at most :data:`MAX_TEXT_FILE_BYTES` (a folder, a FIFO or a
    device is refused, never read, each in its own words), and neither the text nor the file may be empty.
    """
    import os
    import stat

    import fairtalk

    if value is None:
        return value
    if not value.startswith("@"):
        if not value.strip():
            raise fairtalk.SpecError(f"{option} is empty; give the text, or @FILE")
        return value
    try:
        mode = os.stat(value[1:]).st_mode
        if stat.S_ISDIR(mode):
            raise fairtalk.InputError(f"{option}: a folder, not a file; give @FILE, a file of the text", path=value[1:])
        if not stat.S_ISREG(mode):  # a FIFO would wait for a writer, a device never ends
            raise fairtalk.InputError(
                f"{option}: not a regular file (a pipe, a device or a socket); save it to a file first", path=value[1:]
            )
        with open(value[1:], "rb") as handle:
            raw = handle.read(MAX_TEXT_FILE_BYTES + 1)
        if len(raw) > MAX_TEXT_FILE_BYTES:
            raise fairtalk.InputError(f"{option}: the file is larger than {MAX_TEXT_FILE_BYTES >> 20} MiB", path=value[1:])
        text = raw.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise fairtalk.InputError(f"{option}: cannot read the file ({reason})", path=value[1:]) from exc
    if not text:
        raise fairtalk.InputError(f"{option}: the file is empty", path=value[1:])
    return text


def parse_margins(given: Sequence[str] | None) -> dict[str, float]:
    """``["offense_rate=0.01"]`` -> ``{"offense_rate": 0.01}`` (SpecError for a malformed, non-positive or repeated one)."""
    import fairtalk

    out: dict[str, float] = {}
    for item in given or ():
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise fairtalk.SpecError(_MSG_MARGIN.format(given=item))
        try:
            number = float(value)
        except ValueError:
            raise fairtalk.SpecError(_MSG_MARGIN_VALUE.format(name=name, value=value)) from None
        if not math.isfinite(number) or not number > 0:
            raise fairtalk.SpecError(_MSG_MARGIN_VALUE.format(name=name, value=value))
        if name in out:
            raise fairtalk.SpecError(_MSG_REPEATED.format(name=name))
        out[name] = number
    return out


def ci_outputs() -> list[str | None]:
    """What :func:`write_ci_files` writes after a command's report and Ctrl-C may leave unwritten, named for its line.

    Not the ``--junit`` file: an interrupted command leaves it recording the interruption
    (:func:`~fairtalk.cli._app.junit_on_error`), never missing nor an earlier run's.
    """
    return ["the job summary" if os.environ.get("GITHUB_STEP_SUMMARY") else None]


def gates_in_force(*, fail_on_bias: bool, fail_unless_equivalent: bool) -> tuple[Gate, ...]:
    """The audit gates requested, in a fixed order (none: the exit code depends on no gate).

    A JUnit file written with none requested follows ``fail-on-bias``'s rule (:func:`write_ci_files`).
    """
    from fairtalk.gates import Gate

    return tuple(g for g, on in ((Gate.FAIL_ON_BIAS, fail_on_bias), (Gate.FAIL_UNLESS_EQUIVALENT, fail_unless_equivalent)) if on)


def _say_differences(results: Mapping[str, AuditResult], found: Mapping[str, Findings], alpha: float) -> None:
    """The differences detected per axis, primary and secondary, or that none was (``found``: each axis' findings)."""
    for name, f in found.items():
        if f.detected:
            say(f"{name}: difference detected (adjusted p < {alpha:g}): {', '.join(f.detected)}", style="bold red")
        for d in f.labels.differ:  # the labels' finding, not the scorer's
            say(f"{name}: {d.key}: {d.labels}", style="bold red")
        if f.secondary:
            say(
                f"{name}: difference detected in secondary measures, outside the gate: {', '.join(f.secondary)}",
                style="yellow",
            )
    if any(f.detected for f in found.values()):
        return
    lost = [f"{name} {r.losses.describe()}" for name, r in results.items() if r.losses is not None and r.losses.n_lost]
    if lost:  # the measures saw only the pairs answered on both sides: no difference there is not a clean bill
        say(
            f"no difference detected in the measures at adjusted p < {alpha:g}, on the pairs answered on both "
            f"sides only: answers were lost on {'; '.join(lost)} (the gates check the losses too)",
            style="yellow",
        )
    elif empty := [f"{name} {r.empties.describe()}" for name, r in results.items() if r.empties is not None]:
        say(  # the measures scored the empty answers as answers: no difference there is not a clean bill either
            f"no difference detected in the measures at adjusted p < {alpha:g}, with empty answers scored as answers: "
            f"empty answers on {'; '.join(empty)} (the gates check them too)",
            style="yellow",
        )
    elif any(f.secondary for f in found.values()):
        say(
            f"no difference detected in the primary measures at adjusted p < {alpha:g} (secondary ones differ: above)",
            style="yellow",
        )
    elif any(m.ppi is not None for r in results.values() for m in r.measures if m.primary):
        say(  # the scorer's tests only: the labelled estimates may show what it missed, and the gates read them
            f"no difference detected by the scorer on any axis at adjusted p < {alpha:g} (the labelled estimates are "
            "above; the gates check them too"
            + (
                "; the labels show a difference the scorer missed, said above)"
                if any(f.by_labels for f in found.values())
                else ")"
            ),
            style="yellow",
        )
    else:
        say(f"no difference detected on any axis at adjusted p < {alpha:g}", style="green")


def _identical_needs(r: AuditResult) -> dict[str, str]:
    """Per primary key answered identically on every pair but too few to show equivalence: what its note says it needs.

    ``identical on all 400 pairs (133 dialogues); equivalence needs 149 dialogues all identical``,
    cut from the note of the exact rule that decided (:data:`fairtalk.stats.METHOD_IDENTICAL`).
    """
    from fairtalk.stats import METHOD_IDENTICAL

    needs = {}
    for m in r.measures:
        if not m.primary or m.equivalent or m.equivalence_test != METHOD_IDENTICAL:
            continue
        note = next((n for n in m.notes if "; equivalence needs " in n), None)
        if note is not None:
            head, need = note.split(":", 1)[0], note[note.index("; equivalence needs ") + 2 :]
            needs[m.name] = f"{head}; {need}"
    return needs


def _say_equivalence(name: str, r: AuditResult, found: Findings) -> None:
    """One axis' primary measures shown equivalent, different within the margin, inconclusive or not tested.

    ``found``: the axis' findings. A key whose labels fail the equivalence gate the scorer passed
    is not called equivalent: its line says what the labels show; one the labels could not
    confirm is marked so.
    """
    from fairtalk.stats import IDENTICAL_SHARE

    def marked(key: str) -> str:
        return f"{key} (the labels could not confirm it)" if key in found.unconfirmed else key

    margins = {m.name: m.equivalence_margin for m in r.measures}
    equivalent = [marked(key) for key in found.equivalent if margins[key] is not None]
    no_margin = [marked(key) for key in found.equivalent if margins[key] is None]
    small = [marked(key) for key in found.within_margin]
    if equivalent:
        say(f"{name}: shown equivalent within the margin: {', '.join(equivalent)}", style="green")
    if no_margin:  # the exact bound on identical answers showed it: no margin was
        say(
            f"{name}: shown equivalent with no margin, by the exact bound on the share of units that could differ "
            f"(below {IDENTICAL_SHARE:.0%}): {', '.join(no_margin)}",
            style="green",
        )
    for d in found.labels.beyond:
        say(f"{name}: {d.key}: the scorer shows it equivalent, but {d.labels}", style="bold red")
    if small:
        say(
            f"{name}: a difference, but within the margin (the whole interval lies inside it, so the "
            f"equivalence gate passes): {', '.join(small)}",
            style="yellow",
        )
    identical = _identical_needs(r)
    inconclusive = [m for m in r.measures if m.name in found.inconclusive and m.not_tested is None and m.name not in identical]
    by_need: dict[str, list[str]] = {}
    for key, need in identical.items():
        by_need.setdefault(need, []).append(key)
    for need, keys in by_need.items():  # more pairs would help, but how many is the exact bound's count, not an MDE
        say(f"{name}: {need}: {', '.join(keys)}", style="yellow")
    for m in (m for m in r.measures if m.primary and m.not_tested is not None):
        say(f"{name}: {m.name}: {m.not_tested}", style="yellow")  # more pairs would not help, the scorer's answers would
    if inconclusive:
        from fairtalk.report import measure_amount

        shown = ", ".join(
            f"{m.name} (detectable: {measure_amount(m.mde, m)})" if m.mde is not None else m.name for m in inconclusive
        )
        say(
            f"{name}: inconclusive, neither a difference nor equivalence shown (more pairs needed; the "
            f"smallest difference this run could detect, rates in percentage points): {shown}",
            style="yellow",
        )


def _say_checks(name: str, r: AuditResult) -> None:
    """One axis' flagged scorers and warnings."""
    for c in r.scorer_check:
        if c.flagged:
            say(
                f"{name}: scorer check: {c.key} scores neutral probes differently by group ({c.a:.3g} vs "
                f"{c.b:.3g} on {c.n_probes} probes): part of its gap may be the scorer's",
                style="yellow",
            )
    for warning in r.warnings:
        say(f"{name}: warning: {warning}", style="yellow")


def report_gates(results: Mapping[str, AuditResult], *, alpha: float, fail_on_bias: bool, fail_unless_equivalent: bool) -> int:
    """Print what was found per axis and each gate given; the exit code is :func:`fairtalk.gates.evaluate`'s decision.

    1 when a gate given (``--fail-on-bias``, ``--fail-unless-equivalent``) failed, else 0.
    """
    from fairtalk.gates import Gate, evaluate
    from fairtalk.report import axis_findings

    found = {name: axis_findings(r) for name, r in results.items()}  # as the gates decide them, said once
    _say_differences(results, found, alpha)
    outcomes = [
        evaluate(results, g)
        for g, on in ((Gate.FAIL_ON_BIAS, fail_on_bias), (Gate.FAIL_UNLESS_EQUIVALENT, fail_unless_equivalent))
        if on
    ]
    for name, r in results.items():
        _say_equivalence(name, r, found[name])
        open_ = [
            f"{d.key} (on the labels, above)" if d.on == "labels" else str(d.key)
            for o in outcomes
            if o.gate is Gate.FAIL_UNLESS_EQUIVALENT
            for d in o.failures
            if d.axis == name and d.key
        ]
        if open_:
            say(f"{name}: not shown equivalent: {', '.join(open_)}", style="yellow")
        _say_checks(name, r)
    for outcome in outcomes:
        say(outcome.headline, style="green" if outcome.passed else "bold red")
    return 0 if all(o.passed for o in outcomes) else 1


def check_junit(
    junit: str | None,
    *,
    inputs: Mapping[str, object],
    outputs: Mapping[str, object],
    folder: str | None,
    name: str = "fairtalk",
) -> None:
    """``--junit FILE``, before any work: a new file or a JUnit file fairtalk wrote, never an input or another output of the run.

    ``outputs`` are the files and folders the run writes (it may be inside none of them), ``folder``
    the output folder they are in (``-o``): the JUnit file may sit in it, but not be it. Once it
    passed, a stop on an error or an interruption leaves FILE recording it (:func:`junit_on_error`,
    the JUnit root named ``name``), never an earlier run's pass.
    """
    from fairtalk.errors import OutputError
    from fairtalk.files import same_file
    from fairtalk.report import is_junit_file

    if junit is None:
        return
    if folder is not None and same_file(junit, folder):
        raise OutputError(_MSG_JUNIT_FOLDER.format(path=junit))
    check_output_file(junit, option="--junit", what="JUnit file", ours=is_junit_file, inputs=inputs, outputs=outputs)
    junit_on_error(junit, name=name)


def write_ci_files(
    results: Mapping[str, AuditResult] | ModelComparison,
    junit: str | None,
    *,
    gates: Sequence[Gate] = (),
    gated: bool = False,
    audit: Mapping[str, AuditResult] | None = None,
    protected: Mapping[str, object] | None = None,
) -> None:
    """The CI outputs of a scored run or a comparison: ``--junit FILE``, and the job summary (``$GITHUB_STEP_SUMMARY``).

    The summary is appended when ``$GITHUB_STEP_SUMMARY`` names a file, on a best-effort basis:
    it is never appended to one of ``protected`` (the run's inputs and outputs, what each is ->
    its path) nor to the JUnit file, never to anything but a regular file (a FIFO nobody reads
    never blocks the run), and a summary that cannot be appended is a warning on stderr: the
    exit code stays the gate's. Both render the decision of :func:`fairtalk.gates.evaluate`.

    An audit's: under the gates requested, ``gates`` (:func:`gates_in_force`); with none, the
    summary shows no gate, and a JUnit file follows ``fail-on-bias``'s rule, which the summary
    says without calling it the run's gate. A comparison's: under ``--fail-if-worse``, whose
    headline the summary shows when ``gated`` (requested); its JUnit file holds the testcases of
    ``audit`` too (``audit --baseline-model --fail-if-worse``) under ``gates``.
    """
    from fairtalk import ModelComparison, OutputError
    from fairtalk.files import append_text
    from fairtalk.gates import Gate
    from fairtalk.report import comparison_step_summary, step_summary, write_junit

    if junit is not None:
        if not isinstance(results, ModelComparison):
            written = write_junit(results, junit, gate=gates or (Gate.FAIL_ON_BIAS,))
        elif audit is not None:
            written = write_junit(audit, junit, gate=gates, comparison=results)
        else:
            written = write_junit(results, junit)
        info(f"wrote {written}", keep=[written])
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        if isinstance(results, ModelComparison):
            text = comparison_step_summary(results, gated=gated, junit=junit is not None)
        else:
            rule = Gate.FAIL_ON_BIAS if junit is not None and not gates else None
            text = step_summary(results, gate=gates, junit_rule=rule)
        try:  # the runner's file: appended to, as GitHub asks
            append_text(summary, text + "\n", inputs={**(protected or {}), "--junit": junit})
        except OutputError as exc:
            say(_MSG_SUMMARY.format(error=exc), style="yellow", stderr=True)


def check_file_keys(path: str | None, given: Mapping[str, Any], options: ScoreOptions, lexicons: Sequence[Lexicon]) -> None:
    """Check the margin and primary keys against the axes' measures, before any answer (audit, score).

    The keys that came from the ``--config`` file (a margin no ``--margin`` gave, the primary keys
    when no ``--primary``) are checked first, and a SpecError there names the file, as its other
    errors do (``run.toml: unknown margin measure key 'offense_rat'; ...``); then all of them.
    """
    from fairtalk.run import audit_score_options

    if path is not None:
        from fairtalk.config import file_named

        flags = given.get("margins", {})
        of_file = {key: margin for key, margin in options.margins.items() if key not in flags}
        with file_named(path):
            audit_score_options(
                dataclasses.replace(options, margins=of_file, primary=None if "primary" in given else options.primary),
                lexicons,
            )
    audit_score_options(options, lexicons)
