"""``docpipe batch --ray`` on a real local Ray cluster (started once for this module): same records as local
batch on the committed samples, resume, error records, exit codes, and a Ray worker killed mid-run."""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")  # the [ray] extra; CI installs it
pytest.importorskip("ray.data")
psutil = pytest.importorskip("psutil")

from pipeline import cli  # noqa: E402
from pipeline.ops.batch import run_batch  # noqa: E402
from pipeline.ops.ray_batch import plan_actors, rows_per_block, run_ray_batch, start_local_ray  # noqa: E402
from pipeline.ops.backends import BACKENDS  # noqa: E402
from stages.contracts.config import DocpipeConfig, with_overrides  # noqa: E402
from tests.pipeline.ops.test_batch import BAD, GOOD, make_tree, sha  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = sorted((ROOT / "samples" / "pages").glob("*.jpg"))
CLUSTER_CPUS = 2


@pytest.fixture(scope="module")
def cluster():
    """One local Ray for the module (starting one takes seconds); every run below joins it."""
    start_local_ray(num_cpus=CLUSTER_CPUS)
    yield
    ray.shutdown()


def one_thread_config(max_batch: int = 4) -> DocpipeConfig:
    """Predictors on one thread in both runners (local engine workers and Ray actors), whatever the
    machine's CPU count, so the two runs compute with the same kernels."""
    return with_overrides(DocpipeConfig(), predictor={"cpu_threads": 1},
                          engine={"threads_per_worker": 1, "max_batch": max_batch})


def records(out: Path) -> dict[str, dict]:
    found = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            assert path.suffix == ".json", f"stray file {path}"  # no temp files left behind
            rec = json.loads(path.read_text(encoding="utf-8"))
            found[rec["source"]] = rec
    return found


def comparable(record: dict) -> dict:
    """Everything but the timings."""
    return {k: v for k, v in record.items() if k != "timings_ms"}


# ------------------------------------------------------------------------------------------- sizing


def test_plan_leaves_a_cpu_for_the_tasks_that_feed_the_actors() -> None:
    mb = 2**20
    two = plan_actors({"CPU": 2.0, "memory": 16000 * mb}, 1, 800, "cpu")
    assert (two.actors, two.threads, two.num_gpus) == (2, 1, 0.0)
    assert two.actors * two.num_cpus <= 2 - 1  # the read side always finds a whole CPU
    big = plan_actors({"CPU": 64.0, "memory": 256000 * mb}, 2, 800, "cpu")
    assert (big.actors, big.threads) == (32, 2) and 63 <= big.actors * big.num_cpus <= 63.01
    assert big.memory_mb == 800
    few = plan_actors({"CPU": 16.0, "memory": 64000 * mb}, 1, 800, "cpu", actors=4)
    assert (few.actors, few.threads) == (4, 4)  # fewer actors than CPUs: each gets more threads
    tight = plan_actors({"CPU": 16.0, "memory": 3000 * mb}, 1, 800, "cpu")
    assert tight.actors == 3  # memory for 3 actors only
    gpu = plan_actors({"CPU": 16.0, "GPU": 2.0, "memory": 64000 * mb}, 1, 800, "gpu")
    assert (gpu.actors, gpu.num_gpus, gpu.threads) == (2, 1.0, 7) and gpu.actors * gpu.num_cpus <= 15
    with pytest.raises(ValueError, match="no GPU"):
        plan_actors({"CPU": 16.0}, 1, 800, "gpu")
    assert rows_per_block(40, 2, 4) == 4 and rows_per_block(10**6, 32, 4) == 64


