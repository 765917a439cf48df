"""Fine-tuning's rehearsal mix: labelled pages repeated against synthetic ones (no Paddle needed)."""
from models.extractor.finetune import mix_rehearsal


def test_rehearsal_mix_keeps_every_page_and_the_share():
    labelled, synthetic = ["a", "b"], [f"s{i}" for i in range(40)]
    mixed = mix_rehearsal(labelled, synthetic, 0.5)
    assert mixed.count("a") == mixed.count("b") == 20 and all(s in mixed for s in synthetic)
    assert abs(len(synthetic) / len(mixed) - 0.5) < 0.01
    mostly_labelled = mix_rehearsal(labelled, synthetic, 0.2)
    assert abs(len(synthetic) / len(mostly_labelled) - 0.2) < 0.02


def test_no_rehearsal_is_the_labelled_pages_alone():
    assert mix_rehearsal(["a", "b"], [], 0.5) == ["a", "b"]
    assert mix_rehearsal(["a"], ["s"], 0.0) == ["a"]
    assert mix_rehearsal(["a"] * 30, ["s"], 0.5) == ["a"] * 30 + ["s"]  # at least one copy of each labelled page
