"""Helpers shared by the pipeline tests (inputs made in the test, an engine wrapper)."""
from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

def encode(img: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kw)
    return buf.getvalue()


def png_with_declared_size(w: int, h: int) -> bytes:
    """A tiny, valid-headered 1-bit PNG that *declares* w x h (no pixel data worth decoding)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b"")


def slow_pdf(tag: str, pages: int = 2, fills: int = 10) -> bytes:
    """A PDF of about 1 KB that takes roughly 0.1 s to decode: each A4 page is painted over ``fills`` times,
    and rendering at the default 200 dpi touches every pixel each time. ``tag`` makes the bytes unique."""
    paint = b"\n".join(b"0.%d g 0 0 595 842 re f" % (i % 9 + 1) for i in range(fills))
    kids = b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(pages))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages)]
    for i in range(pages):
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents %d 0 R >>" % (4 + 2 * i))
        objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(paint), paint))
    out, offsets = bytearray(b"%PDF-1.4\n%% " + tag.encode() + b"\n"), []
    for n, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer << /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


class SharedEngine:
    """Hands the session's Engine to batch/watch without letting them close it."""

    def __init__(self, engine) -> None:
        self.engine = engine

    def extract_many(self, sources, ordered=True):
        return self.engine.extract_many(sources, ordered=ordered)
