"""Decode an input (file path, bytes or array) into pages: HxWx3 uint8 BGR.

The container type is sniffed from the content's magic bytes, never from the file name. Limits from
:class:`~stages.contracts.config.InputConfig` are enforced before full decoding: the file size before reading, the
page count and each page's pixel count from the image header (or, for PDFs, page size x dpi) before
pixels are decoded. Every failure is a :class:`DecodeError` with a machine-readable ``type`` and a message
that names the input; no Pillow/PDFium exception or warning escapes.
"""
from __future__ import annotations

import io
import logging
import math
import os
import re
import threading
import warnings
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np
from PIL import Image, ImageOps

from stages.contracts.config import InputConfig
from stages.contracts.types import Page, Source, StageError

log = logging.getLogger(__name__)


#: File name extensions of the formats :func:`load_pages` decodes (lower case, with the dot).
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(
    {".jpg", ".jpeg", ".jpe", ".jfif", ".png", ".bmp", ".dib", ".webp", ".tif", ".tiff", ".pdf"}
)

# Pillow's plugin names for the raster formats we accept (restricts which decoders Pillow may try).
_PIL_FORMATS = {"jpeg": "JPEG", "png": "PNG", "bmp": "BMP", "webp": "WEBP", "tiff": "TIFF"}

# PDFium is not thread-safe: every call into it goes through this lock.
_PDFIUM_LOCK = threading.Lock()
# warnings.catch_warnings() swaps process-global state; serialize our own uses of it.
_WARNINGS_LOCK = threading.Lock()


class DecodeError(Exception):
    """An input that cannot be turned into pages. ``type`` is machine-readable (e.g. ``UnreadableImage``)."""

    def __init__(self, type: str, message: str) -> None:  # noqa: A002 - the schema calls it "type"
        super().__init__(f"{type}: {message}")
        self.type = type
        self.message = message

    def as_stage_error(self) -> StageError:
        return StageError(stage="decode", type=self.type, message=self.message)


def sniff_format(head: bytes) -> Optional[str]:
    """The container type of content starting with ``head`` (>= 16 bytes recommended), or None.

    Returns one of ``jpeg``, ``png``, ``bmp``, ``webp``, ``tiff``, ``pdf``.
    """
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"BM") and len(head) >= 14:
        return "bmp"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    # The PDF header may follow a little junk (readers accept it within the first KiB).
    if b"%PDF-" in head[:1024]:
        return "pdf"
    return None


def sniff_file(path: str | Path) -> Optional[str]:
    """:func:`sniff_format` of a file's first KiB; None when it cannot be read or is not recognized."""
    try:
        with open(path, "rb") as fh:
            return sniff_format(fh.read(1024))
    except OSError:
        return None


def load_pages(source: Source, cfg: InputConfig, name: str | None = None) -> list[Page]:
    """Decode ``source`` into pages (HxWx3 uint8 BGR, page index, source name), all at once.

    ``source`` is a path (``str`` or :class:`~pathlib.Path`), the file's content (``bytes``) or an image
    array (HxW gray, HxWx3 BGR or HxWx4 BGRA; uint8, uint16, bool or float in [0, 1]). ``name`` is used
    in page sources and error messages (default: the path, ``<bytes>`` or ``<array>``).
    Raises :class:`DecodeError`. :func:`open_pages` decodes one page at a time instead.
    """
    with open_pages(source, cfg, name) as doc:
        return list(doc)


def open_pages(source: Source, cfg: InputConfig, name: str | None = None) -> "PageStream":
    """A document whose limits (file size, page count, each page's pixels and the document's total pixels,
    ``input.max_pixels_per_document``) are checked from its headers now, before any pixel is decoded; its
    pages are decoded one at a time as they are asked for (iterate, or :meth:`PageStream.page`), so holding a
    document costs its bytes plus the page being decoded. Close it (``with``) when done. Raises
    :class:`DecodeError`."""
    if isinstance(source, np.ndarray):
        label = name or "<array>"
        image = _array_to_bgr(source, cfg, label)
        return PageStream(label, [(image.shape[1], image.shape[0])], lambda i: image)
    if isinstance(source, (bytes, bytearray, memoryview)):
        label = name or "<bytes>"
        data = bytes(source)
        if not data:
            raise DecodeError("EmptyFile", f"{label}: no data (0 bytes)")
        if len(data) > cfg.max_file_bytes:
            raise DecodeError(
                "FileTooLarge", f"{label}: {len(data)} bytes exceeds the limit of {cfg.max_file_bytes} bytes"
            )
        return _open_bytes(data, cfg, label)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label = name or str(source)
        return _open_bytes(_read_file(path, cfg, label), cfg, label, extension=path.suffix.lower())
    raise DecodeError("UnsupportedFormat", f"{name or '<input>'}: cannot decode a {type(source).__name__}")


