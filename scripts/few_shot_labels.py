"""Few-shot experiment helper: turn synthetic documents into a labelled folder, as a reviewer would make one.

    python scripts/few_shot_labels.py SRC OUT

For every ``X.jpg`` with its generator truth ``X.json`` (or ``X.truth.json``) in SRC: run ``docpipe extract`` on
the image, then overwrite each field's ``value`` with the true one (and ``null`` where the document has none), and
write ``OUT/X.jpg`` + ``OUT/X.json`` -- the format of docs/labels_format.md that ``docpipe train --labels`` reads.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from pipeline import Engine

    src, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    images = sorted(p for p in src.glob("*.jpg"))
    truths = {}
    for img in images:
        for name in (img.stem + ".truth.json", img.stem + ".json"):
            if (src / name).is_file():
                truths[img] = json.loads((src / name).read_text(encoding="utf-8"))["fields"]
                break
    with Engine() as engine:
        for img, result in zip(images, engine.extract_many([str(p) for p in images])):
            record = result
            fields = record.get("fields") or {}
            for key, value in truths[img].items():
                if value is None:
                    fields[key] = None
                elif fields.get(key):
                    fields[key]["value"] = value
                else:
                    fields[key] = {"value": value, "text": None, "page": 0, "polygon": None}
            record["fields"] = fields
            shutil.copy(img, out / img.name)
            (out / (img.stem + ".json")).write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
