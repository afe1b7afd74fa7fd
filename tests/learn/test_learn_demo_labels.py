"""The demo picture's labels: placed where they overlap neither each other nor other points."""

from __future__ import annotations

import itertools

import pytest

matplotlib = pytest.importorskip("matplotlib", reason="the picture needs orchestrace[plot]")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from orchestrace.evaluation._demo_plot import _place_labels  # noqa: E402


def _boxes(fig, ax):
    renderer = fig.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in ax.texts]


def test_crowded_points_get_labels_that_do_not_overlap() -> None:
    # the shape of a real demo: a cluster of five policies within 800 tokens and 0.1 success
    pts = [(3460, 0.59), (3060, 0.56), (3740, 0.68), (3530, 0.66), (3750, 0.61), (4510, 0.60),
           (2300, 0.69), (7440, 0.58), (8530, 0.56), (1810, 0.31)]
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot([x for x, _ in pts], [y for _, y in pts], "o")
    fig.tight_layout()
    labels = [(f"policy-{k} (return 0.{k}00)", x, y) for k, (x, y) in enumerate(pts)]
    _place_labels(fig, ax, labels)
    boxes = _boxes(fig, ax)
    assert len(boxes) == len(pts)  # one label a point, none lost
    overlaps = [(a, b) for a, b in itertools.combinations(range(len(boxes)), 2) if boxes[a].overlaps(boxes[b])]
    assert overlaps == []
    frame = ax.get_window_extent(fig.canvas.get_renderer())
    assert all(frame.contains(b.x0, b.y0) and frame.contains(b.x1, b.y1) for b in boxes)
    plt.close(fig)


def test_a_label_is_kept_even_when_no_position_is_free() -> None:
    # twenty labels on one spot cannot all be clear: each still gets exactly one label
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1.0], [1.0], "o")
    fig.tight_layout()
    _place_labels(fig, ax, [(f"a long label number {k}", 1.0, 1.0) for k in range(20)])
    assert len(ax.texts) == 20
    plt.close(fig)
