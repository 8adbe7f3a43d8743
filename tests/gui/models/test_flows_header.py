"""The Traffic list's headers say what a count is: the Tokens column is the output the
client got, while the account pool counts input and output (an Anthropic error flow read
0 beside a pool that had counted its input)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from streamscope.gui.models.flows import FlowsModel


def test_the_tokens_column_says_it_counts_output_and_what_the_pool_counts() -> None:
    model = FlowsModel()
    horizontal = Qt.Orientation.Horizontal
    assert model.headerData(FlowsModel.TOKENS, horizontal) == "Out tokens"
    tip = model.headerData(FlowsModel.TOKENS, horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "output" in tip and "pool counts input and output" in tip
    assert model.headerData(FlowsModel.MODEL, horizontal, Qt.ItemDataRole.ToolTipRole) is None