def test_ray_is_imported_only_with_the_ray_flag(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"")
    code = (
        "import sys; from pipeline import cli; "
        f"rc = cli.main(['batch', {str(tmp_path)!r}, '--out', {str(tmp_path / 'o')!r}, '--backend', 'decode-only']); "
        "assert rc == 1, rc; assert 'ray' not in sys.modules, 'local batch imported ray'"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


# ------------------------------------------------------------------------------ same as local batch


@pytest.fixture(scope="module")
def both_runs(cluster, tmp_path_factory):
    """The committed samples plus the bad inputs of test_batch, through local batch and through --ray."""
    base = tmp_path_factory.mktemp("same")
    src = base / "in"
    make_tree(src)
    for path in SAMPLES:
        shutil.copy(path, src / path.name)
    cfg = one_thread_config()
    local = run_batch(src, base / "local", cfg, BACKENDS["engine"], stream=io.StringIO())
    on_ray = run_ray_batch(src, base / "ray", cfg, "engine", stream=io.StringIO())
    return src, base, local, on_ray


def test_ray_output_equals_local_batch_output(both_runs) -> None:
    src, base, local, on_ray = both_runs
    a, b = records(base / "local"), records(base / "ray")
    expected = {p.name for p in SAMPLES} | set(GOOD) | set(BAD)
    assert set(a) == set(b) == expected
    # the layout: the same relative file for each input
    assert sorted(p.relative_to(base / "local") for p in (base / "local").rglob("*.json")) == \
        sorted(p.relative_to(base / "ray") for p in (base / "ray").rglob("*.json"))
    for key in sorted(expected):
        assert comparable(b[key]) == comparable(a[key]), key  # lines, scores, polygons, fields, errors
    samples = [b[p.name] for p in SAMPLES]
    assert all(r["errors"] == [] and r["pages"][0]["lines"] for r in samples)  # real OCR ran
    assert sum(v is not None for r in samples for v in r["fields"].values()) > 10 * 5  # and extraction
    assert on_ray.processed == local.processed and on_ray.unprocessed == 0 and on_ray.failed == len(BAD)


def test_bad_inputs_become_error_records(both_runs) -> None:
    src, base, _, on_ray = both_runs
    for rel, err_type in BAD.items():
        rec = json.loads((base / "ray" / (rel + ".json")).read_text(encoding="utf-8"))
        assert rec["errors"][0]["type"] == err_type and rec["errors"][0]["stage"] == "decode"
        assert rec["pages"] == [] and rec["input_sha256"] == sha(src / rel)
        assert all(v is None for v in rec["fields"].values())
    assert on_ray.processed["failed"] == len(BAD)


# ------------------------------------------------------------------------------------------- resume


def test_resume_skips_finished_inputs(cluster, tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    make_tree(src)
    cfg = one_thread_config()
    first = run_ray_batch(src, out, cfg, "decode-only", stream=io.StringIO())
    assert sum(first.processed.values()) == len(GOOD) + len(BAD)
    # one record lost, one input changed: only those two run again; the others are not even rewritten
    (out / "a.jpg.json").unlink()
    (src / "sub" / "b.png").write_bytes((src / "bad" / "empty.jpg").read_bytes() + b"x")  # now bad
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.json")}
    rows: list[dict] = []
    second = run_ray_batch(src, out, cfg, "decode-only", stream=io.StringIO(), on_row=rows.append)
    assert len(rows) == 2 and sum(second.processed.values()) == 2
    assert sum(second.skipped.values()) == len(GOOD) + len(BAD) - 2
    for path, mtime in before.items():
        if path.name != "b.png.json":
            assert path.stat().st_mtime_ns == mtime, path
    changed = json.loads((out / "sub" / "b.png.json").read_text())
    assert changed["input_sha256"] == sha(src / "sub" / "b.png") and changed["errors"][0]["type"] == "UnsupportedFormat"
    assert json.loads((out / "a.jpg.json").read_text())["input_sha256"] == sha(src / "a.jpg")
    third = run_ray_batch(src, out, cfg, "decode-only", stream=io.StringIO(), on_row=rows.append)
    assert len(rows) == 2 and sum(third.processed.values()) == 0  # nothing left: Ray is not even used


# --------------------------------------------------------------------------------------- exit codes


def test_cli_exit_codes(cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``docpipe batch --ray`` through the CLI (it joins this module's Ray): 1 with a bad input, 0 once
    every input is fine, 2 for usage errors."""
    src = tmp_path / "in"
    make_tree(src)
    base = ["batch", str(src), "--ray", "--backend", "decode-only"]
    assert cli.main([*base, "--out", str(tmp_path / "o1")]) == 1
    assert "failed: bad/encrypted.pdf: EncryptedPDF" in capsys.readouterr().err
    shutil.rmtree(src / "bad")
    assert cli.main([*base, "--out", str(tmp_path / "o2.jsonl")]) == 0
    lines = (tmp_path / "o2.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["source"] for line in lines) == sorted(GOOD)
    assert cli.main(["batch", str(src), "--out", str(tmp_path / "o3"), "--ray-address", "auto"]) == 2
    assert cli.main([*base, "--out", str(tmp_path / "o4"), "--workers", "0"]) == 2


# ---------------------------------------------------------------------------------- fault tolerance


def _actor_pids() -> set[int]:
    pids = set()
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or ())
        if "MapWorker(MapBatches(DocpipeActor))" in cmd:
            pids.add(proc.info["pid"])
    return pids


def test_killing_a_ray_worker_mid_run_loses_no_document(cluster, tmp_path: Path) -> None:
    """SIGKILL the actor process that is busy when the first result arrives: Ray re-runs its batch (on the
    restarted actor or on the other one, whichever the scheduler picks); every input ends with exactly one record,
    none failed."""
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    inputs = SAMPLES[:6]
    for path in inputs:
        shutil.copy(path, src / path.name)
    killed: list[int] = []
    actors_at_kill: set[int] = set()
    after_kill: list[dict] = []
    done_at_kill: list[int] = []

    def on_row(row: dict) -> None:
        if killed:
            after_kill.append(row)
            return
        actors_at_kill.update(_actor_pids())
        busy = actors_at_kill - {row["pid"]}  # the other actor is still on its first batch
        victim = min(busy) if busy else row["pid"]
        done_at_kill.append(len(list(out.glob("*.json"))))
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)

    summary = run_ray_batch(src, out, one_thread_config(max_batch=1), "engine", stream=io.StringIO(), on_row=on_row)
    assert killed and done_at_kill[0] < len(inputs)  # it died mid-run
    assert not psutil.pid_exists(killed[0]) or psutil.Process(killed[0]).status() == psutil.STATUS_ZOMBIE
    assert after_kill  # the run went on after the kill (which actor re-runs the batch is the scheduler's choice)
    assert summary.unprocessed == 0 and summary.failed == 0 and sum(summary.processed.values()) == len(inputs)
    found = records(out)
    assert sorted(found) == sorted(p.name for p in inputs)  # exactly one record per input, no temp files
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name + ".json" for p in inputs)
    assert all(r["errors"] == [] and r["pages"][0]["lines"] for r in found.values())


def test_a_document_that_kills_its_actor_every_time_gets_an_error_record(cluster, tmp_path: Path) -> None:
    """A batch whose actor dies on every retry is dropped by Ray Data; its input still gets one record
    (``WorkerCrashed``) and the run goes on."""
    from PIL import Image

    from pipeline.ops.backends import DecodeOnlyBackend

    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for name in ("a.png", "b.png", "poison.png", "c.png"):
        Image.new("RGB", (40, 20), "white").save(src / name)

    def poisoned(config: DocpipeConfig):  # pickled by value into the actors
        dec = DecodeOnlyBackend(config)

        def run(sources, names):
            if any("poison" in s for s in sources):
                os._exit(3)  # the actor process dies, as on a segfault
            return [dec.decode(s, i) for i, s in enumerate(sources)]

        return run

    summary = run_ray_batch(src, out, one_thread_config(max_batch=1), poisoned, stream=io.StringIO())
    found = records(out)
    assert sorted(found) == ["a.png", "b.png", "c.png", "poison.png"]  # one record each
    assert found["poison.png"]["errors"][0]["type"] == "WorkerCrashed"
    assert found["poison.png"]["errors"][0]["stage"] == "engine"
    assert summary.unprocessed == 0 and summary.failed >= 1
