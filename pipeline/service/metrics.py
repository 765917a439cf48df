"""Prometheus metrics of one app (its own registry, no process globals). Labels are low-cardinality by
construction: outcomes, stage names, review-reason kinds and field keys from fixed sets -- never a file
name or a field value."""
from __future__ import annotations

import re
from typing import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_KIND = re.compile(r"^[a-z][a-z_]{0,40}$")
STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


def reason_labels(reason: str, field_keys: frozenset[str], stages: frozenset[str]) -> tuple[str, str]:
    """``low_confidence:insurer`` -> (``low_confidence``, ``insurer``). Anything after the colon that is not a
    known field key or stage name is dropped; a kind that is not a plain identifier becomes ``other``."""
    kind, _, detail = reason.partition(":")
    kind = kind if _KIND.match(kind) else "other"
    detail = detail if detail in field_keys or detail in stages else ""
    return kind, detail


class ServiceMetrics:
    def __init__(self, field_keys: Iterable[str], queue_depths: Callable[[], dict[str, int]]):
        self.registry = CollectorRegistry()
        self.field_keys = frozenset(field_keys)
        self.stages = frozenset({"decode", "detect", "recognize", "extract", "engine", "service"})
        r = self.registry
        self.documents = Counter("docpipe_documents", "Documents finished, by outcome", ["outcome"], registry=r)
        self.stage_seconds = Histogram("docpipe_stage_seconds", "Time per document in each stage", ["stage"],
                                       buckets=STAGE_BUCKETS, registry=r)
        self.review_reasons = Counter("docpipe_review_reasons", "Review reasons of finished documents (kind, field)",
                                      ["reason", "field"], registry=r)
        self.requests = Counter("docpipe_http_requests", "HTTP requests answered", ["method", "route", "status"],
                                registry=r)
        self.request_seconds = Histogram("docpipe_http_request_seconds", "HTTP request latency", ["route"], registry=r)
        self.rejected = Counter("docpipe_rejected", "Requests refused by back-pressure or limits", ["reason"], registry=r)
        depth = Gauge("docpipe_queue_depth", "Documents waiting: engine (its input queue), in_flight (admitted "
                      "to the engine), jobs (accepted job documents not finished)", ["queue"], registry=r)
        for name in ("engine", "in_flight", "jobs"):
            depth.labels(name).set_function(lambda name=name: float(queue_depths().get(name, 0)))
        for outcome in ("ok", "needs_review", "error"):
            self.documents.labels(outcome)

    def observe_result(self, outcome: str, result: dict) -> None:
        self.documents.labels(outcome).inc()
        for stage, ms in result.get("timings_ms", {}).items():
            if stage != "total" and stage in self.stages:
                self.stage_seconds.labels(stage).observe(float(ms) / 1000.0)
        for reason in result.get("review_reasons", ()):
            self.review_reasons.labels(*reason_labels(str(reason), self.field_keys, self.stages)).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
