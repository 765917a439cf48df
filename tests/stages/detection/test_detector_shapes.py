"""Bounded input shapes: Paddle keeps memory per distinct input shape, so pages go into few canvases."""
from stages.detection.detector import canvas_for


def test_a4_pages_share_one_canvas_and_shapes_are_few():
    shapes = set()
    for h, w in [(960, 672), (960, 704), (928, 640), (704, 960), (960, 960), (96, 416), (480, 320), (960, 160)]:
        ch, cw = canvas_for(h, w, 960)
        assert ch >= h and cw >= w and ch % 32 == 0 and cw % 32 == 0
        shapes.add((ch, cw))
    assert canvas_for(960, 672, 960) == canvas_for(928, 640, 960) == (960, 736)
    assert len(shapes) <= 12
    all_shapes = {canvas_for(h, w, 960) for h in range(32, 961, 32) for w in range(32, 961, 32)}
    assert len(all_shapes) <= 12
