"""Orientation check on pages turned 0/90/180/270: the decision per page and angle, and the vote's cost against detection.

Usage: PYTHONPATH=. python scripts/probe_orientation.py "samples/pages/*.jpg" 10"""
import sys
import time
import glob

import cv2
import numpy as np
from stages.contracts.config import DocpipeConfig
from stages.detection.detector import TextDetector
from stages.page.orientation import PageOrienter
from stages.contracts.types import Page
cfg = DocpipeConfig()
det = TextDetector(cfg.detection, cfg.predictor)
ori = PageOrienter(cfg.page, cfg.recognition, cfg.predictor)
files = sorted(glob.glob(sys.argv[1]))[: int(sys.argv[2])]
bad = 0; tv = []; td = []
for f in files:
    img = cv2.imread(f)
    for rot in (0, 90, 180, 270):
        im = np.ascontiguousarray(np.rot90(img, k=-(rot // 90)))  # turned rot clockwise; upright needs (360-rot)
        t0 = time.perf_counter(); boxes = det.detect_batch([im])[0]; t1 = time.perf_counter()
        v = ori.vote(Page(0, im), boxes); t2 = time.perf_counter()
        want = (360 - rot) % 360
        if rot == 0: td.append(t1 - t0); tv.append(t2 - t1)
        ok = v.rotation == want
        bad += not ok
        print(f.split('/')[-1], rot, 'want', want, 'got', v.rotation, 'tall', v.tall, 'wide', v.wide, 'flip %.3f' % v.flip_prob, '' if ok else 'WRONG', flush=True)
print('wrong', bad, 'of', 4 * len(files), 'det ms %.0f vote ms %.1f' % (1000 * np.median(td), 1000 * np.median(tv)))
