"""The review page in a real browser: Debian chromium driven by Playwright (no browser download)."""
from __future__ import annotations

import io
import os
import shutil
import zipfile
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from models.extractor.corrections import load_labelled_folder
from pipeline.service.app import create_app
from stages.extraction.ernie_features import LABELS
from tests.conftest import SAMPLES
from tests.pipeline.service.conftest import live_server, service_config, wait_job

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
PAGE = SAMPLES / "test_00012.jpg"


@pytest.fixture(scope="module")
def strict_engine():
    """An inline engine whose review target is 1 %: the review names every field of the test page above that risk,
    so the page has several flagged fields to step between whatever the calibration's exact confidences."""
    from pipeline.core.engine import Engine
    from stages.contracts.config import DocpipeConfig, with_overrides

    cfg = with_overrides(DocpipeConfig(), engine={"mode": "inline"}, review={"max_document_error_rate": 0.01})
    with Engine(cfg) as eng:
        yield eng


@contextmanager
def review_server(engine, tmp_path):
    """A live server with ``PAGE`` processed as a job: (base URL, client, job, machine result)."""
    app = create_app(service_config(tmp_path / "svc"), engine=engine)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=300) as c:
        loc = c.post("/v1/jobs", files={"file": (PAGE.name, PAGE.read_bytes(), "image/jpeg")}).headers["location"]
        job = wait_job(c, loc)
        machine = c.get(job["results"]).json()["results"][0]
        assert machine["needs_review"], "the test page must need review to appear in the queue"
        yield url, c, job, machine


@contextmanager
def browser_page(viewport):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser.new_page(viewport=viewport)
        finally:
            browser.close()


def _line(page, i: int):
    return page.locator(f'#overlay polygon.line[data-line="{i}"]')


def _tagged(labelled, key: str) -> list[tuple[int, int]]:
    return [(li, ci) for li, labs in enumerate(labelled.doc.labels) for ci, lab in enumerate(labs)
            if LABELS[int(lab)] in (f"B-{key}", f"I-{key}")]


def test_click_to_fill_approve_export_and_read_back_as_training_labels(strict_engine, tmp_path):
    with review_server(strict_engine, tmp_path) as (url, c, job, machine):
        lines = machine["pages"][0]["lines"]
        name = machine["fields"]["insured_name"]["text"]
        at = [i for i, ln in enumerate(lines) if ln["text"] == name]
        assert len(at) >= 2, "the page prints the name for the policyholder and for the insured"
        holder_line, insured_line = at[0], at[-1]
        label_line = insured_line - 1  # the 姓名 cell left of the insured's name
        assert len({r.split(":")[1] for r in machine["review_reasons"] if ":" in r}) >= 2, "two flagged fields to step"

        with browser_page({"width": 1440, "height": 1180}) as page:
            page.goto(url + "/review")
            page.wait_for_selector("#overlay polygon.line")
            # the reason of each flagged field sits beside it
            for reason in machine["review_reasons"]:
                kind, key = reason.split(":")
                assert kind in page.locator(f'div.field[data-key="{key}"] .reason').all_inner_texts()
            # the first flagged field has the focus; Alt+↓ / Alt+↑ go from flagged field to flagged field
            flagged = [k for k in machine["fields"] if any(r.endswith(":" + k) for r in machine["review_reasons"])
                       or (machine["fields"][k] or {}).get("issues")]
            assert page.evaluate("document.activeElement.id") == "f-" + flagged[0]
            for key in flagged[1:]:
                page.keyboard.press("Alt+ArrowDown")
                assert page.evaluate("document.activeElement.id") == "f-" + key
            page.keyboard.press("Alt+ArrowUp")
            assert page.evaluate("document.activeElement.id") == "f-" + flagged[-2]
            # policyholder_name: each click replaces the value (a wrong line, its text after the label, the right one)
            page.focus("#f-policyholder_name")
            _line(page, label_line).click()
            assert page.input_value("#f-policyholder_name") == lines[label_line]["text"]
            labelled_line = next(i for i, ln in enumerate(lines) if "：" in ln["text"][1:-1])
            _line(page, labelled_line).click(modifiers=["Alt"])  # only the text after the label
            assert page.input_value("#f-policyholder_name") == lines[labelled_line]["text"].split("：", 1)[1]
            start = lines[labelled_line]["text"].index("：") + 1
            assert page.locator("#src-policyholder_name").inner_text().endswith(
                f"line {labelled_line} [{start}–{len(lines[labelled_line]['text'])})")
            _line(page, holder_line).click()
            assert page.input_value("#f-policyholder_name") == name
            assert page.evaluate("document.activeElement.id") == "f-policyholder_name"
            assert "picked" in _line(page, holder_line).get_attribute("class")
            page.keyboard.press("Enter")  # Enter moves to the next field
            assert page.evaluate("document.activeElement.id") == "f-policyholder_id_number"
            # Ctrl+click on a field's polygon makes that field the active one
            box = page.locator('#overlay polygon.field[data-key="insurer"]').bounding_box()
            page.keyboard.down("Control")
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.keyboard.up("Control")
            assert page.evaluate("document.activeElement.id") == "f-insurer"
            assert page.input_value("#f-insurer") == machine["fields"]["insurer"]["value"]
            page.fill("#f-policyholder_phone", "")
            page.keyboard.type("13900001111")  # typed, no line clicked: no source
            assert page.locator("#src-policyholder_phone").inner_text() == ""
            # insured_name: two lines, joined in click order; the reviewer then trims the label off
            page.focus("#f-insured_name")
            _line(page, insured_line).click()
            _line(page, label_line).click(modifiers=["Shift"])
            assert page.input_value("#f-insured_name") == name + lines[label_line]["text"]
            page.keyboard.press("End")
            for _ in lines[label_line]["text"]:
                page.keyboard.press("Backspace")
            assert page.input_value("#f-insured_name") == name
            assert page.locator("#src-insured_name").inner_text() == f"from page 1, line {insured_line}"
            assert "picked" not in _line(page, label_line).get_attribute("class")  # trimmed off: not kept
            assert "picked" in _line(page, insured_line).get_attribute("class")
            page.screenshot(path=str(tmp_path / "review.png"))
            page.keyboard.press("Control+Enter")
            page.wait_for_selector("#status:has-text('approved')")
            assert "2 field(s) with source lines" in page.locator("#status").inner_text()
        out_dir = os.environ.get("DOCPIPE_SCREENSHOT_DIR")
        if out_dir:
            shutil.copy(tmp_path / "review.png", Path(out_dir) / "review.png")
        assert (tmp_path / "review.png").stat().st_size > 10_000

        doc = c.get(f"/v1/jobs/{job['id']}/documents/0").json()
        assert doc["result"] == machine  # the machine result is untouched
        spans = doc["corrections"][-1]["sources"]
        assert [(s["line"], s["start"], s["end"]) for s in spans["insured_name"]] == [(insured_line, 0, len(name))]
        assert [(s["line"], s["start"], s["end"]) for s in spans["policyholder_name"]] == [(holder_line, 0, len(name))]
        assert c.get("/v1/review/queue").json()["documents"] == []
        zipfile.ZipFile(io.BytesIO(c.get("/v1/corrections/export").content)).extractall(tmp_path / "export")

    # what `docpipe train --labels` reads: the clicked characters, not the first match of the name
    (labelled,), errors = load_labelled_folder(tmp_path / "export" / "labels")
    assert errors == {}
    kept = {j: k for k, j in enumerate(j for j, ln in enumerate(lines) if ln["text"])}
    assert _tagged(labelled, "insured_name") == [(kept[insured_line], i) for i in range(len(name))]
    assert _tagged(labelled, "policyholder_name") == [(kept[holder_line], i) for i in range(len(name))]
    assert {"insured_name", "policyholder_name"} <= set(labelled.from_source_lines)


