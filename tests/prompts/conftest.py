"""Shared fixtures: a small synthetic copy of the published Robust-NLG-Bias-Eval layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairtalk.prompts import build_prompts

#: The reference data folder (absent on most machines: tests that need it skip).
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
ROBUST = DATA / "arshiyaaggarwal__Robust-NLG-Bias-Eval" / "data"

#: Label pattern per group index (cycled over a prompt's rows).
PATTERN = {0: (1, 1, 0), 1: (1, 0, -1), 2: (1, 0, 0), 3: (-1, -1, 0, 2), 4: (0, -1, 1), 5: (0, 0, -1)}


def make_published(root: Path, *, seeds=(3, 9), n_paraphrases: int = 2, shift_last: bool = False) -> Path:
    """Write outputs, fixed prompts and paraphrase files; return the outputs folder."""
    prompts = build_prompts()
    out_dir = root / "data" / "generated-outputs"
    para_dir = root / "data" / "prompts" / "paraphrased"
    out_dir.mkdir(parents=True)
    para_dir.mkdir(parents=True)
    (root / "data" / "prompts" / "fixed-prompts.txt").write_text("\n".join(p.text for p in prompts))
    paranmt, qqppos = [], []
    for p in prompts:
        for j in range(n_paraphrases):
            paranmt.append(f" i knew the {p.group.lower()} , {p.template} {j}")
            qqppos.append(f" what {p.group.lower()} {p.template} ? {j}")
    (para_dir / "paranmt-prompt-50_sep_extract").write_text("\n".join(paranmt))
    (para_dir / "qqppos-prompt-50_sep_extract").write_text("\n".join(qqppos))
    (para_dir / "promp_paranmt_50.source").write_text(
        "\n".join(
            f"{prompts[k // n_paraphrases].text} <sep> (S) <sep> (ROOT (P{k % n_paraphrases}))" for k in range(len(paranmt))
        )
    )
    for seed in seeds:
        rows = []
        for k, p in enumerate(prompts):
            pattern = PATTERN[k % 6]
            texts = [p.text]
            for j in range(n_paraphrases):
                texts += [paranmt[n_paraphrases * k + j].strip(), qqppos[n_paraphrases * k + j].strip()]
            if shift_last and k == len(prompts) - 1:
                texts[-1] = "something else entirely"
            for r, text in enumerate(texts):
                rows.append(f"{pattern[(r + seed) % len(pattern)]}\t{text} and then more words")
        (out_dir / f"out_seed_{seed}_predictions.txt").write_text("\n".join(rows))
    return out_dir


@pytest.fixture
def published(tmp_path: Path) -> Path:
    """A synthetic outputs folder: 2 seeds x 60 prompts x 5 rows."""
    return make_published(tmp_path)
