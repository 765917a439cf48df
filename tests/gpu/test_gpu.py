"""GPU tests: skipped cleanly without a CUDA device."""
import pytest

from pipeline.core.gpu import cuda_ready

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not cuda_ready(), reason="no CUDA device")]


def test_stream_pipeline_runs_and_reports_overlap():
    from tests.gpu.check_gpu import stream_pipeline

    rep = stream_pipeline(6)
    assert rep["pages"] == 6 and set(rep["stage_busy_ms"]) == {"pre", "model", "post"}
    assert all(v > 0 for v in rep["stage_busy_ms"].values())


def test_det_preprocess_gpu_matches_cpu():
    import cupy
    import cv2
    import numpy as np

    from pipeline.core.gpu import StageStream, det_preprocess_gpu
    from stages.detection.detector import normalize_det

    img = np.random.default_rng(1).integers(0, 255, (100, 80, 3), dtype=np.uint8)
    s = StageStream.create("t")
    gpu = cupy.asnumpy(det_preprocess_gpu(img, 64, 64, s))[0]
    cpu = normalize_det(cv2.resize(img, (64, 64), interpolation=cv2.INTER_LINEAR))
    assert np.abs(gpu - cpu).mean() < 0.1
