"""Export a trained extractor to a Paddle Inference (PIR) program and load it back (training venv).

Writes ``inference.json`` + ``inference.pdiparams``; inputs ``input_ids``, ``bbox``, ``attention_mask``
(int64, dynamic batch and length), one output: label probabilities ``[B, L, num_labels]`` float32.

    python -m models.extractor.export --checkpoint WORK/best.pdparams --base-into models/weights/extractor

writes only the fine-tuning base (``model.pdparams``) of a training checkpoint into an export folder.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import paddle
from paddle import inference
from paddle.static import InputSpec

from models.extractor.model import ExtractorModel, ProbabilityHead

MODEL_STEM = "inference"


def input_spec() -> list[InputSpec]:
    return [
        InputSpec([None, None], "int64", "input_ids"),
        InputSpec([None, None, 4], "int64", "bbox"),
        InputSpec([None, None], "int64", "attention_mask"),
    ]


BASE_NAME = "model.pdparams"  # trainable weights (float16) beside the inference program: the fine-tuning base


def save_base(model: ExtractorModel, path: Path) -> None:
    """The parameters of the text path (the unused visual backbone left out) as float16 numpy arrays."""
    state = {k: v.numpy().astype(np.float16) for k, v in model.state_dict().items()
             if not k.startswith("ernie_layout.visual.") and v.dtype in (paddle.float32,)}
    paddle.save(state, str(path))


def load_base(path: Path) -> dict:
    """:func:`save_base`'s file -> a float32 state dict for ``set_state_dict``."""
    return {k: np.asarray(v, dtype=np.float32) for k, v in paddle.load(str(path)).items()}


def export_model(model: ExtractorModel, out_dir: str | Path) -> Path:
    """Save ``model`` (switched to eval mode) as ``out_dir/inference.{json,pdiparams}``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    was_training = model.training
    head = ProbabilityHead(model)
    head.eval()
    static = paddle.jit.to_static(head, input_spec=input_spec(), full_graph=True)
    paddle.jit.save(static, str(out / MODEL_STEM))
    if was_training:
        model.train()
    return out


def make_predictor(model_dir: str | Path, threads: int = 1, mkldnn: bool = True) -> inference.Predictor:
    d = Path(model_dir)
    cfg = inference.Config(str(d / f"{MODEL_STEM}.json"), str(d / f"{MODEL_STEM}.pdiparams"))
    cfg.disable_gpu()
    if mkldnn:
        cfg.enable_mkldnn()
    else:
        cfg.disable_mkldnn()
    cfg.set_cpu_math_library_num_threads(threads)
    cfg.disable_glog_info()
    return inference.create_predictor(cfg)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from models.extractor.model import ArchitectureSpec, build_model

    ap = argparse.ArgumentParser(prog="python -m models.extractor.export")
    ap.add_argument("--checkpoint", type=Path, required=True, help="best.pdparams or last.pdparams of a training run")
    ap.add_argument("--base-into", type=Path, required=True, help="export folder that gets model.pdparams")
    args = ap.parse_args(argv)
    ck = paddle.load(str(args.checkpoint))
    model = build_model(ArchitectureSpec.from_dict(ck["spec"]))
    model.set_state_dict(ck["state"])
    save_base(model, args.base_into / BASE_NAME)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
