"""The head of a recognizer's inference program is found, its weights read, and a copy with new head weights
written that Paddle Inference runs with those weights. Paddle's legacy static mode runs in a child process."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from models.recognizer.lines import _Char, box_text, ink_centre
from stages.contracts.types import TextBox

_CHILD = textwrap.dedent('''
    import os, sys
    os.environ["FLAGS_enable_pir_api"] = "0"
    from pathlib import Path
    import numpy as np
    import paddle
    paddle.enable_static()
    out = Path(sys.argv[1])
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 5, 3], "float32")
        feat = paddle.nn.functional.relu(x)
        probs = paddle.nn.functional.softmax(paddle.nn.Linear(3, 4)(feat), axis=-1)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    paddle.static.save_inference_model(str(out / "base" / "inference"), [x], [probs], exe, program=main)

    from models.recognizer.head import HeadModel
    head = HeadModel(out / "base")
    w, b = head.weights()
    assert w.shape == (3, 4) and b.shape == (4,), (w.shape, b.shape)
    new_w, new_b = np.zeros_like(w), np.array([0.0, 0.0, 5.0, 0.0], np.float32)
    head.export(out / "tuned", new_w, new_b)
    assert np.array_equal(head.weights()[0], w)  # the loaded model itself is unchanged

    from paddle import inference
    cfg = inference.Config(str(out / "tuned" / "inference.pdmodel"), str(out / "tuned" / "inference.pdiparams"))
    pred = inference.create_predictor(cfg)
    h = pred.get_input_handle(pred.get_input_names()[0])
    h.copy_from_cpu(np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32"))
    pred.run()
    got = pred.get_output_handle(pred.get_output_names()[0]).copy_to_cpu()
    want = np.exp(new_b) / np.exp(new_b).sum()
    assert np.allclose(got, want, atol=1e-5), got[0, 0]
    print("ok")
''')


def test_export_writes_a_model_that_runs_with_the_new_head(tmp_path: Path) -> None:
    env = {**os.environ, "FLAGS_enable_pir_api": "0", "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    res = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-2000:]


def test_box_text_takes_one_unbroken_run_of_one_line() -> None:
    chars = [_Char(0, i, c, (10.0 + 10 * i, 10.0)) for i, c in enumerate("投保人张三")]
    chars += [_Char(1, i, c, (10.0 + 10 * i, 40.0)) for i, c in enumerate("被保险人")]

    def box(x0, x1, y0, y1):
        return TextBox(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32), 0.9)

    assert box_text(box(35, 65, 0, 20), chars) == "张三"
    assert box_text(box(0, 65, 0, 20), chars) == "投保人张三"
    assert box_text(box(0, 65, 0, 50), chars) is None  # two lines
    assert box_text(box(200, 300, 0, 20), chars) is None  # nothing inside


def test_a_closing_bracket_is_inside_a_box_that_holds_its_ink_but_not_its_cell_centre() -> None:
    cells = [(i * 10.0, 0.0, i * 10.0 + 10.0, 10.0) for i in range(4)]
    chars = [_Char(0, i, c, ink_centre(c, *cell)) for i, (c, cell) in enumerate(zip("（甲版）", cells))]
    poly = np.array([[6, 0], [34, 0], [34, 10], [6, 10]], np.float32)  # from the opening's ink to the closing's
    assert box_text(TextBox(poly, 1.0), chars) == "（甲版）"
    plain = [_Char(0, i, c, ((cell[0] + cell[2]) / 2, 5.0)) for i, (c, cell) in enumerate(zip("（甲版）", cells))]
    assert box_text(TextBox(poly, 1.0), plain) == "甲版"  # by cell centres both brackets were lost
