"""On Ray, an ``hf:`` model's prompts cut to fit are warned of as in this process; its token limit is checked first.

Review: the Ray responder did not forward ``prompts_cut`` (nor ``check_settings``) to the model on its actors, so a
run on Ray cut prompts without a word. The driver asks one actor, which tokenizes only: no copy of the model here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fairtalk  # noqa: E402
from fairtalk import SpecError  # noqa: E402
from fairtalk.models import RayEngine  # noqa: E402
from models.test_hf import gpt2_chat_dir, gpt2_dir  # noqa: F401 - the hf tests' tiny GPT-2 (64 positions)
from models.test_hf_prompt_cut import PAIRS, SAID, expected_cuts, recorded_cuts


def test_a_ray_run_warns_of_the_cut_prompts_and_refuses_a_limit_of_the_positions(
    cluster,  # noqa: ANN001 - the session's local Ray cluster (conftest)
    gpt2_chat_dir: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    options = {"model": f"hf:{gpt2_chat_dir}", "model_args": {"device": "cpu"}, "engine": RayEngine(num_actors=1)}
    made = fairtalk.respond(PAIRS, **options, settings=fairtalk.DecodingSettings(max_new_tokens=56))  # type: ignore[arg-type]
    assert [w[: len(SAID)] for w in made.warnings] == [SAID]
    fairtalk.write_responses(made.responses, tmp_path / "r.jsonl")
    assert recorded_cuts(tmp_path / "r.jsonl") == expected_cuts()
    store = tmp_path / "store.sqlite"
    with pytest.raises(SpecError, match=r"reads at most 64 tokens.* max_new_tokens=64 \(--max-new-tokens\)"):
        fairtalk.respond(PAIRS, **options, store=store, settings=fairtalk.DecodingSettings(max_new_tokens=64))  # type: ignore[arg-type]
    assert not store.exists()  # refused before any answer: the store it made is removed
