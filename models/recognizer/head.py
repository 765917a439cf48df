"""The CTC head of a PP-OCR recognizer's inference program: its input features, its weights, and a copy of the
model with new head weights. Uses Paddle's legacy static program (the inference ``.pdmodel``), training side only."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from stages.recognition.crop import resize_to_height

os.environ.setdefault("FLAGS_enable_pir_api", "0")  # the .pdmodel files are legacy programs

_STRIDE = 8


@dataclass(frozen=True)
class Head:
    features: str  # the variable feeding the head: batch x frames x channels
    weight: str  # channels x classes
    bias: str


def find_head(program) -> Head:
    """The last ``matmul_v2 -> elementwise_add -> softmax`` of the program: the CTC head."""
    ops = program.global_block().ops
    producer = {name: op for op in ops for key in op.output_names for name in op.output(key)}
    soft = [op for op in ops if op.type == "softmax"]
    if not soft:
        raise ValueError("no softmax in the recognizer program")
    add = producer[soft[-1].input("X")[0]]
    mat = producer[add.input("X")[0]]
    if add.type != "elementwise_add" or mat.type != "matmul_v2":
        raise ValueError(f"unexpected head: {mat.type} -> {add.type} -> softmax")
    return Head(mat.input("X")[0], mat.input("Y")[0], add.input("Y")[0])


class HeadModel:
    """A recognizer's inference program loaded for reading features and head weights."""

    def __init__(self, model_dir: Path, prefix: str = "inference"):
        import paddle

        paddle.enable_static()
        self.model_dir, self.prefix = Path(model_dir), prefix
        self.scope = paddle.static.Scope()
        self.exe = paddle.static.Executor(paddle.CPUPlace())
        with paddle.static.scope_guard(self.scope):
            self.program, self.feeds, self.fetches = paddle.static.load_inference_model(
                str(self.model_dir / prefix), self.exe)
        self.head = find_head(self.program)
        self._predictors: dict[tuple[str, int], object] = {}  # (cut variable, threads) -> predictor

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.array(self.scope.find_var(self.head.weight).get_tensor()),
                np.array(self.scope.find_var(self.head.bias).get_tensor()))

    def features(self, crops: Sequence[np.ndarray], height: int = 48,
                 buckets: Sequence[int] = (128, 256, 384, 512, 768, 1024, 1600), batch: int = 8,
                 threads: int = 2, progress: Optional[Callable[[int], object]] = None) -> list[np.ndarray]:
        """Per crop, in order: frames x channels float32 of the crop resized as the recognizer resizes it. The
        program cut at the head's input runs under Paddle Inference (oneDNN; the static executor is ~10x
        slower), in batches of one fixed shape per width bucket, right-padded as the recognizer pads; each crop
        keeps the frames over its own pixels plus one. ``progress`` is called with the crops done after each batch."""
        predictor = self._feature_predictor(threads)
        x_in = predictor.get_input_handle(predictor.get_input_names()[0])
        y_out = predictor.get_output_handle(predictor.get_output_names()[0])
        resized = [resize_to_height(c, height, buckets[-1]) for c in crops]
        order = sorted(range(len(resized)), key=lambda i: resized[i].shape[2])
        out: list[np.ndarray] = [np.zeros((0, 0), np.float32)] * len(resized)
        for start in range(0, len(order), batch):
            members = order[start:start + batch]
            need = max(resized[i].shape[2] for i in members)
            width = next(b for b in buckets if b >= need)
            x = np.zeros((batch, 3, height, width), np.float32)
            for row, i in enumerate(members):
                x[row, :, :, : resized[i].shape[2]] = resized[i]
            x_in.copy_from_cpu(x)
            predictor.run()
            feat = y_out.copy_to_cpu()
            for row, i in enumerate(members):
                frames = min(feat.shape[1], -(-resized[i].shape[2] // _STRIDE) + 1)
                out[i] = np.asarray(feat[row, :frames], np.float32)
            if progress is not None:
                progress(len(members))
        return out

    def _feature_predictor(self, threads: int):
        """The program cut at the head's input under Paddle Inference (see ``predictor_until``)."""
        return self.predictor_until(self.head.features, threads)

    def predictor_until(self, var: str, threads: int = 2):
        """The program cut at variable ``var`` under Paddle Inference (oneDNN), built on first use."""
        key = (var, threads)
        if key not in self._predictors:
            import tempfile

            from paddle import inference

            with tempfile.TemporaryDirectory() as tmp:
                self._save(Path(tmp), [self.program.global_block().var(var)])
                cfg = inference.Config(str(Path(tmp) / "inference.pdmodel"), str(Path(tmp) / "inference.pdiparams"))
                cfg.disable_gpu()
                cfg.enable_mkldnn()
                cfg.set_cpu_math_library_num_threads(threads)
                cfg.disable_glog_info()
                self._predictors[key] = inference.create_predictor(cfg)
        return self._predictors[key]

    def _save(self, out_dir: Path, fetch) -> None:
        import paddle

        with paddle.static.scope_guard(self.scope):
            paddle.static.save_inference_model(str(out_dir / "inference"), [self.program.global_block().var(self.feeds[0])],
                                               fetch, self.exe, program=self.program)

    def export(self, out_dir: Path, weight: np.ndarray, bias: np.ndarray) -> None:
        """The same model with the head's weights replaced, written as ``out_dir/inference.pdmodel|pdiparams``."""
        w0, b0 = self.weights()
        if weight.shape != w0.shape or bias.shape != b0.shape:
            raise ValueError(f"head shapes {weight.shape}/{bias.shape} != {w0.shape}/{b0.shape}")
        self.export_params(out_dir, {self.head.weight: weight, self.head.bias: bias})

    def export_params(self, out_dir: Path, values: dict[str, np.ndarray]) -> None:
        """The same model with the named parameters replaced, written as ``out_dir/inference.pdmodel|pdiparams``;
        the loaded program keeps its own values."""
        import paddle

        place = paddle.CPUPlace()
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        was_dynamic = paddle.in_dynamic_mode()
        paddle.enable_static()
        try:
            with paddle.static.scope_guard(self.scope):
                saved = {}
                for name, value in values.items():
                    tensor = self.scope.find_var(name).get_tensor()
                    saved[name] = np.array(tensor)
                    if value.shape != saved[name].shape:
                        raise ValueError(f"{name}: shape {value.shape} != {saved[name].shape}")
                    tensor.set(value.astype(saved[name].dtype), place)
                try:
                    self._save(out_dir, self.fetches)
                finally:
                    for name, value in saved.items():
                        self.scope.find_var(name).get_tensor().set(value, place)
        finally:
            if was_dynamic:
                paddle.disable_static()
