"""Few-shot layout families: wordings nobody lists, one fixed layout, never in a default draw, drawn on request."""
from __future__ import annotations

import json
from pathlib import Path

from samples.synth import labels
from samples.synth.cli import add_arguments, run
from samples.synth.document import generate_document
from samples.synth.few_shot import FEW_SHOT_FAMILIES
from samples.synth.layouts import RENDERERS
from samples.synth.plan import make_plan
from stages.extraction.rules.lexicon import FULL_LEXICON


def test_new_wordings_are_in_no_lexicon_and_no_other_label_list() -> None:
    listed = labels.all_shared_labels() | labels.all_held_out_labels()
    seen: set[str] = set()
    for family in FEW_SHOT_FAMILIES.values():
        assert family.name in RENDERERS
        for text in family.new:
            assert text in family.labels.values()
            assert text not in FULL_LEXICON.labels and FULL_LEXICON.pattern.fullmatch(text) is None
            assert text not in listed and text not in seen
            seen.add(text)


def test_default_draws_never_use_a_few_shot_family() -> None:
    for split in ("train", "dev", "test"):
        for i in range(120):
            assert make_plan(5, split, i, 200).family not in FEW_SHOT_FAMILIES


def test_a_few_shot_family_has_one_layout_and_its_labels() -> None:
    for name, family in FEW_SHOT_FAMILIES.items():
        plans = [make_plan(3, "dev", i, 400, family=name) for i in range(6)]
        for plan in plans:
            assert plan.family == name and not plan.sectioned and plan.colon == family.colon
            fields = [e for e in plan.entries if e.key is not None]
            assert all(e.label == family.labels[e.key] for e in fields)
        orders = {tuple(e.key for e in p.entries if e.key in ("policy_number", "insured_name", "premium"))
                  for p in plans}
        assert len(orders) == 1  # the same order of fields on every document


def test_synth_layouts_option_writes_the_family(tmp_path: Path) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([str(tmp_path), "--n", "2", "--seed", "4", "--split", "dev", "--workers", "1",
                              "--long-side", "700", "--layouts", "fs_ledger,fs_grid"])
    assert run(args) == 0
    layouts = [json.loads(p.read_text(encoding="utf-8"))["layout"] for p in sorted(tmp_path.glob("*.json"))]
    assert layouts == ["fs_ledger", "fs_grid"]
    bad = parser.parse_args([str(tmp_path), "--n", "1", "--layouts", "nope"])
    assert run(bad) == 2
    truth = generate_document(4, "dev", 0, 700, family="fs_ledger")[1]
    printed = "".join(ln["text"] for ln in truth["lines"])
    assert all(text in printed for text in FEW_SHOT_FAMILIES["fs_ledger"].new if truth["fields"].get(
        {v: k for k, v in FEW_SHOT_FAMILIES["fs_ledger"].labels.items()}[text]))
