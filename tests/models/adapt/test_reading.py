"""Reading corrected documents for the scorer refit: two reading processes give the rows one gives, in the folder's
order; a document that fails is skipped and reported while the others are read; the number of processes follows
the folder's size, the cores and the memory."""
from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from models.adapt import reading
from models.adapt.folder import write_adapted
from models.adapt.labelled import read_label_folder
from models.adapt.reading import MIN_DOCUMENTS_PER_WORKER, READER_MEMORY_MB, Reader, read_rows, reading_workers
from pipeline.commands import train_cmd
from samples.synth.document import generate_document
from tests.models.adapt.test_folder import _write_labels

TODAY = date.today()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> tuple[Path, list[tuple[Path, dict]]]:
    root = tmp_path_factory.mktemp("reading")
    _write_labels(root / "labels", [generate_document(43, "dev", i, family="fs_grid")[1] for i in range(3)])
    write_adapted(root / "labels", root / "out", ["test"], scorer=False)
    docs, _ = read_label_folder(root / "labels")
    pairs = [(root / "labels" / d.name, json.loads((root / "labels" / d.name).read_text(encoding="utf-8")))
             for d in docs]
    return root / "out", pairs


def test_two_reading_processes_give_the_rows_of_one(folder) -> None:
    adapted, pairs = folder
    one = read_rows(pairs, adapted, TODAY, workers=1)
    two = read_rows(pairs, adapted, TODAY, workers=2)
    assert [d.name for d in one] == [d.name for d in two] == [p.name for p, _ in pairs]
    for a, b in zip(one, two):
        assert a.skipped is None and b.skipped is None and a.from_record and b.from_record  # placeholder images
        np.testing.assert_array_equal(a.features, b.features)
        np.testing.assert_array_equal(a.labels, b.labels)
        assert a.labels.sum() >= 10  # most corrected values are among the candidates


def test_a_document_that_fails_is_skipped_and_reported(folder, monkeypatch) -> None:
    adapted, pairs = folder
    broken = pairs[1][0].name
    rows_of = Reader._rows

    def failing(self, path, record):
        if path.name == broken:
            raise MemoryError("too large")
        return rows_of(self, path, record)

    monkeypatch.setattr(Reader, "_rows", failing)
    docs = read_rows(pairs, adapted, TODAY, workers=1)
    assert [d.name for d in docs] == [p.name for p, _ in pairs]  # one result per document, in order
    assert docs[1].skipped == "could not be read (MemoryError)" and docs[1].features is None
    assert docs[0].skipped is None and docs[2].skipped is None and docs[2].features is not None


def test_reading_processes_follow_the_folder_the_cores_and_the_memory(monkeypatch) -> None:
    from pipeline.core import resources

    monkeypatch.setattr(resources, "usable_cpus", lambda: 4)
    monkeypatch.setattr(resources, "available_memory_mb", lambda: 100 * READER_MEMORY_MB)
    assert reading_workers(5) == 1  # a small folder does not pay for a second model load
    assert reading_workers(2 * MIN_DOCUMENTS_PER_WORKER) == 2
    assert reading_workers(1000) == 4
    monkeypatch.setattr(resources, "available_memory_mb", lambda: 2 * READER_MEMORY_MB + 1)
    assert reading_workers(1000) == 2
    assert reading_workers(1000, requested=3) == 3 and reading_workers(2, requested=3) == 2
    assert reading.reading_workers(0) == 1


def test_train_refuses_fewer_than_one_reading_process(tmp_path, capsys) -> None:
    (tmp_path / "labels").mkdir()
    parser = argparse.ArgumentParser()
    train_cmd.add_arguments(parser)
    args = parser.parse_args(["--labels", str(tmp_path / "labels"), "--out", str(tmp_path / "out"), "--workers", "0"])
    assert train_cmd.run(args) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_reading_process_that_dies_hands_its_documents_back(folder, caplog) -> None:
    """A reading process killed (as the kernel's OOM killer would) while the models load: the parent reads every
    document itself, and the rows are those of one process."""
    import multiprocessing
    import os
    import signal
    import threading
    import time

    adapted, pairs = folder
    killed: list[int] = []

    def kill_first_child() -> None:
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)
                killed.append(child.pid)
                break
            time.sleep(0.05)

    killer = threading.Thread(target=kill_first_child)
    killer.start()
    docs = read_rows(pairs, adapted, TODAY, workers=2)
    killer.join()
    assert killed
    assert any("a reading process died" in r.getMessage() for r in caplog.records)
    one = read_rows(pairs, adapted, TODAY, workers=1)
    assert [d.name for d in docs] == [p.name for p, _ in pairs]
    for a, b in zip(docs, one):
        np.testing.assert_array_equal(a.features, b.features)
