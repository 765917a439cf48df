"""Review routes over real HTTP: corrections with click-to-fill source lines, checked, stored and exported."""
from __future__ import annotations

import io
import json
import re
import zipfile

import httpx
import pytest

from models.extractor.corrections import labelled_pages
from pipeline.service.app import create_app
from pipeline.service.review import STATIC_DIR
from stages.extraction.ernie_features import LABELS
from tests.pipeline.service.conftest import live_server, service_config



def test_page_builds_no_markup_from_strings_and_loads_nothing_external():
    files = {p.name: p.read_text(encoding="utf-8") for p in STATIC_DIR.iterdir()}
    assert {"review.html", "review.js", "review.css"} <= set(files)
    for name, text in files.items():
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in text, (name, sink)
        # the only absolute URL is the SVG namespace; every asset is served from /static
        assert set(re.findall(r"https?://[^\s\"')]+", text)) <= {"http://www.w3.org/2000/svg"}, name
        assert "@import" not in text and "url(" not in text, name


def _poly(i: int) -> list[list[float]]:
    return [[40.0, 40.0 + 30 * i], [200.0, 40.0 + 30 * i], [200.0, 64.0 + 30 * i], [40.0, 64.0 + 30 * i]]


def _machine() -> dict:
    texts = ["投保人", "何博瑞", "被保险人", "何博瑞", "签名：何博瑞"]
    fields = {"policyholder_name": {"value": "何博瑞", "text": "何博瑞", "confidence": 0.4, "page": 0,
                                    "polygon": _poly(1), "valid": True, "issues": []},
              "insured_name": None}
    return {"schema_version": "1", "source": "a.png", "errors": [], "timings_ms": {}, "fields": fields,
            "pages": [{"index": 0, "width": 400, "height": 300,
                       "lines": [{"text": t, "score": 0.9, "polygon": _poly(i)} for i, t in enumerate(texts)]}],
            "needs_review": True, "review_reasons": ["low_confidence:policyholder_name", "missing:insured_name"]}


@pytest.mark.slow
def test_correction_source_lines_are_checked_narrowed_stored_and_exported(inline_engine, tmp_path):
    app = create_app(service_config(tmp_path / "svc"), engine=inline_engine)
    store = app.state.svc.store
    jid = store.create_job([("a.png", b"\x89PNG not decoded here")])
    store.claim(1)
    store.finish(jid, 0, _machine())
    url_doc = f"/v1/jobs/{jid}/documents/0"
    with live_server(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        bad = c.post(url_doc + "/corrections", json={"fields": {"insured_name": "何博瑞"},
                                                     "sources": {"insured_name": [{"page": 0, "line": 5}]}})
        assert bad.status_code == 422 and bad.json()["errors"][0]["type"] == "BadSourceLine"
        assert "何博瑞" not in bad.text
        orphan = c.post(url_doc + "/corrections", json={"fields": {}, "sources": {"insured_name": [{"page": 0, "line": 3}]}})
        assert orphan.status_code == 422
        assert c.post("/v1/jobs/nope/documents/0/corrections", json={
            "fields": {"insured_name": "x"}, "sources": {"insured_name": [{"page": 0, "line": 3}]}}).status_code == 404

        body = {"fields": {"insured_name": "何博瑞", "policyholder_name": "何博睿"},
                "sources": {"insured_name": [{"page": 0, "line": 4}],           # "签名：何博瑞", trimmed to the name
                            "policyholder_name": [{"page": 0, "line": 1}]}}      # retyped: no span kept
        saved = c.post(url_doc + "/corrections", json=body)
        assert saved.status_code == 201, saved.text
        span = {"page": 0, "line": 4, "start": 3, "end": 6, "text": "何博瑞", "polygon": _poly(4)}
        assert saved.json()["sources"] == {"insured_name": [span]}
        assert c.get(url_doc).json()["corrections"][-1]["sources"] == {"insured_name": [span]}

        zf = zipfile.ZipFile(io.BytesIO(c.get("/v1/corrections/export").content))
    label = json.loads(zf.read(f"labels/{jid}_0.json"))
    f = label["fields"]["insured_name"]
    assert f["source_lines"] == [span] and f["text"] == "何博瑞" and f["page"] == 0
    assert f["polygon"] == [[40.0, 160.0], [200.0, 160.0], [200.0, 184.0], [40.0, 184.0]]
    assert "source_lines" not in label["fields"]["policyholder_name"]
    (page,) = labelled_pages(label, "x")
    tagged = [(li, ci) for li, labs in enumerate(page.doc.labels) for ci, lab in enumerate(labs)
              if LABELS[int(lab)].endswith("-insured_name")]
    assert tagged == [(4, 3), (4, 4), (4, 5)]  # the clicked line, not the first 何博瑞 on the page
    assert page.from_source_lines == ("insured_name",)