class PageStream:
    """The pages of one opened document: ``sizes`` (width, height per page, from the headers) and ``len``
    known up front; each page decoded only when asked for. Iterating yields :class:`Page` in order."""

    def __init__(self, label: str, sizes: list[tuple[int, int]], decode: Callable[[int], np.ndarray],
                 close: Optional[Callable[[], None]] = None):
        self.label = label
        self.sizes = sizes
        self._decode = decode
        self._close = close

    def __len__(self) -> int:
        return len(self.sizes)

    @property
    def total_pixels(self) -> int:
        return sum(w * h for w, h in self.sizes)

    def page(self, index: int) -> Page:
        """Decode page ``index`` (0-based) alone. Raises IndexError outside the document, DecodeError."""
        if not 0 <= index < len(self.sizes):
            raise IndexError(index)
        return Page(index=index, image=self._decode(index), source=self.label)

    def __iter__(self) -> Iterator[Page]:
        for index in range(len(self.sizes)):
            yield self.page(index)

    def close(self) -> None:
        if self._close is not None:
            close, self._close = self._close, None
            close()

    def __enter__(self) -> "PageStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _check_document(sizes: list[tuple[int, int]], cfg: InputConfig, label: str, extra: str = "") -> None:
    total = sum(int(w) * int(h) for w, h in sizes)
    if total > cfg.max_pixels_per_document:
        raise DecodeError(
            "DocumentTooLarge",
            f"{label}: {len(sizes)} page(s) of {total} pixels in all{extra} exceed the limit of "
            f"{cfg.max_pixels_per_document} pixels per document",
        )


# --------------------------------------------------------------------------------------------- files


def _read_file(path: Path, cfg: InputConfig, label: str) -> bytes:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise DecodeError("FileNotFound", f"{label}: no such file") from None
    except PermissionError:
        raise DecodeError("PermissionDenied", f"{label}: permission denied") from None
    except OSError as exc:
        raise DecodeError("ReadError", f"{label}: cannot stat ({exc.strerror or exc})") from None
    if path.is_dir():
        raise DecodeError("NotAFile", f"{label}: is a directory")
    if st.st_size > cfg.max_file_bytes:
        raise DecodeError(
            "FileTooLarge", f"{label}: {st.st_size} bytes exceeds the limit of {cfg.max_file_bytes} bytes"
        )
    try:
        with open(path, "rb") as fh:
            data = fh.read(cfg.max_file_bytes + 1)  # never more than the limit, even if the file grows
    except FileNotFoundError:
        raise DecodeError("FileNotFound", f"{label}: no such file") from None
    except PermissionError:
        raise DecodeError("PermissionDenied", f"{label}: permission denied") from None
    except OSError as exc:
        raise DecodeError("ReadError", f"{label}: cannot read ({exc.strerror or exc})") from None
    if not data:
        raise DecodeError("EmptyFile", f"{label}: empty file (0 bytes)")
    if len(data) > cfg.max_file_bytes:
        raise DecodeError("FileTooLarge", f"{label}: more than the limit of {cfg.max_file_bytes} bytes")
    return data


def _open_bytes(data: bytes, cfg: InputConfig, label: str, extension: str = "") -> PageStream:
    kind = sniff_format(data[:1024])
    if kind is None:
        hint = ""
        if extension in SUPPORTED_EXTENSIONS:
            hint = f" (the name says {extension}, the content is not a {extension.lstrip('.').upper()} file)"
        raise DecodeError("UnsupportedFormat", f"{label}: not a JPEG, PNG, BMP, WebP, TIFF or PDF file{hint}")
    if kind == "pdf":
        return _open_pdf(data, cfg, label)
    return _open_raster(data, kind, cfg, label)


# -------------------------------------------------------------------------------------------- raster


