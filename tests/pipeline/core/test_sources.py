"""pipeline.core.sources.load_pages / open_pages: every supported format, conversions, limits, and bad inputs."""
from __future__ import annotations

import io
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stages.contracts.config import InputConfig
from pipeline.core.sources import DecodeError, load_pages, open_pages, sniff_format
from tests.pipeline.helpers import encode, png_with_declared_size

CFG = InputConfig()
# BGR (30, 120, 220): red != blue, so a channel swap is caught
RGB = (220, 120, 30)
BGR = [30, 120, 220]


def encrypted_pdf() -> bytes:
    """A PDF with a Standard security handler whose user password is not empty."""
    return (
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
        b"3 0 obj << /Filter /Standard /V 1 /R 2 /O <" + b"00" * 32 + b"> /U <" + b"11" * 32 + b"> /P -4 >> endobj\n"
        b"trailer << /Root 1 0 R /Encrypt 3 0 R /ID [<0123456789abcdef0123456789abcdef>"
        b"<0123456789abcdef0123456789abcdef>] >>\n%%EOF\n"
    )


def three_page_pdf() -> bytes:
    pages = [Image.new("RGB", (200 + 10 * i, 100), RGB) for i in range(3)]
    return encode(pages[0], "PDF", save_all=True, append_images=pages[1:], resolution=72)


# ------------------------------------------------------------------------------------------ formats


@pytest.mark.parametrize("fmt,ext", [("JPEG", ".jpg"), ("PNG", ".png"), ("BMP", ".bmp"), ("WEBP", ".webp"), ("TIFF", ".tif")])
def test_raster_formats_from_path(tmp_path: Path, fmt: str, ext: str) -> None:
    path = tmp_path / f"page{ext}"
    path.write_bytes(encode(Image.new("RGB", (200, 100), RGB), fmt, **({"quality": 95} if fmt == "JPEG" else {})))
    pages = load_pages(path, CFG)
    assert len(pages) == 1
    p = pages[0]
    assert p.index == 0 and p.source == str(path)
    assert p.image.shape == (100, 200, 3) and p.image.dtype == np.uint8 and p.image.flags["C_CONTIGUOUS"]
    assert np.abs(p.image[50, 100].astype(int) - BGR).max() <= 3


def test_type_is_sniffed_not_taken_from_the_name(tmp_path: Path) -> None:
    path = tmp_path / "really_a_png.jpg"
    path.write_bytes(encode(Image.new("RGB", (20, 10), RGB), "PNG"))
    assert load_pages(path, CFG)[0].image[0, 0].tolist() == BGR
    assert sniff_format(path.read_bytes()) == "png"


def test_bytes_and_name(tmp_path: Path) -> None:
    data = encode(Image.new("RGB", (20, 10), RGB), "PNG")
    assert load_pages(data, CFG)[0].source == "<bytes>"
    assert load_pages(data, CFG, name="scan.png")[0].source == "scan.png"


def test_multipage_tiff(tmp_path: Path) -> None:
    frames = [Image.new("L", (60 + i, 40), 50 * (i + 1)) for i in range(3)]
    path = tmp_path / "three.tiff"
    frames[0].save(path, format="TIFF", save_all=True, append_images=frames[1:])
    pages = load_pages(path, CFG)
    assert [p.index for p in pages] == [0, 1, 2]
    assert [p.image.shape for p in pages] == [(40, 60, 3), (40, 61, 3), (40, 62, 3)]
    assert [int(p.image[0, 0, 0]) for p in pages] == [50, 100, 150]


def test_three_page_pdf_pillow(tmp_path: Path) -> None:
    path = tmp_path / "three.pdf"
    path.write_bytes(three_page_pdf())
    pages = load_pages(path, InputConfig(pdf_dpi=144))
    assert [p.index for p in pages] == [0, 1, 2]
    assert [p.image.shape for p in pages] == [(200, 400, 3), (200, 420, 3), (200, 440, 3)]
    assert np.abs(pages[1].image[100, 200].astype(int) - BGR).max() <= 3


