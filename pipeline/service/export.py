"""Approved corrections as the labels format ``docpipe train --labels`` reads (docs/labels_format.md): a
folder of ``X.<ext>`` inputs, each beside ``X.json`` = the schema-v1 machine result with the reviewer's
values in ``fields[*].value`` (the stored machine result itself is never changed)."""
from __future__ import annotations

import copy
import io
import json
import zipfile
from pathlib import Path
from typing import Any, Iterator, Optional

from pipeline.core.sources import sniff_format
from pipeline.service.jobs import JobDatabase

_EXT = {"jpeg": "jpg", "png": "png", "bmp": "bmp", "webp": "webp", "tiff": "tif", "pdf": "pdf"}


def _around(polygons: list[Any]) -> Optional[list[list[float]]]:
    """The axis-aligned rectangle around ``polygons`` (None when one is missing)."""
    pts = [xy for poly in polygons if poly for xy in poly]
    if not pts or any(not poly for poly in polygons):
        return None
    x0, y0 = min(p[0] for p in pts), min(p[1] for p in pts)
    x1, y1 = max(p[0] for p in pts), max(p[1] for p in pts)
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def corrected_result(machine: dict[str, Any], fields: dict[str, Optional[str]], correction_id: int,
                     sources: Optional[dict[str, list[dict[str, Any]]]] = None) -> dict[str, Any]:
    """A copy of ``machine`` whose ``fields[k].value`` are the reviewer's (a field the machine missed gets a
    record with no polygon; one the reviewer cleared becomes null). A value filled by clicking OCR lines
    gets ``source_lines`` (the spans, review_spans.py), and ``text``, ``page`` and ``polygon`` from them."""
    out = copy.deepcopy(machine)
    for key, value in fields.items():
        if value is None:
            out["fields"][key] = None
        elif out["fields"].get(key):
            out["fields"][key]["value"] = value
        else:
            out["fields"][key] = {"value": value, "text": None, "confidence": None, "page": None, "polygon": None,
                                  "valid": None, "issues": []}
        spans = (sources or {}).get(key)
        if value is not None and spans:
            out["fields"][key].update(source_lines=copy.deepcopy(spans), text="".join(s["text"] for s in spans),
                                      page=spans[0]["page"], polygon=_around([s.get("polygon") for s in spans]))
    out["needs_review"] = False
    out["review_reasons"] = []
    out["review"] = {"correction_id": correction_id, "corrected_fields": sorted(
        k for k, v in fields.items() if (machine["fields"].get(k) or {}).get("value") != v)}
    return out


def label_items(store: JobDatabase) -> Iterator[tuple[str, bytes, dict[str, Any]]]:
    """(stem X, input bytes, X.json content) for the newest correction of each document."""
    for c in store.latest_corrections():
        ext = _EXT.get(sniff_format(c["input"][:1024]) or "", "bin")
        stem = f"{c['job_id']}_{c['idx']}"
        yield f"{stem}.{ext}", c["input"], corrected_result(c["machine_result"], c["fields"], c["id"], c.get("sources"))


def export_folder(store: JobDatabase, out_dir: str | Path) -> int:
    """Write the labels folder; returns how many documents it holds."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for filename, data, label in label_items(store):
        (out / filename).write_bytes(data)
        (out / (Path(filename).stem + ".json")).write_text(json.dumps(label, ensure_ascii=False, indent=1), encoding="utf-8")
        n += 1
    return n


class _Chunks(io.RawIOBase):
    """A write-only, non-seekable file that keeps what was written until :meth:`take`; zipfile then writes
    each member with a data descriptor, so the archive can be sent while it is made."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []
        self._pos = 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        data = bytes(b)
        self._parts.append(data)
        self._pos += len(data)
        return len(data)

    def tell(self) -> int:
        return self._pos

    def take(self) -> bytes:
        out, self._parts = b"".join(self._parts), []
        return out


def stream_zip(store: JobDatabase) -> Iterator[bytes]:
    """The labels zip, made and sent one document at a time: memory holds one document's input and label,
    and the store's lock is held only while each row is read."""
    sink = _Chunks()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as zf:
        for filename, data, label in label_items(store):
            zf.writestr(f"labels/{filename}", data)
            zf.writestr(f"labels/{Path(filename).stem}.json", json.dumps(label, ensure_ascii=False, indent=1))
            yield sink.take()
    yield sink.take()
