"""``docpipe eval`` options: the label-withholding measurement is an eval option, checked before any model loads."""
from __future__ import annotations

import argparse

import pytest

from pipeline.tools import evaluate
from stages.extraction.rules.lexicon import FULL_LEXICON, LabelWithholding, withheld_lexicon


def _args(tmp_path, *extra: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    evaluate.add_arguments(p)
    return p.parse_args([str(tmp_path), *extra])


def test_withhold_options_default_to_off(tmp_path) -> None:
    args = _args(tmp_path)
    assert LabelWithholding(args.withhold_labels, args.withhold_seed) == LabelWithholding()


def test_a_fraction_out_of_range_is_refused_before_any_work(tmp_path, capsys) -> None:
    assert evaluate.run(_args(tmp_path, "--withhold-labels", "1.5")) == 2
    assert "--withhold-labels" in capsys.readouterr().err
    with pytest.raises(ValueError):
        LabelWithholding(-0.1, 0)


def test_withholding_draws_per_document_and_seed() -> None:
    a = withheld_lexicon(0.25, 25, "doc one")
    assert len(a.labels) < len(FULL_LEXICON.labels)
    assert withheld_lexicon(0.25, 25, "doc one").labels.keys() == a.labels.keys()
    assert withheld_lexicon(0.25, 26, "doc one").labels.keys() != a.labels.keys()
