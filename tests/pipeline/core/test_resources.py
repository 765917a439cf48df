"""CPU and memory the engine may plan for (cgroup files faked in a temp directory)."""
import logging

from pipeline.core import engine as engine_mod
from pipeline.core.resources import available_memory_mb, cgroup_cpu_limit, usable_cpus


def test_cgroup_cpu_quota(tmp_path):
    assert cgroup_cpu_limit(tmp_path) is None
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_limit(tmp_path) is None
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cgroup_cpu_limit(tmp_path) == 1.5
    assert usable_cpus(tmp_path) <= 2  # 1.5 CPUs rounds up to 2 (and never above the affinity mask)
    (tmp_path / "cpu.max").write_text("garbage\n")
    assert cgroup_cpu_limit(tmp_path) is None


def test_available_memory_takes_the_tighter_of_meminfo_and_cgroup(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  32000000 kB\nMemAvailable:   8388608 kB\n")
    cg = tmp_path / "cg"
    cg.mkdir()
    assert available_memory_mb(meminfo, cg) == 8192
    (cg / "memory.max").write_text(str(6 * 2**30))
    (cg / "memory.current").write_text(str(2 * 2**30))
    assert available_memory_mb(meminfo, cg) == 4096
    (cg / "memory.max").write_text("max")
    assert available_memory_mb(meminfo, cg) == 8192
    assert available_memory_mb(tmp_path / "missing", tmp_path / "none") is None


def test_auto_workers_one_per_core_capped_by_memory(monkeypatch, caplog):
    monkeypatch.setattr(engine_mod, "usable_cpus", lambda: 16)
    monkeypatch.setattr(engine_mod, "available_memory_mb", lambda: 64_000)
    assert engine_mod.auto_workers(1, 800) == 16
    assert engine_mod.auto_workers(4, 800) == 4
    monkeypatch.setattr(engine_mod, "available_memory_mb", lambda: 4_000)
    with caplog.at_level(logging.WARNING, logger="pipeline.core.engine"):
        assert engine_mod.auto_workers(1, 800) == 5
    assert "not 16" in caplog.text
    assert engine_mod.auto_workers(1, 0) == 16  # no memory cap
    monkeypatch.setattr(engine_mod, "available_memory_mb", lambda: 100)
    assert engine_mod.auto_workers(1, 800) == 1  # always at least one
    monkeypatch.setattr(engine_mod, "available_memory_mb", lambda: None)
    assert engine_mod.auto_workers(2, 800) == 8
