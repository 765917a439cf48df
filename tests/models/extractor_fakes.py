"""Tiny labelled pages in the synthetic-corpus JSON format, for extractor unit tests only."""
from __future__ import annotations

import json
import random
from pathlib import Path

CHAR_W, CHAR_H, LINE_GAP, LEFT, TOP = 20, 24, 36, 40, 40
PAGE_W, PAGE_H = 1000, 1400

_SURNAMES = "张王李赵刘陈杨黄周吴"
_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚"
_INSURERS = ("平安人寿保险股份有限公司", "中国人寿保险股份有限公司", "太平洋人寿保险有限公司")
_PRODUCTS = ("金福终身寿险", "安康重大疾病保险", "鑫享年金保险")


def _line(text: str, labels: list[str], x: int, y: int) -> dict:
    boxes = [[x + i * CHAR_W, y, x + (i + 1) * CHAR_W - 2, y + CHAR_H] for i in range(len(text))]
    poly = [[x, y], [x + len(text) * CHAR_W, y], [x + len(text) * CHAR_W, y + CHAR_H], [x, y + CHAR_H]]
    return {"text": text, "polygon": poly, "labels": labels, "char_boxes": boxes}


def _kv(label: str, value: str, key: str | None, x: int, y: int) -> dict:
    tags = ["O"] * (len(label) + 1)
    if key is not None:
        tags += [f"B-{key}"] + [f"I-{key}"] * (len(value) - 1)
    else:
        tags += ["O"] * len(value)
    return _line(f"{label}：{value}", tags, x, y)


def fake_doc(seed: int, filler_lines: int = 0) -> dict:
    """A key：value policy page with a few fields (and optional unlabelled filler lines)."""
    rng = random.Random(seed)
    name = rng.choice(_SURNAMES) + rng.choice(_GIVEN) + rng.choice(_GIVEN)
    insured = rng.choice(_SURNAMES) + rng.choice(_GIVEN)
    number = "P" + "".join(rng.choice("0123456789") for _ in range(12))
    amount = f"{rng.randint(1, 90) * 10000:,}.00元"
    date = f"{rng.randint(2020, 2026)}年{rng.randint(1, 12)}月{rng.randint(1, 28)}日"
    rows = [
        ("保险公司", rng.choice(_INSURERS), "insurer"),
        ("保险单号", number, "policy_number"),
        ("险种名称", rng.choice(_PRODUCTS), "product_name"),
        ("投保人", name, "policyholder_name"),
        ("被保险人", insured, "insured_name"),
        ("保险金额", amount, "sum_insured"),
        ("生效日期", date, "effective_date"),
        ("客服电话", "95511", None),
    ]
    rng.shuffle(rows)
    lines = []
    y = TOP
    for label, value, key in rows:
        lines.append(_kv(label, value, key, LEFT, y))
        y += LINE_GAP
    for i in range(filler_lines):
        text = "本合同条款" + "".join(rng.choice(_GIVEN) for _ in range(20))
        lines.append(_line(text, ["O"] * len(text), LEFT, y))
        y += LINE_GAP
    fields = {key: value for _, value, key in rows if key}
    return {"fields": fields, "field_text": dict(fields), "lines": lines, "width": PAGE_W, "height": PAGE_H,
            "layout": "kv", "split": "train" if seed % 4 else "dev"}


def write_fake_corpus(root: Path, n: int, filler_lines: int = 0) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = root / f"doc{i:03d}.json"
        p.write_text(json.dumps(fake_doc(i, filler_lines), ensure_ascii=False), encoding="utf-8")
        paths.append(p)
    return paths


def corpus_chars(docs: list[dict]) -> list[str]:
    return sorted({ch for d in docs for ln in d["lines"] for ch in ln["text"]})


def corrected_result(seed: int, wrong: tuple[str, ...] = ()) -> dict:
    """A schema-v1 record as ``docpipe extract`` writes it for :func:`fake_doc` ``seed``, with the fields'
    values as a person would leave them after review; ``wrong`` fields carry what a misreading extractor
    had put there (``text`` and ``value`` of another span), corrected back in ``value`` only."""
    doc = fake_doc(seed)
    lines = [{"text": ln["text"], "score": 0.99, "polygon": ln["polygon"]} for ln in doc["lines"]]
    fields: dict = {}
    for key, text in doc["fields"].items():
        value = text
        if key == "effective_date":  # the record holds ISO dates, the page the printed form
            y, rest = text.split("年")
            m, rest = rest.split("月")
            value = f"{int(y):04d}-{int(m):02d}-{int(rest.rstrip('日')):02d}"
        elif key == "sum_insured":
            value = text.replace(",", "").replace("元", "")
        read = "95511" if key in wrong else text
        fields[key] = {"value": value, "text": read, "confidence": 0.5, "page": 0, "polygon": None,
                       "valid": True, "issues": []}
    return {"schema_version": "1", "source": f"doc{seed}.jpg",
            "pages": [{"index": 0, "width": PAGE_W, "height": PAGE_H, "lines": lines}],
            "fields": fields, "needs_review": False, "review_reasons": [], "errors": [], "timings_ms": {}}