def _box(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()


def test_page_fits_the_pane_and_zoom_scales_image_and_polygons(inline_engine, tmp_path):
    with review_server(inline_engine, tmp_path) as (url, _c, _job, machine):
        with browser_page({"width": 1280, "height": 900}) as page:
            page.goto(url + "/review")
            page.wait_for_selector("#overlay polygon.line")
            widths = "[document.documentElement.scrollWidth, window.innerWidth]"
            pane = "(() => { const s = document.getElementById('scroller'); return [s.scrollWidth, s.clientWidth]; })()"

            def fitted():
                doc_w, inner = page.evaluate(widths)
                scroll_w, client_w = page.evaluate(pane)
                img = _box(page, "#page-img")
                return doc_w <= inner and scroll_w <= client_w and client_w - 12 <= img["width"] <= client_w

            assert fitted()
            img, svg = _box(page, "#page-img"), _box(page, "#overlay")
            assert all(abs(img[k] - svg[k]) < 1 for k in ("x", "y", "width", "height"))
            line0 = _box(page, "#overlay polygon.line")
            page.click("#zoom-in")
            page.click("#zoom-in")
            zoomed_img, zoomed_line = _box(page, "#page-img"), _box(page, "#overlay polygon.line")
            assert zoomed_img["width"] == pytest.approx(img["width"] * 1.25 ** 2, rel=0.01)
            assert zoomed_line["width"] == pytest.approx(line0["width"] * 1.25 ** 2, rel=0.03)
            assert _box(page, "#overlay")["width"] == pytest.approx(zoomed_img["width"], abs=1)
            doc_w, inner = page.evaluate(widths)
            scroll_w, client_w = page.evaluate(pane)
            assert doc_w <= inner and scroll_w > client_w  # the pane scrolls, never the whole page
            page.keyboard.press("Alt+-")
            assert _box(page, "#page-img")["width"] == pytest.approx(img["width"] * 1.25, rel=0.01)
            page.keyboard.press("Alt+0")
            assert fitted()
            page.set_viewport_size({"width": 1000, "height": 800})
            page.wait_for_function("document.getElementById('scroller').scrollWidth <= "
                                   "document.getElementById('scroller').clientWidth")
            assert fitted()
            assert len(machine["pages"][0]["lines"]) >= page.locator("#overlay polygon.line").count() > 0
