"""``docpipe serve [--host H] [--port P] [--config FILE] [--model-dir DIR]``: the HTTP service (docs/service.md).

``--model-dir`` sets ``extraction.model_dir`` (an adapted folder from ``docpipe train --labels``, see
docs/adaptation.md); with ``--export-corrections DIR`` it writes the approved corrections as a labels folder and
exits."""
from __future__ import annotations

import argparse
import logging
import sys

from pipeline.ops.cli_common import load_config_or_say
from stages.contracts.config import with_overrides

log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="YAML config (see configs/default.yaml, section service:)")
    p.add_argument("--host", help="bind address (default service.host, 127.0.0.1); non-loopback needs a token")
    p.add_argument("--port", type=int, help="port (default service.port, 8000)")
    p.add_argument("--data-dir", help="job store folder (default service.data_dir, else the per-user data folder, "
                   "e.g. ~/.local/share/docpipe); one docpipe serve per folder")
    p.add_argument("--model-dir", help="extraction.model_dir: an adapted folder (docpipe train --labels) or an "
                   "ERNIE-Layout export")
    p.add_argument("--export-corrections", metavar="DIR",
                   help="write approved corrections as a labels folder (X.<ext> + X.json) and exit")


def run(args: argparse.Namespace) -> int:
    config = load_config_or_say(args.config, "docpipe")
    if config is None:
        return 2
    update = {k: v for k, v in (("host", args.host), ("port", args.port), ("data_dir", args.data_dir)) if v is not None}
    if update:
        config = with_overrides(config, service=update)
    if args.model_dir:
        config = with_overrides(config, extraction={"model_dir": args.model_dir})
    if not _adapted_folder_ok(config.extraction.model_dir):
        return 2
    sc = config.service
    if args.export_corrections:
        from pipeline.service.app import DB_NAME
        from pipeline.service.datadir import data_dir_of
        from pipeline.service.export import export_folder
        from pipeline.service.jobs import JobDatabase
        from stages.contracts.fields import FIELD_KEYS

        db = data_dir_of(sc.data_dir) / DB_NAME
        if not db.is_file():
            sys.stderr.write(f"docpipe: no job store at {db}\n")
            return 2
        store = JobDatabase(db, FIELD_KEYS)
        n = export_folder(store, args.export_corrections)
        store.close()
        sys.stderr.write(f"docpipe: wrote {n} labelled document(s) to {args.export_corrections}\n")
        return 0
    try:
        import uvicorn

        from pipeline.service.app import create_app
        from pipeline.service.datadir import DataDirBusy
        from pipeline.service.logs import use_json_logs
    except ImportError as exc:
        sys.stderr.write(f"docpipe serve needs the serve extra (pip install -e '.[serve]'): {exc}\n")
        return 2
    try:
        app = create_app(config, host=sc.host)
    except ValueError as exc:
        sys.stderr.write(f"docpipe: {exc}\n")
        return 2
    except DataDirBusy as exc:  # before anything in the folder was opened
        sys.stderr.write(f"docpipe: {exc}\n")
        return 3
    if sc.json_logs:
        use_json_logs()
    # Paddle installs C++ handlers for SIGTERM/SIGINT when first imported; import it before uvicorn installs
    # its own, or a SIGTERM arriving after the models load would kill the process without a graceful stop.
    import paddle  # noqa: F401
    uvicorn.run(app, host=sc.host, port=sc.port, log_config=None, access_log=False,
                timeout_graceful_shutdown=30, limit_concurrency=sc.limit_concurrency)
    return 0


def _adapted_folder_ok(model_dir) -> bool:
    """An adapted folder's manifest must be readable before the service starts (a clear message otherwise)."""
    from stages.extraction.adapted import AdaptedFolderError, is_adapted, load_adapted

    if not is_adapted(model_dir):
        return True
    try:
        load_adapted(model_dir)
    except AdaptedFolderError as exc:
        sys.stderr.write(f"docpipe: {exc}\n")
        return False
    return True
