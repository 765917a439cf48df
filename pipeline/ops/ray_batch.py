"""``docpipe batch IN --out OUT --ray [--ray-address ADDR]``: the local batch job spread over a Ray cluster
with Ray Data.

The driver lists the inputs and applies the resume rule exactly as local batch does
(:func:`pipeline.ops.batch.plan_batch`). The paths still to do become a Ray dataset; ``map_batches`` runs
:class:`pipeline.ops.ray_actor.DocpipeActor` in a fixed pool of actors (``ActorPoolStrategy``), each
holding one in-process document processor (predictors built once per actor, no nested worker
processes); the actor reads and hashes its inputs. The driver streams the finished rows back and writes
every record through the same sink as local batch (atomic JSON files or fsynced JSONL lines; same layout,
same records, same exit codes), so a record exists only once its document is done.

Sizing (:func:`plan_actors`): one actor per ``engine.threads_per_worker`` cluster CPUs (or ``--workers``
actors, each then given the CPUs that leaves), capped by cluster memory at ``engine.worker_memory_mb`` per
actor. Actors ask for a fraction of a CPU so that about one CPU stays free for Ray Data's own tasks (on 2
CPUs, two actors taking a whole CPU each starve the tasks that feed them and the run hangs). With
``predictor.device: gpu`` and GPUs in the cluster, one actor per GPU asks for ``num_gpus=1``.

Fault tolerance: an actor whose process dies is restarted (``max_restarts=-1``) and its unfinished batches
are re-run on it (``max_task_retries``); writes are atomic and idempotent, and the driver records each
input once. An input whose batch killed its actor on every retry gets an error record (``engine``,
``WorkerCrashed``) like the local engine's; ``--retry-failed`` processes it again.
"""
from __future__ import annotations

import json
import logging
import math
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, TextIO

from stages.contracts.config import DocpipeConfig, with_overrides
from pipeline.core.resources import usable_cpus
from pipeline.ops.batch_job import (
    BatchInterrupted,
    BatchSummary,
    Recorder,
    batch_record,
    plan_summary,
    start_job,
)
from pipeline.ops.backends import error_record

if TYPE_CHECKING:
    from pipeline.ops.ray_actor import BackendSpec

log = logging.getLogger(__name__)

#: Retries of a batch whose actor died while running it (each retry on the restarted actor).
MAX_TASK_RETRIES = 3
#: Object store of a local cluster: rows carry paths and JSON records only.
LOCAL_OBJECT_STORE_BYTES = 512 * 2**20


class RayUnavailable(RuntimeError):
    """Ray is not installed: ``pip install 'docpipe[ray]'``."""


@dataclass(frozen=True)
class ActorPlan:
    actors: int
    threads: int  # predictor CPU threads per actor
    num_cpus: float  # CPUs each actor reserves (a fraction: leaves room for Ray Data's tasks)
    num_gpus: float
    memory_mb: int  # memory each actor reserves (0 = none)

    def describe(self) -> str:
        gpu = f", {self.num_gpus:g} GPU" if self.num_gpus else ""
        return (f"{self.actors} actor(s) x {self.threads} thread(s), each reserving {self.num_cpus:.3g} CPU{gpu}"
                f"{f' and {self.memory_mb} MB' if self.memory_mb else ''}")


