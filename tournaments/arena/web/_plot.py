"""The bot page's plot of its rating over time: the shapes of an SVG, drawn by its template."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from protocol.bounded import JsonObject
from tournaments.arena.store import RatingPoint
from tournaments.arena.web._filters import when

__all__ = ["rating_plot"]


WIDTH: Final = 640.0
HEIGHT: Final = 220.0
LEFT: Final = 56.0
"""The margin left of the plot, for the ratings' labels (the others are the same for each)."""
RIGHT: Final = 12.0
TOP: Final = 12.0
BOTTOM: Final = 28.0
"""The margin under the plot, for the dates' labels."""


@dataclass(frozen=True)
class _Axes:
    """The plot's frame: time along x from ``start``, ratings up y from ``floor``."""

    start: float
    span: float
    floor: float
    ceiling: float

    def point(self, at: float, value: float) -> str:
        """A point's SVG coordinates, as a polyline lists them."""
        x = LEFT + (at - self.start) / self.span * (WIDTH - LEFT - RIGHT)
        y = TOP + (self.ceiling - value) / (self.ceiling - self.floor) * (HEIGHT - TOP - BOTTOM)
        return f"{x:.1f},{y:.1f}"


def _axes(points: list[RatingPoint], lows: list[float], highs: list[float]) -> _Axes:
    """The frame that holds every point and its uncertainty (10 points each side of a flat
    line)."""
    floor, ceiling = min(lows), max(highs)
    if ceiling - floor < 1.0:
        floor, ceiling = floor - 10.0, ceiling + 10.0
    start, end = points[0].at, points[-1].at
    return _Axes(start, max(end - start, 1e-9), floor, ceiling)


def rating_plot(points: list[RatingPoint]) -> JsonObject | None:
    """The rating-over-time plot's shapes (SVG coordinates), ``None`` without two points."""
    if len(points) < 2:
        return None
    lows = [p.low if p.low is not None else p.rating for p in points]
    highs = [p.high if p.high is not None else p.rating for p in points]
    axes = _axes(points, lows, highs)
    upper = [axes.point(p.at, high) for p, high in zip(points, highs, strict=True)]
    lower = [axes.point(p.at, low) for p, low in zip(points, lows, strict=True)]
    return {
        "width": int(WIDTH),
        "height": int(HEIGHT),
        "line": " ".join(axes.point(p.at, p.rating) for p in points),
        "band": " ".join(upper + lower[::-1]),
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "high": f"{axes.ceiling:.0f}",
        "low": f"{axes.floor:.0f}",
        "first": when(points[0].at),
        "last": when(points[-1].at),
        "label_y": HEIGHT - 8,
    }
