"""Tests for fairtalk.prompts._sources: ``paraphrase_prompts(source=...)``, the prompt set of a run."""

from __future__ import annotations

import pytest

import fairtalk
from fairtalk.prompts import STRUCTURES, GroupPair, GroupSet, PromptSet, paraphrase_prompts

GROUPS = GroupSet(("man", "woman"), (GroupPair("gender", "man", "woman"),))


def test_builtin_source_gives_fixed_prompts_then_filtered_paraphrases() -> None:
    made = paraphrase_prompts(GROUPS, source="builtin")
    assert isinstance(made, PromptSet) and made.source == "builtin"
    n_fixed = 20
    assert [p.structure for p in made.prompts[:n_fixed]] == ["original"] * n_fixed
    assert len(made) == n_fixed + made.filtered.n_kept == n_fixed * (1 + len(STRUCTURES))
    fewer = paraphrase_prompts(GROUPS, drop_questions=True)
    assert dict(fewer.filtered.counts)["question"] > 0 and len(fewer) < len(made)


def test_none_source_and_default_groups() -> None:
    made = paraphrase_prompts(source="none")
    assert len(made) == 60 and made.filtered.n_in == 0 and {p.structure for p in made.prompts} == {"original"}


def test_unknown_source_and_unpaired_aesop_files_are_spec_errors(tmp_path) -> None:
    with pytest.raises(fairtalk.SpecError, match="--source must be builtin, aesop, none or model:SPEC"):
        paraphrase_prompts(GROUPS, source="nope")
    with pytest.raises(fairtalk.SpecError, match="one extract per source"):
        paraphrase_prompts(GROUPS, source="aesop", aesop_sources=[tmp_path / "a.source"])
    with pytest.raises(fairtalk.SpecError, match="one extract per source"):
        paraphrase_prompts(GROUPS, source="aesop")


def test_model_source_asks_a_responder() -> None:
    made = paraphrase_prompts(GROUPS, source="model:builtin:echo", n_model=1, balance=False)
    assert made.source == "model:builtin:echo" and made.filtered.n_in == 20
    assert all(p.structure.startswith("model:") for p in made.prompts[20:])


def test_the_rule_based_paraphrases_of_given_prompts_come_from_paraphrase() -> None:
    from fairtalk.prompts import paraphrase

    fixed = fairtalk.build_prompts(("man",))[:1]
    out = paraphrase(fixed, structures=["wh_question"])
    assert [p.structure for p in out] == ["wh_question"]
