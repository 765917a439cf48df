"""The bench's bookkeeping: medians over interleaved rounds, per-round ratios, steal share (no engines run)."""
from pipeline.tools.bench import best_ratio, ratio_by_round, read_cpu_times, report, steal_share, summarize


def _run(rate, rss=100.0, cer=0.01, steal=0.0):
    return {"pages": 10, "seconds": 10 / rate, "pages_per_s": rate, "cer": cer, "peak_rss_mb": rss,
            "steal_share": steal}


def test_summary_is_the_median_round_with_the_worst_memory_and_steal():
    row = summarize([_run(1.0, 500, steal=0.02), _run(3.0, 700), _run(2.0, 600, steal=0.10)])
    assert row["pages_per_s"] == 2.0 and row["pages_per_s_rounds"] == [1.0, 3.0, 2.0]
    assert row["peak_rss_mb"] == 700 and row["steal_share"] == 0.10
    assert row["pages_per_s_best"] == 3.0
    assert row["seconds"] == 10 / 2.0  # the other fields come from the median round


def test_best_ratio_compares_best_rounds():
    results = {"a": summarize([_run(2.0), _run(1.0)]), "b": summarize([_run(0.5), _run(1.6)])}
    assert best_ratio(results, "a", "b") == 1.25
    assert best_ratio(results, "a", "missing") is None


def test_a_failed_round_fails_the_engine():
    row = summarize([_run(1.0), {"error": "exit 1: boom"}])
    assert row == {"error": "exit 1: boom"}


def test_ratios_pair_runs_of_the_same_round():
    runs = {"a": [_run(2.0), _run(1.0), _run(3.0)], "b": [_run(1.0), _run(1.0), _run(1.5)]}
    r = ratio_by_round(runs, "a", "b")
    assert r == {"median": 2.0, "rounds": [2.0, 1.0, 2.0]}
    # the median of the per-round ratios, not the ratio of the medians (2.0 / 1.0 here too, but by pairing)
    assert ratio_by_round(runs, "a", "missing") is None


def test_steal_share_from_proc_stat_deltas():
    before = [100, 0, 50, 800, 0, 0, 0, 50]
    after = [200, 0, 100, 850, 0, 0, 0, 100]  # 250 jiffies passed, 50 of them stolen
    assert steal_share(before, after) == 0.2
    assert steal_share(None, after) is None and steal_share(after, after) is None
    now = read_cpu_times()
    assert now is None or (len(now) == 8 and all(x >= 0 for x in now))


def test_report_prints_every_engine_and_failures():
    results = {"docpipe_engine": summarize([_run(2.0, steal=0.05)]), "rapidocr_onnxruntime": summarize([_run(1.0)]),
               "rapidocr_paddle": {"error": "exit 1: no module"}}
    vs = {"docpipe_engine": {"median": 2.0, "rounds": [2.0]}, "rapidocr_onnxruntime": {"median": 1.0, "rounds": [1.0]},
          "rapidocr_paddle": None}
    text = report(results, vs)
    assert "2.00x" in text and "5%" in text and "failed: exit 1: no module" in text


def test_engine_stats_are_printed_per_page():
    from pipeline.tools.bench import format_engine_stats

    text = format_engine_stats({
        "workers": 2, "mode": "processes", "documents": 42, "pages": 40, "batch_size_histogram": {1: 2, 4: 10},
        "stage_busy_ms": {"detect": 8000.0, "recognize": 32000.0}, "worker_busy_ms": {"0": 22156.2, "1": 23206.7},
        "max_queue_depth": 16,
    })
    assert "batch sizes {1: 2, 4: 10}" in text and "max queue depth 16" in text
    assert "detect 200, recognize 800" in text and "0: 22.2, 1: 23.2" in text
