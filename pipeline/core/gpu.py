"""GPU building blocks: CUDA streams and events per stage (CuPy), and array pre/post-processing on the
device. Nothing here touches Paddle; the Paddle-GPU calls are in ``stages/predictor.py`` (a predictor is
bound to a stage's stream with ``Config.set_exec_stream``) and are only reached when
``paddle.is_compiled_with_cuda()`` is true.

Without a CUDA device (or without CuPy) ``cuda_ready()`` is false and none of this runs: the CPU engine
is used instead. Nothing is faked."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

log = logging.getLogger(__name__)

_DET_MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255.0
_DET_INV_STD = 1.0 / (np.array([0.229, 0.224, 0.225], np.float32) * 255.0)


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
        mean = cupy.asarray(_DET_MEAN)
        inv = cupy.asarray(_DET_INV_STD)
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


def rec_normalize_gpu(batch_uint8: Any, stream: StageStream) -> Any:
    """Nx H x W x 3 uint8 crops (already resized and padded) -> Nx3xHxW float32 in [-1, 1] on the device."""
    import cupy

    with stream.stream:
        x = cupy.asarray(batch_uint8, dtype=cupy.float32) / 127.5 - 1.0
        return cupy.ascontiguousarray(x.transpose(0, 3, 1, 2))


def elapsed_ms(start_event: Any, end_event: Any) -> Optional[float]:
    import cupy

    try:
        end_event.synchronize()
        return float(cupy.cuda.get_elapsed_time(start_event, end_event))
    except Exception:
        return None
