"""Memory per document over real HTTP: ``docpipe serve`` in a subprocess, its process tree's resident memory
read from /proc while it works. A 30-page 7500x7500 bitonal TIFF (118 KB, each page under
``max_pixels_per_page``) gets a clear answer within 2.5 GB, and a document's pages are decoded a group of at most
``max_pixels_per_page`` pixels at a time, so six pages cost what three cost."""
from __future__ import annotations

import io
import threading

import httpx
import pytest
from PIL import Image, ImageDraw

from tests.pipeline.service.serve_proc import serving, tree_rss_bytes

pytestmark = pytest.mark.slow
GB = 1024**3


def bitonal_tiff(pages: int, side: int) -> bytes:
    frame = Image.new("1", (side, side), 1)
    ImageDraw.Draw(frame).rectangle([side // 10, side // 10, side // 2, side // 10 + 80], fill=0)
    buf = io.BytesIO()
    frame.save(buf, "TIFF", compression="group4", save_all=True, append_images=[frame] * (pages - 1))
    return buf.getvalue()


class PeakRss:
    """Samples the tree's resident memory in a thread until stopped; ``peak`` in bytes."""

    def __init__(self, pid: int):
        self.pid, self.peak = pid, tree_rss_bytes(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_bytes(self.pid))
            self._stop.wait(0.02)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss_bytes(self.pid))


def test_large_multipage_tiff_bounded_memory_and_a_clear_answer(tmp_path):
    cfg = tmp_path / "serve.yaml"  # the shipped input limits; one engine worker process beside the API process
    cfg.write_text(f"engine: {{mode: processes, workers: 1}}\nservice: {{data_dir: '{tmp_path / 'store'}'}}\n")
    with serving(cfg, tmp_path / "server.log") as server:
        url, proc = server.url, server.proc
        with httpx.Client(base_url=url, timeout=1800) as c:
            probe = bitonal_tiff(30, 7500)  # 30 x 56 M pixels = 1.69 G pixels, over max_pixels_per_document
            assert len(probe) < 200_000
            with PeakRss(proc.pid) as mem:
                r = c.post("/v1/extract", content=probe, headers={"X-Filename": "probe.tif"})
            assert r.status_code == 200
            err = r.json()["errors"][0]
            assert err["stage"] == "decode" and err["type"] == "DocumentTooLarge" and "30 page(s)" in err["message"]
            assert mem.peak < 2.5 * GB, mem.peak

            # streaming: pages are read in groups of at most max_pixels_per_page pixels (three 4000x4000 pages),
            # so six pages cost what three cost. Three pages first, then six, through the same server: memory once
            # taken by a process is not given back, so the six-page document raises the peak only by what it adds
            base = tree_rss_bytes(proc.pid)
            with PeakRss(proc.pid) as three:
                assert not c.post("/v1/extract", content=bitonal_tiff(3, 4000)).json()["errors"]
            with PeakRss(proc.pid) as six:
                res = c.post("/v1/extract", content=bitonal_tiff(6, 4000)).json()
            assert not res["errors"] and len(res["pages"]) == 6
            group = three.peak - base
            # all six pages decoded at once would hold three more pages (3 x 48 MB of BGR, and their copies)
            assert six.peak - base < 1.4 * group, (group, six.peak - base)
            assert six.peak < 2.5 * GB
