"""LineReader: N pages in, N results out, and a page's second look keeps, per line, the surer of two readings."""
from __future__ import annotations

import numpy as np

from stages.contracts.types import Recognized, StageError, TextBox
from stages.recognition.lines import LineReader, OnFirstUse, PageBoxes


class _ByBrightness:
    """Stands in for the recognizer: reads a crop as 'dark' or 'light' with a score that grows with contrast,
    so which rendering wins is decided by the pixels, as with the real model's scores."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def recognize_batch(self, crops, groups=None):
        self.calls.append(len(crops))
        out = []
        for c in crops:
            mean = float(np.mean(c))
            text = "dark" if mean < 128 else "light"
            score = abs(mean - 128.0) / 128.0
            out.append(Recognized(text, score, tuple([score] * len(text)), tuple(range(len(text))), len(text)))
        return out


def _box(x0: int) -> TextBox:
    return TextBox(np.array([[x0, 0], [x0 + 40, 0], [x0 + 40, 10], [x0, 10]], np.float32), 0.9)


def test_second_look_keeps_the_reading_with_the_higher_score() -> None:
    first = np.full((10, 100, 3), 120, np.uint8)  # both boxes barely dark: weak readings
    second = first.copy()
    second[:, 0:50] = 250  # the left box is clearly light in the second rendering
    second[:, 50:] = 125  # the right box is even less sure there
    rec = _ByBrightness()
    pages = [PageBoxes(first, [_box(0), _box(55)], "doc", second)]
    (lines,) = LineReader(rec, drop_score=0.0).read(pages)
    assert [ln.text for ln in lines] == ["light", "dark"]
    assert rec.calls == [4]  # both renderings in one recognition batch
    assert abs(lines[1].score - 8 / 128) < 1e-6  # the first rendering's reading, the surer one for that box


def test_pages_without_second_look_read_once_and_keep_order() -> None:
    rec = _ByBrightness()
    a = np.full((10, 100, 3), 10, np.uint8)
    b = np.full((10, 100, 3), 240, np.uint8)
    out = LineReader(rec, drop_score=0.0).read([PageBoxes(a, [_box(0)], 1), PageBoxes(b, [], 2), PageBoxes(b, [_box(0)], 3)])
    assert [[ln.text for ln in p] for p in out] == [["dark"], [], ["light"]]
    assert rec.calls == [2]


def test_a_failed_crop_is_the_pages_error_even_with_a_second_look() -> None:
    class _Failing(_ByBrightness):
        def recognize_batch(self, crops, groups=None):
            res = super().recognize_batch(crops, groups)
            res[0] = StageError("recognize", "RuntimeError", "boom")
            return res

    img = np.full((10, 100, 3), 10, np.uint8)
    (page,) = LineReader(_Failing(), 0.0).read([PageBoxes(img, [_box(0)], 1, img.copy())])
    assert isinstance(page, StageError)


def test_each_capture_is_read_by_its_own_recognizer() -> None:
    class _Named(_ByBrightness):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def recognize_batch(self, crops, groups=None):
            res = super().recognize_batch(crops, groups)
            return [Recognized(f"{self.name}:{r.text}", r.score, r.char_probs, r.char_frames, r.num_frames)
                    for r in res]

    main, fax, photo = _Named("main"), _Named("fax"), _Named("photo")
    img = np.full((10, 100, 3), 10, np.uint8)
    pages = [PageBoxes(img, [_box(0)], 1), PageBoxes(img, [_box(0), _box(50)], 2, capture="fax"),
             PageBoxes(img, [_box(0)], 3), PageBoxes(img, [_box(0)], 4, capture="photo")]
    out = LineReader(main, 0.0, {"fax": fax, "photo": photo}).read(pages)
    assert [[ln.text for ln in p] for p in out] == [["main:dark"], ["fax:dark", "fax:dark"], ["main:dark"],
                                                    ["photo:dark"]]
    assert main.calls == [2] and fax.calls == [2] and photo.calls == [1]
    no_photo = LineReader(_Named("main"), 0.0, {"fax": fax}).read(pages)  # photos without their own: the main one
    assert [[ln.text for ln in p] for p in no_photo][3] == ["main:dark"]
    alone = LineReader(_Named("main"), 0.0).read(pages)  # no capture recognizers: the main one reads every page
    assert [[ln.text for ln in p] for p in alone] == [["main:dark"], ["main:dark", "main:dark"], ["main:dark"],
                                                      ["main:dark"]]


def test_a_capture_recognizer_built_on_first_use_is_built_once_and_only_when_needed() -> None:
    import threading

    built: list[_ByBrightness] = []

    def build() -> _ByBrightness:
        built.append(_ByBrightness())
        return built[-1]

    fax = OnFirstUse(build)
    reader = LineReader(_ByBrightness(), 0.0, {"fax": fax})
    img = np.full((10, 100, 3), 10, np.uint8)
    reader.read([PageBoxes(img, [_box(0)], 1), PageBoxes(img, [_box(0)], 2, capture="photo")])
    assert not fax.loaded and built == []  # no fax page yet: nothing built
    threads = [threading.Thread(target=reader.read, args=([PageBoxes(img, [_box(0)], 3, capture="fax")],))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fax.loaded and len(built) == 1 and sum(built[0].calls) == 8  # built once, then read all eight pages


class _Says(_ByBrightness):
    """Reads every crop as one fixed text per box position (its left edge), as a recognizer of its own would."""

    def __init__(self, texts: dict[int, str]) -> None:
        super().__init__()
        self.texts = texts

    def recognize_batch(self, crops, groups=None):
        self.calls.append(len(crops))
        return [Recognized(self.texts[int(c.shape[1])], 0.9, (0.9,), (0,), 1) for c in crops]


def test_a_photos_code_like_lines_are_read_again_by_the_main_recognizer_as_their_check() -> None:
    # crops of different widths stand for the two boxes, so each recognizer knows which line it reads
    code, name = _box(0), TextBox(np.array([[50, 0], [70, 0], [70, 10], [50, 10]], np.float32), 0.9)
    photo = _Says({40: "保单号：12D202089047034", 20: "张三"})
    main = _Says({40: "保单号：TZD202089047034", 20: "张二"})
    img = np.full((10, 100, 3), 10, np.uint8)
    pages = [PageBoxes(img, [code, name], 1, capture="photo"), PageBoxes(img, [code, name], 2)]
    photo_page, scan_page = LineReader(main, 0.0, {"photo": photo}).read(pages)
    assert [(ln.text, ln.check_text) for ln in photo_page] == [("保单号：12D202089047034", "保单号：TZD202089047034"),
                                                              ("张三", None)]
    assert [(ln.text, ln.check_text) for ln in scan_page] == [("保单号：TZD202089047034", None), ("张二", None)]
    assert main.calls == [2, 1] and photo.calls == [2]  # the scan page, then the photo's one code-like line
