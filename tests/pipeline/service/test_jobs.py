"""The SQLite job store: exactly-once transitions, crash recovery, retention, corrections beside results."""
import json
import sqlite3
import time

from pipeline.service.jobs import JobDatabase

KEYS = ("policy_number", "insured_name")


def result(name, value="X1", reasons=()):
    return {"schema_version": "1", "source": name, "pages": [], "errors": [], "timings_ms": {},
            "fields": {"policy_number": {"value": value, "text": value}, "insured_name": None},
            "needs_review": bool(reasons), "review_reasons": list(reasons)}


def test_accept_claim_finish_exactly_once(tmp_path):
    store = JobDatabase(tmp_path / "j.sqlite3", KEYS)
    jid = store.create_job([("a.png", b"aaa"), ("b.png", b"bbb")])
    assert store.job(jid)["status"] == "queued"
    first = store.claim(1)
    assert [(c.job_id, c.idx, c.data) for c in first] == [(jid, 0, b"aaa")]
    second = store.claim(5)
    assert [c.idx for c in second] == [1] and store.claim(5) == []
    assert store.finish(jid, 0, result("a.png")) is True
    assert store.finish(jid, 0, result("a.png")) is False  # never stored twice
    assert store.job(jid)["status"] == "running"
    assert store.finish(jid, 1, result("b.png", reasons=["missing:insured_name"]))
    job = store.job(jid)
    assert job["status"] == "succeeded" and job["outcomes"] == {"ok": 1, "needs_review": 1}
    assert [r["source"] for r in store.results(jid)] == ["a.png", "b.png"]
    kinds = [e["kind"] for e in store.events(jid)]
    assert kinds.count("job_finished") == 1 and kinds.count("started") == 2 and kinds.count("done") == 2


def test_recover_marks_running_interrupted_and_keeps_queued(tmp_path):
    path = tmp_path / "j.sqlite3"
    store = JobDatabase(path, KEYS)
    jid = store.create_job([("a.png", b"a"), ("b.png", b"b")])
    store.claim(1)  # a is running when the process "dies"
    store.close()
    store = JobDatabase(path, KEYS)
    assert store.recover() == 1
    doc = store.document(jid, 0)
    assert doc["status"] == "failed" and doc["result"]["errors"][0]["type"] == "Interrupted"
    assert store.job(jid)["status"] == "running"  # b is still queued and will run once
    assert [c.idx for c in store.claim(5)] == [1]
    store.finish(jid, 1, result("b.png"))
    assert store.job(jid)["status"] == "failed"
    assert store.recover() == 0
    assert [e["kind"] for e in store.events(jid)].count("job_finished") == 1


def test_db_is_wal_and_inputs_are_committed_before_return(tmp_path):
    path = tmp_path / "j.sqlite3"
    store = JobDatabase(path, KEYS)
    jid = store.create_job([("a.png", b"payload")])
    other = sqlite3.connect(path)  # a second connection sees the committed input at once
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA journal_size_limit").fetchone()[0] == 64 * 1024 * 1024
    assert other.execute("SELECT input FROM documents WHERE job_id=?", (jid,)).fetchone()[0] == b"payload"


def test_retention_purges_finished_jobs_only(tmp_path):
    store = JobDatabase(tmp_path / "j.sqlite3", KEYS)
    done = store.create_job([("a.png", b"a")])
    store.claim(1)
    store.finish(done, 0, result("a.png", reasons=["missing:insured_name"]))
    store.add_correction(done, 0, {"insured_name": "张三"})
    waiting = store.create_job([("b.png", b"b")])
    assert store.purge(3600) == 0
    assert store.purge(3600, now=store.job(done)["finished"] + 3601) == 1
    assert store.job(done) is None and store.job(waiting) is not None
    assert len(list(store.latest_corrections())) == 1  # labels outlive the job
    later = time.time() + 10 * 86400
    assert store.purge(3600, now=later, correction_retention_s=30 * 86400) == 0  # younger than their retention
    assert store.purge(3600, now=later, correction_retention_s=86400) == 1  # older: deleted
    assert list(store.latest_corrections()) == []


def test_export_streams_one_document_at_a_time(tmp_path):
    import io
    import zipfile

    from pipeline.service.export import stream_zip

    store = JobDatabase(tmp_path / "j.sqlite3", KEYS)
    jid = store.create_job([(f"{i}.png", b"\x89PNG\r\n\x1a\n" + bytes([i]) * 100) for i in range(3)])
    store.claim(3)
    for i in range(3):
        store.finish(jid, i, result(f"{i}.png", reasons=["missing:insured_name"]))
        store.add_correction(jid, i, {"insured_name": f"name {i}"})
    chunks = list(stream_zip(store))
    assert len(chunks) == 4 and all(chunks[:3])  # one chunk per document as it is written, then the directory
    zf = zipfile.ZipFile(io.BytesIO(b"".join(chunks)))
    assert zf.testzip() is None
    assert sorted(zf.namelist()) == sorted(f"labels/{jid}_{i}.{ext}" for i in range(3) for ext in ("png", "json"))
    assert json.loads(zf.read(f"labels/{jid}_2.json"))["fields"]["insured_name"]["value"] == "name 2"


def test_correction_never_changes_machine_result(tmp_path):
    store = JobDatabase(tmp_path / "j.sqlite3", KEYS)
    jid = store.create_job([("a.png", b"a")])
    store.claim(1)
    store.finish(jid, 0, result("a.png", reasons=["low_confidence:policy_number"]))
    assert store.review_queue()[0]["review_reasons"] == ["low_confidence:policy_number"]
    cid = store.add_correction(jid, 0, {"policy_number": "X2", "insured_name": "李四"})
    doc = store.document(jid, 0)
    assert doc["result"]["fields"]["policy_number"]["value"] == "X1"
    assert doc["corrections"] == [{"id": cid, "created": doc["corrections"][0]["created"],
                                   "fields": {"policy_number": "X2", "insured_name": "李四"}, "sources": {}}]
    assert store.review_queue() == []
    assert store.add_correction(jid, 7, {}) is None
    latest = list(store.latest_corrections())
    assert json.dumps(latest[0]["fields"], ensure_ascii=False) == '{"policy_number": "X2", "insured_name": "李四"}'


def test_correction_keeps_source_spans_and_a_store_without_the_column_gains_it(tmp_path):
    path = tmp_path / "j.sqlite3"
    store = JobDatabase(path, KEYS)
    store._db.execute("ALTER TABLE corrections DROP COLUMN sources")  # a store created without the column
    store.close()
    store = JobDatabase(path, KEYS)
    jid = store.create_job([("a.png", b"a")])
    store.claim(1)
    store.finish(jid, 0, result("a.png", reasons=["missing:insured_name"]))
    span = {"page": 0, "line": 3, "start": 0, "end": 2, "text": "李四", "polygon": [[0, 0], [9, 0], [9, 9], [0, 9]]}
    store.add_correction(jid, 0, {"insured_name": "李四"}, {"insured_name": [span]})
    assert store.document(jid, 0)["corrections"][0]["sources"] == {"insured_name": [span]}
    assert list(store.latest_corrections())[0]["sources"] == {"insured_name": [span]}
