"""Predictor construction: which models run oneDNN in bfloat16, and that bf16 reads the same text as fp32."""
import dataclasses
import logging
import os

import numpy as np
import pytest

from stages.contracts.registry import resolve_model
from stages.contracts.config import PredictorConfig, RecognitionConfig
from stages import predictor
from stages.predictor import PaddlePredictor, PredictorBuildError, native_stderr_captured, use_bf16
from stages.recognition.recognizer import TextRecognizer
from tests.conftest import text_image


@pytest.fixture
def rec_model():
    return resolve_model("ppocrv4_rec", "rec")


@pytest.mark.parametrize("fast", [True, False])
def test_auto_follows_the_cpu(monkeypatch, rec_model, fast):
    monkeypatch.setattr(predictor, "cpu_has_fast_bf16", lambda: fast)
    assert use_bf16(rec_model, PredictorConfig()) is fast
    assert use_bf16(rec_model, PredictorConfig(cpu_bf16="off")) is False


def test_on_without_cpu_support_fails_the_build(monkeypatch, rec_model):
    monkeypatch.setattr(predictor, "cpu_has_fast_bf16", lambda: False)
    with pytest.raises(PredictorBuildError, match="cpu_bf16"):
        use_bf16(rec_model, PredictorConfig(cpu_bf16="on"))


def test_only_models_marked_bf16_ok_and_only_on_cpu_onednn(monkeypatch, rec_model):
    monkeypatch.setattr(predictor, "cpu_has_fast_bf16", lambda: True)
    det = resolve_model("ppocrv4_det", "det")  # fails under bf16 in paddle 3.3.1
    assert use_bf16(det, PredictorConfig(cpu_bf16="on")) is False
    assert use_bf16(rec_model, PredictorConfig(mkldnn=False)) is False
    assert use_bf16(dataclasses.replace(rec_model, mkldnn_ok=False), PredictorConfig()) is False
    assert use_bf16(rec_model, PredictorConfig(device="gpu", cpu_bf16="on")) is False


def test_yaml_on_off_booleans_are_accepted():
    assert PredictorConfig(cpu_bf16=False).cpu_bf16 == "off"
    assert PredictorConfig(cpu_bf16=True).cpu_bf16 == "on"
    with pytest.raises(ValueError):
        PredictorConfig(cpu_bf16="fast")


def _ink_crop(img, margin=6):
    """The rendered line cut to its ink, as a detector box would give it."""
    ys, xs = np.nonzero(img.min(axis=2) < 128)
    return img[max(0, ys.min() - margin): ys.max() + margin + 1, max(0, xs.min() - margin): xs.max() + margin + 1]


def test_bf16_recognizer_reads_what_fp32_reads():
    if not predictor.cpu_has_fast_bf16():
        pytest.skip("this CPU has no fast bfloat16")
    lines = ["保险单号：P202246130206008512", "投保人姓名：张伟", "保险金额：人民币伍拾万元整", "2031年07月12日"]
    crops = [_ink_crop(text_image([ln], width=60 + 32 * len(ln))) for ln in lines]
    batch = np.random.default_rng(0).random((4, 3, 48, 512), dtype=np.float32) - 0.5
    texts, probs = {}, {}
    for mode in ("off", "on"):
        rec = TextRecognizer(RecognitionConfig(), PredictorConfig(cpu_bf16=mode))
        texts[mode] = [r.text for r in rec.recognize_batch(crops)]
        probs[mode] = rec.runner.run_one(batch)
    assert texts["off"] == lines
    assert texts["on"] == texts["off"]
    # bf16 really ran: the probabilities differ in low bits, but not by much
    diff = np.abs(probs["on"] - probs["off"]).max()
    assert 0 < diff < 0.1


def test_native_stderr_is_captured_and_restored(capfd):
    with native_stderr_captured() as lines:
        os.write(2, b"\x1b[37m---    marked 3 operators\x1b[0m\nsomething else\n")
    os.write(2, b"after\n")
    assert lines == ["---    marked 3 operators", "something else"]
    assert capfd.readouterr().err == "after\n"


def test_captured_on_error_too(capfd):
    with pytest.raises(RuntimeError):
        with native_stderr_captured() as lines:
            os.write(2, b"boom detail\n")
            raise RuntimeError("x")
    assert lines == ["boom detail"]
    os.write(2, b"restored\n")
    assert capfd.readouterr().err == "restored\n"


def test_predictor_build_keeps_paddle_chatter_off_stderr(capfd, caplog, rec_model):
    if not predictor.cpu_has_fast_bf16():
        pytest.skip("this CPU has no fast bfloat16 (the pass that prints is not run)")
    caplog.set_level(logging.DEBUG, logger="stages.predictor")
    PaddlePredictor(rec_model, PredictorConfig(cpu_bf16="on"))
    assert "bfloat16" not in capfd.readouterr().err
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any("marked" in m and "bfloat16" in m for m in debug)
