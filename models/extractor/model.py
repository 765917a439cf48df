"""The ERNIE-Layout token classifier (training environment only: imports PaddleNLP).

Built from scratch (no pretrained weights reachable). Two deviations from the stock PaddleNLP model,
both exact re-implementations that keep parameter names and shapes:

* ``lookup_rel_pos``: the relative 1D/2D attention biases are gathered from a per-offset table instead
  of multiplying a ``[B, L, L, bins]`` one-hot by the bias parameters (the one-hot dominates CPU time);
* the text-only setting uses ``image=None`` and a 1x1 visual pool, i.e. one extra global token
  instead of 49 (``visual_pool``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

import paddle
import paddle.nn.functional as F
from paddle import nn
from paddlenlp.transformers import ErnieLayoutConfig, ErnieLayoutForTokenClassification
from paddlenlp.transformers.ernie_layout.modeling import ErnieLayoutEncoder, relative_position_bucket

from stages.extraction.ernie_features import LABELS

VISUAL_CHANNELS = 256  # output channels of PaddleNLP's ERNIE-Layout visual backbone


@dataclass(frozen=True)
class ArchitectureSpec:
    vocab_size: int
    num_labels: int = len(LABELS)
    hidden_size: int = 256
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 1024
    max_position_embeddings: int = 512
    relative_attention_bias: bool = True
    spatial_attention_bias: bool = True
    rel_pos_bins: int = 32
    max_rel_pos: int = 128
    rel_2d_pos_bins: int = 64
    max_rel_2d_pos: int = 256
    lookup_rel_pos: bool = True
    visual_pool: int = 1
    dropout: float = 0.1

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ArchitectureSpec":
        return cls(**d)


def ernie_layout_config(spec: ArchitectureSpec) -> ErnieLayoutConfig:
    return ErnieLayoutConfig(
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        intermediate_size=spec.intermediate_size,
        hidden_dropout_prob=spec.dropout,
        attention_probs_dropout_prob=spec.dropout,
        max_position_embeddings=spec.max_position_embeddings,
        max_2d_position_embeddings=1024,
        type_vocab_size=1,
        image_feature_pool_shape=[spec.visual_pool, spec.visual_pool, VISUAL_CHANNELS],
        num_labels=spec.num_labels,
        has_relative_attention_bias=spec.relative_attention_bias,
        has_spatial_attention_bias=spec.spatial_attention_bias,
        rel_pos_bins=spec.rel_pos_bins,
        max_rel_pos=spec.max_rel_pos,
        rel_2d_pos_bins=spec.rel_2d_pos_bins,
        max_rel_2d_pos=spec.max_rel_2d_pos,
    )


def _bias_lookup(
    rel: paddle.Tensor, weight: paddle.Tensor, num_buckets: int, max_distance: int
) -> paddle.Tensor:
    """Relative-position bias ``[B, heads, L, L]`` for int32 relative offsets ``rel`` ``[B, L, L]``.

    The bucket of an offset depends on the offset alone and saturates at ``|rel| >= max_distance``, so the
    bias of every offset in ``[-max_distance, max_distance]`` is tabulated once (``2 * max_distance + 1``
    rows) and the ``[B, L, L]`` offsets, clipped to that range, index the table: one gather instead of
    bucketing and a one-hot matmul over ``[B, L, L, bins]``.
    """
    offsets = paddle.arange(-max_distance, max_distance + 1, dtype="int64")
    table = F.embedding(
        relative_position_bucket(offsets, num_buckets=num_buckets, max_distance=max_distance), weight
    )
    # not paddle.clip: under oneDNN (paddle.inference 3.3.1 CPU) clip on int64 passes values through unclipped
    idx = paddle.minimum(paddle.maximum(rel, paddle.full_like(rel, -max_distance)), paddle.full_like(rel, max_distance))
    return F.embedding(idx + max_distance, table).transpose([0, 3, 1, 2])


class LookupRelPosEncoder(ErnieLayoutEncoder):
    """``ErnieLayoutEncoder`` whose relative-position biases are table lookups (same parameters, same values).

    The 1D bias is computed for the first sequence of the batch and broadcast: ``ErnieLayoutModel`` gives
    every sequence the same position ids (``0..L-1`` then the visual tokens'), and so does this project.
    """

    def _cal_1d_pos_emb(self, hidden_states: paddle.Tensor, position_ids: paddle.Tensor) -> paddle.Tensor:
        pos = position_ids[:1].astype("int32")
        rel = pos.unsqueeze(-2) - pos.unsqueeze(-1)
        return _bias_lookup(rel, self.rel_pos_bias, self.rel_pos_bins, self.max_rel_pos)

    def _cal_2d_pos_emb(self, hidden_states: paddle.Tensor, bbox: paddle.Tensor) -> paddle.Tensor:
        x = bbox[:, :, 0].astype("int32")
        y = bbox[:, :, 3].astype("int32")
        rel_x = x.unsqueeze(-2) - x.unsqueeze(-1)
        rel_y = y.unsqueeze(-2) - y.unsqueeze(-1)
        return _bias_lookup(rel_x, self.rel_pos_x_bias, self.rel_2d_pos_bins, self.max_rel_2d_pos) + _bias_lookup(
            rel_y, self.rel_pos_y_bias, self.rel_2d_pos_bins, self.max_rel_2d_pos
        )


class ExtractorModel(ErnieLayoutForTokenClassification):
    """``ErnieLayoutForTokenClassification`` over character tokens and boxes, no image."""

    def __init__(self, config: ErnieLayoutConfig, lookup_rel_pos: bool = True) -> None:
        super().__init__(config)
        if lookup_rel_pos:
            stock = self.ernie_layout.encoder
            fast = LookupRelPosEncoder(config)
            fast.set_state_dict(stock.state_dict())
            self.ernie_layout.encoder = fast

    def logits(self, input_ids: paddle.Tensor, bbox: paddle.Tensor, attention_mask: paddle.Tensor) -> paddle.Tensor:
        return self(input_ids=input_ids, bbox=bbox, attention_mask=attention_mask)[0]


def build_model(spec: ArchitectureSpec) -> ExtractorModel:
    return ExtractorModel(ernie_layout_config(spec), lookup_rel_pos=spec.lookup_rel_pos)


class ProbabilityHead(nn.Layer):
    """What gets exported: ``(input_ids, bbox, attention_mask)`` int64 -> label probabilities ``[B, L, C]``."""

    def __init__(self, model: ExtractorModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: paddle.Tensor, bbox: paddle.Tensor, attention_mask: paddle.Tensor) -> paddle.Tensor:
        return F.softmax(self.model.logits(input_ids, bbox, attention_mask), axis=-1)


def count_parameters(model: nn.Layer, exclude_prefix: str = "ernie_layout.visual.") -> int:
    """Parameters that take part in the text-only forward pass (the unused visual backbone excluded)."""
    return sum(int(p.numel()) for n, p in model.named_parameters() if not n.startswith(exclude_prefix))


def sinusoid_table(rows: int, dim: int, base: float = 10000.0) -> np.ndarray:
    """``(rows, dim)`` transformer sinusoids: neighbouring rows are close, far rows differ."""
    pos = np.arange(rows, dtype=np.float64)[:, None]
    freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    out = np.zeros((rows, dim))
    out[:, 0::2] = np.sin(pos * freq)
    out[:, 1::2] = np.cos(pos * freq[: dim // 2])
    return out


SMOOTH_TABLES = (
    "position_embeddings", "x_position_embeddings", "y_position_embeddings",
    "h_position_embeddings", "w_position_embeddings",
)


def initialise(model: ExtractorModel, char_table: Optional[np.ndarray] = None, pos_rms: float = 0.02, seed: int = 0) -> None:
    """Smooth 1D and 2D position tables (sinusoids, each table turned by its own fixed random rotation so
    that x, y, h, w and the 1D position do not add up to the same pattern) and, when given, the character
    embeddings (e.g. :mod:`models.extractor.lac_init`)."""
    rng = np.random.default_rng(seed)
    emb = model.ernie_layout.embeddings
    for name in SMOOTH_TABLES:
        param = getattr(emb, name).weight
        rows, dim = param.shape
        q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
        table = sinusoid_table(rows, dim) @ q
        table *= pos_rms / np.sqrt((table ** 2).mean())
        param.set_value(table.astype(np.float32))
    if char_table is not None:
        param = emb.word_embeddings.weight
        if tuple(char_table.shape) != tuple(param.shape):
            raise ValueError(f"character table {char_table.shape} does not fit {param.shape}")
        param.set_value(np.asarray(char_table, dtype=np.float32))
