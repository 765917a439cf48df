"""Paddle Inference predictors: built once, input/output handles reused on every call."""
from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import warnings
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from stages.contracts.registry import ResolvedModel
from stages.contracts.config import PredictorConfig

log = logging.getLogger(__name__)


class PredictorBuildError(RuntimeError):
    pass


def _paddle_inference():
    with warnings.catch_warnings():
        # paddle warns about a missing ccache (only relevant to compiling custom ops) on import
        warnings.filterwarnings("ignore", message=".*ccache.*")
        from paddle import inference
    return inference


def cpu_has_fast_bf16() -> bool:
    from paddle.base import core

    return bool(core.supports_bfloat16() and core.supports_bfloat16_fast_performance())


def use_bf16(model: ResolvedModel, cfg: PredictorConfig) -> bool:
    """Whether this model's CPU predictor runs oneDNN in bfloat16 (see ``PredictorConfig.cpu_bf16``)."""
    if cfg.device != "cpu" or not cfg.mkldnn or not model.mkldnn_ok or cfg.cpu_bf16 == "off" or not model.bf16_ok:
        return False
    fast = cpu_has_fast_bf16()
    if cfg.cpu_bf16 == "on" and not fast:
        raise PredictorBuildError(
            f"predictor.cpu_bf16 is 'on' but this CPU has no fast bfloat16 (avx512_bf16/AMX) for {model.key}; "
            "use 'auto' or 'off'"
        )
    return fast


def build_config(model: ResolvedModel, cfg: PredictorConfig, exec_stream: int | None = None):
    inference = _paddle_inference()

    pc = inference.Config(str(model.model_file), str(model.params_file))
    if cfg.device == "gpu":
        import paddle

        if not paddle.is_compiled_with_cuda():
            raise PredictorBuildError("predictor.device is 'gpu' but this Paddle build has no CUDA")
        pc.enable_use_gpu(cfg.gpu_memory_pool_mb, cfg.gpu_id)
        if exec_stream is not None:
            # CUDA builds only: run this predictor on the stage's own stream (pipeline.core.gpu.StageStream.ptr)
            pc.set_exec_stream(exec_stream)
        if cfg.tensorrt:
            precision = (
                inference.PrecisionType.Half if cfg.tensorrt_precision == "fp16" else inference.PrecisionType.Float32
            )
            pc.enable_tensorrt_engine(
                workspace_size=1 << 30, max_batch_size=32, min_subgraph_size=3,
                precision_mode=precision, use_static=cfg.tensorrt_use_static, use_calib_mode=False,
            )
            if cfg.tensorrt_cache_dir is not None:
                pc.set_optim_cache_dir(str(cfg.tensorrt_cache_dir))
    else:
        pc.disable_gpu()
        pc.set_cpu_math_library_num_threads(cfg.cpu_threads)
        if cfg.mkldnn and model.mkldnn_ok:
            pc.enable_mkldnn()
            if cfg.mkldnn_cache_capacity:
                pc.set_mkldnn_cache_capacity(cfg.mkldnn_cache_capacity)
            if use_bf16(model, cfg):
                pc.enable_mkldnn_bfloat16()
        else:
            if cfg.mkldnn:
                log.warning("%s does not run under oneDNN with this Paddle; using the plain CPU kernels", model.key)
            pc.disable_mkldnn()
    if model.format == "pir":
        pass  # PIR programs: memory_optimize_pass is legacy-only (fails on PIR in 3.3.1)
    else:
        pc.enable_memory_optim()
    pc.switch_ir_optim(cfg.ir_optim)
    pc.disable_glog_info()
    if cfg.profile:
        pc.enable_profile()
    return pc


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@contextmanager
def native_stderr_captured() -> Iterator[list[str]]:
    """Collect what native code writes to file descriptor 2 inside the block (Paddle's IR passes print their
    summaries with ``std::cerr``, e.g. 13 lines from the oneDNN bfloat16 pass on every predictor build). The
    lines (colour codes removed) are in the yielded list once the block ends; fd 2 is restored even on error.
    Only used around predictor construction, at start-up."""
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                yield lines
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                tmp.seek(0)
                text = tmp.read().decode("utf-8", "replace")
                lines.extend(s for s in (_ANSI.sub("", ln).rstrip() for ln in text.splitlines()) if s.strip())
    finally:
        os.close(saved)


def _relog(key: str, lines: list[str]) -> None:
    """Pass summaries (``---`` lines) go to DEBUG; anything else Paddle printed is a WARNING, never dropped."""
    for line in lines:
        log.log(logging.DEBUG if line.lstrip().startswith("---") else logging.WARNING, "%s: paddle: %s", key, line)


class PaddlePredictor:
    """One predictor with its handles. Not thread-safe: one runner per worker."""

    def __init__(self, model: ResolvedModel, cfg: PredictorConfig, exec_stream: int | None = None):
        inference = _paddle_inference()

        self.model = model
        failure = None
        with native_stderr_captured() as printed:
            try:
                self._predictor = inference.create_predictor(build_config(model, cfg, exec_stream))
            except Exception as exc:  # paddle raises various C++-wrapped errors
                failure = exc
        _relog(model.key, printed)
        if failure is not None:
            raise PredictorBuildError(
                f"cannot build predictor for {model.key} from {model.directory}: {failure}"
            ) from failure
        self.input_names = list(self._predictor.get_input_names())
        self.output_names = list(self._predictor.get_output_names())
        self._inputs = [self._predictor.get_input_handle(n) for n in self.input_names]
        self._outputs = [self._predictor.get_output_handle(n) for n in self.output_names]

    def run(self, *arrays: np.ndarray) -> list[np.ndarray]:
        if len(arrays) != len(self._inputs):
            raise ValueError(f"{self.model.key}: expected {len(self._inputs)} inputs, got {len(arrays)}")
        for handle, arr in zip(self._inputs, arrays):
            handle.reshape(list(arr.shape))
            handle.copy_from_cpu(np.ascontiguousarray(arr))
        self._predictor.run()
        return [h.copy_to_cpu() for h in self._outputs]

    def run_one(self, array: np.ndarray) -> np.ndarray:
        return self.run(array)[0]

