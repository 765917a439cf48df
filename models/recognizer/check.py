"""Write a recognizer with a check head: the base model's program with a second CTC head appended over the same
features, so that every line is read twice for the cost of one more matrix product.

    python -m models.recognizer.check --check models/weights/rec_scan --out models/weights/rec_checked [--base ppocrv4_rec]

The base model's own output is unchanged (same program, same weights); a second output holds the best class of
each frame under the check head, whose weight and bias come from ``--check``, a head refitted on the same backbone
(``models.recognizer.train``). ``stages/recognition/recognizer.py`` collapses those classes into
``TextLine.check_text``; extraction sends a name whose two readings differ to review (docs/confidence.md,
``readers_disagree``).
"""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

log = logging.getLogger("models.recognizer.check")

CHECK_PREFIX = "check_head"  # names of the appended parameters and variables


def export_checked(base_dir: Path, check_dir: Path, out: Path) -> tuple[int, int]:
    """Write ``out``: the base program with the check head appended (matmul, bias, arg max over the classes of each
    frame), fetching the base's softmax output and the check head's best class per frame; returns the check head's
    shape (channels, classes)."""
    from models.recognizer.head import HeadModel  # first: it reads the legacy program format

    import paddle

    base, check = HeadModel(base_dir), HeadModel(check_dir)
    weight, bias = check.weights()
    base_weight, _ = base.weights()
    if weight.shape != base_weight.shape:
        raise ValueError(f"check head {weight.shape} does not fit the base head {base_weight.shape}")
    paddle.enable_static()
    block = base.program.global_block()
    w = block.create_parameter(name=f"{CHECK_PREFIX}.w_0", shape=list(weight.shape), dtype="float32")
    b = block.create_parameter(name=f"{CHECK_PREFIX}.b_0", shape=[weight.shape[1]], dtype="float32")
    product = block.create_var(name=f"{CHECK_PREFIX}.tmp_0", dtype="float32")
    logits = block.create_var(name=f"{CHECK_PREFIX}.tmp_1", dtype="float32")
    best = block.create_var(name=f"{CHECK_PREFIX}.tmp_2", dtype="int64")
    block.append_op(type="matmul_v2", inputs={"X": [block.var(base.head.features)], "Y": [w]},
                    outputs={"Out": [product]}, attrs={"trans_x": False, "trans_y": False})
    block.append_op(type="elementwise_add", inputs={"X": [product], "Y": [b]}, outputs={"Out": [logits]},
                    attrs={"axis": -1})
    block.append_op(type="arg_max", inputs={"X": [logits]}, outputs={"Out": [best]},
                    attrs={"axis": -1, "keepdims": False, "flatten": False, "dtype": 3})  # 3: int64
    place = paddle.CPUPlace()
    base.scope.var(w.name).get_tensor().set(weight.astype(np.float32), place)
    base.scope.var(b.name).get_tensor().set(bias.astype(np.float32), place)
    out.mkdir(parents=True, exist_ok=True)
    base._save(out, [block.var(base.fetches[0].name), best])
    return weight.shape[0], weight.shape[1]


def main(argv: Optional[Sequence[str]] = None) -> int:
    from stages.contracts.registry import resolve_model

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", type=Path, required=True, help="a model whose head was refitted on the base's backbone")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--base", default="ppocrv4_rec", help="registry key of the model that reads (its output is kept)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    base = resolve_model(args.base, "rec", None, None)
    channels, classes = export_checked(base.directory, args.check, args.out)
    (args.out / "ppocr_keys_v1.txt").write_text("".join(c + "\n" for c in base.characters), encoding="utf-8")
    record_path = args.check / "training.json"
    check_record = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else {}
    command = "python -m models.recognizer.check " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    record = {"commands": [command], "base": args.base, "check_head": {"channels": channels, "classes": classes,
                                                                       "from": check_record}}
    (args.out / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    log.info("wrote %s: %s with a check head of %d x %d", args.out, args.base, channels, classes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
