"""TextLine.frame_span: the stored frames of a run of characters, between its neighbours' centres."""
import numpy as np

from stages.contracts.types import FrameProbs, TextLine


def _line(text: str, n_frames: int) -> TextLine:
    u = tuple((2 * i + 0.5) / n_frames for i in range(len(text)))  # character i peaks at frame 2i
    fp = FrameProbs(np.array([0], np.int32), np.ones((n_frames, 1), np.float32))
    return TextLine(text, 0.9, np.zeros((4, 2), np.float32), (), u, False, fp)


def test_frame_span_lies_between_the_neighbours():
    line = _line("abcd", 8)
    assert line.frame_span(1, 2) == (1, 6)  # after a's frame 0, up to d's frame 6
    assert line.frame_span(0, 0) == (0, 2)  # the line's start
    assert line.frame_span(3, 3) == (5, 8)  # the line's end


def test_no_span_without_frames_or_positions():
    line = _line("ab", 4)
    assert TextLine("ab", 0.9, line.polygon, (), line.char_u).frame_span(0, 1) is None
    assert TextLine("ab", 0.9, line.polygon, (), (0.5,), False, line.frame_probs).frame_span(0, 1) is None
