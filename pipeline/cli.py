"""The ``docpipe`` command. Subcommands are an explicit registry of modules, each with
``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only when their command runs."""
from __future__ import annotations

import argparse
import logging
import sys
from types import ModuleType
from typing import Callable


def _extract() -> ModuleType:
    from pipeline.commands import extract_cmd
    return extract_cmd


def _batch() -> ModuleType:
    from pipeline.ops import batch
    return batch


def _watch() -> ModuleType:
    from pipeline.ops import watcher
    return watcher


def _eval() -> ModuleType:
    from pipeline.tools import evaluate
    return evaluate


def _bench() -> ModuleType:
    from pipeline.tools import bench
    return bench


def _serve() -> ModuleType:
    from pipeline.commands import serve_cmd
    return serve_cmd
def _train() -> ModuleType:
    from pipeline.commands import train_cmd
    return train_cmd


def _synth() -> ModuleType:
    from samples.synth import cli as synth_cli
    return synth_cli


COMMANDS: dict[str, tuple[Callable[[], ModuleType], str]] = {
    "extract": (_extract, "extract fields from files, JSON to stdout"),
    "batch": (_batch, "process a directory tree, one result per input (resumable)"),
    "watch": (_watch, "hot folder: process files dropped into INBOX"),
    "eval": (_eval, "accuracy report against ground-truth JSON"),
    "bench": (_bench, "throughput and accuracy against peer OCR engines"),
    "serve": (_serve, "HTTP service: sync extraction, durable jobs, metrics, review page (extra [serve])"),
    "train": (_train, "adapt the pipeline to corrected results (docs/adaptation.md)"),
    "synth": (_synth, "generate synthetic insurance policies with ground truth"),
}


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, ModuleType | None]:
    parser = argparse.ArgumentParser(prog="docpipe", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = None
    wanted = next((a for a in argv if a in COMMANDS), None)
    for name, (loader, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        if name == wanted:
            chosen = loader()
            chosen.add_arguments(p)
    return parser, chosen


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, module = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors exit 2
        return int(exc.code or 0)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if module is None:
        parser.print_help(sys.stderr)
        return 2
    return int(module.run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