def _open_raster(data: bytes, kind: str, cfg: InputConfig, label: str) -> PageStream:
    what = _PIL_FORMATS[kind]
    try:
        # Image.open reads only the header; Pillow's own bomb check warns (or raises) on the declared size.
        with _WARNINGS_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=[what])
    except Image.DecompressionBombError as exc:
        # Pillow refused the declared size (> 2 x Image.MAX_IMAGE_PIXELS) before we could look at it
        m = re.search(r"\((\d+) pixels\)", str(exc))
        size = f"{int(m.group(1))} pixels" if m else "the declared image size"
        limit = min(cfg.max_pixels_per_page, 2 * int(Image.MAX_IMAGE_PIXELS or 0) or cfg.max_pixels_per_page)
        raise DecodeError("ImageTooLarge", f"{label}: {size} exceeds the limit of {limit} pixels per page") from None
    except Exception as exc:  # Pillow raises many types for malformed headers
        raise DecodeError("UnreadableImage", f"{label}: not a readable {what} image ({_reason(exc)})") from None
    try:
        n_frames = int(getattr(im, "n_frames", 1) or 1) if kind == "tiff" else 1
        if n_frames > cfg.max_pages:
            raise DecodeError("TooManyPages", f"{label}: {n_frames} pages exceeds the limit of {cfg.max_pages}")
        sizes = []
        for index in range(n_frames):  # seeking a TIFF reads its page directory, not its pixels
            _seek(im, index, label)
            w, h = im.size
            _check_pixels(w, h, cfg, label, index if n_frames > 1 else None)
            sizes.append((int(w), int(h)))
        _check_document(sizes, cfg, label)
    except BaseException:
        im.close()
        raise

    def decode(index: int) -> np.ndarray:
        _seek(im, index, label)
        return _frame_to_bgr(im, label, index if n_frames > 1 else None)

    return PageStream(label, sizes, decode, im.close)


def _seek(im: Image.Image, index: int, label: str) -> None:
    try:
        if im.tell() != index:
            im.seek(index)
    except Exception as exc:
        raise DecodeError("UnreadableImage", f"{label}: page {index + 1}: {_reason(exc)}") from None


def _frame_to_bgr(im: Image.Image, label: str, index: Optional[int]) -> np.ndarray:
    where = f"{label}" if index is None else f"{label}: page {index + 1}"
    try:
        im.load()
        frame: Image.Image = im
        if _orientation(im) not in (0, 1):
            frame = ImageOps.exif_transpose(im)
        return _pil_to_bgr(frame)
    except DecodeError:
        raise
    except MemoryError:
        raise DecodeError("ImageTooLarge", f"{where}: not enough memory to decode") from None
    except Exception as exc:
        raise DecodeError("UnreadableImage", f"{where}: cannot decode ({_reason(exc)})") from None


def _orientation(im: Image.Image) -> int:
    try:
        return int(im.getexif().get(0x0112, 1))
    except Exception:  # malformed EXIF: keep the pixels as stored
        return 1


def _pil_to_bgr(im: Image.Image) -> np.ndarray:
    mode = im.mode
    if mode in ("I;16", "I;16L", "I;16B", "I;16N", "I", "F"):
        return _array_to_bgr(np.asarray(im), None, "")
    has_alpha = mode in ("RGBA", "LA", "PA", "RGBa", "La") or (mode == "P" and "transparency" in im.info)
    if has_alpha:
        rgba = im.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        rgb = Image.alpha_composite(white, rgba).convert("RGB")
    elif mode != "RGB":
        rgb = im.convert("RGB")
    else:
        rgb = im
    arr = np.asarray(rgb, dtype=np.uint8)
    return np.ascontiguousarray(arr[:, :, ::-1])


# ---------------------------------------------------------------------------------------------- arrays


def _array_to_bgr(arr: np.ndarray, cfg: Optional[InputConfig], label: str) -> np.ndarray:
    """HxW / HxWx1 / HxWx3 (BGR) / HxWx4 (BGRA) of any sensible dtype -> HxWx3 uint8 BGR."""
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] not in (3, 4)):
        raise DecodeError("UnsupportedFormat", f"{label}: array of shape {arr.shape} is not HxW, HxWx3 or HxWx4")
    h, w = arr.shape[:2]
    if h == 0 or w == 0:
        raise DecodeError("EmptyFile", f"{label}: empty image ({w}x{h})")
    if cfg is not None:
        _check_pixels(w, h, cfg, label, None)
    arr8 = _to_uint8(arr, label)
    if arr8.ndim == 2:
        return np.ascontiguousarray(np.repeat(arr8[:, :, None], 3, axis=2))
    if arr8.shape[2] == 4:
        alpha = arr8[:, :, 3:4].astype(np.uint16)
        bgr = arr8[:, :, :3].astype(np.uint16)
        blended = (bgr * alpha + 255 * (255 - alpha) + 127) // 255
        return np.ascontiguousarray(blended.astype(np.uint8))
    return np.ascontiguousarray(arr8)


