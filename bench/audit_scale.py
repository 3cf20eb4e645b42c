"""How ``fairtalk audit --model builtin:echo`` scales with the number of pairs: CPU, peak memory, store size.

It writes a synthetic JSONL corpus itself (``--lines`` lines, 2,000,000 by default, each a
``{"context": ...}`` object naming one gender's people: "my brother said he ...", seeded, almost
all distinct), then runs ``fairtalk audit --corpus PATH --axis gender --model builtin:echo
--pairs N --quiet`` for each N of ``--pairs`` (10k, 100k, 1M by default) in a child process under
``nice -n 5``, timed from its start (imports, reading the corpus, pairs, answers, scores, report):
wall, user + system CPU and peak RSS from ``wait4``, the run store's size, and the load average
(1 min) before and after. It prints the table and the CPU ratios against the smallest N.

``--profile N`` runs that one audit under cProfile instead (``--profile-out FILE``) and prints
the top functions by cumulative and own time; ``--tracemalloc N`` prints the largest allocation
sites at the peak of that audit (slow: tracemalloc costs several times the run); ``--stages N``
runs one audit printing its RSS when the pairs stage returns (what holds the pairs; with
``--until-decided``, when the ranking of the candidate pairs returns; with ``--similarity``, also
when the similarity test asks its placebo pairs) and its peak.

``--respond N`` writes a file of ``N`` pairs and runs ``fairtalk respond --pairs FILE --model
builtin:echo`` on it in a child process: wall, CPU and peak RSS.

``--until-decided MAX`` (with ``--looks K``) audits until decided (``--pairs`` is the first look,
``MAX`` the budget) and ``--similarity METHODS`` adds the similarity test, in every mode: the
paths off the bare audit's (issue 40's pairs held as columns there too).

Run: ``nice -n 5 .venv/bin/python bench/audit_scale.py [--pairs 10000,100000,1000000]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from _machine import machine, run_child

_AUDIT = "import sys; from fairtalk.cli import main; sys.argv = ['fairtalk', 'audit', *sys.argv[1:]]; sys.exit(main())"
_RESPOND = "import sys; from fairtalk.cli import main; sys.argv = ['fairtalk', 'respond', *sys.argv[1:]]; sys.exit(main())"
_TRACE = (
    "import sys, tracemalloc; tracemalloc.start(8); from fairtalk.cli import main;"
    "sys.argv = ['fairtalk', 'audit', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print('peak MiB', tracemalloc.get_traced_memory()[1] / 2**20)\n"
)
# The audit in-process, printing its RSS (``VmRSS``, ``VmHWM``) when the pairs stage returns (the sequential
# audit's ranking: ``nested_pairs``), when the similarity test asks its placebo pairs, and when the run ends.
_STAGES = (
    "import sys, gc\nfrom fairtalk.cli import main\n"
    "import fairtalk.run._axis as axis, fairtalk.run._sequential as sequential, fairtalk.run._similarity_test as similar\n"
    "def rss():\n"
    "    fields = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
    "    return ' '.join(f'{k} {int(fields[k].split()[0]) / 1024:.0f} MiB' for k in ('VmRSS', 'VmHWM'))\n"
    "def after(module, name, label, held):\n"
    "    built = getattr(module, name)\n"
    "    def measured(*args, **kwargs):\n"
    "        out = built(*args, **kwargs)\n"
    "        gc.collect()\n"
    "        pairs = held(out)\n"
    "        print(f'{label} ({type(pairs).__name__} of {len(pairs):,}):', rss(), flush=True)\n"
    "        return out\n"
    "    setattr(module, name, measured)\n"
    "after(axis, 'axis_pairs', 'after the pairs stage', lambda out: out[0])\n"
    "after(sequential, 'nested_pairs', 'after the ranking', lambda out: out.ranked)\n"
    "asked = similar.generate\n"
    "def asking(cached, pairs, *args, **kwargs):\n"
    "    if kwargs.get('label', '').endswith(('baseline answers', '(determinism check)')):\n"
    "        gc.collect()\n"
    "        print(f'similarity baseline asked ({type(pairs).__name__} of {len(pairs):,}):', rss(), flush=True)\n"
    "    return asked(cached, pairs, *args, **kwargs)\n"
    "similar.generate = asking\n"
    "sys.argv = ['fairtalk', 'audit', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print('end of the run:', rss())\n"
)

# Side-A (male) and side-B (female) people of the corpus; each line names one side's only.
_MALE = ["brother", "father", "dad", "son", "uncle", "husband", "boyfriend", "grandfather", "nephew", "king"]
_FEMALE = ["sister", "mother", "mom", "daughter", "aunt", "wife", "girlfriend", "grandmother", "niece", "queen"]
_VERBS = [
    "likes",
    "hates",
    "cooks",
    "paints",
    "fixes",
    "sells",
    "buys",
    "reads",
    "writes",
    "plays",
    "watches",
    "builds",
    "drives",
    "cleans",
    "teaches",
    "studies",
    "sings",
    "loves",
    "bakes",
    "grows",
]
_NOUNS = [
    "cars",
    "books",
    "pizza",
    "music",
    "tennis",
    "movies",
    "gardens",
    "houses",
    "bread",
    "poems",
    "games",
    "songs",
    "bikes",
    "boats",
    "cakes",
    "maps",
    "shoes",
    "lamps",
    "tables",
    "clocks",
    "guitars",
    "roses",
    "kites",
    "robots",
    "stamps",
    "coins",
    "puzzles",
    "trains",
    "chess",
    "math",
]
_TAILS = [
    "every day",
    "on weekends",
    "at night",
    "with friends",
    "for fun",
    "at work",
    "in the summer",
    "after school",
    "all the time",
    "when it rains",
    "in the morning",
    "before dinner",
]
_OPINIONS = ["that is great", "it is boring", "i am not sure", "what do you think", "is that weird", "i love it"]


def make_corpus(path: Path, n_lines: int, seed: int = 0) -> None:
    """Write ``n_lines`` JSONL contexts, each naming one gender's relative and a pronoun, almost all distinct."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(n_lines):
            male = rng.random() < 0.5
            person = rng.choice(_MALE if male else _FEMALE)
            pronoun = "he" if male else "she"
            verb, noun, tail, opinion = rng.choice(_VERBS), rng.choice(_NOUNS), rng.choice(_TAILS), rng.choice(_OPINIONS)
            text = f"my {person} says {pronoun} {verb} {noun} {tail}, {opinion}? ({i})"
            out.write(json.dumps({"context": text}) + "\n")


