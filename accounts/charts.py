"""Units per day as an SVG bar chart, laid out on the server: no script, no chart library."""

from dataclasses import dataclass
from datetime import date

WIDTH, HEIGHT = 720, 220
LEFT, RIGHT, TOP, BOTTOM = 48, 8, 12, 28


@dataclass(frozen=True)
class Bar:
    day: date
    units: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Tick:
    value: int
    y: float


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    bars: list[Bar]
    ticks: list[Tick]
    baseline: float
    left: int
    right: float


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … that is at least `value` (at least 1)."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def daily_bar_chart(days: list[tuple[date, int]]) -> BarChart:
    plot_width = WIDTH - LEFT - RIGHT
    plot_height = HEIGHT - TOP - BOTTOM
    top = nice_ceiling(max((units for _, units in days), default=0))
    slot = plot_width / max(len(days), 1)
    bars = []
    for index, (day, units) in enumerate(days):
        height = plot_height * units / top
        bars.append(
            Bar(
                day=day,
                units=units,
                x=round(LEFT + index * slot + slot * 0.15, 2),
                y=round(TOP + plot_height - height, 2),
                width=round(slot * 0.7, 2),
                height=round(height, 2),
            )
        )
    ticks = [
        Tick(value=value, y=round(TOP + plot_height - plot_height * value / top, 2))
        for value in sorted({0, top // 2, top})
    ]
    return BarChart(
        width=WIDTH,
        height=HEIGHT,
        bars=bars,
        ticks=ticks,
        baseline=TOP + plot_height,
        left=LEFT,
        right=WIDTH - RIGHT,
    )
