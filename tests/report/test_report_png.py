"""The static PNG timeline (matplotlib, extra 'plot')."""

from __future__ import annotations

import pytest

import orchestrace as ot
from orchestrace.errors import MissingExtraError
from orchestrace.report import save_png

pytest.importorskip("matplotlib", reason="matplotlib (extra 'plot') not installed")


def test_png_of_synth_and_reference(tmp_path, reference_trace, artifacts):
    p = save_png(ot.synth(events=2000, agents=12, seed=7, p_wasted=0.3), artifacts / "timeline-synth-2000.png", dpi=120)
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 30_000
    q = save_png(ot.load(reference_trace), tmp_path / "ref.png", dpi=80)
    assert q.stat().st_size > 5_000


def test_missing_matplotlib_raises_with_install_command(monkeypatch, tmp_path):
    import orchestrace.report._png as png

    def fake(module, *, extra):
        raise MissingExtraError(f"{module} is needed for this; install it with: pip install 'orchestrace[{extra}]'")

    monkeypatch.setattr(png, "require", fake)
    with pytest.raises(MissingExtraError, match=r"orchestrace\[plot\]"):
        save_png(ot.synth(events=60, agents=2, seed=0), tmp_path / "x.png")
