"""Line charts as inline SVG: the geometry here, the markup in the ``chart`` macro of
arena/web/templates/macros.html (no HTML in Python, issue 15 §1). No script, no library,
nothing fetched.

A chart scales to its container (``viewBox`` and ``width: 100%``) and draws,
per series, a solid line with one ``<circle class="pt">`` per point (its
``<title>`` is the tooltip) and, optionally, a dashed line under it (the
conservative rating ``mu - 3 sigma``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PALETTE = ("#2458b3", "#c0392b", "#1f8a4c", "#8e44ad", "#d35400", "#16a085", "#7f8c8d")


@dataclass
class Series:
    """One line: x and y per point, a tooltip per point, and an optional dashed lower line."""

    label: str
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    tips: list[str] = field(default_factory=list)
    lower: list[float] | None = None


def nice_ticks(low: float, high: float, count: int = 5, integer: bool = False) -> list[float]:
    """About ``count`` round tick values covering [low, high] (whole numbers if ``integer``)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high <= low:
        high = low + 1
    raw = (high - low) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if integer:
        step = max(1, math.ceil(step))  # game numbers: no tick at game 1.5
    first = math.floor(low / step) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _fmt(value: float) -> str:
    return f"{value:g}" if abs(value) >= 1e-9 else "0"


def line_chart(series: Sequence[Series], *, title: str, x_label: str, y_label: str,
               width: int = 640, height: int = 260) -> dict[str, Any]:
    """The geometry of a chart of ``series``: axes, grid, ticks, lines, points and legend,
    in the viewBox's coordinates; ``series`` is empty when there is nothing to draw."""
    chart: dict[str, Any] = {"title": title, "x_label": x_label, "y_label": y_label,
                             "width": width, "height": height, "series": []}
    points = [(x, y) for s in series for x, y in zip(s.xs, s.ys, strict=True)]
    lows = [v for s in series if s.lower for v in s.lower]
    if not points:
        return chart
    left, right, top, bottom = 46, 12, 12, 34
    xs = [p[0] for p in points]
    ys = [p[1] for p in points] + lows
    x_ticks = nice_ticks(min(xs), max(xs), 6, integer=all(float(x).is_integer() for x in xs))
    y_ticks = nice_ticks(min(ys), max(ys), 5)
    x0, x1 = min(x_ticks[0], min(xs)), max(x_ticks[-1], max(xs))
    y0, y1 = min(y_ticks[0], min(ys)), max(y_ticks[-1], max(ys))
    x1 = x1 if x1 > x0 else x0 + 1
    y1 = y1 if y1 > y0 else y0 + 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return round(left + (x - x0) / (x1 - x0) * plot_w, 2)

    def sy(y: float) -> float:
        return round(top + (1 - (y - y0) / (y1 - y0)) * plot_h, 2)

    chart.update(left=left, right=right, top=top, bottom=bottom, plot_w=plot_w, plot_h=plot_h,
                 has_lower=bool(lows),
                 y_ticks=[{"at": sy(t), "text": _fmt(t)} for t in y_ticks],
                 x_ticks=[{"at": sx(t), "text": _fmt(t)} for t in x_ticks])
    for i, s in enumerate(series):
        chart["series"].append({
            "label": s.label, "index": i % len(PALETTE), "colour": PALETTE[i % len(PALETTE)],
            "lower": " ".join(f"{sx(x)},{sy(y)}" for x, y in zip(s.xs, s.lower, strict=True))
            if s.lower else "",
            "line": " ".join(f"{sx(x)},{sy(y)}" for x, y in zip(s.xs, s.ys, strict=True)),
            "radius": 3 if len(s.xs) <= 150 else 1.6,
            "points": [{"x": sx(x), "y": sy(y), "tip": tip}
                       for x, y, tip in zip(s.xs, s.ys, s.tips, strict=True)]})
    return chart
