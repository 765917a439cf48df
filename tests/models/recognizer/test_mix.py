"""Blending a refitted head with the shipped one (models/recognizer/mix.py): the weights lie on the line between the
two heads, and the command writes a complete model whose head is that blend, with the fitted head's record and the
command appended. Paddle's legacy static mode runs in a child process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from models.recognizer.mix import blend

_ROOT = Path(__file__).resolve().parents[3]


def test_blend_runs_from_the_shipped_head_to_the_fitted_one() -> None:
    fitted = (np.ones((3, 4), np.float32), np.full(4, 2.0, np.float32))
    shipped = (np.zeros((3, 4), np.float32), np.zeros(4, np.float32))
    for alpha in (0.0, 0.3, 1.0):
        weight, bias = blend(fitted, shipped, alpha)
        assert weight.dtype == np.float32 and np.allclose(weight, alpha) and np.allclose(bias, 2.0 * alpha)


def test_blend_refuses_a_share_outside_zero_to_one_and_heads_of_other_shapes() -> None:
    head = (np.ones((3, 4), np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError):
        blend(head, head, 1.5)
    with pytest.raises(ValueError):
        blend(head, (np.ones((3, 5), np.float32), np.ones(5, np.float32)), 0.5)


_CHILD = textwrap.dedent('''
    import sys
    from pathlib import Path
    import numpy as np
    from models.recognizer.head import HeadModel
    from stages.contracts.registry import resolve_model
    out, fitted = Path(sys.argv[1]), Path(sys.argv[2])
    shipped = HeadModel(resolve_model("ppocrv4_rec", "rec", None, None).directory).weights()
    tuned = HeadModel(fitted).weights()
    got = HeadModel(out).weights()
    assert not np.allclose(tuned[0], shipped[0])
    for g, t, s in zip(got, tuned, shipped):
        assert np.allclose(g, 0.25 * t + 0.75 * s, atol=1e-6)
    print("ok")
''')


def test_the_command_writes_a_model_with_the_blended_head(tmp_path: Path) -> None:
    fitted = _ROOT / "models" / "weights" / "rec_fax"
    env = {**os.environ, "FLAGS_enable_pir_api": "0", "PYTHONPATH": str(_ROOT)}
    out = tmp_path / "mixed"
    res = subprocess.run([sys.executable, "-m", "models.recognizer.mix", "--fitted", str(fitted), "--alpha", "0.25",
                          "--out", str(out)], capture_output=True, text=True, env=env, timeout=300, cwd=_ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert {"inference.pdmodel", "inference.pdiparams", "ppocr_keys_v1.txt"} <= {p.name for p in out.iterdir()}
    record = json.loads((out / "training.json").read_text(encoding="utf-8"))
    assert record["mix"] == {"alpha": 0.25} and record["commands"][-1].startswith("python -m models.recognizer.mix")
    res = subprocess.run([sys.executable, "-c", _CHILD, str(out), str(fitted)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-2000:]