def plan_actors(
    resources: Mapping[str, float], threads_per_worker: int, worker_memory_mb: int, device: str,
    actors: Optional[int] = None,
) -> ActorPlan:
    """Actors, threads per actor and resource requests from the cluster's total ``resources``
    (``ray.cluster_resources()``: ``CPU``, ``GPU``, ``memory`` in bytes)."""
    cpus = float(resources.get("CPU", 0.0))
    gpus = float(resources.get("GPU", 0.0))
    memory_mb = int(float(resources.get("memory", 0.0)) // 2**20)
    if cpus <= 0:
        raise ValueError("the Ray cluster reports no CPUs")
    if gpus >= 1 and device != "gpu":
        log.warning("the Ray cluster has %g GPU(s) but predictor.device is %s: set it to gpu to use them", gpus, device)
    if device == "gpu":
        if gpus < 1:
            raise ValueError("predictor.device is gpu but the Ray cluster has no GPU")
        n = actors or int(gpus)
        # CPU-side work (decode, crops, CTC decoding) of each GPU actor gets the CPUs per GPU, less a share
        threads = max(1, int(cpus // n) - 1) if cpus >= 2 * n else 1
        return ActorPlan(n, threads, min(float(threads), _cpu_share(cpus, n)), min(1.0, gpus / n), 0)
    if actors:
        n = actors
        threads = max(threads_per_worker, int(cpus // n))
    else:
        threads = threads_per_worker
        n = max(1, int(cpus // threads))
        if worker_memory_mb and memory_mb and n * worker_memory_mb > memory_mb:
            capped = max(1, memory_mb // worker_memory_mb)
            log.warning("planning %d actor(s), not %d: the cluster has %d MB of memory for actors at about %d MB "
                        "each (engine.worker_memory_mb)", capped, n, memory_mb, worker_memory_mb)
            n = capped
    reserve_mb = worker_memory_mb if worker_memory_mb and n * worker_memory_mb <= memory_mb else 0
    return ActorPlan(n, threads, min(float(threads), _cpu_share(cpus, n)), 0.0, reserve_mb)


def _cpu_share(cpus: float, actors: int) -> float:
    """CPUs per actor such that all actors together leave one CPU free (half the CPUs on a tiny cluster)."""
    budget = max(cpus - 1.0, cpus / 2.0)
    return round(budget / actors, 4)


def rows_per_block(n_inputs: int, actors: int, max_batch: int) -> int:
    """Inputs per dataset block: one batch per block on small runs (every actor gets work at once), up to 16
    batches per block on large ones (fewer objects for the driver to track)."""
    k = n_inputs / max(1, actors * max_batch * 4)
    return max_batch * int(min(16, max(1, math.floor(k))))


def code_root() -> str:
    """The directory that holds this copy of docpipe's packages: local Ray workers import from it."""
    return str(Path(__file__).resolve().parents[2])


def start_local_ray(num_cpus: Optional[int] = None) -> None:
    """A new single-machine Ray cluster with ``num_cpus`` (default: the usable CPUs) whose workers import
    the same docpipe as this process."""
    import ray

    path = os.pathsep.join(p for p in (code_root(), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(
        address="local", num_cpus=num_cpus or usable_cpus(), include_dashboard=False, log_to_driver=False,
        object_store_memory=LOCAL_OBJECT_STORE_BYTES, runtime_env={"env_vars": {"PYTHONPATH": path}},
        configure_logging=False,
    )


def _connect(address: Optional[str]) -> bool:
    """Use the Ray this process is already connected to, else join ``address`` or start a local one.
    True when this call connected (and the caller must shut it down)."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable("--ray needs Ray: pip install 'docpipe[ray]'") from exc
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    else:
        start_local_ray()
    return True


def build_dataset(paths: list[bytes], config: DocpipeConfig, backend: "BackendSpec", plan: ActorPlan) -> Any:
    """The Ray Data pipeline: rows ``{idx, path}`` -> :class:`DocpipeActor` pool -> ``{idx, sha256, result, pid}``."""
    import ray
    from ray.data import ActorPoolStrategy, DataContext

    from pipeline.ops.ray_actor import DocpipeActor

    ctx = DataContext.get_current()
    ctx.enable_progress_bars = False  # batch prints its own progress
    ctx.print_on_execution_start = False
    ctx.max_errored_blocks = -1  # a batch that fails every retry is recorded as failed, not fatal to the run
    actor_config = with_overrides(
        config, predictor={"cpu_threads": plan.threads, "device": "gpu" if plan.num_gpus else config.predictor.device}
    )
    max_batch = config.engine.max_batch
    rows = [{"idx": i, "path": p} for i, p in enumerate(paths)]
    blocks = max(1, math.ceil(len(rows) / rows_per_block(len(rows), plan.actors, max_batch)))
    actors = min(plan.actors, blocks)  # an actor without a block to work on would only load models
    remote: dict[str, Any] = {"max_restarts": -1, "max_task_retries": MAX_TASK_RETRIES}
    if plan.memory_mb:
        remote["memory"] = plan.memory_mb * 2**20
    if plan.num_gpus:
        remote["num_gpus"] = plan.num_gpus
    ds = ray.data.from_items(rows, override_num_blocks=blocks)
    with warnings.catch_warnings():
        # Ray 2.60 names no parameter for actor restarts and task retries; passing them as remote args is the
        # override its actor pool documents, and it warns that such args are deprecated
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated", category=DeprecationWarning)
        return ds.map_batches(
            DocpipeActor,
            fn_constructor_kwargs={"config": actor_config, "backend": backend},
            batch_size=max_batch,
            batch_format="numpy",
            compute=ActorPoolStrategy(size=actors),
            num_cpus=plan.num_cpus,
            udf_modifying_row_count=False,
            **remote,
        )


def run_ray_batch(
    in_dir: Path,
    out: Path,
    config: DocpipeConfig,
    backend: "BackendSpec" = "engine",
    address: Optional[str] = None,
    actors: Optional[int] = None,
    fail_fast: bool = False,
    retry_failed: bool = False,
    stream: Optional[TextIO] = None,
    tty: Optional[bool] = None,
    stop: Optional[threading.Event] = None,
    on_started: Optional[Callable[[], None]] = None,
    on_row: Optional[Callable[[dict], None]] = None,
) -> BatchSummary:
    """Local batch's job (:func:`pipeline.ops.batch.run_batch`) on Ray; same arguments plus ``backend``
    (a ``--backend`` name, or a factory ``config -> batch function`` run in each actor), ``address`` (join that cluster; default: the Ray this process is connected to,
    else a new local one sized to the usable CPUs), ``actors`` (default: planned) and ``on_row`` (called
    with each finished row's ``idx`` and actor ``pid``; for tests)."""
    t0 = time.monotonic()
    stream = stream or sys.stderr
    stop = stop or threading.Event()
    plan, progress, recorder = start_job(in_dir, out, config, retry_failed, stream, tty)
    todo, sink = plan.todo, plan.sink
    done: set[int] = set()

    def summary() -> BatchSummary:
        return plan_summary(plan, recorder.processed, time.monotonic() - t0, stop.is_set())

    sink.prepare(plan.stale)
    if not todo or stop.is_set():
        sink.close()
        progress.close()
        return summary()
    connected = False
    try:
        connected = _connect(address)
        import ray

        sizing = plan_actors(
            ray.cluster_resources(), config.engine.threads_per_worker, config.engine.worker_memory_mb,
            config.predictor.device, actors,
        )
        log.info("ray plan: %s", sizing.describe())
        ds = build_dataset([os.fsencode(item.path) for item, _ in todo], config, backend, sizing)
        if on_started is not None:
            on_started()
        finished = _consume(ds, todo, recorder, done, stop, fail_fast, on_row)
        if finished:
            # batches that killed their actor on every retry were dropped by Ray Data: record them as failed
            for idx, (item, digest) in enumerate(todo):
                if idx not in done:
                    message = (f"{item.key}: the Ray actor processing this document died "
                               f"{MAX_TASK_RETRIES + 1} times")
                    rec = error_record(os.fspath(item.path), "engine", "WorkerCrashed", message)
                    recorder.write(item, batch_record(rec, item, digest))
                    done.add(idx)
    except KeyboardInterrupt:
        raise BatchInterrupted(summary()) from None
    finally:
        progress.close()
        sink.close()
        if connected:
            import ray

            ray.shutdown()
    return summary()


def _consume(ds: Any, todo: list, recorder: Recorder, done: set[int], stop: threading.Event, fail_fast: bool,
             on_row: Optional[Callable[[dict], None]]) -> bool:
    """Write each row as it arrives. True when the dataset ran to its end (not stopped or broken)."""
    progress = recorder.progress
    rows = ds.iter_rows()
    try:
        for row in rows:
            idx = int(row["idx"])
            if on_row is not None:
                on_row({"idx": idx, "pid": int(row["pid"])})
            if idx in done:
                continue  # a retried batch delivered twice: the record is already written
            item, _ = todo[idx]
            result = json.loads(bytes(row["result"]).decode("utf-8"))
            outcome = recorder.write(item, batch_record(result, item, str(row["sha256"]) or None))
            done.add(idx)
            if fail_fast and outcome == "failed":
                progress.note("stopping at the first failure (--fail-fast)")
                return False
            if stop.is_set():
                progress.note(f"docpipe batch: stopping on request; {len(todo) - len(done)} input(s) left")
                return False
        return True
    except (KeyboardInterrupt, OSError):
        raise  # OSError: the output cannot be written
    except Exception as exc:  # the cluster itself broke (a bad input never raises)
        log.debug("ray dataset failed", exc_info=True)
        progress.note(f"docpipe batch: processing stopped: {type(exc).__name__}: {exc}")
        return False
    finally:
        close = getattr(rows, "close", None)
        if callable(close):
            close()
