"""The typer app, the consoles and the error convention shared by every command."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

import typer
from typer.core import TyperGroup

from fairtalk.cli._axes import fill_axes_help
from fairtalk.cli._console import (
    command_paths,
    console,
    err_console,
    info,
    is_quiet,
    json_output,
    say,
    set_quiet,
    terminal_safe,
    to_null_device,
)
from fairtalk.errors import FairtalkError, SpecError

if TYPE_CHECKING:
    # typer vendors its own click (typer._click) and types TyperGroup with it; the click package is not a dependency.
    from typer._click import ClickException, Command, Context

    from fairtalk import Lexicon

__all__ = [
    "EXIT_BIAS",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "IN_MEMORY",
    "add_output_options",
    "app",
    "check_output_file",
    "check_two_groups",
    "console",
    "err_console",
    "fail",
    "info",
    "interrupted",
    "is_quiet",
    "json_mode",
    "json_output",
    "junit_on_error",
    "lexicon_inputs",
    "main",
    "print_json",
    "resolve_lexicon",
    "say",
    "set_quiet",
    "stdin_as_file",
    "stdout_to_stderr",
    "terminal_safe",
    "until_written",
    "when_interrupted",
]

_QUIET_HELP = "No progress bars and no info messages. Errors and results stay."
#: ``-q``'s help in a command with ``--json``.
_QUIET_JSON_HELP = "No progress bars and no info messages. Errors, results and --json output stay."
_VERBOSE_HELP = "Show the library's log on stderr: -v its info lines, -vv debug lines too."
_MSG_QUIET_VERBOSE = "-q/--quiet and -v/--verbose exclude each other"
_MSG_GIVEN_TWICE = (
    "{option} is given {n} times, and only the last would be read: give it once, its values comma-separated ({option} a,b)"
)
#: Options whose one value is a comma-separated list: a second one would replace the first without a word.
_LIST_OPTIONS = ("--axis", "--primary", "--measures", "--similarity")


def check_given_once(command: Command, args: Iterable[str]) -> None:
    """SpecError when ``args`` give a list option of ``command`` (:data:`_LIST_OPTIONS`) more than once.

    Click keeps the last value without a word, so ``--axis race --axis gender`` audited gender
    alone and ``--primary a --primary b`` gated on b alone: a gate passed on less than was asked.
    An option of one value given again (``--pairs``) is the usual last-wins override, and options
    read many times (``--stop``, ``--margin``) add up; ``--`` ends the options.
    """
    valued = {
        name: param
        for param in command.params
        if getattr(param, "opts", None) and not getattr(param, "is_flag", False)
        for name in param.opts
    }
    counts: dict[str, int] = {}
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            break
        name, eq, _ = token.partition("=")
        param = valued.get(name if eq and name.startswith("--") else token)
        if param is None:
            continue
        if not eq:
            next(tokens, None)  # its value, whatever it looks like
        listed = next((opt for opt in param.opts if opt in _LIST_OPTIONS), None)
        if listed is not None and not getattr(param, "multiple", False):
            counts[listed] = counts.get(listed, 0) + 1
    for option, n in counts.items():
        if n > 1:
            raise SpecError(_MSG_GIVEN_TWICE.format(option=option, n=n))


def _output_params() -> list[Any]:
    """Fresh ``-q/--quiet`` and ``-v/--verbose`` parameters, built by typer itself (one throwaway command)."""
    builder = typer.Typer(add_completion=False)

    @builder.command()
    def options(
        quiet: bool = typer.Option(False, "-q", "--quiet", help=_QUIET_HELP),
        verbose: int = typer.Option(0, "-v", "--verbose", count=True, help=_VERBOSE_HELP),
    ) -> None:
        """Only its parameters are used."""

    return list(typer.main.get_command(builder).params)


def add_output_options(command: Command) -> None:
    """Give ``command`` (every command of a group) ``-q/--quiet`` and ``-v/--verbose``, run under ``output_options``.

    A command that declares its own ``quiet`` parameter keeps it (and gets ``-q`` when free);
    the options reach the command body only then. A command with ``--json`` runs under
    :func:`json_mode` when it is given. Idempotent.
    """
    subcommands = getattr(command, "commands", None)
    if subcommands is not None:  # a group (typer brings its own click, so no isinstance check)
        for sub in subcommands.values():
            add_output_options(sub)
        return
    if getattr(command, "_fairtalk_output", False) or command.callback is None:
        return
    quiet_param, verbose_param = _output_params()
    own_quiet = next((p for p in command.params if p.name == "quiet"), None)
    taken = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    if own_quiet is None:
        if any("--json" in p.opts for p in command.params):
            quiet_param.help = _QUIET_JSON_HELP
        command.params.append(quiet_param)
    elif "-q" not in taken:
        own_quiet.opts.append("-q")
    command.params.append(verbose_param)
    body = command.callback
    json_param = next((p.name for p in command.params if "--json" in p.opts), None)

    @functools.wraps(body)
    def run(*args: Any, **kwargs: Any) -> Any:
        from fairtalk.cli._output import output_options
        from fairtalk.files import output_scope

        quiet = bool(kwargs["quiet"] if own_quiet is not None else kwargs.pop("quiet", False))
        verbose = int(kwargs.pop("verbose", 0) or 0)
        if quiet and verbose:
            fail(_MSG_QUIET_VERBOSE)
        with (
            output_options(quiet=quiet, verbose=verbose),
            json_mode(bool(json_param and kwargs.get(json_param))),
            output_scope(),  # the outputs its checks lock stay locked until it ends
        ):
            _JUNIT.clear()
            try:
                return body(*args, **kwargs)
            except BaseException as exc:  # its --junit FILE records how it stopped (the file is still locked here)
                _junit_on_stop(exc, f"fairtalk {command.name}")
                raise
            finally:
                _JUNIT.clear()

    command.callback = run
    parse = command.parse_args

    def parse_args(ctx: Context, args: list[str]) -> list[str]:
        check_given_once(command, args)
        return parse(ctx, args)

    command.parse_args = parse_args  # type: ignore[method-assign]
    command._fairtalk_output = True  # type: ignore[attr-defined]


class _Commands(TyperGroup):
    """The command group: a FairtalkError anywhere in a command is ``error: …`` on stderr and exit 2.

    Every command it hands out has ``-q``/``-v`` (:func:`add_output_options`), and its help lists
    the axes of the axis registry where an ``--axis`` help asks for them (:func:`fill_axes_help`),
    shows each option's first sentence, the whole help under ``--help-full``
    (:func:`~fairtalk.cli._help_layout.add_help_full`), and neither cuts an option's name nor
    breaks a word at 80 columns (:meth:`main`).
    """

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            from fairtalk.cli._help_layout import add_help_full

            add_output_options(command)
            add_help_full(command)  # before fill_axes_help: the axes are filled in, then the help is shortened
            fill_axes_help(command)
        return command

    def invoke(self, ctx: Context) -> Any:
        _ON_INTERRUPT.clear()
        _JUNIT.clear()
        _LAST_STOP.clear()
        try:
            return super().invoke(ctx)
        except FairtalkError as exc:
            fail(exc)
        except KeyboardInterrupt:
            if not _ON_INTERRUPT:
                raise
            note, keep = _ON_INTERRUPT[0]
            interrupted(note=note, keep=keep)
        except BrokenPipeError:
            if not _stdout_reader_gone():
                raise
            _quiet_stdout()  # `fairtalk pairs -o - | head -1`: the reader has what it wants; stop quietly
            raise typer.Exit(code=0) from None

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """The command line: ``--help`` cuts no option's name and breaks no word, and a usage error is an ``error: …`` line.

        See :func:`help_layout` and :func:`plain_usage_errors` (a bad option value, an unknown option or command).
        """
        from fairtalk.cli._help_layout import add_help_full, help_layout

        add_help_full(self)  # the group's own --help-full (its commands get theirs in get_command too)
        with help_layout(), plain_usage_errors():
            return super().main(*args, **kwargs)


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe whose reader has closed it (``| head``), as opposed to another pipe breaking."""
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no real stdout (a test's capture), or no poll on this system
        return False


def _quiet_stdout() -> None:
    """Point stdout at the null device, so that the flush at exit finds no broken pipe to complain of."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


#: The function of ``typer.rich_utils`` that typer prints a usage error with (in a framed box).
_TYPER_ERROR = "rich_format_error"


def _show_usage_error(error: ClickException) -> None:
    """Print a usage error as every fairtalk error is printed: typer's usage and help hint, then ``error: …``, plain."""
    if type(error).__name__ == "NoArgsIsHelpError":  # the help was shown already: no error to print (as typer does)
        return
    ctx = getattr(error, "ctx", None)
    if ctx is not None:
        err_console.print(terminal_safe(ctx.get_usage()), markup=False, highlight=False, soft_wrap=True)
        if ctx.command.get_help_option(ctx) is not None:
            hint = f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help."
            err_console.print(terminal_safe(hint), markup=False, highlight=False, soft_wrap=True)
    err_console.print("error: ", style="bold red", end="", markup=False, highlight=False)
    err_console.print(terminal_safe(error.format_message()), markup=False, highlight=False, soft_wrap=True)


def plain_usage_errors() -> contextlib.AbstractContextManager[None]:
    """While the block runs, typer prints a usage error with :func:`_show_usage_error`, not in a framed box.

    typer prints click's usage errors through ``typer.rich_utils.rich_format_error`` (a rich
    panel), looked up when an error is shown; it has no setting for a plain line.
    """
    from fairtalk.cli._help_layout import swapped_in_typer

    return swapped_in_typer(_TYPER_ERROR, _show_usage_error)


app = typer.Typer(
    name="fairtalk",
    cls=_Commands,
    help=(
        "Audit dialogue systems and text generators for demographic bias.\n\n"
        "Exit codes: 0 done; 1 a gate failed (--fail-on-bias, --fail-unless-equivalent, --fail-if-worse); 2 a usage or input "
        "error (the message says which); 3 an internal error (a bug: FAIRTALK_DEBUG=1 shows the traceback); "
        "130 interrupted."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: Exit code for a user error (bad input, unknown spec).
EXIT_USAGE = 2
#: Exit code when ``--fail-on-bias`` finds a significant difference.
EXIT_BIAS = 1
#: Exit code for an unexpected error: a bug, never a verdict.
EXIT_INTERNAL = 3

#: Exit code when the run is interrupted (Ctrl-C), as a shell reports SIGINT.
EXIT_INTERRUPTED = 130

#: The run store that lives in memory only (what a command uses without ``--store``).
IN_MEMORY = ":memory:"
_MSG_OUT_FOLDER = "{option} is a folder; give the name of a file to write"
_MSG_OUT_NOT_FOLDER = "{option}: {folder} is not a folder, so nothing can be written under it"
_MSG_OUT_DENIED = "{option}: cannot write in {folder} ({reason})"
#: The axes themselves follow as the error's choices, from the axis registry.
_MSG_NO_AXIS = "give --axis (an axis or a lexicon file) or --lexicon FILE"
_MSG_BLANK = "{option} is empty: give an axis or a lexicon file"
#: Under :func:`json_mode`: the real stdout, where :func:`print_json` writes (None otherwise).
_JSON_STDOUT: list[IO[str] | None] = [None]


#: Standard input is copied in blocks of this many bytes (never held whole).
_STDIN_BLOCK = 1 << 16
_MSG_STDIN_LINE = "a line longer than {limit} MiB, the most one record may hold (is it a file of JSON records?)"
#: How standard input (``-``) is named in messages.
STDIN = "standard input"
_MSG_STDIN_UTF8 = "not valid UTF-8 text, near this line (is it a file of JSON records?)"


def _copy_records(source: IO[bytes], target: IO[bytes]) -> None:
    """Copy JSON Lines in blocks; a line over a record's cap (``< /dev/zero``) or bytes not UTF-8 (``< /dev/urandom``) stop it."""
    import codecs

    from fairtalk.errors import InputError
    from fairtalk.report import MAX_RECORD_BYTES

    decoder, line, run = codecs.getincrementaldecoder("utf-8")(), 1, 0  # the line being read, and its bytes so far
    try:
        while block := source.read(_STDIN_BLOCK):
            decoder.decode(block)
            last = block.rfind(b"\n")
            line, run = (line, run + len(block)) if last < 0 else (line + block.count(b"\n"), len(block) - last - 1)
            if run > MAX_RECORD_BYTES:
                raise InputError(_MSG_STDIN_LINE.format(limit=MAX_RECORD_BYTES >> 20), path="standard input", line=line)
            target.write(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise InputError(_MSG_STDIN_UTF8, path="standard input", line=line) from None


@contextlib.contextmanager
def stdin_as_file(value: str, name: str = "stdin.jsonl") -> Iterator[str]:
    """``-`` means standard input: its bytes (within :func:`_copy_records`' bounds) in a temporary file named ``name``."""
    if value != "-":
        yield value
        return
    from fairtalk.errors import InputError

    with tempfile.TemporaryDirectory(prefix="fairtalk-stdin-") as folder:
        path = Path(folder) / name
        with path.open("wb") as target:
            _copy_records(sys.stdin.buffer, target)
        try:
            yield str(path)
        except InputError as err:  # the temporary copy is the user's standard input: say so, not its path
            if err.path != str(path) and str(path) not in err.message:
                raise
            named = str(path) in err.message
            message = err.message.replace(str(path), STDIN)
            raise type(err)(message, path=None if err.path is None or named else STDIN, line=err.line) from None


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[IO[str]]:
    """For the block, what is written to stdout goes to stderr; yields a stream on the real stdout.

    For a command that writes a document to stdout (``--json``, ``-o -``): only what it writes
    to the stream it is given reaches stdout.

    ``sys.stdout`` is swapped (a model's ``print()``, Ray's log lines, a handler holding the old
    object); on a real stdout, file descriptor 1 is pointed at stderr too (C code, a child process).
    """
    real = sys.stdout
    try:
        fd, err_fd = real.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a test runner's buffer: no descriptor to move
        with contextlib.redirect_stdout(sys.stderr):
            yield real
        return
    real.flush()
    saved = os.dup(fd)
    try:
        os.dup2(err_fd, fd)
        document = open(saved, "w", encoding=real.encoding or "utf-8", errors=real.errors, closefd=False)
        with document, contextlib.redirect_stdout(sys.stderr):
            yield document
    finally:
        real.flush()
        os.dup2(saved, fd)
        os.close(saved)


@contextlib.contextmanager
def json_mode(enabled: bool) -> Iterator[None]:
    """``--json`` for the length of a command: stdout carries the JSON document and nothing else.

    Messages go to stderr, and so does anything else written to stdout meanwhile (a
    ``python:`` model's ``print()``, a dependency's log lines); :func:`print_json` writes the
    document to the real stdout. Every command with ``--json`` runs under it (see
    :func:`add_output_options`): the one place this contract is kept.
    """
    if not enabled:
        yield
        return
    json_output(True)
    try:
        with stdout_to_stderr() as stdout:
            _JSON_STDOUT[0] = stdout
            yield
    finally:
        _JSON_STDOUT[0] = None
        json_output(False)


def print_json(document: object) -> None:
    """Write ``document`` as strict JSON (NaN as null) to stdout, the real one under :func:`json_mode`."""
    import json

    from fairtalk.report import jsonable

    out = _JSON_STDOUT[0] or sys.stdout
    try:
        out.write(json.dumps(jsonable(document), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        out.flush()
    except BrokenPipeError:  # `--json | head -1`: the reader is gone; the command goes on (its files, its gate's exit code)
        to_null_device(out)


def fail(error: FairtalkError | str) -> NoReturn:
    """Print ``error: <message>`` on stderr (control sequences removed) and exit 2."""
    _LAST_STOP[:] = [f"error: {terminal_safe(error)}"]
    err_console.print("error: ", style="bold red", end="", markup=False, highlight=False)
    err_console.print(terminal_safe(error), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code=EXIT_USAGE)


def interrupted(
    store: object = None, *, note: str | None = None, keep: Iterable[str] = (), earlier: str | None = None
) -> NoReturn:
    """Ctrl-C: say where the answers so far are kept (or that they are lost, without a store file), and exit 130.

    ``note``: what to say instead, for a command that keeps no answers or has written its outputs; ``keep``: the
    paths it names, each kept on one line (see :func:`~fairtalk.cli._console.wrap_prose`). ``earlier``: the
    output folder, where it holds an earlier run's report that this run would have replaced (it is said to be
    that run's, not this one's: a result read from it is no outcome of this run).
    """
    if note is not None:
        where = f" {note}" if note.startswith("after ") else f"; {note}"
    elif store is None or str(store).strip() in ("", IN_MEMORY):
        where = "; the answers so far were not kept (no run store file: give --store FILE to keep them and resume)"
    elif (lost := _store_lost(store)) is not None:
        where = lost
    elif not os.path.exists(str(store)):  # interrupted before the first answer: the empty store was removed
        where = "; no answer had been generated yet"
    else:
        where = f"; the answers so far are kept in {store}: re-run the same command to resume"
    if earlier is not None:
        where += _MSG_EARLIER.format(folder=earlier)
    _LAST_STOP[:] = [f"interrupted{where}"]
    named = [*keep, *([] if store is None else [str(store)]), *([] if earlier is None else [earlier])]
    say(f"interrupted{where}", style="yellow", stderr=True, keep=named)
    raise typer.Exit(code=EXIT_INTERRUPTED)


#: Said on Ctrl-C where the output folder still holds the report of an earlier run (:func:`interrupted`).
_MSG_EARLIER = "; {folder} still holds an earlier run's report: its results and gate outcomes are not this run's"


def _store_lost(store: object) -> str | None:
    """What to say of a store file deleted or replaced while this process wrote answers to it; None otherwise.

    Counted by the store itself (:func:`fairtalk.store.store_written`): a missing file is no proof
    that no answer was generated.
    """
    from fairtalk.store import store_written

    n, gone = store_written(str(store))
    if not gone or n == 0:
        return None
    return f"; the run store {store} was deleted or replaced during the run: the {n:,} answer(s) written to it are lost"


def _store_kept(store: object) -> bool:
    """Whether the store file is there and is the one this process wrote its answers to."""
    return os.path.exists(str(store)) and _store_lost(store) is None


#: What the command has written, said on Ctrl-C from then on (:func:`when_interrupted`); cleared per command.
_ON_INTERRUPT: list[tuple[str, list[str]]] = []


def when_interrupted(
    written: str, missing: Iterable[str | None] = (), store: object = None, *, keep: Iterable[object] = ()
) -> None:
    """From now on, Ctrl-C says that ``written`` was written and which of ``missing`` may not be, then exits 130.

    For what a command does once its main output is written (the JUnit file, the job summary, the baseline).
    ``keep``: the paths ``written`` names; they, the store and the command's path arguments stay whole on a line.
    """
    left = [m for m in missing if m]
    rest = f"; {' and '.join(left)} may be missing" if left else ""
    if left and store is not None and str(store).strip() not in ("", IN_MEMORY) and _store_kept(store):
        rest += f": re-run the same command to write {'them' if len(left) > 1 else 'it'} (the answers are kept in {store})"
    paths = [*(str(k) for k in keep), *command_paths(), *([] if store is None else [str(store)])]
    _ON_INTERRUPT[:] = [(f"after {written}{rest}", paths)]


def until_written(note: str, *, keep: Iterable[object] = ()) -> None:
    """From now on, Ctrl-C says ``note`` (what is kept, and whether a rerun resumes), then exits 130.

    For a command that keeps nothing until its output is written (``prompts analyze``), said
    without wrapping its work; :func:`when_interrupted` takes over once the output is written.
    ``keep``: the paths ``note`` names, each kept on one line.
    """
    _ON_INTERRUPT[:] = [(note, [*(str(k) for k in keep), *command_paths()])]


#: The running command's ``--junit FILE`` once its check passed, and the JUnit root's name (:func:`junit_on_error`).
_JUNIT: list[tuple[str, str]] = []
#: The line :func:`fail` or :func:`interrupted` printed last (what the command's ``--junit FILE`` then records).
_LAST_STOP: list[str] = []
_MSG_JUNIT_KEPT = (
    "warning: the JUnit file {path} could not be replaced by one recording this stop ({reason}); "
    "it may show an earlier run: do not trust it"
)


def junit_on_error(path: str, *, name: str = "fairtalk") -> None:
    """From now on, should the command stop on an error or be interrupted, ``path`` records that, not an earlier run.

    Called once ``--junit FILE`` passed its check (a new file, or a JUnit file fairtalk wrote;
    never an input nor another output). A command that then ends with exit 2 (a usage or input
    error), an internal error (exit 3) or an interruption (exit 130, Ctrl-C or SIGTERM) leaves at
    ``path`` a JUnit file of one testcase in error holding the line it stopped with
    (:func:`fairtalk.report.error_junit_xml`, its root named ``name``), even when it had written
    its own: so a CI report shows the run errored, never the pass of the run before. One whose
    gate decided (exit 0 or 1) keeps the file it wrote.
    """
    _JUNIT[:] = [(path, name)]


def _stop_line(exc: BaseException) -> tuple[str, str] | None:
    """How a command stopped: (the error's kind, its line); None when it ended on its gate's decision (exit 0 or 1)."""
    code = exc.code if isinstance(exc, SystemExit) else getattr(exc, "exit_code", None)
    said = _LAST_STOP[0] if _LAST_STOP else None
    if isinstance(code, int) or code is None and isinstance(exc, SystemExit):
        if code in (None, 0, EXIT_BIAS):
            return None
        if code == EXIT_INTERRUPTED:
            return "interrupted", said or "interrupted"
        return "error", said or f"error: fairtalk exited {code}"
    if isinstance(exc, FairtalkError):
        return "error", f"error: {terminal_safe(exc)}"
    if isinstance(exc, KeyboardInterrupt) or type(exc).__name__ == "Abort":  # Ctrl-C, SIGTERM (or in a prompt)
        note = _ON_INTERRUPT[0][0] if _ON_INTERRUPT else ""
        return "interrupted", f"interrupted {note}".strip()
    if isinstance(exc, BrokenPipeError):
        return "error", "stopped: its standard output was closed before the command ended"
    return "internal error", f"internal error: {type(exc).__name__}: {terminal_safe(exc)}"


def _junit_on_stop(exc: BaseException, command: str) -> None:
    """The ``--junit FILE`` of :func:`junit_on_error`, when ``exc`` stopped the command: a JUnit file of that error.

    Written only where the file is still absent, empty or fairtalk's JUnit file (never anything
    else found there meanwhile); when it cannot be written, fairtalk's stale file is removed, and
    a warning says so when neither can be done.
    """
    from fairtalk.files import write_text_atomic
    from fairtalk.report import error_junit_xml, is_junit_file

    stopped = _stop_line(exc) if _JUNIT else None
    if stopped is None:
        return
    (path, name), kind = _JUNIT.pop(), stopped[0]
    target = Path(path)
    try:
        if os.path.lexists(target) and not is_junit_file(target) and not (target.is_file() and not target.stat().st_size):
            return  # not fairtalk's (any more): never touched
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, error_junit_xml(stopped[1], command=command, kind=kind, name=name))
    except OSError as exc_write:
        try:
            if is_junit_file(target):
                target.unlink()
        except OSError:
            reason = exc_write.strerror or type(exc_write).__name__
            say(_MSG_JUNIT_KEPT.format(path=path, reason=reason), style="yellow", stderr=True, keep=[path])


def lexicon_inputs(lexicons: Iterable[Lexicon], option: str) -> dict[str, str]:
    """``{option: path}`` for each lexicon read from a user's file (built-in ones are no input a run could overwrite)."""
    found: dict[str, str] = {}
    for i, lexicon in enumerate(lexicons):
        if lexicon.variant == "custom" and not str(lexicon.source).startswith("builtin:"):
            found[f"{option} file #{i + 1}" if found else f"{option} file"] = str(lexicon.source)
    return found


def check_output_file(
    path: str | os.PathLike[str],
    *,
    option: str = "-o",
    what: str,
    ours: Callable[[Path], bool],
    inputs: Mapping[str, object] | None = None,
    outputs: Mapping[str, object] | None = None,
    hold: bool = True,
) -> None:
    """OutputError unless fairtalk may write its ``what`` at ``path``, checked before any work.

    The rule of every file option (:func:`fairtalk.files.check_output_file`): not a folder, ``-``
    or a quoted ``~``; never one of ``inputs`` (nor inside an input folder) or of ``outputs``
    (the other files and folders the run writes); never a device, a FIFO or a socket; and an
    existing file only when ``ours`` recognises it as a ``what`` fairtalk wrote (or it is
    empty). Its folder (or the nearest existing one above it) must be one this process can
    write in. With ``hold`` (not for a run store, which runs share), the file is locked for the
    rest of the command: one another fairtalk command is writing is refused.
    """
    from fairtalk.errors import OutputError
    from fairtalk.files import check_output_file as check_file
    from fairtalk.report import check_output_name

    check_output_name(path, option=option, kind="file")
    target = Path(path)
    if target.is_dir():
        raise OutputError(_MSG_OUT_FOLDER.format(option=option), path=str(target))
    check_file(path, inputs, option=option, what=what, ours=ours, outputs=outputs, hold=hold)
    folder = target.parent
    while not folder.exists() and not folder.is_symlink() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(_MSG_OUT_NOT_FOLDER.format(option=option, folder=folder), path=str(target))
    try:
        if folder == target.parent:  # the real test: a file can be made there (read-only mounts, ACLs)
            fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=folder)
            os.close(fd)
            os.unlink(probe)
        elif not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutputError(_MSG_OUT_DENIED.format(option=option, folder=folder, reason=reason), path=str(target)) from None


def resolve_lexicon(axis: str | None, lexicon: str | None, *, variant: str = "default") -> Lexicon:
    """The lexicon named by ``--axis``/``--lexicon``; ``--axis`` renames a ``--lexicon`` file's axis."""
    import fairtalk

    for option, given in (("--axis", axis), ("--lexicon", lexicon)):
        if given is not None and not given.strip():
            raise fairtalk.SpecError(_MSG_BLANK.format(option=option), choices=fairtalk.axis_names())
    if lexicon is not None:
        check_two_groups(lexicon, option="--lexicon")  # a bare multi-way name would silently mean its first pair
        loaded = fairtalk.load_lexicon(lexicon, variant=variant)
        return loaded if axis is None else dataclasses.replace(loaded, axis=axis)
    if axis is not None:
        check_two_groups(axis)
        return fairtalk.load_lexicon(axis, variant=variant)
    raise fairtalk.SpecError(_MSG_NO_AXIS, choices=fairtalk.axis_names())


def check_two_groups(axis: str, *, option: str = "--axis") -> None:
    """SpecError for a bare multi-way axis (``religion``) in a command that compares two groups: name the pairs to choose.

    Only audit runs every group of a multi-way axis (the first against each other one); a
    single-pair command would silently take its first two groups, a part of what audit runs.
    """
    from fairtalk.lexicons import refuse_bare_multiway

    refuse_bare_multiway(axis, given=f"{option} {axis}", needs="this command compares")


def _print_version(value: bool) -> None:
    if value:
        from fairtalk import __version__

        console.print(f"fairtalk {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Audit dialogue systems and text generators for demographic bias."""


#: The signals whose handler :func:`_stop_on_signals` installed (each stops the command once).
_STOP_SIGNALS: list[int] = []
#: A signal this many seconds or more after the first stops the process at once; sooner, it is ignored.
_FORCE_AFTER_S = 1.0
_MSG_FORCED = (
    "interrupted again: stopping now without tidying up; the answers already stored are kept (re-run the same "
    "command to resume)\n"
)


def _on_stop_signal(signum: int, frame: object) -> None:
    """The first Ctrl-C (or SIGTERM) stops the command; a burst of more is ignored, a later one stops it at once.

    Pressed twice a few ms apart, a second Ctrl-C would land in the handling of the first: cutting
    short the message that says where the answers are kept (exiting silently), or the interpreter's
    wait for its threads (a traceback). So signals within :data:`_FORCE_AFTER_S` of the first are
    ignored; one after that (a stopping that hangs: a model call that does not return) ends the
    process at once with exit 130. The answers in the store are committed as they come, so none
    is lost either way.
    """
    import signal
    import time

    first = time.monotonic()

    def again(signum: int, frame: object) -> None:
        if time.monotonic() - first >= _FORCE_AFTER_S:
            os.write(2, _MSG_FORCED.encode())
            os._exit(130)

    for stop in _STOP_SIGNALS:
        signal.signal(stop, again)
    raise KeyboardInterrupt


def _stop_on_signals() -> None:
    """Ctrl-C stops a command once, and SIGTERM (a CI runner cancelling a job, ``kill``) stops it as Ctrl-C does.

    So it says where the answers so far are kept and how to resume, and exits 130, rather than
    dying without a word, however often the signal comes. Only where the signal still has
    Python's own handling (a host that set its own handler keeps it; a background job that
    ignores SIGINT goes on ignoring it).
    """
    import signal

    _STOP_SIGNALS.clear()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        _STOP_SIGNALS.append(signal.SIGINT)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        _STOP_SIGNALS.append(signal.SIGTERM)
    for stop in _STOP_SIGNALS:
        signal.signal(stop, _on_stop_signal)


def _ignore_stop_signals_if_stopping() -> None:
    """Once a stopped command has said its last word, ignore further stop signals while the process exits.

    The interpreter resets its signal handlers as it shuts down, so a Ctrl-C of a burst landing
    then would end the process by the signal (exit -2) after the message was printed.
    """
    import signal

    if any(signal.getsignal(stop) is not _on_stop_signal for stop in _STOP_SIGNALS):  # a stop signal came
        for stop in _STOP_SIGNALS:
            signal.signal(stop, signal.SIG_IGN)


def main() -> None:
    """Entry point of the ``fairtalk`` console script."""
    _stop_on_signals()
    try:
        app()
    except FairtalkError as exc:  # raised outside a command body (option parsing callbacks)
        err_console.print(f"error: {terminal_safe(exc)}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(EXIT_USAGE)
    except Exception as exc:  # a bug: say so, with its own exit code (1 means a gate failed)
        if os.environ.get("FAIRTALK_DEBUG"):
            raise
        err_console.print(
            f"internal error: {type(exc).__name__}: {terminal_safe(exc)} (a bug in fairtalk; rerun with "
            "FAIRTALK_DEBUG=1 for the traceback and report it)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_INTERNAL)
    finally:
        _ignore_stop_signals_if_stopping()
