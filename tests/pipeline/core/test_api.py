"""End to end through ``pipeline.extract`` semantics with real predictors (one engine per session)."""
from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from pipeline.tools.metrics import page_cer, result_lines, text_polygons, total_cer
from pipeline.tools.scoring import Scoreboard
from stages.extraction.field_specs import FIELDS
from stages.postprocess.values import id_check_char
from tests.conftest import SAMPLES, text_image

pytestmark = pytest.mark.slow


def _samples():
    return sorted(SAMPLES.glob("*.jpg"))


@pytest.fixture(scope="module")
def sample_results(inline_engine):
    paths = _samples()
    assert len(paths) >= 3, "committed samples are missing"
    return [(p, json.loads(p.with_suffix(".json").read_text(encoding="utf-8")), r)
            for p, r in zip(paths, inline_engine.extract_many([str(p) for p in paths]))]


def test_ocr_cer_on_committed_samples_is_at_most_2_percent(sample_results):
    counts = []
    for _, truth, res in sample_results:
        assert not res["errors"]
        counts.append(page_cer(text_polygons(truth["lines"]), result_lines(res)))
    assert total_cer(counts) <= 0.02


def test_schema_and_fields_on_samples(sample_results):
    board = Scoreboard(list(FIELDS))
    for path, truth, res in sample_results:
        assert res["schema_version"] == "1" and res["source"] == str(path)
        assert set(res["fields"]) == set(FIELDS)
        assert set(res["timings_ms"]) >= {"decode", "detect", "recognize", "extract", "total"}
        page = res["pages"][0]
        assert page["width"] > 0 and page["lines"] and len(page["lines"][0]["polygon"]) == 4
        for f in res["fields"].values():
            if f is not None:
                assert set(f) == {"value", "text", "confidence", "page", "polygon", "valid", "issues"}
                assert 0 <= f["confidence"] <= 1 and len(f["polygon"]) == 4
        board.add_document(path.name, truth["fields"], {k: (v or {}).get("value") for k, v in res["fields"].items()})
    assert board.micro.f1 >= 0.85, board.as_dict()


def test_a_corrupted_id_is_flagged(inline_engine):
    first17 = "11010519900307451"
    bad_check = "0" if id_check_char(first17) != "0" else "1"
    img = text_image(["保险单号：P2026000123456", f"投保人身份证号：{first17}{bad_check}", "投保人：张三"], width=760)
    res = inline_engine.extract(img)
    f = res["fields"]["policyholder_id_number"]
    assert f is not None and f["value"] == first17 + bad_check
    assert f["valid"] is False and "id_checksum" in f["issues"]
    assert res["needs_review"] is True and "invalid:policyholder_id_number" in res["review_reasons"]


@pytest.mark.parametrize("data,kind", [(b"", "EmptyFile"), (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "UnreadableImage"),
                                       (np.random.default_rng(0).bytes(2000), "UnsupportedFormat")])
def test_bad_input_gives_an_error_record(inline_engine, data, kind):
    res = inline_engine.extract(data)
    assert res["errors"] and res["errors"][0]["stage"] == "decode" and res["errors"][0]["type"] == kind
    assert res["needs_review"] and all(v is None for v in res["fields"].values())


def test_array_bytes_and_path_inputs_agree(inline_engine, tmp_path):
    img = text_image(["保险单号：P2026000999"])
    ok, buf = cv2.imencode(".png", img)
    path = tmp_path / "保单 扫描.png"
    path.write_bytes(buf.tobytes())
    texts = []
    for src in (img, buf.tobytes(), str(path)):
        res = inline_engine.extract(src)
        texts.append([ln["text"] for ln in res["pages"][0]["lines"]])
    assert texts[0] == texts[1] == texts[2] and "P2026000999" in "".join(texts[0])


def _without_timings(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "timings_ms"}


def test_extract_gives_the_engines_result_without_the_engine(inline_engine):
    from pipeline.core import api

    paths = _samples()[:3]
    by_engine = list(inline_engine.extract_many([str(p) for p in paths]))  # batched with each other
    for path, engine_result in zip(paths, by_engine):
        direct = api.extract(str(path))
        assert not direct["errors"] and direct["fields"]
        assert _without_timings(direct) == _without_timings(engine_result)
    assert isinstance(api._DEFAULT.processor, api.DocumentProcessor)  # one in-process processor, no engine
    assert api.extract(b"")["errors"][0]["type"] == "EmptyFile"  # bad input is still an error record


def _fax(lines: list[str]) -> np.ndarray:
    """A bilevel page as a fax server stores it: every pixel black or white."""
    grey = cv2.cvtColor(text_image(lines, width=760), cv2.COLOR_BGR2GRAY)
    return cv2.cvtColor(np.where(grey < 128, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2BGR)


def test_fax_and_photo_recognizers_load_on_first_use():
    from pipeline.core.processor import DocumentProcessor
    from stages.contracts.config import DocpipeConfig

    processor = DocumentProcessor(DocpipeConfig())
    by_capture = processor.reader.by_capture
    assert set(by_capture) == {"fax", "photo"}
    (clean,) = processor.process_batch([str(_samples()[0])])
    assert not clean["errors"] and not by_capture["fax"].loaded and not by_capture["photo"].loaded
    (fax,) = processor.process_batch([_fax(["保险单号：P2026000123456", "投保人：张三"])])
    assert not fax["errors"] and by_capture["fax"].loaded and not by_capture["photo"].loaded
    assert "P2026000123456" in "".join(ln["text"] for ln in fax["pages"][0]["lines"])