def test_three_page_pdf_pdfium(tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument.new()
    for i in range(3):
        doc.new_page(72 * (i + 1), 72)  # 1, 2, 3 inches wide
    buf = io.BytesIO()
    doc.save(buf)
    doc.close()
    pages = load_pages(buf.getvalue(), InputConfig(pdf_dpi=100), name="made.pdf")
    assert [p.image.shape[:2] for p in pages] == [(100, 100), (100, 200), (100, 300)]
    assert all(p.source == "made.pdf" for p in pages)
    assert (pages[0].image == 255).all()  # a blank page renders white


@pytest.mark.parametrize(
    "mode,value,expected",
    [
        ("L", 77, [77, 77, 77]),
        ("1", 1, [255, 255, 255]),
        ("P", 0, None),
        ("LA", (10, 0), [255, 255, 255]),  # fully transparent -> white background
        ("RGBA", (*RGB, 255), BGR),
        ("RGBA", (*RGB, 0), [255, 255, 255]),
        ("CMYK", (0, 0, 0, 0), [255, 255, 255]),
    ],
)
def test_modes_become_8bit_bgr(mode: str, value, expected) -> None:
    img = Image.new(mode, (8, 4), value)
    page = load_pages(encode(img, "TIFF" if mode == "CMYK" else "PNG"), CFG)[0]
    assert page.image.shape == (4, 8, 3) and page.image.dtype == np.uint8
    if expected is not None:
        assert page.image[0, 0].tolist() == expected


def test_16bit_gray_png_scaled_not_clipped() -> None:
    arr = np.array([[0, 257 * 100, 65535]], dtype=np.uint16)
    page = load_pages(encode(Image.fromarray(arr), "PNG"), CFG)[0]
    assert page.image[0, :, 0].tolist() == [0, 100, 255]


def test_exif_orientation_applied() -> None:
    img = Image.new("RGB", (40, 20), RGB)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 CW for display
    page = load_pages(encode(img, "JPEG", exif=exif.tobytes()), CFG)[0]
    assert page.image.shape == (40, 20, 3)


@pytest.mark.parametrize(
    "arr,expected",
    [
        (np.full((4, 6), 9, np.uint8), [9, 9, 9]),
        (np.full((4, 6, 1), 9, np.uint8), [9, 9, 9]),
        (np.tile(np.array(BGR, np.uint8), (4, 6, 1)), BGR),
        (np.tile(np.array(BGR + [0], np.uint8), (4, 6, 1)), [255, 255, 255]),
        (np.full((4, 6, 3), 0.5, np.float32), [128, 128, 128]),
        (np.full((4, 6), 65535, np.uint16), [255, 255, 255]),
        (np.ones((4, 6), bool), [255, 255, 255]),
    ],
)
def test_arrays(arr: np.ndarray, expected: list[int]) -> None:
    page = load_pages(arr, CFG)[0]
    assert page.source == "<array>"
    assert page.image.shape == (4, 6, 3) and page.image.dtype == np.uint8
    assert page.image[0, 0].tolist() == expected


def test_bad_arrays() -> None:
    with pytest.raises(DecodeError) as e:
        load_pages(np.zeros((4, 6, 2), np.uint8), CFG)
    assert e.value.type == "UnsupportedFormat"
    with pytest.raises(DecodeError) as e:
        load_pages(np.zeros((0, 6, 3), np.uint8), CFG)
    assert e.value.type == "EmptyFile"
    with pytest.raises(DecodeError) as e:
        load_pages(np.zeros((100, 100), np.uint8), InputConfig(max_pixels_per_page=99 * 100))
    assert e.value.type == "ImageTooLarge"


# -------------------------------------------------------------------------------------- bad inputs


def bad_corpus(root: Path) -> dict[str, str]:
    """Write the bad-input corpus under ``root``; returns file name -> expected error type."""
    jpeg = encode(Image.fromarray((np.random.default_rng(0).random((120, 160, 3)) * 255).astype(np.uint8)), "JPEG")
    files = {
        "empty.jpg": (b"", "EmptyFile"),
        "truncated.jpg": (jpeg[: len(jpeg) // 2], "UnreadableImage"),
        "random bytes.png": (np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes(), "UnsupportedFormat"),
        "文本.pdf": ("这不是PDF文件 just text\n".encode("utf-8") * 20, "UnsupportedFormat"),
        "encrypted.pdf": (encrypted_pdf(), "EncryptedPDF"),
        "corrupt.pdf": (three_page_pdf()[:300], "UnreadablePDF"),
        "huge 20000x20000.png": (png_with_declared_size(20000, 20000), "ImageTooLarge"),
        "broken header.png": (b"\x89PNG\r\n\x1a\n" + b"\0" * 40, "UnreadableImage"),
    }
    for name, (data, _) in files.items():
        (root / name).write_bytes(data)
    return {name: kind for name, (_, kind) in files.items()}


def test_bad_input_corpus(tmp_path: Path) -> None:
    expected = bad_corpus(tmp_path)
    for name, kind in expected.items():
        path = tmp_path / name
        with pytest.raises(DecodeError) as e:
            load_pages(path, CFG)
        assert e.value.type == kind, (name, e.value)
        assert str(path) in e.value.message  # the message names the file
        assert "DOS" not in e.value.message
        err = e.value.as_stage_error()
        assert (err.stage, err.type) == ("decode", kind)


def test_text_named_pdf_message_mentions_the_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "notes.pdf"
    path.write_text("hello")
    with pytest.raises(DecodeError, match=r"name says \.pdf"):
        load_pages(path, CFG)


def test_pixel_limit_checked_from_header_without_bomb_warning() -> None:
    # 10000 x 10000 is above Pillow's warning threshold (89 M) but below its error threshold:
    # no DecompressionBombWarning may escape, and we refuse it before decoding (limit 60 M).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DecodeError) as e:
            load_pages(png_with_declared_size(10000, 10000), CFG, name="big.png")
    assert e.value.type == "ImageTooLarge" and "10000x10000" in e.value.message


def test_compressed_1bit_image_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "bitonal.tif"
    Image.new("1", (8000, 8000), 1).save(path, format="TIFF", compression="group4")  # ~8 MB in memory, tiny file
    assert path.stat().st_size < 100_000
    with pytest.raises(DecodeError) as e:
        load_pages(path, CFG)  # 64 M pixels > 60 M
    assert e.value.type == "ImageTooLarge"


def test_pdf_page_size_times_dpi_checked_before_rendering() -> None:
    pdf = encode(Image.new("RGB", (2000, 2000), RGB), "PDF", resolution=72)  # 2000 pt square
    with pytest.raises(DecodeError) as e:
        load_pages(pdf, InputConfig(pdf_dpi=300, max_pixels_per_page=60_000_000), name="poster.pdf")
    assert e.value.type == "ImageTooLarge" and "300 dpi" in e.value.message


def test_too_many_pages(tmp_path: Path) -> None:
    cfg = InputConfig(max_pages=2)
    with pytest.raises(DecodeError) as e:
        load_pages(three_page_pdf(), cfg)
    assert e.value.type == "TooManyPages"
    frames = [Image.new("L", (10, 10)) for _ in range(3)]
    with pytest.raises(DecodeError) as e:
        load_pages(encode(frames[0], "TIFF", save_all=True, append_images=frames[1:]), cfg)
    assert e.value.type == "TooManyPages"


def test_document_pixel_budget_checked_from_the_headers() -> None:
    frames = [Image.new("L", (100, 100), 255) for _ in range(3)]  # 30 000 pixels in all, 10 000 a page
    tiff = encode(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    with pytest.raises(DecodeError) as e:
        open_pages(tiff, InputConfig(max_pixels_per_document=25_000), name="long.tif")
    assert e.value.type == "DocumentTooLarge" and "30000 pixels" in e.value.message and "long.tif" in e.value.message
    assert len(load_pages(tiff, InputConfig(max_pixels_per_document=30_000))) == 3
    # PDF: page size x dpi, summed over the pages (200x100, 210x100, 220x100 pt at 72 dpi = 63 000 px)
    with pytest.raises(DecodeError) as e:
        load_pages(three_page_pdf(), InputConfig(pdf_dpi=72, max_pixels_per_document=60_000))
    assert e.value.type == "DocumentTooLarge" and "72 dpi" in e.value.message


@pytest.mark.parametrize("kind", ["tiff", "pdf"])
def test_open_pages_decodes_the_page_asked_for(kind: str) -> None:
    colours = [(220, 120, 30), (10, 200, 40), (90, 90, 250)]
    frames = [Image.new("RGB", (60 + 10 * i, 40), c) for i, c in enumerate(colours)]
    data = encode(frames[0], "TIFF" if kind == "tiff" else "PDF", save_all=True, append_images=frames[1:],
                  **({} if kind == "tiff" else {"resolution": 72}))
    cfg = InputConfig(pdf_dpi=72)
    with open_pages(data, cfg, name="three") as doc:
        assert len(doc) == 3 and [w for w, _ in doc.sizes] == [60, 70, 80] and doc.total_pixels == 40 * 210
        last = doc.page(2)  # straight to the last page
        first = doc.page(0)  # and back
        with pytest.raises(IndexError):
            doc.page(3)
    assert last.index == 2 and last.image.shape == (40, 80, 3) and first.image.shape == (40, 60, 3)
    if kind == "tiff":  # lossless: the colours are exact
        assert last.image[5, 5].tolist() == list(colours[2][::-1]) and first.image[5, 5].tolist() == list(colours[0][::-1])
    streamed = [p.image for p in open_pages(data, cfg)]
    assert all(np.array_equal(a, b.image) for a, b in zip(streamed, load_pages(data, cfg)))


def test_file_too_large(tmp_path: Path) -> None:
    path = tmp_path / "big.png"
    path.write_bytes(encode(Image.new("RGB", (50, 50)), "PNG") + b"\0" * 2000)
    with pytest.raises(DecodeError) as e:
        load_pages(path, InputConfig(max_file_bytes=1000))
    assert e.value.type == "FileTooLarge"
    with pytest.raises(DecodeError) as e:
        load_pages(path.read_bytes(), InputConfig(max_file_bytes=1000))
    assert e.value.type == "FileTooLarge"


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(DecodeError) as e:
        load_pages(tmp_path / "nope.jpg", CFG)
    assert e.value.type == "FileNotFound"
    with pytest.raises(DecodeError) as e:
        load_pages(tmp_path, CFG)
    assert e.value.type == "NotAFile"


def test_permission_denied(tmp_path: Path) -> None:
    path = tmp_path / "secret.png"
    path.write_bytes(encode(Image.new("RGB", (4, 4)), "PNG"))
    path.chmod(0)
    try:
        try:
            with open(path, "rb"):
                pass
            pytest.skip("running with privileges that ignore file permissions (root)")
        except PermissionError:
            pass
        with pytest.raises(DecodeError) as e:
            load_pages(path, CFG)
        assert e.value.type == "PermissionDenied" and "secret.png" in e.value.message
    finally:
        path.chmod(0o644)


def test_names_with_spaces_and_chinese(tmp_path: Path) -> None:
    good = tmp_path / "保单 扫描 001.png"
    good.write_bytes(encode(Image.new("RGB", (20, 10), RGB), "PNG"))
    assert load_pages(good, CFG)[0].source == str(good)
    bad = tmp_path / "损坏 的 文件.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not really")
    with pytest.raises(DecodeError) as e:
        load_pages(bad, CFG)
    assert "损坏 的 文件.jpg" in e.value.message


def test_non_utf8_file_name(tmp_path: Path) -> None:
    name = os.fsdecode(b"scan-\xff.png")
    path = tmp_path / name
    try:
        path.write_bytes(encode(Image.new("RGB", (4, 4)), "PNG"))
    except (OSError, UnicodeEncodeError):
        pytest.skip("file system refuses non-UTF-8 names")
    assert load_pages(path, CFG)[0].image.shape == (4, 4, 3)
