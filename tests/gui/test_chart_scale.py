"""The timing chart's numbers (app/streamscope/gui/chart_scale.py): axis tops are round,
count ticks whole, and sorted times split into pixel columns at their bounds."""

from __future__ import annotations

import pytest

from streamscope.gui.chart_scale import column_bounds, nice_ceiling, ticks


@pytest.mark.parametrize(
    ("value", "expected"), [(0, 1.0), (3, 3.0), (177, 200.0), (404, 600.0), (0.07, 0.08)]
)
def test_axis_tops_are_round(value: float, expected: float) -> None:
    assert nice_ceiling(value) == pytest.approx(expected)


def test_count_ticks_are_whole() -> None:
    assert ticks(1, whole=True) == [0, 1]
    assert ticks(200) == [0, 50, 100, 150, 200]


def test_columns_split_sorted_times() -> None:
    bounds = column_bounds([0.0, 1.0, 2.5, 9.9, 10.0], 0.0, 10.0, 4)
    assert bounds == [0, 2, 3, 3, 5]  # [0, 2.5) [2.5, 5) [5, 7.5) [7.5, 10]
