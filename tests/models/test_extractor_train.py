"""Extractor training, export and reload (runs in the training venv; skipped without PaddleNLP)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("paddlenlp")

import paddle  # noqa: E402
import yaml  # noqa: E402

from tests.models.extractor_fakes import corpus_chars, corrected_result, fake_doc, write_fake_corpus  # noqa: E402
from models.extractor.data import NoiseConfig, featurize, load_docs, parse_doc  # noqa: E402
from models.extractor.export import BASE_NAME, load_base, make_predictor  # noqa: E402
from models.extractor.model import ArchitectureSpec, ProbabilityHead, build_model, initialise  # noqa: E402
from models.extractor.trainer import TrainConfig, learning_rate, package, predict_probs, train  # noqa: E402
from stages.extraction.ernie_features import LABELS, SPECIAL_TOKENS, FeatureSpec, Vocab  # noqa: E402

TINY = dict(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, max_position_embeddings=64)


@pytest.fixture(scope="module")
def vocab() -> Vocab:
    docs = [fake_doc(i, filler_lines=2) for i in range(8)]
    return Vocab([*SPECIAL_TOKENS, *corpus_chars(docs), " "])


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, vocab: Vocab):
    root = tmp_path_factory.mktemp("extractor")
    write_fake_corpus(root / "corpus", 8, filler_lines=2)
    train_docs = load_docs(root / "corpus", split="train")
    dev_docs = load_docs(root / "corpus", split="dev")
    spec = ArchitectureSpec(vocab_size=len(vocab), **TINY)
    # windows of 62 characters: every page (~150 characters) needs several overlapping windows
    cfg = TrainConfig(max_len=64, stride=40, batch_size=4, warmup_steps=2, max_steps=6, eval_every=3,
                      noise=NoiseConfig())
    result = train(spec, train_docs, dev_docs, vocab, cfg)
    out = package(result.model, spec, cfg, vocab, root / "export", result.best_report, extra={"command": "pytest"})
    return result, spec, cfg, out, dev_docs


def test_stock_and_lookup_relative_biases_agree(vocab: Vocab) -> None:
    paddle.seed(1)
    fast = build_model(ArchitectureSpec(vocab_size=len(vocab), **TINY))
    stock = build_model(ArchitectureSpec(vocab_size=len(vocab), lookup_rel_pos=False, **TINY))
    stock.set_state_dict(fast.state_dict())
    fast.eval()
    stock.eval()
    rng = np.random.default_rng(0)
    ids = paddle.to_tensor(rng.integers(4, len(vocab), (2, 40)))
    xy = np.sort(rng.integers(0, 1001, (2, 40, 2, 2)), axis=2)  # far apart boxes: offsets beyond max_rel_2d_pos
    bbox = paddle.to_tensor(np.stack([xy[..., 0, 0], xy[..., 0, 1], xy[..., 1, 0], xy[..., 1, 1]], -1).astype(np.int64))
    mask = paddle.ones([2, 40], dtype="int64")
    a = fast.logits(ids, bbox, mask).numpy()
    b = stock.logits(ids, bbox, mask).numpy()
    assert np.abs(a - b).max() < 1e-5


def test_training_reports_metrics(trained) -> None:
    result, *_ = trained
    assert result.steps == 6
    assert [h["step"] for h in result.history] == [3, 6]
    rep = result.best_report
    assert 0.0 <= rep["token"]["f1"] <= 1.0 and 0.0 <= rep["field_micro"]["f1"] <= 1.0
    assert set(rep["per_field_f1"]) >= {"policy_number", "insured_name"}


def test_package_writes_runtime_files(trained, vocab: Vocab) -> None:
    _, spec, cfg, out, _ = trained
    for name in ("inference.json", "inference.pdiparams", "vocab.txt", "extractor.yaml"):
        assert (out / name).is_file(), name
    meta = yaml.safe_load((out / "extractor.yaml").read_text(encoding="utf-8"))
    assert meta["max_len"] == cfg.max_len and meta["stride"] == cfg.stride
    assert tuple(meta["labels"]) == LABELS and meta["labels"][0] == "O"
    assert FeatureSpec.from_meta(meta) == cfg.features  # the runtime reads back the training format
    base = load_base(out / BASE_NAME)
    state = trained[0].model.state_dict()
    assert set(base) <= set(state) and "ernie_layout.embeddings.word_embeddings.weight" in base
    assert meta["model"] == spec.to_dict()
    assert meta["training"]["command"] == "pytest"
    assert Vocab.load(out / "vocab.txt").tokens == vocab.tokens


def test_exported_program_matches_dygraph(trained, vocab: Vocab) -> None:
    result, _, cfg, out, dev_docs = trained
    ex = featurize(dev_docs[0], vocab, cfg.max_len, cfg.stride, cfg.features)
    assert ex.input_ids.shape[0] >= 3
    head = ProbabilityHead(result.model)
    head.eval()
    with paddle.no_grad():
        ref = head(*(paddle.to_tensor(a) for a in (ex.input_ids, ex.bbox, ex.attention_mask))).numpy()
    pred = make_predictor(out, threads=1)
    for name, arr in zip(pred.get_input_names(), (ex.input_ids, ex.bbox, ex.attention_mask)):
        pred.get_input_handle(name).copy_from_cpu(arr)
    pred.run()
    got = pred.get_output_handle(pred.get_output_names()[0]).copy_to_cpu()
    assert got.shape == ref.shape == (ex.input_ids.shape[0], cfg.max_len, len(LABELS))
    assert np.abs(got - ref).max() < 1e-4


def test_runtime_stage_matches_dygraph(trained, vocab: Vocab) -> None:
    """The runtime stage (no PaddleNLP inside) on the exported files gives the dygraph page probabilities."""
    from stages.extraction.ernie import ErnieExtractor, ExtractorLine, ExtractorPage

    result, _, cfg, out, dev_docs = trained
    doc = dev_docs[0]
    ref, _ = predict_probs(result.model, doc, vocab, cfg.max_len, cfg.stride, cfg.features)
    extractor = ErnieExtractor(model_dir=out, max_batch=2)
    page = ExtractorPage([ExtractorLine(t, b) for t, b in zip(doc.texts, doc.boxes)], doc.width, doc.height)
    res = extractor.extract(page)
    got = np.concatenate(res.char_probs)
    assert got.shape == ref.shape
    assert np.abs(got - ref).max() < 1e-4


def test_runtime_trims_padding_exactly(trained, vocab: Vocab, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches trimmed to the longest window (rounded up) give what full-length padded windows give."""
    import stages.extraction.ernie as ernie

    result, _, cfg, out, dev_docs = trained
    doc = dev_docs[0]
    short = type(doc)(doc.name, doc.width, doc.height, doc.texts[:2], doc.boxes[:2], doc.labels[:2])
    assert short.n_chars + 2 < cfg.max_len - 16
    ref, _ = predict_probs(result.model, short, vocab, cfg.max_len, cfg.stride, cfg.features)
    monkeypatch.setattr(ernie, "LENGTH_MULTIPLE", 16)
    extractor = ernie.ErnieExtractor(model_dir=out)
    page = ernie.ExtractorPage([ernie.ExtractorLine(t, b) for t, b in zip(short.texts, short.boxes)], short.width, short.height)
    got = np.concatenate(extractor.extract(page).char_probs)
    assert np.abs(got - ref).max() < 1e-4


