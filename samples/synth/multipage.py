"""Three-page policy PDFs: a cover letter, the schedule (the generated policy page) and the terms.

The letter and the terms carry distractors shaped like fields: other people's names, dates and amounts, some
under the very labels the schedule uses (保险金额, 保险费, 生效日期 in a worked example of the terms). The
schedule's values are the ground truth; ``schedule_page`` says where it is. Train/dev put it second; ``test``
(held out) also puts it last, behind the terms, and uses labelled distractors more often.
"""
from __future__ import annotations

import datetime as dt
import io
import random
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from samples.synth.facts import make_name, random_date
from samples.synth.fonts import face_font, face_named
from samples.synth.formats import print_amount, print_date

PDF_DPI = 200  # the decoder's default: pages come back at the pixel size they were written with


def _amount(rng: random.Random) -> str:
    cents = rng.choice((rng.randint(10, 5000) * 100, rng.randint(1000, 900000) * 100 + rng.randint(0, 99)))
    return print_amount(cents, rng.choice(("yen", "yuan_comma", "plain_yuan", "capital_paren")), rng)


def _date(rng: random.Random) -> str:
    d = random_date(rng, dt.date(2015, 1, 1), dt.date(2030, 12, 31))
    return print_date(d, rng.choice(("cn", "cn0", "slash", "iso")))


def letter_lines(rng: random.Random, insurer: str, labelled: float) -> list[str]:
    agent = make_name(rng, rng.random() < 0.5)
    lines = [f"{insurer}", "保单送达函", "", "尊敬的客户：",
             "感谢您选择本公司的保险产品。随函附上您的保险合同，",
             "请您在收到合同之日起十五日内仔细阅读并核对各项信息。",
             f"本函寄送日期：{_date(rng)}" if rng.random() < labelled else f"本函于{_date(rng)}寄出。",
             f"续期保险费：{_amount(rng)}" if rng.random() < labelled else f"下期应缴金额约为{_amount(rng)}。",
             f"犹豫期截止日：{_date(rng)}",
             f"服务专员：{agent}", f"专员工号：{rng.randint(10000000, 99999999)}",
             f"如有疑问，请致电客服热线95{rng.randint(100, 999)}。", "", f"{insurer}客户服务中心", _date(rng)]
    return lines


def terms_lines(rng: random.Random, labelled: float) -> list[str]:
    person = make_name(rng, rng.random() < 0.5)
    example = [f"示例：投保人{person}于{_date(rng)}投保本产品，",
               f"保险金额：{_amount(rng)}", f"保险费：{_amount(rng)}", f"生效日期：{_date(rng)}"] \
        if rng.random() < labelled else [f"例如{person}投保本产品，基本保险金额为{_amount(rng)}。"]
    return ["保险条款", "第一条 合同构成",
            "本合同由保险条款、投保单、保险单及其他约定书构成。",
            "第二条 保险金额", "本合同的基本保险金额由投保人与本公司约定并在保险单上载明。",
            *example,
            "第三条 保险期间", "本合同的保险期间以保险单载明的起止日期为准。",
            f"第四条 宽限期 自保险费约定交纳日起{rng.choice((30, 60))}日为宽限期。",
            f"第五条 等待期 自合同生效之日起{rng.choice((90, 180))}日为等待期。",
            f"本条款于{_date(rng)}修订，最高给付{_amount(rng)}。"]


def draw_page(text_lines: list[str], width: int, height: int, face_name: str, rng: random.Random) -> np.ndarray:
    """A plain white page with ``text_lines`` typed top to bottom (BGR)."""
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    size = max(12, int(round(height / 1400 * rng.randint(22, 28))))
    font, _ = face_font(face_named(face_name), size, False)
    title, _ = face_font(face_named(face_name), int(size * 1.3), True)
    y = int(height * 0.07)
    x0 = int(width * rng.uniform(0.07, 0.1))
    for i, text in enumerate(text_lines):
        if text:
            f = title if i < 2 else font
            draw.text((x0, y), text, font=f, fill=(20, 20, 20))
        y += int(size * rng.uniform(1.8, 2.2))
        if y > height - 2 * size:
            break
    return np.asarray(img)[:, :, ::-1].copy()


def to_pdf(pages: list[np.ndarray], quality: int) -> bytes:
    """BGR pages -> PDF bytes at :data:`PDF_DPI` (rendered back at that dpi they keep their pixel size)."""
    ims = [Image.fromarray(p[:, :, ::-1]) for p in pages]
    buf = io.BytesIO()
    ims[0].save(buf, format="PDF", save_all=True, append_images=ims[1:], resolution=float(PDF_DPI), quality=quality)
    return buf.getvalue()


def bundle(image: np.ndarray, truth: dict[str, Any], rng: random.Random, split: str) -> tuple[bytes, dict[str, Any]]:
    """The schedule page wrapped into a 3-page PDF with a letter and the terms; returns PDF bytes and truth."""
    held = split == "test" and rng.random() < 0.5
    labelled = 0.8 if held else 0.5
    h, w = image.shape[:2]
    insurer = truth["fields"].get("insurer") or "保险股份有限公司"
    letter = draw_page(letter_lines(rng, insurer, labelled), w, h, truth["font"], rng)
    terms = draw_page(terms_lines(rng, labelled), w, h, truth["font"], rng)
    order = ["letter", "schedule", "terms"] if not (held and rng.random() < 0.5) else ["letter", "terms", "schedule"]
    pages = {"letter": letter, "schedule": image, "terms": terms}
    data = to_pdf([pages[r] for r in order], truth["jpeg_quality"])
    t = {**truth, "variant": "multipage", "image_format": "pdf", "schedule_page": order.index("schedule"),
         "page_roles": order, "variant_params": {"held_out": held}}
    return data, t
