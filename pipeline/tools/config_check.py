"""Several configs on one dev split with the OCR read once: per config field micro-F1, straight-through documents
and the wrong ones among them, against the config's ``review.max_document_error_rate`` (docs/routing.md).

    PYTHONPATH=$PWD python -m pipeline.tools.config_check data/dev5 --json dev5_configs.json
    PYTHONPATH=$PWD python -m pipeline.tools.config_check data/dev5 --withhold-labels 0.25 --withhold-seed 25

Configs that read the page alike (the same ``predictor``, ``input``, detection, page and recognition settings)
share one OCR pass; each config's extraction then runs on those lines through the processor's own extract and
assemble steps, so a result is what ``docpipe extract`` returns for the page. A config that cannot start (its
optional weights absent) is reported as skipped with the reason. ``--cache DIR`` keeps the OCR pass and the extractor model's page outputs on disk.
Each config's rows also hold ``calibration_samples`` and ``absent_samples`` in the format of
``docpipe eval --json``, which ``models/calibration/fit.py`` reads."""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import pickle
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from stages.contracts.config import DocpipeConfig, load_config, with_overrides
from stages.contracts.fields import FIELD_KEYS
from stages.extraction.rules.lexicon import LabelWithholding
from pipeline.tools.evaluate import calibration_samples, field_values, find_documents
from pipeline.tools.scoring import Scoreboard

log = logging.getLogger("pipeline.tools.config_check")

# sections that do not change what the OCR reads
_NOT_READING = ("extraction", "review", "output", "engine", "batch", "watch", "service")
_NOT_READING_PREDICTOR = ("cpu_threads", "profile")  # how many threads read a page does not change the reading


# files of configs/ that are no docpipe configuration: the generator's sets of withheld wordings
# (withheld_wordings.yaml, withheld_wordings_2.yaml, ...; samples/synth/wordings.py)
NOT_CONFIGS = "withheld_wordings*.yaml"


def shipped_configs(directory: Path = Path("configs")) -> list[Path]:
    return sorted(p for p in Path(directory).glob("*.yaml") if not p.match(NOT_CONFIGS))


def reading_key(config: DocpipeConfig) -> str:
    """One string per way of reading a page; configs with the same key share one OCR pass."""
    dump = config.model_dump(mode="json")
    reading = {k: v for k, v in dump.items() if k not in _NOT_READING}
    reading["predictor"] = {k: v for k, v in reading["predictor"].items() if k not in _NOT_READING_PREDICTOR}
    return hashlib.sha256(json.dumps(reading, sort_keys=True).encode()).hexdigest()[:16]


def withheld(fraction: float, seed: int) -> LabelWithholding:
    """The measurement setting under which the rules forget ``fraction`` of their label wordings per document."""
    return LabelWithholding(fraction, seed)


def _light(state: Any) -> Any:
    """A document's OCR state without its pixels (extraction reads page sizes, never pixels)."""
    pages = [dataclasses.replace(p, image=np.zeros((1, 1, 3), np.uint8), second_look=None) for p in state.pages]
    return dataclasses.replace(state, pages=pages, boxes=[]), [tuple(p.image.shape) for p in state.pages]


def _heavy(light: Any, shapes: Sequence[tuple]) -> Any:
    blank = np.zeros((1, 1, 3), np.uint8)
    pages = [dataclasses.replace(p, image=np.broadcast_to(blank, s)) for p, s in zip(light.pages, shapes)]
    return dataclasses.replace(light, pages=pages)


def read_documents(processor: Any, docs: Sequence[tuple[Path, dict]], batch: int = 4) -> list[Any]:
    """The OCR state of every document (decode, detect, recognize), pixels dropped."""
    out = []
    for i in range(0, len(docs), batch):
        part = docs[i:i + batch]
        out += [_light(s) for s in processor.read([str(p) for p, _ in part], [p.name for p, _ in part])]
        log.info("read %d/%d documents", len(out), len(docs))
    return out


class _Remembered:
    """An extractor model whose page outputs are kept by page content: configs that run the same model on the
    same lines (``model`` and ``hybrid``) compute them once."""

    def __init__(self, inner: Any, memo: dict):
        self.inner, self.memo = inner, memo

    def extract_batch(self, pages: Sequence[Any]) -> list:
        keys = [hashlib.sha256(pickle.dumps(p, protocol=4)).hexdigest() for p in pages]
        todo = [i for i, k in enumerate(keys) if k not in self.memo]
        if todo:
            for i, out in zip(todo, self.inner.extract_batch([pages[i] for i in todo])):
                self.memo[keys[i]] = out
        return [self.memo[k] for k in keys]


def extract_all(processor: Any, config: DocpipeConfig, states: Sequence[Any], memo: Optional[dict] = None,
                withhold: Optional[LabelWithholding] = None) -> list[dict]:
    """Results of ``config``'s extraction on OCR states read by ``processor`` (same reading settings); ``memo``
    keeps the extractor model's page outputs between configs."""
    from stages.extraction.page_roles import RoleAwareFields
    from stages.extraction.stage import ExtractionStage

    config = with_overrides(config, output={"diagnostics": True})
    proc = type(processor).__new__(type(processor))
    proc.__dict__.update(processor.__dict__)
    proc.config = config
    stage = ExtractionStage(config, processor.recognizer.chars, withhold)
    if getattr(stage, "model", None) is not None and memo is not None:
        stage.model = _Remembered(stage.model, memo.setdefault(str(config.extraction.model_dir), {}))
    proc.extractor = RoleAwareFields(stage)
    results = []
    for light, shapes in states:
        doc = _heavy(light, shapes)
        doc = dataclasses.replace(doc, extraction=None, timings=dict(doc.timings))
        proc.extract([doc])
        results.append(proc.assemble(doc, 0.0))
    return results


