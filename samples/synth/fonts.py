"""CJK font faces used for rendering, located on disk by file name.

Debian packages providing them: ``fonts-noto-cjk``, ``fonts-wqy-microhei``, ``fonts-wqy-zenhei``,
``fonts-arphic-uming``, ``fonts-arphic-ukai``; the dev-only faces (:data:`DEV_ONLY_FACES`) name their own. Extra
directories to search can be given in the ``DOCPIPE_FONT_DIRS`` environment variable (``os.pathsep``-separated). A
missing face is an error (never a silent substitution), so a corpus is the same on every machine that can build it.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT_DIRS: tuple[str, ...] = (
    "/usr/share/fonts/opentype/noto",
    "/usr/share/fonts/truetype/wqy",
    "/usr/share/fonts/truetype/arphic",
    "/usr/share/fonts/opentype",
    "/usr/share/fonts/truetype",
    "/usr/local/share/fonts",
)
DEBIAN_PACKAGES: tuple[str, ...] = (
    "fonts-noto-cjk", "fonts-wqy-microhei", "fonts-wqy-zenhei", "fonts-arphic-uming", "fonts-arphic-ukai",
)


@dataclass(frozen=True)
class FontFile:
    file: str  # file name, searched in FONT_DIRS
    index: int  # face index inside a .ttc collection
    package: str


@dataclass(frozen=True)
class FontFace:
    """A typeface: a regular file and, when the family has one, a real bold file."""

    name: str
    regular: FontFile
    bold: FontFile | None
    style: str  # "sans" | "serif" | "kai" | "mono"


FACES: dict[str, FontFace] = {
    f.name: f
    for f in (
        FontFace("Noto Sans CJK SC", FontFile("NotoSansCJK-Regular.ttc", 2, "fonts-noto-cjk"),
                 FontFile("NotoSansCJK-Bold.ttc", 2, "fonts-noto-cjk"), "sans"),
        FontFace("Noto Serif CJK SC", FontFile("NotoSerifCJK-Regular.ttc", 2, "fonts-noto-cjk"),
                 FontFile("NotoSerifCJK-Bold.ttc", 2, "fonts-noto-cjk"), "serif"),
        FontFace("Noto Sans Mono CJK SC", FontFile("NotoSansCJK-Regular.ttc", 7, "fonts-noto-cjk"),
                 FontFile("NotoSansCJK-Bold.ttc", 7, "fonts-noto-cjk"), "mono"),
        FontFace("WenQuanYi Micro Hei", FontFile("wqy-microhei.ttc", 0, "fonts-wqy-microhei"), None, "sans"),
        FontFace("AR PL UMing CN", FontFile("uming.ttc", 0, "fonts-arphic-uming"), None, "serif"),
        FontFace("AR PL UKai CN", FontFile("ukai.ttc", 0, "fonts-arphic-ukai"), None, "kai"),
        FontFace("WenQuanYi Zen Hei", FontFile("wqy-zenhei.ttc", 0, "fonts-wqy-zenhei"), None, "sans"),
    )
}

# Faces no split draws: a dev draw may name them (``docpipe synth --split dev --fonts``) to measure reading and routing
# in typefaces the recognizer never saw, without the test split's held-out fonts. Debian packages fonts-lxgw-wenkai,
# fonts-arphic-gkai00mp, fonts-arphic-gbsn00lp.
DEV_ONLY_FACES: dict[str, FontFace] = {
    f.name: f
    for f in (
        FontFace("LXGW WenKai", FontFile("LXGWWenKai-Regular.ttf", 0, "fonts-lxgw-wenkai"),
                 FontFile("LXGWWenKai-Bold.ttf", 0, "fonts-lxgw-wenkai"), "kai"),
        FontFace("AR PL KaitiM GB", FontFile("gkai00mp.ttf", 0, "fonts-arphic-gkai00mp"), None, "kai"),
        FontFace("AR PL SungtiL GB", FontFile("gbsn00lp.ttf", 0, "fonts-arphic-gbsn00lp"), None, "serif"),
    )
}


def face_named(name: str) -> FontFace:
    """The face of this name, a split's or a dev-only one (a document's truth records its face by name)."""
    return FACES.get(name) or DEV_ONLY_FACES[name]


class FontMissing(RuntimeError):
    """A font file the corpus needs is not installed."""


def _search_dirs() -> list[Path]:
    extra = [d for d in os.environ.get("DOCPIPE_FONT_DIRS", "").split(os.pathsep) if d]
    return [Path(d) for d in (*extra, *FONT_DIRS)]


@functools.lru_cache(maxsize=None)
def font_path(file: str) -> str:
    for folder in _search_dirs():
        candidate = folder / file
        if candidate.is_file():
            return str(candidate)
    for folder in _search_dirs():
        if folder.is_dir():
            found = sorted(folder.rglob(file))
            if found:
                return str(found[0])
    raise FontMissing(f"font file {file} not found; install Debian packages: {' '.join(DEBIAN_PACKAGES)}")


@functools.lru_cache(maxsize=512)
def load(file: FontFile, size: int) -> ImageFont.FreeTypeFont:
    """A FreeType font at ``size`` px (cached per process; basic layout, no shaping needed for CJK)."""
    return ImageFont.truetype(font_path(file.file), size, index=file.index, layout_engine=ImageFont.Layout.BASIC)


def face_font(face: FontFace, size: int, bold: bool) -> tuple[ImageFont.FreeTypeFont, int]:
    """The font for ``face`` and the stroke width that fakes bold where the family has no bold file
    (only from 26 px up: a stroke clogs the thin brush/ming strokes of smaller text)."""
    if bold and face.bold is not None:
        return load(face.bold, size), 0
    return load(face.regular, size), (max(1, round(size / 30)) if bold and size >= 26 else 0)


def check_faces(names: tuple[str, ...] | None = None) -> None:
    """Raise :class:`FontMissing` unless every face (default: all of :data:`FACES`; names may be dev-only faces)
    loads and is the expected family."""
    for face in (face_named(n) for n in (names or tuple(FACES))):
        for file in (face.regular, face.bold):
            if file is None:
                continue
            try:
                family = load(file, 20).getname()[0]
            except FontMissing:
                raise FontMissing(f"font file {file.file} not found; install Debian package {file.package}") from None
            if family != face.name:
                raise FontMissing(f"{file.file} index {file.index} is {family!r}, expected {face.name!r}")


def missing_glyphs(face: FontFace, chars: str) -> str:
    """Characters of ``chars`` that ``face`` renders as its missing-glyph box."""
    font = load(face.regular, 32)

    def ink(ch: str) -> bytes:
        img = Image.new("L", (64, 64), 0)
        ImageDraw.Draw(img).text((8, 8), ch, font=font, fill=255)
        return img.tobytes()

    notdef = {ink("\U000f0001"), ink("\uffff"), ink("\u0378")}
    return "".join(sorted({c for c in chars if not c.isspace() and ink(c) in notdef}))
