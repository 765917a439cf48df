"""GPU building blocks: CUDA streams and events per stage (CuPy), and array pre/post-processing on the
device. Nothing here touches Paddle; the Paddle-GPU calls are in ``stages/predictor.py`` (a predictor is
bound to a stage's stream with ``Config.set_exec_stream``) and are only reached when
``paddle.is_compiled_with_cuda()`` is true.

Without a CUDA device (or without CuPy) ``cuda_ready()`` is false and none of this runs: the CPU engine
is used instead. Nothing is faked."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.detection.detector import DET_INV_STD, DET_MEAN

log = logging.getLogger(__name__)



def cuda_ready() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy

        return bool(cupy.cuda.is_available()) and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError, CUDARuntimeError (no driver), ...
        return False


def paddle_cuda_ready() -> bool:
    """True when Paddle is a CUDA build. Checked before any Paddle stream/event call: on the CPU wheel
    ``paddle.device.cuda.current_stream()`` segfaults and ``Stream()``/``Event()`` raise."""
    try:
        import paddle

        return bool(paddle.is_compiled_with_cuda())
    except Exception:
        return False


@dataclass
class StageStream:
    """One stage's CUDA stream. ``ready_event()`` records an event after the stage's last enqueued work;
    the next stage calls ``wait(event)`` so its stream waits on the device, not the host."""

    name: str
    stream: Any  # cupy.cuda.Stream

    @classmethod
    def create(cls, name: str) -> "StageStream":
        import cupy

        return cls(name, cupy.cuda.Stream(non_blocking=True))

    @property
    def ptr(self) -> int:
        """Raw cudaStream_t, for ``paddle.inference.Config.set_exec_stream``."""
        return int(self.stream.ptr)

    def ready_event(self) -> Any:
        import cupy

        ev = cupy.cuda.Event(block=False, disable_timing=False)
        ev.record(self.stream)
        return ev

    def wait(self, event: Any) -> None:
        if event is not None:
            self.stream.wait_event(event)


def stage_streams(config: DocpipeConfig, names: Sequence[str]) -> dict[str, "StageStream"]:
    """On a CUDA build of Paddle with a device: one CUDA stream per model stage (its ``ptr`` goes to
    ``Config.set_exec_stream``); empty on CPU, where the stream APIs must not be touched. The caller holds
    them: a stream must outlive the predictor bound to it."""
    if config.predictor.device != "gpu" or not (paddle_cuda_ready() and cuda_ready()):
        return {}
    return {name: StageStream.create(name) for name in names}


def det_preprocess_gpu(image_bgr: Any, out_h: int, out_w: int, stream: StageStream) -> Any:
    """HxWx3 uint8 (host or device) -> 1x3xHxW float32 on the device: bilinear resize + ImageNet normalize
    (the same maths as ``stages.detection.detector.normalize_det`` after ``cv2.resize``)."""
    import cupy
    from cupyx.scipy import ndimage

    with stream.stream:
        img = cupy.asarray(image_bgr, dtype=cupy.float32)
        h, w = img.shape[:2]
        zoomed = ndimage.zoom(img, (out_h / h, out_w / w, 1.0), order=1, mode="nearest", grid_mode=True)
        zoomed = zoomed[:out_h, :out_w]
        mean = cupy.asarray(DET_MEAN)
        inv = cupy.asarray(DET_INV_STD)
        x = (zoomed - mean) * inv
        return cupy.ascontiguousarray(x.transpose(2, 0, 1)[None])


def db_bitmap_gpu(prob: Any, thresh: float, stream: StageStream) -> np.ndarray:
    """Threshold the DB probability map on the device and bring back only the uint8 bitmap (a quarter of
    the bytes of the float map); contour tracing then runs on the host with OpenCV."""
    import cupy

    with stream.stream:
        bitmap = (cupy.asarray(prob) > thresh).astype(cupy.uint8)
        host = cupy.asnumpy(bitmap, stream=stream.stream)
    stream.stream.synchronize()
    return host