#: Options added to every audit (``--until-decided MAX``, ``--similarity METHODS``).
_EXTRA: list[str] = []


def _audit_args(corpus: Path, n: int, out: Path) -> list[str]:
    return [
        *_EXTRA,
        "--corpus",
        str(corpus),
        "--axis",
        "gender",
        "--model",
        "builtin:echo",
        "--pairs",
        str(n),
        "-o",
        str(out),
        "--quiet",
    ]


def _nice() -> list[str]:
    return ["nice", "-n", "5"]


def _size_mib(folder: Path, pattern: str) -> float:
    return sum(p.stat().st_size for p in folder.glob(pattern)) / 2**20


def _run(corpus: Path, n: int, tmp: Path) -> dict[str, float]:
    out = tmp / f"audit-{n}"
    figures = run_child([*_nice(), sys.executable, "-c", _AUDIT, *_audit_args(corpus, n, out)], tmp / f"audit-{n}.log")
    figures["store_mib"] = _size_mib(out, "store.sqlite*")
    figures["report_mib"] = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2**20 - figures["store_mib"]
    figures["html_kib"] = sum(p.stat().st_size for p in out.rglob("*.html")) / 1024
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    figures["timings"] = run.get("axes", {}).get("gender", {}).get("timings", {})  # type: ignore[assignment]
    return figures


def _profile(corpus: Path, n: int, tmp: Path, out_file: Path) -> None:
    import pstats

    command = [*_nice(), sys.executable, "-m", "cProfile", "-o", str(out_file), "-m", "fairtalk.cli", "audit"]
    figures = run_child([*command, *_audit_args(corpus, n, tmp / "profiled")], tmp / "profile.log")
    print(f"profiled {n:,} pairs: {figures['wall']:.1f} s wall, {figures['user'] + figures['system']:.1f} s CPU")
    stats = pstats.Stats(str(out_file))
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)


def _trace(corpus: Path, n: int, tmp: Path) -> None:
    log = tmp / "trace.log"
    run_child([*_nice(), sys.executable, "-c", _TRACE, *_audit_args(corpus, n, tmp / "traced")], log)
    print(log.read_text()[-2000:])


def _stages(corpus: Path, n: int, tmp: Path) -> None:
    log = tmp / "stages.log"
    figures = run_child([*_nice(), sys.executable, "-c", _STAGES, *_audit_args(corpus, n, tmp / "staged")], log)
    print(
        "".join(
            line
            for line in log.read_text().splitlines(keepends=True)
            if line.startswith(("after the pairs", "after the ranking", "similarity baseline", "end of"))
        ),
        end="",
    )
    print(
        f"{n:,} pairs: {figures['wall']:.1f} s wall, {figures['user'] + figures['system']:.1f} s CPU, peak RSS {figures['peak_rss_mib']:.0f} MiB"
    )


