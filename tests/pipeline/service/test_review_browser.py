"""The review page in a real browser: Debian chromium driven by Playwright (no browser download)."""
from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import httpx
import pytest

from pipeline.service.app import create_app
from tests.conftest import SAMPLES
from tests.pipeline.service.conftest import live_server, service_config, wait_job

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"


def test_review_edit_approve_and_export(inline_engine, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    app = create_app(service_config(tmp_path / "svc"), engine=inline_engine)
    page_bytes = (SAMPLES / "test_00012.jpg").read_bytes()
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        loc = c.post("/v1/jobs", files={"file": ("test_00012.jpg", page_bytes, "image/jpeg")}).headers["location"]
        job = wait_job(c, loc)
        machine = c.get(job["results"]).json()["results"][0]
        assert machine["needs_review"], "the test page must need review to appear in the queue"
        key = "policyholder_name"
        assert machine["fields"][key] and machine["fields"][key]["polygon"]
        new_value = "审核员改名"

        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.goto(url + "/review")
            page.wait_for_selector(f"#f-{key}")
            page.wait_for_selector("#overlay polygon.line")
            assert page.locator("#queue-list li").count() == 1
            assert "low_confidence" in page.locator("#queue-list li").inner_text() or "missing" in page.locator(
                "#queue-list li").inner_text()
            # polygon -> field
            page.locator(f'#overlay polygon.field[data-key="{key}"]').dispatch_event("click")
            assert page.evaluate("document.activeElement.id") == f"f-{key}"
            assert page.locator(f'div.field[data-key="{key}"]').get_attribute("class").split().count("active") == 1
            # field -> polygon, and arrow navigation between fields
            page.locator("#f-insurer").focus()
            assert "active" in page.locator('#overlay polygon.field[data-key="insurer"]').get_attribute("class")
            page.keyboard.press("ArrowDown")
            assert page.evaluate("document.activeElement.id") == "f-product_name"
            # the field list shows the raw OCR text and confidence
            meta = page.locator(f'div.field[data-key="{key}"] .meta').inner_text()
            assert machine["fields"][key]["text"] in meta and "confidence" in meta
            page.fill(f"#f-{key}", new_value)
            page.screenshot(path=str(tmp_path / "review.png"), full_page=True)
            page.keyboard.press("Control+Enter")
            page.wait_for_function("document.body.dataset.lastCorrection !== undefined")
            page.wait_for_selector("#status:has-text('approved')")
            browser.close()
        out_dir = os.environ.get("DOCPIPE_SCREENSHOT_DIR")
        if out_dir:
            shutil.copy(tmp_path / "review.png", Path(out_dir) / "review.png")
        assert (tmp_path / "review.png").stat().st_size > 10_000

        doc = c.get(f"/v1/jobs/{job['id']}/documents/0").json()
        assert doc["corrections"][-1]["fields"][key] == new_value
        assert doc["result"] == machine  # the machine result is untouched
        assert c.get("/v1/review/queue").json()["documents"] == []
        zf = zipfile.ZipFile(io.BytesIO(c.get("/v1/corrections/export").content))
        stem = f"labels/{job['id']}_0"
        assert zf.read(stem + ".jpg") == page_bytes
        label = json.loads(zf.read(stem + ".json"))
        assert label["fields"][key]["value"] == new_value and label["schema_version"] == "1"
        assert label["fields"]["insurer"]["value"] == doc["corrections"][-1]["fields"]["insurer"]
