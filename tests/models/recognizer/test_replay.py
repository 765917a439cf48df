"""The recognizer replayed in dynamic mode from its backbone's output, from a cut inside the backbone and from the
image gives the inference program's logits; replayed from the backbone's output it learns
(the CTC loss of a batch falls under Adam), and exports a model that Paddle Inference runs with the trained
weights. Paddle's legacy static mode runs in a child process, as in test_head."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_CHILD = textwrap.dedent('''
    import os, sys
    os.environ["FLAGS_enable_pir_api"] = "0"
    from pathlib import Path
    import numpy as np
    import paddle
    from models.recognizer.head import HeadModel
    from models.recognizer.tail import batch_loss, error_rate
    from models.recognizer.replay import ProgramReplay, cut_variable, logits_var, neck_input
    from models.recognizer.rows import Member, Row
    from stages.contracts.registry import resolve_model

    out = Path(sys.argv[1])
    model = HeadModel(resolve_model("ppocrv4_rec", "rec", None, None).directory)
    start, end = neck_input(model.program), logits_var(model.program)
    x = np.random.default_rng(0).normal(0, 0.5, (2, 3, 48, 256)).astype("float32")
    block = model.program.global_block()
    inner = cut_variable(model.program, "h6")
    assert block.var(inner).shape[2] == 6 and cut_variable(model.program, "input") == model.feeds[0]
    with paddle.static.scope_guard(model.scope):
        feats, mid, logits = model.exe.run(model.program, feed={model.feeds[0]: x},
                                           fetch_list=[block.var(start), block.var(inner), block.var(end)])
    paddle.disable_static()
    for var, value in ((model.feeds[0], x), (inner, mid)):
        got = ProgramReplay(model.program, model.scope, var, end)(paddle.to_tensor(value)).numpy()
        assert np.abs(got - logits).max() < 1e-3, (var, np.abs(got - logits).max())
    replay = ProgramReplay(model.program, model.scope, start, end)
    got = replay(paddle.to_tensor(feats)).numpy()
    assert got.shape == logits.shape and np.abs(got - logits).max() < 1e-3, np.abs(got - logits).max()

    rows = [Row(feats[i].astype(np.float16), (Member(0, 12, (5, 6, 7)), Member(16, 30, (8, 8, 9))))
            for i in range(2)]
    optimizer = paddle.optimizer.Adam(learning_rate=1e-3, parameters=replay.parameters())
    losses = []
    for _ in range(30):
        loss, n = batch_loss(replay, rows, [0, 1])
        assert n == 4
        losses.append(float(loss))
        (loss / n).backward()
        optimizer.step()
        optimizer.clear_grad()
    assert losses[-1] < 0.2 * losses[0], losses
    assert error_rate(replay, rows) == 0.0  # the four lines are now read as labelled

    model.export_params(out / "tuned", replay.parameters_numpy())
    from paddle import inference
    cfg = inference.Config(str(out / "tuned" / "inference.pdmodel"), str(out / "tuned" / "inference.pdiparams"))
    cfg.disable_gpu()
    pred = inference.create_predictor(cfg)
    pred.get_input_handle(pred.get_input_names()[0]).copy_from_cpu(x)
    pred.run()
    probs = pred.get_output_handle(pred.get_output_names()[0]).copy_to_cpu()
    want = paddle.nn.functional.softmax(replay(paddle.to_tensor(feats)), axis=-1).numpy()
    assert np.abs(probs - want).max() < 1e-3, np.abs(probs - want).max()
    print("ok")
''')


def test_replay_matches_the_program_learns_and_exports(tmp_path: Path) -> None:
    env = {**os.environ, "FLAGS_enable_pir_api": "0", "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    res = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-3000:]
