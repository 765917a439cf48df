"""What this process may use: CPUs (affinity and cgroup quota, not just the machine's count) and memory
(``MemAvailable`` and the cgroup limit). The engine's automatic worker plan reads these."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Optional

CGROUP = Path("/sys/fs/cgroup")


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def cgroup_cpu_limit(root: Path = CGROUP) -> Optional[float]:
    """CPUs granted by a cgroup v2 ``cpu.max`` quota (``"max 100000"`` = none)."""
    text = _read(root / "cpu.max")
    if not text:
        return None
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def usable_cpus(root: Path = CGROUP) -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup quota (rounded up), at least 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = cgroup_cpu_limit(root)
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


def available_memory_mb(meminfo: Path = Path("/proc/meminfo"), root: Path = CGROUP) -> Optional[int]:
    """Memory a new process could still take: ``MemAvailable``, capped by the cgroup v2 limit minus what the
    cgroup already uses. None where neither is known (not Linux)."""
    avail = None
    text = _read(meminfo)
    if text:
        for line in text.splitlines():
            if line.startswith("MemAvailable:"):
                try:
                    avail = int(line.split()[1]) // 1024
                except (IndexError, ValueError):
                    pass
                break
    limit, used = _read(root / "memory.max"), _read(root / "memory.current")
    if limit and limit != "max" and used:
        try:
            room = (int(limit) - int(used)) // 2**20
        except ValueError:
            room = None
        if room is not None:
            avail = room if avail is None else min(avail, room)
    return None if avail is None else max(0, avail)
