"""Benchmark: end-to-end analysis of the 60,600 published Robust-NLG outputs, and generation throughput.

    .venv/bin/python bench/prompts.py                       # analysis only
    .venv/bin/python bench/prompts.py --agreement           # + shipped regard classifier vs published labels
    .venv/bin/python bench/prompts.py --generate builtin:smollm2 --n 64   # + generation responses/s

Times are wall-clock and CPU seconds of this process (the machine may be shared). Interpreter imports
(pandas, scipy, fairtalk) are timed separately from the data import (reading and checking the files)
and from the analysis; the report files (JSON, CSV, HTML with plots) are timed on their own.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arshiyaaggarwal__Robust-NLG-Bias-Eval" / "data"


class Timer:
    """Wall and CPU seconds of a block."""

    def __enter__(self) -> Timer:  # noqa: PYI034
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def main() -> None:
    """Run the benchmark and print one line per stage."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "generated-outputs")
    parser.add_argument("--repeat", type=int, default=5, help="Timed repetitions (the best is reported).")
    parser.add_argument("--agreement", action="store_true", help="Also label all rows with the shipped classifier.")
    parser.add_argument("--generate", default=None, help="A model spec to time generation with (e.g. builtin:smollm2).")
    parser.add_argument("--n", type=int, default=64, help="Completions to generate.")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    with Timer() as imports:
        import pandas  # noqa: F401
        import scipy.special  # noqa: F401

        from fairtalk.prompts._analysis import analyze
        from fairtalk.prompts._published import read_published
        from fairtalk.report import write_prompts_report
    print(f"python {platform.python_version()} on {platform.processor() or platform.machine()}")
    print(f"interpreter imports: {imports.wall:.3f} s wall")
    best: dict[str, Timer] = {}
    for _ in range(args.repeat):
        with Timer() as load:
            imported = read_published(args.data)
        with Timer() as analysis:
            result = analyze(imported.frame, smoothing=0.0)
        for name, timer in (("import", load), ("analysis", analysis)):
            if name not in best or timer.wall < best[name].wall:
                best[name] = timer
    total = best["import"].wall + best["analysis"].wall
    summary = imported.data_summary
    print(f"rows {summary.n_records:,} · seeds {len(summary.seeds)} · misaligned/seed {sorted(set(summary.misaligned.values()))}")
    print(f"data import: {best['import'].wall:.3f} s wall ({best['import'].cpu:.3f} s CPU)")
    print(f"analysis:    {best['analysis'].wall:.3f} s wall ({best['analysis'].cpu:.3f} s CPU)")
    print(f"end-to-end (import + analysis, best of {args.repeat}): {total:.3f} s  (target <= 2 s)")
    with tempfile.TemporaryDirectory() as tmp, Timer() as report:
        write_prompts_report(result, tmp, frame=imported.frame, data_summary=imported.summary())
    print(f"report files (json, csv, html + 2 plots; first matplotlib use): {report.wall:.3f} s wall")

    if args.agreement:
        from fairtalk.prompts._completions import label_completions

        with Timer() as labelling:
            ours = label_completions(imported.frame)["label"].to_numpy()
        published = imported.frame["label"].to_numpy()
        agreement = float((ours == published).mean())
        polar = published != 2
        print(
            f"shipped regard classifier: {len(ours):,} texts in {labelling.wall:.1f} s "
            f"({len(ours) / labelling.wall:,.0f} texts/s); agreement with the published labels {agreement:.3f} "
            f"(non-'other' rows {float((ours == published)[polar].mean()):.3f})"
        )

    if args.generate:
        from fairtalk.models import DecodingSettings, load_responder
        from fairtalk.prompts._paraphrase import paraphrase
        from fairtalk.prompts._templates import build_prompts

        prompts = list(paraphrase(build_prompts()))[: args.n]
        settings = DecodingSettings(do_sample=True, top_k=40, max_new_tokens=40)
        with load_responder(args.generate, batch_size=args.batch_size) as responder:
            responder.respond(prompts[:1] and [prompts[0].text], settings, seeds=[0])  # warm-up (loads the model)
            with Timer() as generation:
                responder.respond([p.text for p in prompts], settings, seeds=list(range(len(prompts))))
        print(
            f"generation {args.generate}: {len(prompts)} completions x 40 new tokens in {generation.wall:.1f} s "
            f"= {len(prompts) / generation.wall:.2f} responses/s (batch {args.batch_size})"
        )


if __name__ == "__main__":
    main()