def _to_uint8(arr: np.ndarray, label: str) -> np.ndarray:
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype == np.bool_:
        return arr.astype(np.uint8) * 255
    if np.issubdtype(arr.dtype, np.floating):
        finite = np.nan_to_num(arr.astype(np.float32), nan=0.0, posinf=255.0, neginf=0.0)
        scale = 255.0 if finite.size and float(finite.max()) <= 1.0 else 1.0
        return np.clip(finite * scale + 0.5, 0, 255).astype(np.uint8)
    if np.issubdtype(arr.dtype, np.integer):
        hi = int(arr.max()) if arr.size else 0
        lo = int(arr.min()) if arr.size else 0
        if lo >= 0 and hi <= 255 and arr.dtype.itemsize == 1:
            return arr.astype(np.uint8)
        if lo >= 0 and (arr.dtype.itemsize == 2 or hi > 255):
            # 16-bit samples (uint16, or Pillow's 32-bit "I" mode holding 16-bit data)
            return (np.clip(arr, 0, 65535).astype(np.uint32) // 257).astype(np.uint8)
        return np.clip(arr, 0, 255).astype(np.uint8)
    raise DecodeError("UnsupportedFormat", f"{label}: unsupported sample type {arr.dtype}")


# ------------------------------------------------------------------------------------------------- PDF


def _open_pdf(data: bytes, cfg: InputConfig, label: str) -> PageStream:
    import pypdfium2 as pdfium

    scale = cfg.pdf_dpi / 72.0
    with _PDFIUM_LOCK:
        try:
            doc = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            code = getattr(exc, "err_code", None)
            if code == 4:  # FPDF_ERR_PASSWORD
                raise DecodeError("EncryptedPDF", f"{label}: the PDF is password-protected") from None
            if code == 5:  # FPDF_ERR_SECURITY
                raise DecodeError("EncryptedPDF", f"{label}: unsupported PDF security handler") from None
            raise DecodeError("UnreadablePDF", f"{label}: not a readable PDF ({_reason(exc)})") from None
        except Exception as exc:
            raise DecodeError("UnreadablePDF", f"{label}: not a readable PDF ({_reason(exc)})") from None
        try:
            n = len(doc)
            if n == 0:
                raise DecodeError("UnreadablePDF", f"{label}: the PDF has no pages")
            if n > cfg.max_pages:
                raise DecodeError("TooManyPages", f"{label}: {n} pages exceeds the limit of {cfg.max_pages}")
            # Check every page's rendered size, and their sum, before rendering any of them.
            sizes = []
            for index in range(n):
                w_pt, h_pt = _with_page(doc, index, label, lambda p: p.get_size())
                w_px, h_px = math.ceil(w_pt * scale), math.ceil(h_pt * scale)
                if w_px <= 0 or h_px <= 0:
                    raise DecodeError("UnreadablePDF", f"{label}: page {index + 1} has no area")
                _check_pixels(w_px, h_px, cfg, label, index, f" at {cfg.pdf_dpi} dpi")
                sizes.append((w_px, h_px))
            _check_document(sizes, cfg, label, f" at {cfg.pdf_dpi} dpi")
        except BaseException:
            doc.close()
            raise

    def decode(index: int) -> np.ndarray:
        with _PDFIUM_LOCK:  # PDFium calls are serialized; the document stays open between pages
            return _with_page(doc, index, label, lambda p: _render(p, scale))

    def close() -> None:
        with _PDFIUM_LOCK:
            doc.close()

    return PageStream(label, sizes, decode, close)


def _with_page(doc, index: int, label: str, fn: Callable):
    try:
        page = doc[index]
    except Exception as exc:
        raise DecodeError("UnreadablePDF", f"{label}: page {index + 1} cannot be loaded ({_reason(exc)})") from None
    try:
        return fn(page)
    except DecodeError:
        raise
    except MemoryError:
        raise DecodeError("ImageTooLarge", f"{label}: page {index + 1}: not enough memory to render") from None
    except Exception as exc:
        raise DecodeError("UnreadablePDF", f"{label}: page {index + 1} cannot be rendered ({_reason(exc)})") from None
    finally:
        page.close()


def _render(page, scale: float) -> np.ndarray:
    bitmap = page.render(scale=scale)
    try:
        arr = bitmap.to_numpy()
        mode = bitmap.mode
        if mode == "L":
            out = np.repeat(arr.reshape(arr.shape[0], arr.shape[1], 1), 3, axis=2)
        elif mode in ("BGRA", "BGRX"):
            out = arr[:, :, :3]
        elif mode in ("RGBA", "RGBX"):
            out = arr[:, :, 2::-1]
        elif mode == "RGB":
            out = arr[:, :, ::-1]
        else:  # BGR
            out = arr
        return np.ascontiguousarray(out, dtype=np.uint8).copy()  # detach from PDFium's buffer
    finally:
        bitmap.close()


# ----------------------------------------------------------------------------------------------- misc


def _check_pixels(w: int, h: int, cfg: InputConfig, label: str, index: Optional[int], extra: str = "") -> None:
    pixels = int(w) * int(h)
    if pixels > cfg.max_pixels_per_page:
        where = label if index is None else f"{label}: page {index + 1}"
        raise DecodeError(
            "ImageTooLarge",
            f"{where}: {w}x{h} pixels{extra} exceeds the limit of {cfg.max_pixels_per_page} pixels per page",
        )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

