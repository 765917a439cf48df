"""What a capture's recognizer costs: s/page on its pages and resident memory, with it and without (same run).

    python scripts/capture_recognizer_cost.py DIR [--capture fax|photo] [--pages 8] [--rounds 3]

DIR holds pages (``docpipe synth … --variants fax`` or ``photo``). The two processors
(``recognition.<capture>_model`` as shipped, and null) read the same pages in interleaved rounds; each round times ``process_batch`` over every page one at a
time. Memory: each configuration is built alone in a fresh subprocess and its resident memory after reading one
page is reported (Linux). Nothing is asserted; the medians and their ratio are printed."""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

_RSS = """
import json, sys
from pipeline.core.processor import DocumentProcessor
from stages.contracts.config import DocpipeConfig
def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmRSS"))
proc = DocumentProcessor(DocpipeConfig.model_validate(json.loads(sys.argv[1])))
proc.process_batch([sys.argv[2]])
print(rss_mb())
"""

def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", type=Path)
    p.add_argument("--capture", choices=("fax", "photo"), default="fax")
    p.add_argument("--pages", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()

    from pipeline.core.processor import DocumentProcessor
    from stages.contracts.config import DocpipeConfig

    pages = [str(x) for x in sorted(args.dir.iterdir()) if x.suffix in (".png", ".jpg")][: args.pages]
    configs = {f"{args.capture} recognizer": {}, "main recognizer only": {"recognition": {f"{args.capture}_model": None}}}
    procs = {name: DocumentProcessor(DocpipeConfig.model_validate(c)) for name, c in configs.items()}
    times: dict[str, list[float]] = {name: [] for name in procs}
    for name, proc in procs.items():  # warm-up: oneDNN kernels for these shapes
        proc.process_batch(pages[:1])
    for _ in range(args.rounds):
        for name, proc in procs.items():
            t = time.perf_counter()
            for page in pages:
                proc.process_batch([page])
            times[name].append((time.perf_counter() - t) / len(pages))
    rss = {name: int(subprocess.run([sys.executable, "-c", _RSS, json.dumps(c), pages[0]], check=True,
                                    capture_output=True, text=True).stdout.split()[-1])
           for name, c in configs.items()}
    base = "main recognizer only"
    for name in procs:
        med = statistics.median(times[name])
        sys.stdout.write(f"{name:22s} {med:.3f} s/page (rounds {', '.join(f'{t:.3f}' for t in times[name])}), "
                         f"x{med / statistics.median(times[base]):.3f}; RSS {rss[name]} MB\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