def test_cli_trains_resumes_and_exports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from models.extractor import train as cli

    write_fake_corpus(tmp_path / "corpus", 4)
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / "corpus").glob("*.json"))]
    (tmp_path / "keys.txt").write_text("\n".join(corpus_chars(docs)) + "\n", encoding="utf-8")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    common = [
        "--train", str(tmp_path / "corpus"), "--dev", str(tmp_path / "corpus"), "--out", str(tmp_path / "out"),
        "--work", str(tmp_path / "work"), "--train-split", "", "--dev-split", "", "--vocab", str(tmp_path / "keys.txt"),
        "--hidden", "32", "--layers", "1", "--heads", "2", "--max-len", "128", "--stride", "96",
        "--eval-every", "2", "--checkpoint-every", "1", "--batch-size", "2", "--threads", "1", "--warmup", "1",
    ]
    assert cli.main([*common, "--max-steps", "2"]) == 0
    first = paddle.load(str(tmp_path / "work" / "last.pdparams"))
    assert first["step"] == 2 and len(first["history"]) == 1
    assert cli.main([*common, "--max-steps", "4", "--resume"]) == 0
    again = paddle.load(str(tmp_path / "work" / "last.pdparams"))
    assert again["step"] == 4 and [h["step"] for h in again["history"]] == [2, 4]
    meta = yaml.safe_load((tmp_path / "out" / "extractor.yaml").read_text(encoding="utf-8"))
    assert "--max-steps" in meta["training"]["command"] and meta["features"]["box"] == "line"
    assert (tmp_path / "out" / BASE_NAME).is_file()


