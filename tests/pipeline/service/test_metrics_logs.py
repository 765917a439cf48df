"""Metric labels and log lines stay free of values: only reason kinds, known field keys and stage names."""
import json
import logging

from pipeline.service.logs import JsonFormatter
from pipeline.service.metrics import ServiceMetrics, reason_labels

FIELDS = frozenset({"insurer", "insured_name"})
STAGES = frozenset({"decode"})


def test_reason_labels_keep_kind_and_known_field_only():
    assert reason_labels("low_confidence:insurer", FIELDS, STAGES) == ("low_confidence", "insurer")
    assert reason_labels("error:decode", FIELDS, STAGES) == ("error", "decode")
    assert reason_labels("invalid:13812345678", FIELDS, STAGES) == ("invalid", "")
    assert reason_labels("张三:insurer", FIELDS, STAGES) == ("other", "insurer")
    assert reason_labels("no_extraction_stage", FIELDS, STAGES) == ("no_extraction_stage", "")


def test_observe_result_counts_outcome_stages_and_reasons():
    m = ServiceMetrics(FIELDS, lambda: {"engine": 3})
    m.observe_result("needs_review", {"timings_ms": {"decode": 12.0, "detect": 300.0, "total": 400.0},
                                      "review_reasons": ["missing:insured_name", "invalid:110101199001011234"]})
    text = m.render().decode()
    assert 'docpipe_documents_total{outcome="needs_review"} 1.0' in text
    assert 'docpipe_stage_seconds_count{stage="detect"} 1.0' in text and 'stage="total"' not in text
    assert 'docpipe_review_reasons_total{field="insured_name",reason="missing"} 1.0' in text
    assert "110101199001011234" not in text
    assert 'docpipe_queue_depth{queue="engine"} 3.0' in text


def test_json_log_lines_carry_only_safe_keys():
    rec = logging.LogRecord("pipeline.service", logging.INFO, __file__, 1, "document", (), None)
    rec.sha256, rec.outcome, rec.value, rec.source = "ab" * 32, "ok", "13812345678", "张三保单.jpg"
    line = json.loads(JsonFormatter().format(rec))
    assert line["event"] == "document" and line["sha256"] == "ab" * 32 and line["outcome"] == "ok"
    assert "value" not in line and "source" not in line
