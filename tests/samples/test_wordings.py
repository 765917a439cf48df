"""Withheld-wording dev draws: wordings nobody lists, swapped into dev pages only, the rest of the page unchanged."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from samples.synth.cli import add_arguments, run
from samples.synth.document import generate_document
from samples.synth.plan import make_plan
from samples.synth.wordings import WordingsError, generator_wordings, load_wordings
from stages.extraction.rules.lexicon import FULL_LEXICON

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "configs" / "withheld_wordings.yaml"
SECOND = ROOT / "configs" / "withheld_wordings_2.yaml"
THIRD = ROOT / "configs" / "withheld_wordings_3.yaml"
FOURTH = ROOT / "configs" / "withheld_wordings_4.yaml"


def test_shipped_wordings_are_in_no_lexicon_no_generator_list_and_no_other_set() -> None:
    known = generator_wordings()
    seen: set[str] = set()
    for path in (SHIPPED, SECOND, THIRD, FOURTH):
        for field, words in load_wordings(path).items():
            for text in words:
                assert text not in FULL_LEXICON.labels and FULL_LEXICON.pattern.fullmatch(text) is None, (field, text)
                assert text not in known and text not in seen, (path.name, text)
                seen.add(text)


def test_loading_rejects_unknown_fields_known_wordings_and_bad_entries(tmp_path: Path) -> None:
    bad = {"nope: [新标签]": "unknown field", "insured_name: [被保险人]": "already printed",
           "premium: []": "non-empty", "premium: 保费金额": "non-empty", "[a, b]": "mapping"}
    for text, message in bad.items():
        path = tmp_path / "w.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(WordingsError, match=message):
            load_wordings(path)
    with pytest.raises(WordingsError, match="cannot read"):
        load_wordings(tmp_path / "missing.yaml")


def test_swaps_change_labels_only_and_only_on_dev() -> None:
    wordings = load_wordings(SHIPPED)
    swaps = 0
    for i in range(40):
        plain, swapped = make_plan(11, "dev", i, 400), make_plan(11, "dev", i, 400, wordings=wordings)
        assert plain.fields == swapped.fields and plain.family == swapped.family
        changed = {e.key: e.label for e, f in zip(plain.entries, swapped.entries) if e.label != f.label}
        assert [(e.key, e.value) for e in plain.entries] == [(f.key, f.value) for f in swapped.entries]
        assert set(changed) == {k for k, _ in swapped.dev_wordings}
        for key, label in swapped.dev_wordings:
            assert label in wordings[key]
        swaps += len(changed)
    assert 40 * 3 < swaps < 40 * 8  # about a third of a page's 12–15 labelled fields
    with pytest.raises(ValueError, match="dev"):
        make_plan(11, "train", 0, 400, wordings=wordings)


def test_synth_wordings_option_prints_and_records_the_swaps(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([str(tmp_path), "--n", "2", "--seed", "4", "--split", "dev", "--workers", "1",
                              "--long-side", "700", "--wordings", str(SHIPPED)])
    assert run(args) == 0
    for path in sorted(tmp_path.glob("*.json")):
        truth = json.loads(path.read_text(encoding="utf-8"))
        printed = "".join(ln["text"] for ln in truth["lines"]).replace(" ", "")
        assert all(label in printed for label in truth.get("dev_wordings", {}).values())
    assert run(parser.parse_args([str(tmp_path), "--n", "1", "--split", "test", "--wordings", str(SHIPPED)])) == 2
    assert "dev_wordings" not in generate_document(4, "dev", 0, 700)[1]
