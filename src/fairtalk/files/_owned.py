"""Which files in an output folder fairtalk wrote: the marker a swap leaves, and the checks a run makes against it.

A run may replace only what fairtalk wrote. Every swap of :func:`fairtalk.files.commit_staged`
leaves in the folder :data:`WRITTEN`, a JSON file listing each entry (file or folder, as a
relative POSIX path, recursively) that fairtalk's swaps put there and that is still there.
Before a swap, :func:`check_owned` refuses when an entry the swap would replace or displace, or
anything under it, is not listed: the user's own files stay where they are, untouched.

A folder written by fairtalk 0.1, before the marker, is recognised by its ``run.json``
(``"generator": "fairtalk"`` and a run id): only ``index.html``, ``run.json``, the axis
folders it names and the files it lists under each axis (``axes.*.files``) count as
fairtalk's. So are, without a marker, a checkpoint's files (its ``config.json`` says
``"format": "fairtalk-checkpoint"``) and a ``reproduce debias`` folder's table, results and
pairs (its ``results.json`` lists them). A marker that cannot be read vouches for nothing, so a damaged one refuses rather
than deletes. The run store (``store.sqlite`` and its ``-wal``/``-shm``) and fairtalk's hidden
staging and trash folders are never part of a swap, so they are never checked here.

:func:`check_not_in_run` refuses, before any work, an output that lies inside another command's
output folder (one a marker marks): a file there would no longer be what that command wrote.

:func:`check_place` refuses, before any work, an output folder that is the file system's root,
the home folder or a folder holding it, or one that is or holds an input of the run; and
:func:`check_output_name` an output path given empty, as ``-`` or with a quoted ``~``, which
would otherwise become the working folder or a file or folder of that name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from fairtalk.errors import OutputError
from fairtalk.files._holders import is_lock_file

__all__ = [
    "FOLDER_KINDS",
    "WRITTEN",
    "check_folder_kind",
    "check_not_in_run",
    "check_output_name",
    "check_owned",
    "check_place",
    "mark_written",
    "present",
    "written_files",
]

#: The file in an output folder that lists what fairtalk wrote there (it is always fairtalk's own).
WRITTEN = ".written-by-fairtalk.json"
_GENERATOR = "fairtalk"
#: What a folder of fairtalk 0.1 holds at its top besides the axis folders (its run.json lists those).
_LEGACY_RUN, _LEGACY_TOP = "run.json", ("index.html", "run.json")
_MSG_NOT_WRITTEN = "not written by fairtalk, and this run would replace it; move it, or write the output elsewhere"
_MSG_UNREADABLE = "cannot be read ({reason}), and this run would replace it; move it, or write the output elsewhere"
_MSG_ROOT = "the output folder is the root of the file system; give the run a folder of its own"
_MSG_HOME = "the output folder is your home folder; give the run a folder of its own"
_MSG_HOLDS_HOME = "the output folder holds your home folder {home}; give the run a folder of its own"
_MSG_HOLDS_INPUT = "the output folder holds {name} {path}; give the run a folder of its own, outside its inputs"
_MSG_IS_INPUT = "the output folder is {name}; give the run a folder of its own, outside its inputs"
_MSG_EMPTY_NAME = "{option} is empty: give the {kind} to write{hint}"
_MSG_DASH = (
    "{option} '-' would make a {kind} named '-': this command writes no {kind} to standard output; give a "
    "path (./- for that name)"
)
_MSG_TILDE = (
    "{option} {given!r} starts with '~', which only a shell expands (quoted, it would make a {kind} named "
    "'~'); give the path itself, e.g. {expanded}"
)
#: A checkpoint of fairtalk before the marker: its config.json says ``"format": "fairtalk-checkpoint"``.
_CHECKPOINT_CONFIG, _CHECKPOINT_FORMAT = "config.json", "fairtalk-checkpoint"
_CHECKPOINT_FILES = ("config.json", "vocab.json", "model.safetensors", "pool.json", "pool.safetensors")
#: A ``reproduce debias`` folder before the marker: its results.json lists its files (``mode`` quick, full or custom).
_COMPARISON_RESULTS, _COMPARISON_MODES = "results.json", ("quick", "full", "custom")
_COMPARISON_TOP = ("table7.md", "table7.csv", "results.json", "pairs.jsonl")
#: What a folder of fairtalk's outputs holds, by the file fairtalk wrote at its top: kind -> (file, what it is).
FOLDER_KINDS: Mapping[str, tuple[str, str]] = {
    "run": ("run.json", "an audit's run (run.json)"),
    "checkpoint": ("config.json", "a trained model's checkpoint (config.json)"),
    "planted": ("planted.md", "the results of `reproduce planted` (planted.md)"),
    "debias": ("table7.md", "the results of `reproduce debias` (table7.md)"),
    "score": ("report.md", "a score's report (report.md)"),
    "comparison": ("report.md", "a comparison's report (report.md, results.json)"),
    "prompts": ("gaps.csv", "a prompt analysis (gaps.csv)"),
}
#: A comparison's results.json says ``"kind": "model comparison"`` (``fairtalk.results.ModelComparison.KIND``); a
#: score's, an audit result, has no kind: so the two, which write the same file names, are told apart.
_COMPARISON_KIND, _REPORT_RESULTS = "model comparison", "results.json"
_MSG_OTHER_KIND = "{option} holds {other}; {writes} a folder of its own: give a new or empty one"
_MSG_IN_RUN = (
    "{option} lies inside {folder}, {what}, the output folder of another fairtalk command: this command never writes "
    "into it (its files would no longer be what that command wrote); give a path outside it"
)
_SOME_OUTPUTS = "a folder of fairtalk's outputs ({marker})"
_MSG_OTHER_MARKER = (
    "the marker of another fairtalk command's outputs ({listed}), written into this folder, and this run would "
    "replace it; move that folder's files, or write the output elsewhere"
)
_N_LISTED = 4


def present(path: Path) -> bool:
    """Whether something (a file, a folder, a link, even a broken one) is at ``path``."""
    return path.exists() or path.is_symlink()


def _resolved(path: str | os.PathLike[str]) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # a loop of links
        return Path(os.path.abspath(path))


def _input_path(given: object) -> str | os.PathLike[str] | None:
    """The file or folder an input names, or None: a path that is there, or the PATH of a ``FORMAT:PATH`` spec.

    ``jsonl:data/c.jsonl`` names ``data/c.jsonl`` (as a corpus reader, or a model's
    ``path:DIR``, reads it), so a folder is checked against it as against the bare path. None
    for None, a ``builtin:`` spec, and text that names nothing there.
    """
    if not isinstance(given, str | os.PathLike):
        return None
    if os.path.exists(given):
        return given
    scheme, sep, rest = os.fspath(given).partition(":")
    if sep and rest and scheme != "builtin" and scheme.replace("-", "_").isidentifier() and os.path.exists(rest):
        return rest
    return None


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (OSError, RuntimeError, KeyError):  # no HOME and no password entry
        return None


def check_output_name(given: str | os.PathLike[str], *, option: str = "the output", kind: str = "folder") -> None:
    """Raise OutputError for an output path given empty, as ``-`` or starting with ``~``, as a shell never passes them on.

    ``-`` means standard output to most tools, and a quoted ``~`` is not expanded: either would
    make a file or folder of that name in the working folder (one that ``rm -r ~`` then deletes
    the wrong way). ``./-`` and a full path are accepted.
    """
    text = os.fspath(given)
    if not text.strip():
        hint = " (. for the working folder)" if kind == "folder" else ""
        raise OutputError(_MSG_EMPTY_NAME.format(option=option, kind=kind, hint=hint), path=repr(text))
    if text == "-":
        raise OutputError(_MSG_DASH.format(option=option, kind=kind), path=text)
    if text.startswith("~"):
        raise OutputError(_MSG_TILDE.format(option=option, given=text, kind=kind, expanded=os.path.expanduser(text)), path=text)


def check_place(folder: str | os.PathLike[str], inputs: Mapping[str, Any]) -> None:
    """Raise OutputError for the root, the home folder or a folder holding it, or a folder that is or holds an input.

    An input is a path or a ``FORMAT:PATH`` spec (``jsonl:data/c.jsonl`` is ``data/c.jsonl``,
    :func:`_input_path`); None and ``builtin:`` specs name no file.

    A folder given as ``-`` or starting with ``~`` is refused too (:func:`check_output_name`).
    """
    check_output_name(folder, option="the output folder")
    path = _resolved(folder)
    if path == path.parent:
        raise OutputError(_MSG_ROOT, path=str(path))
    home = _home()
    if home is not None and path == home:
        raise OutputError(_MSG_HOME, path=str(path))
    if home is not None and home.is_relative_to(path):
        raise OutputError(_MSG_HOLDS_HOME.format(home=home), path=str(path))
    for name, given in inputs.items():
        named = _input_path(given)  # a path, or a FORMAT:PATH spec's PATH (jsonl:data/c.jsonl)
        if named is None:
            continue  # None, a spec such as builtin:chitchat, or nothing there
        source = _resolved(named)
        if source == path and source.is_dir():
            raise OutputError(_MSG_IS_INPUT.format(name=name), path=str(path))
        if source != path and source.is_relative_to(path):
            raise OutputError(_MSG_HOLDS_INPUT.format(name=name, path=named), path=str(path))


def _relative(path: object) -> bool:
    """A relative POSIX path inside a folder: no empty, ``.`` or ``..`` part, no NUL, no backslash."""
    return (
        isinstance(path, str)
        and bool(path)
        and "\0" not in path
        and "\\" not in path
        and all(part not in ("", ".", "..") for part in path.split("/"))
    )


def _legacy(folder: Path) -> frozenset[str]:
    """What a fairtalk 0.1 run wrote into ``folder``, from its marked run.json; empty for anything else."""
    try:
        data = json.loads((folder / _LEGACY_RUN).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return frozenset()
    run_id = data.get("run_id") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("generator") != _GENERATOR or not isinstance(run_id, str) or not run_id.strip():
        return frozenset()
    found = set(_LEGACY_TOP)
    axes = data.get("axes")
    for entry in axes.values() if isinstance(axes, dict) else ():
        name = entry.get("folder") if isinstance(entry, dict) else None
        files = entry.get("files") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _relative(name) or "/" in name or not isinstance(files, dict):
            continue
        found.add(name)
        found.update(f for f in files.values() if _relative(f) and str(f).startswith(f"{name}/") and f.count("/") == 1)
    return frozenset(found)


def _legacy_checkpoint(folder: Path) -> frozenset[str]:
    """A checkpoint folder of fairtalk before the marker: its files, when its config.json says it is one."""
    try:
        data = json.loads((folder / _CHECKPOINT_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return frozenset()
    if not isinstance(data, dict) or data.get("format") != _CHECKPOINT_FORMAT:
        return frozenset()
    return frozenset(name for name in _CHECKPOINT_FILES if (folder / name).is_file() and not (folder / name).is_symlink())


def _legacy_comparison(folder: Path) -> frozenset[str]:
    """The top files of a ``reproduce debias`` folder of fairtalk before the marker, from its results.json's ``files``."""
    try:
        data = json.loads((folder / _COMPARISON_RESULTS).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return frozenset()
    files = (
        data.get("files")
        if isinstance(data, dict) and data.get("mode") in _COMPARISON_MODES and isinstance(data.get("models"), dict)
        else None
    )
    if not isinstance(files, dict):
        return frozenset()
    named = {_COMPARISON_RESULTS, *(os.path.basename(str(path)) for path in files.values())}
    return frozenset(
        name for name in _COMPARISON_TOP if name in named and (folder / name).is_file() and not (folder / name).is_symlink()
    )


def written_files(folder: str | os.PathLike[str]) -> frozenset[str]:
    """The entries fairtalk wrote in ``folder`` (relative POSIX paths, folders too), as its marker lists them.

    Without a marker, a marked ``run.json`` of fairtalk 0.1 says, a checkpoint's config.json
    (``"format": "fairtalk-checkpoint"``) for its files, or a ``reproduce debias`` results.json
    (its ``files``) for the table, results and pairs; otherwise, and for a marker that cannot be
    read or parsed, nothing is fairtalk's.
    """
    path = Path(folder)
    marker = path / WRITTEN
    if not present(marker):
        return _legacy(path) | _legacy_checkpoint(path) | _legacy_comparison(path)
    try:
        data = json.loads(marker.read_text(encoding="utf-8")) if marker.is_file() and not marker.is_symlink() else None
    except (OSError, ValueError, RecursionError):
        return frozenset()
    files = data.get("files") if isinstance(data, dict) and data.get("generator") == _GENERATOR else None
    return frozenset(f for f in files if _relative(f)) if isinstance(files, list) else frozenset()


def check_folder_kind(folder: str | os.PathLike[str], kind: str | None, *, option: str, writes: str) -> None:
    """Raise OutputError when ``folder`` holds the outputs of another fairtalk command than ``kind``'s.

    A folder's kind is read from the file fairtalk wrote at its top (:data:`FOLDER_KINDS`; a
    score's and a comparison's report, which share their file names, by their results.json); a
    folder of no kind (new, empty, the user's own files) passes, and so does one of ``kind``
    (None: a folder of any kind is refused). ``writes`` says what the run writes there
    ("train writes a checkpoint into").
    """
    path = Path(folder)
    if not path.is_dir():
        return
    for name, what in _kinds(path, written_files(path)):
        if name != kind:
            raise OutputError(_MSG_OTHER_KIND.format(option=option, other=what, writes=writes), path=str(path))


def _kinds(folder: Path, owned: frozenset[str]) -> Iterator[tuple[str, str]]:
    """The kinds of fairtalk output (:data:`FOLDER_KINDS`: name, what it is) whose top file fairtalk wrote in ``folder``."""
    for name, (signature, what) in FOLDER_KINDS.items():
        if signature in owned and present(folder / signature) and _of_kind(folder, name, owned):
            yield name, what


def check_not_in_run(path: str | os.PathLike[str], *, option: str) -> None:
    """Raise OutputError when ``path`` lies inside the output folder of a fairtalk command (one its marker marks).

    A folder above ``path`` that holds :data:`WRITTEN` (even one that cannot be read), or that
    fairtalk before the marker wrote (:func:`written_files`), is another command's: an audit's
    ``race/pairs.jsonl`` replaced by ``fairtalk pairs`` would no longer be the pairs its
    results.json and report describe. ``path`` itself is not looked at (a folder output's own
    earlier marker is the caller's to check). The error names the folder and what it holds.
    """
    target = Path(os.path.abspath(path))
    try:
        target = target.parent.resolve() / target.name  # the file's own link is not followed: it is what is replaced
    except (OSError, RuntimeError):  # a loop of links: the path as given
        pass
    for folder in target.parents:
        owned = written_files(folder)
        if not owned and not present(folder / WRITTEN):
            continue
        what = next((text for _, text in _kinds(folder, owned)), _SOME_OUTPUTS.format(marker=WRITTEN))
        shown = _shown(folder)
        raise OutputError(_MSG_IN_RUN.format(option=option, folder=shown, what=what), path=os.fspath(path))


def _shown(folder: Path) -> str:
    """``folder`` relative to the working folder when it lies inside it (as a user gives it), else whole."""
    here = _resolved(".")
    return folder.relative_to(here).as_posix() if folder != here and folder.is_relative_to(here) else str(folder)


def _of_kind(folder: Path, kind: str, owned: frozenset[str]) -> bool:
    """Whether a folder holding ``kind``'s signature is of ``kind``: a score's and a comparison's by their results.json."""
    if kind not in ("score", "comparison"):
        return True
    try:
        data = json.loads((folder / _REPORT_RESULTS).read_text(encoding="utf-8")) if _REPORT_RESULTS in owned else None
    except (OSError, ValueError, RecursionError):
        data = None
    compared = isinstance(data, dict) and data.get("kind") == _COMPARISON_KIND
    return compared == (kind == "comparison")  # a report whose results.json is gone or unreadable counts as a score's


def _raise(exc: OSError) -> None:
    raise exc


def entries_under(folder: Path, name: str) -> Iterator[str]:
    """``name`` and, when it is a folder (not a link), every entry under it, top-down in name order."""
    yield name
    top = folder / name
    if not top.is_dir() or top.is_symlink():
        return
    for root, dirs, files in os.walk(top, onerror=_raise):  # links are not followed: a linked folder is one entry
        dirs.sort()
        base = Path(root).relative_to(folder).as_posix()
        for child in sorted(dirs + files):
            yield f"{base}/{child}"


def check_owned(folder: str | os.PathLike[str], entries: Iterable[str]) -> frozenset[str]:
    """Raise OutputError unless every existing entry of ``entries`` in ``folder``, and all under it, is fairtalk's.

    The error names the first file (in name order) fairtalk did not write, else the first such
    folder. Returns what fairtalk wrote there (:func:`written_files`).
    """
    base = Path(folder)
    owned = written_files(base)
    for name in sorted(set(entries)):
        path = base / name
        if not present(path) or (name == WRITTEN and path.is_file() and not path.is_symlink()):
            continue
        first_folder = None
        try:
            for rel in entries_under(base, name):
                if rel in owned or is_lock_file(rel):  # an output's lock a killed command left: never the user's
                    continue
                if (base / rel).is_dir() and not (base / rel).is_symlink():
                    first_folder = first_folder or rel
                else:
                    raise OutputError(_other_marker(base / rel) or _MSG_NOT_WRITTEN, path=str(base / rel))
        except OSError as exc:
            where = exc.filename if isinstance(exc.filename, str) else str(path)
            raise OutputError(_MSG_UNREADABLE.format(reason=exc.strerror or exc), path=where) from exc
        if first_folder is not None:
            raise OutputError(_MSG_NOT_WRITTEN, path=str(base / first_folder))
    return owned


def _other_marker(path: Path) -> str | None:
    """What a marker below an output folder is (another command wrote into a folder of this one's), or None if it is none."""
    if path.name != WRITTEN:
        return None
    listed = sorted(written_files(path.parent))
    if not listed:  # not fairtalk's marker (or one that lists nothing): the user's file of that name
        return None
    names = ", ".join(listed[:_N_LISTED]) + (f" and {len(listed) - _N_LISTED} more" if len(listed) > _N_LISTED else "")
    return _MSG_OTHER_MARKER.format(listed=f"it lists {names}")


def mark_written(staging: Path, target: Path, replaced: Iterable[str]) -> None:
    """Check the swap of ``staging`` into ``target`` (``replaced``: the entries it replaces) and write its marker.

    The new marker, written into ``staging`` so that it moves in with the rest, lists every
    entry the swap brings and what fairtalk wrote earlier that stays (listed and still there).
    """
    gone = {name for name in replaced if present(target / name)}
    owned = check_owned(target, gone)
    kept = {rel for rel in owned if rel.split("/", 1)[0] not in gone and rel != WRITTEN and present(target / rel)}
    new = {rel for child in staging.iterdir() if child.name != WRITTEN for rel in entries_under(staging, child.name)}
    text = json.dumps({"generator": _GENERATOR, "files": sorted(kept | new)}, indent=1, ensure_ascii=False)
    with open(staging / WRITTEN, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
        handle.flush()
        os.fsync(handle.fileno())