def _respond(corpus: Path, n: int, tmp: Path) -> None:
    """``fairtalk respond`` on a pairs file of ``n`` pairs (a seeded sample of the corpus'), in a child: its CPU and peak."""
    from fairtalk import Swapper, build_pairs, load_lexicon, read_corpus, write_pairs

    pairs = tmp / "pairs.jsonl"
    write_pairs(build_pairs(read_corpus(str(corpus)), Swapper(load_lexicon("gender")), limit=n), pairs)
    command = [*_nice(), sys.executable, "-c", _RESPOND, "--pairs", str(pairs), "--model", "builtin:echo"]
    figures = run_child([*command, "-o", str(tmp / "responses.jsonl"), "--quiet"], tmp / "respond.log")
    print(
        f"respond, {n:,} pairs: {figures['wall']:.1f} s wall, {figures['user'] + figures['system']:.1f} s CPU, "
        f"peak RSS {figures['peak_rss_mib']:.0f} MiB, load {figures['load_before']:.1f} -> {figures['load_after']:.1f}"
    )


def main() -> None:
    """Write the corpus, time the audits, print the table and the CPU ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default="10000,100000,1000000", help="comma-separated pair counts (default 10k,100k,1M)")
    parser.add_argument("--lines", type=int, default=2_000_000, help="lines of the synthetic corpus")
    parser.add_argument("--profile", type=int, metavar="N", help="profile one audit of N pairs (cProfile) instead")
    parser.add_argument("--profile-out", type=Path, help="where to keep the cProfile file")
    parser.add_argument("--tracemalloc", type=int, metavar="N", help="trace one audit of N pairs' allocations instead")
    parser.add_argument("--stages", type=int, metavar="N", help="one audit of N pairs: RSS after the pairs stage and peak")
    parser.add_argument(
        "--until-decided",
        type=int,
        metavar="MAX",
        help="audit until decided (--until-decided --max-pairs MAX; --pairs is the first look)",
    )
    parser.add_argument("--looks", type=int, help="with --until-decided: this many looks")
    parser.add_argument("--similarity", metavar="METHODS", help="also run the similarity test (--similarity METHODS)")
    parser.add_argument("--respond", type=int, metavar="N", help="`fairtalk respond` on a file of N pairs instead")
    parser.add_argument("--keep", type=Path, help="write the corpus and the runs here (kept) instead of a temp dir")
    args = parser.parse_args()
    if args.until_decided:
        _EXTRA.extend(["--until-decided", "--max-pairs", str(args.until_decided)])
        if args.looks:
            _EXTRA.extend(["--looks", str(args.looks)])
    if args.similarity:
        _EXTRA.extend(["--similarity", args.similarity])

    print(machine(stamp=True))
    with tempfile.TemporaryDirectory(dir=args.keep) as name:
        tmp = Path(name)
        corpus = tmp / "corpus.jsonl"
        started = time.perf_counter()
        make_corpus(corpus, args.lines)
        print(f"corpus: {args.lines:,} lines, {corpus.stat().st_size / 2**20:.0f} MiB, in {time.perf_counter() - started:.0f} s")
        if args.profile:
            _profile(corpus, args.profile, tmp, args.profile_out or tmp / "audit.prof")
            return
        if args.tracemalloc:
            _trace(corpus, args.tracemalloc, tmp)
            return
        if args.stages:
            _stages(corpus, args.stages, tmp)
            return
        if args.respond:
            _respond(corpus, args.respond, tmp)
            return
        rows: dict[int, dict[str, float]] = {}
        print(
            f"{'pairs':>10}{'wall s':>9}{'CPU s':>9}{'user s':>9}{'peak MiB':>10}{'store MiB':>10}{'report MiB':>11}{'HTML KiB':>9}   load"
        )
        for n in (int(x) for x in args.pairs.split(",")):
            r = rows[n] = _run(corpus, n, tmp)
            print(
                f"{n:>10,}{r['wall']:>9.1f}{r['user'] + r['system']:>9.1f}{r['user']:>9.1f}{r['peak_rss_mib']:>10.0f}"
                f"{r['store_mib']:>10.1f}{r['report_mib']:>11.1f}{r['html_kib']:>9.0f}   {r['load_before']:.1f} -> {r['load_after']:.1f}"
                f"   stages: {', '.join(f'{k} {v:.1f}' for k, v in r['timings'].items())}",  # type: ignore[union-attr]
                flush=True,
            )
    smallest = min(rows)
    base = rows[smallest]["user"] + rows[smallest]["system"]
    for n, r in sorted(rows.items()):
        if n != smallest:
            print(f"CPU {n:,} / {smallest:,}: {(r['user'] + r['system']) / base:.1f}x (pairs {n / smallest:.0f}x)")
    print(machine())


if __name__ == "__main__":
    main()