def test_initialise_gives_smooth_position_tables(vocab: Vocab) -> None:
    model = build_model(ArchitectureSpec(vocab_size=len(vocab), **TINY))
    table = np.random.default_rng(0).normal(size=(len(vocab), TINY["hidden_size"])).astype(np.float32)
    initialise(model, table)
    emb = model.ernie_layout.embeddings
    np.testing.assert_allclose(emb.word_embeddings.weight.numpy(), table)
    x = emb.x_position_embeddings.weight.numpy()
    near = np.linalg.norm(x[100] - x[101])
    far = np.linalg.norm(x[100] - x[600])
    assert near < 0.5 * far  # neighbouring coordinates start close, unlike random rows
    assert not np.allclose(x, emb.y_position_embeddings.weight.numpy())


def test_train_labels_on_three_documents_changes_the_weights(trained, tmp_path: Path, vocab: Vocab) -> None:
    """``docpipe train --labels --ernie`` (run through the CLI, which starts the fine-tuning process) on 3 corrected
    documents exports new weights that differ from the base, into the adapted folder's ``ernie/``."""
    from pipeline import cli

    _, _, _, base, _ = trained
    labels = tmp_path / "labels"
    labels.mkdir()
    for i in range(3):
        res = corrected_result(10 + i, wrong=("insured_name",))
        (labels / f"p{i}.json").write_text(json.dumps(res, ensure_ascii=False), encoding="utf-8")
        (labels / f"p{i}.jpg").write_bytes(b"\xff\xd8\xff\xe0")  # the image is not read: the JSON holds its OCR lines
    adapted = tmp_path / "tuned"
    # --no-refit: this test runs in the training interpreter, which lacks the runtime's stack that the scorer refit
    # reads the corrected documents with (the refit has its own tests, tests/models/adapt/test_refit.py)
    rc = cli.main(["train", "--labels", str(labels), "--ernie", "--base", str(base), "--steps", "3",
                   "--out", str(adapted), "--no-refit"])
    assert rc == 0
    assert json.loads((adapted / "adapted.json").read_text(encoding="utf-8"))["learned"] == ["wordings", "ernie"]
    out = adapted / "ernie"
    before, after = load_base(base / BASE_NAME), load_base(out / BASE_NAME)
    assert set(before) == set(after)
    changed = [k for k in before if not np.array_equal(before[k], after[k])]
    assert "classifier.weight" in changed and len(changed) > len(before) // 2
    assert (out / "inference.pdiparams").read_bytes() != (base / "inference.pdiparams").read_bytes()
    meta = yaml.safe_load((out / "extractor.yaml").read_text(encoding="utf-8"))
    assert meta["training"]["pages"] == 3 and meta["training"]["fields_not_found"] == 0
    assert meta["features"] == yaml.safe_load((base / "extractor.yaml").read_text(encoding="utf-8"))["features"]


def test_parse_doc_without_char_boxes_cuts_polygon() -> None:
    raw = fake_doc(3)
    for line in raw["lines"]:
        del line["char_boxes"]
    doc = parse_doc(raw)
    assert all(b.shape == (len(t), 4) for t, b in zip(doc.texts, doc.boxes))


def test_learning_rate_warms_up_then_decays_by_step() -> None:
    cfg = TrainConfig(lr=1e-3, warmup_steps=10, max_steps=110)
    assert learning_rate(cfg, 0) == pytest.approx(1e-4)
    assert learning_rate(cfg, 9) == pytest.approx(1e-3)
    decay = [learning_rate(cfg, s) for s in range(10, 111, 10)]
    assert decay[0] == pytest.approx(1e-3) and decay[-1] == pytest.approx(5e-5)
    assert all(a >= b for a, b in zip(decay, decay[1:]))
    assert learning_rate(cfg, 500) == pytest.approx(5e-5)
