"""The service's data folder: its per-user default (``platformdirs.user_data_dir("docpipe")``) and the exclusive
lock that keeps a second ``docpipe serve`` off a folder another instance is using (taken before recovery, so
the second instance touches nothing)."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Optional

LOCK_NAME = "serve.lock"


def data_dir_of(configured: Optional[Path]) -> Path:
    """``service.data_dir``, or the per-user data folder when it is not set."""
    if configured is not None:
        return Path(configured).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("docpipe"))


class DataDirBusy(RuntimeError):
    """Another process holds the data folder's lock."""


class DataDirLock:
    """``fcntl.flock`` (exclusive, non-blocking) on ``<data_dir>/serve.lock``; the kernel drops it when the
    process ends, however it ends, so a crashed instance never leaves the folder locked."""

    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / LOCK_NAME
        self._fd: Optional[int] = None

    def acquire(self) -> "DataDirLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirBusy(f"{self.path.parent} is in use by another docpipe serve (it holds {self.path}); "
                              "stop it or give this one another --data-dir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None