def score(results: Sequence[dict], truths: Sequence[tuple[str, dict]], target: Optional[float]) -> dict[str, Any]:
    board = Scoreboard(FIELD_KEYS)
    straight = wrong = 0
    samples: list[dict] = []
    absent: list[dict] = []
    wrong_docs: list[str] = []
    for (name, truth), res in zip(truths, results):
        want, got = truth["fields"], field_values(res)
        right = board.add_document(name, want, got)
        if not res["needs_review"]:
            straight += 1
            if not right:
                wrong += 1
                wrong_docs.append(name)
        rows, empty = calibration_samples(name, res, want, got)
        samples += rows
        absent += empty
    n = len(results)
    rate = wrong / straight if straight else 0.0
    return {
        "documents": n,
        "f1": board.as_dict()["micro"]["f1"],
        "document_accuracy": board.as_dict()["document_accuracy"],
        "straight_through": straight,
        "wrong_straight_through": wrong,
        "error_rate_straight_through": round(rate, 4),
        "target": target,
        "meets_target": target is not None and rate <= target,
        "wrong_straight_through_documents": wrong_docs,
        "calibration_samples": samples,
        "absent_samples": absent,
    }


def check(directory: Path, config_paths: Sequence[Path], withhold: float = 0.0, withhold_seed: int = 0,
          limit: int = 0, cache: Optional[Path] = None) -> list[dict[str, Any]]:
    """One row per config: its scores on ``directory``, or ``skipped`` with the reason it cannot start."""
    from pipeline.core.processor import DocumentProcessor

    docs = find_documents(Path(directory))
    if limit:
        docs = docs[:limit]
    truths = [(p.name, t) for p, t in docs]
    configs: list[tuple[Path, Optional[DocpipeConfig], str]] = []
    for path in config_paths:
        try:
            configs.append((path, load_config(path), ""))
        except Exception as exc:  # noqa: BLE001 - a config that does not load is reported, not fatal
            configs.append((path, None, f"{type(exc).__name__}: {exc}"))
    rows: list[dict[str, Any]] = []
    readers: dict[str, tuple[Any, list]] = {}
    memo_path = Path(cache) / "model_outputs.pkl" if cache is not None else None
    memo: dict = {}
    if memo_path is not None and memo_path.is_file():
        with memo_path.open("rb") as f:
            memo = pickle.load(f)
    size = sum(len(v) for v in memo.values())
    for path, config, why in configs:
        row: dict[str, Any] = {"config": str(path), "directory": str(directory), "withhold_labels": withhold,
                               "withhold_seed": withhold_seed}
        if config is None:
            rows.append({**row, "skipped": why})
            continue
        key = reading_key(config)
        try:
            if key not in readers:
                reading = with_overrides(config, engine={"mode": "inline"})
                processor = DocumentProcessor(reading)
                readers[key] = (processor, _read_cached(processor, docs, directory, key, cache, limit))
            processor, states = readers[key]
            results = extract_all(processor, config, states, memo, withheld(withhold, withhold_seed))
        except Exception as exc:  # noqa: BLE001 - e.g. optional weights absent: that config is skipped
            log.warning("%s: skipped (%s)", path, exc)
            rows.append({**row, "skipped": f"{type(exc).__name__}: {exc}"})
            continue
        target = config.review.max_document_error_rate
        rows.append({**row, **score(results, truths, target)})
    if memo_path is not None and sum(len(v) for v in memo.values()) > size:
        with memo_path.open("wb") as f:
            pickle.dump(memo, f, protocol=pickle.HIGHEST_PROTOCOL)
    return rows


def _read_cached(processor: Any, docs: Sequence[tuple[Path, dict]], directory: Path, key: str,
                 cache: Optional[Path], limit: int) -> list:
    if cache is None:
        return read_documents(processor, docs)
    name = hashlib.sha256(f"{Path(directory).resolve()}|{limit}|{key}".encode()).hexdigest()[:20]
    path = Path(cache) / f"ocr_{name}.pkl"
    if path.is_file():
        with path.open("rb") as f:
            return pickle.load(f)
    states = read_documents(processor, docs)
    Path(cache).mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        pickle.dump(states, f, protocol=pickle.HIGHEST_PROTOCOL)
    return states


def format_rows(rows: Sequence[dict]) -> str:
    out = [f"{'config':<30}{'set':<28}{'F1':>7}{'straight':>10}{'wrong':>7}{'target':>8}  ok"]
    for r in rows:
        where = Path(r["directory"]).name + (f" w{r['withhold_labels']:g}/{r['withhold_seed']}" if r["withhold_labels"] else "")
        if "skipped" in r:
            out.append(f"{r['config']:<30}{where:<28}  skipped: {r['skipped'][:80]}")
            continue
        out.append(f"{r['config']:<30}{where:<28}{r['f1']:>7.3f}{r['straight_through']:>10}"
                   f"{r['wrong_straight_through']:>7}{r['target']:>8g}  {'yes' if r['meets_target'] else 'NO'}")
    return "\n".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="dev folders with ground truth beside each page")
    ap.add_argument("--configs", nargs="*", type=Path, default=None, help="default: configs/*.yaml")
    ap.add_argument("--withhold-labels", type=float, default=0.0)
    ap.add_argument("--withhold-seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=None, help="folder keeping the OCR pass between runs")
    ap.add_argument("--json", type=Path, default=None, help="write the rows (with their calibration samples) here")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    configs = args.configs if args.configs else shipped_configs()
    rows = []
    for d in args.dirs:
        rows += check(d, configs, args.withhold_labels, args.withhold_seed, args.limit, args.cache)
    sys.stdout.write(format_rows(rows) + "\n")
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0 if all(r.get("meets_target", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
