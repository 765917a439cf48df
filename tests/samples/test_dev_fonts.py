"""Dev-only typefaces: a dev draw may print its documents in faces no split draws (``synth --fonts``)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from samples.synth.cli import add_arguments, run
from samples.synth.fonts import DEV_ONLY_FACES, FACES
from samples.synth.plan import make_plan
from samples.synth.splits import HELD_OUT_FONTS, SHARED_FONTS


def test_dev_only_faces_are_no_splits_faces() -> None:
    assert not set(DEV_ONLY_FACES) & (set(FACES) | set(SHARED_FONTS) | set(HELD_OUT_FONTS))


def test_a_plan_takes_one_of_the_named_faces_and_keeps_the_rest() -> None:
    names = tuple(DEV_ONLY_FACES)
    drawn = {make_plan(3, "dev", i, 400, fonts=names).face.name for i in range(24)}
    assert drawn == set(names)
    plain, shifted = make_plan(3, "dev", 5, 400), make_plan(3, "dev", 5, 400, fonts=names[:1])
    assert shifted.face.name == names[0] and shifted.field_text == plain.field_text and shifted.family == plain.family
    with pytest.raises(ValueError, match="dev"):
        make_plan(3, "test", 0, 400, fonts=names[:1])
    with pytest.raises(ValueError, match="dev-only face"):
        make_plan(3, "dev", 0, 400, fonts=("Noto Sans CJK SC",))


def test_synth_fonts_option_records_the_face_and_is_refused_outside_dev(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    face = next(iter(DEV_ONLY_FACES))
    assert run(parser.parse_args([str(tmp_path), "--n", "2", "--seed", "4", "--split", "dev", "--workers", "1",
                                  "--long-side", "700", "--fonts", face, "--variants", "multipage"])) == 0
    fonts = {json.loads(p.read_text(encoding="utf-8"))["font"] for p in tmp_path.glob("*.json")}
    assert fonts == {face}
    assert run(parser.parse_args([str(tmp_path), "--n", "1", "--split", "test", "--fonts", face])) == 2
    assert run(parser.parse_args([str(tmp_path), "--n", "1", "--split", "dev", "--fonts", "Noto Sans CJK SC"])) == 2
