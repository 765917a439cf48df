"""Durable, atomic file operations and safe output naming (used by ``batch`` and ``watch``).

* :func:`atomic_write` — temp file in the target directory, ``fsync``, ``rename``, ``fsync`` of the
  directory: readers see the old file or the complete new one, never a partial one, even after a crash.
* :func:`durable_move` — ``rename`` (atomic) or, across filesystems, copy to a temp name + fsync + rename +
  unlink of the source; safe to repeat after a crash at any point.
* :func:`safe_child` — joins untrusted relative names under a root without ever leaving it.
"""
from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

log = logging.getLogger(__name__)

#: Prefix of every temporary file this package creates next to its outputs (consumers should skip dotfiles).
TMP_PREFIX = ".docpipe-"
TMP_SUFFIX = ".tmp"
NAME_MAX = 255  # bytes, for the file systems we target (ext4, xfs, btrfs, tmpfs, NFS)


class UnsafePathError(ValueError):
    """A relative name that would escape its output root (``..``, absolute, NUL, empty)."""


def fsync_dir(path: str | Path) -> None:
    """fsync a directory so that renames/creates inside it are durable. No-op where unsupported."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # e.g. EINVAL on some network/virtual file systems
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def tmp_path_for(target: Path, tag: Optional[str] = None) -> Path:
    """A temp name in ``target``'s directory; deterministic for a given ``tag`` (random otherwise)."""
    return target.parent / f"{TMP_PREFIX}{tag or secrets.token_hex(8)}{TMP_SUFFIX}"


@contextmanager
def _temp_beside(target: Path, tag: Optional[str]) -> Iterator[Path]:
    """A temp path beside ``target`` (:func:`tmp_path_for`) for the block to fill and rename into place; removed if
    the block raises."""
    tmp = tmp_path_for(target, tag)
    try:
        yield tmp
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write(target: str | Path, data: bytes, tag: Optional[str] = None) -> None:
    """Write ``data`` to ``target`` atomically and durably (temp + fsync + rename + fsync dir)."""
    target = Path(target)
    with _temp_beside(target, tag) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    fsync_dir(target.parent)


def durable_move(src: str | Path, dst: str | Path, tag: Optional[str] = None) -> None:
    """Move ``src`` to ``dst`` (replacing it), durably; works across file systems.

    Across file systems the copy goes to a temp name beside ``dst`` (fsynced) and is renamed into place
    before ``src`` is unlinked, so a crash leaves either ``src`` only, or both (then repeating the move
    just unlinks ``src`` once the caller sees ``dst`` exists).
    """
    src, dst = Path(src), Path(dst)
    try:
        os.rename(src, dst)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with _temp_beside(dst, tag) as tmp:
            with open(src, "rb") as fin, open(tmp, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1024 * 1024)
                fout.flush()
                os.fsync(fout.fileno())
            shutil.copystat(src, tmp)
            os.replace(tmp, dst)
        fsync_dir(dst.parent)
        os.unlink(src)
    fsync_dir(dst.parent)
    fsync_dir(src.parent)


def sha256_file(path: str | Path, chunk: int = 1024 * 1024) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def _json_default(obj: Any) -> Any:
    # numpy scalars/arrays and paths, should a record carry them
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def json_bytes(record: Any, indent: Optional[int] = 2) -> bytes:
    """UTF-8 JSON; lone surrogates (undecodable file names) become ``\\udcXX`` escapes, never an error."""
    text = json.dumps(record, ensure_ascii=False, indent=indent, default=_json_default)
    return text.encode("utf-8", "backslashreplace")


def log_ref(name: str) -> str:
    """A stand-in for a file name in log lines (names may carry personal data): ``file:`` and the first 12 hex
    digits of the name's SHA-256, the same for the same name, so lines about one file can be followed."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()
    return f"file:{digest[:12]}"


def display_name(name: str) -> str:
    """A file name fit for JSON and logs: undecodable bytes shown as ``\\xNN``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def check_component(part: str) -> str:
    """Reject a path component that could escape a directory or is not a plain name."""
    if part in ("", ".", "..") or "/" in part or "\x00" in part or (os.sep != "/" and os.sep in part):
        raise UnsafePathError(f"unsafe path component {part!r}")
    if os.altsep and os.altsep in part:
        raise UnsafePathError(f"unsafe path component {part!r}")
    return part


def fit_name(name: str, suffix: str = "") -> str:
    """``name + suffix``, shortened with a hash when it would exceed NAME_MAX bytes."""
    full = name + suffix
    if len(os.fsencode(full)) <= NAME_MAX:
        return full
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    keep = name
    while len(os.fsencode(f"{keep}~{digest}{suffix}")) > NAME_MAX and keep:
        keep = keep[:-1]
    return f"{keep}~{digest}{suffix}"


def safe_child(root: str | Path, parts: Iterable[str], suffix: str = "") -> Path:
    """``root/parts.../last+suffix``, guaranteed to lie inside ``root``.

    Every component is checked (:func:`check_component`); the last gets ``suffix`` (shortened to fit
    NAME_MAX); the result is verified lexically to stay under ``root``.
    """
    root = Path(os.path.abspath(root))
    parts = [check_component(p) for p in parts]
    if not parts:
        raise UnsafePathError("empty relative path")
    parts[-1] = fit_name(parts[-1], suffix)
    candidate = Path(os.path.normpath(root.joinpath(*parts)))
    if os.path.commonpath([str(root), str(candidate)]) != str(root) or candidate == root:
        raise UnsafePathError(f"{'/'.join(parts)!r} escapes {root}")
    return candidate


def unique_base(name: str, targets: Iterable[tuple[Path, str]], taken: Iterable[Path] = ()) -> str:
    """A base name free at every ``directory/base+suffix`` of ``targets`` and not in ``taken``.

    Tries ``name``, then ``stem.2.ext``, ``stem.3.ext`` … (the counter goes before the extension);
    shortened with a hash when ``base+suffix`` would exceed NAME_MAX.
    """
    targets = list(targets)
    taken = {os.path.abspath(t) for t in taken}
    longest = max((s for _, s in targets), key=lambda s: len(os.fsencode(s)), default="")
    stem, ext = os.path.splitext(name)
    if not stem:  # ".ext"-only names have no extension
        stem, ext = name, ""
    n = 1
    while True:
        base = name if n == 1 else f"{stem}.{n}{ext}"
        fitted = fit_name(base, longest)
        base = fitted[: len(fitted) - len(longest)] if longest else fitted
        paths = [os.path.abspath(d / (base + s)) for d, s in targets]
        if not any(p in taken or os.path.lexists(p) for p in paths):
            return base
        n += 1
