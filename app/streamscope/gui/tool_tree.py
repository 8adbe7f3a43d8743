"""The Tool calls tab of a leg's view: each tool call as it is reassembled.

One top-level item per call (``#index name  id``, the arguments so far, whether they
parse as JSON yet); under it, an item per argument fragment (the frame it came in and
that frame's time) and, once the arguments parse, a last item ``parsed`` holding the
value as a tree. A call shown again grows by the fragments that came since; only its
parsed tree is rebuilt.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from streamscope.client.tools import Key, ToolCallEntry


class ToolCallTree(QTreeWidget):
    """The tool calls of one leg, fragment by fragment (see the module docstring).

    It keeps, per call, its item and how many fragments that item shows, so showing a
    call again costs what it added. :class:`~streamscope.gui.leg_view.LegView` calls
    :meth:`show_call` for each entry a batch changed and :meth:`clear_calls` for a new leg,
    on the GUI thread."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["call", "arguments so far", "parses as JSON"])
        self.setColumnWidth(0, 240)
        self.setColumnWidth(1, 420)
        self._items: dict[Key, tuple[QTreeWidgetItem, int]] = {}

    def clear_calls(self) -> None:
        """No calls shown (a new leg)."""
        self.clear()
        self._items.clear()

    def show_call(self, entry: ToolCallEntry) -> None:
        """The call as it is now: added, or its item brought up to date."""
        known = self._items.get(entry.key)
        if known is None:
            item = QTreeWidgetItem()
            self.addTopLevelItem(item)
            item.setExpanded(True)
            shown = 0
        else:
            item, shown = known
            # the parsed tree (last child) is rebuilt; fragments only grow
            if item.childCount() > shown:
                item.takeChild(item.childCount() - 1)
        item.setText(0, f"#{entry.index} {entry.name or '(no name)'}  {entry.id or '(no id)'}")
        item.setText(1, entry.arguments)
        item.setText(2, "yes" if entry.parsed else "not yet")
        for fragment in entry.fragments[shown:]:
            QTreeWidgetItem(
                item, [f"frame {fragment.frame}  +{fragment.t_ms:.1f} ms", fragment.text, ""]
            )
        if entry.parsed:
            parsed = QTreeWidgetItem(item, ["parsed", "", ""])
            _json_tree(parsed, entry.value)
            parsed.setExpanded(True)
        self._items[entry.key] = (item, len(entry.fragments))


def _json_tree(parent: QTreeWidgetItem, value: Any) -> None:
    """``value`` (parsed JSON) as child items of ``parent``."""
    if isinstance(value, dict):
        for key, child in value.items():
            _json_child(parent, str(key), child)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _json_child(parent, f"[{i}]", child)
    else:
        parent.setText(1, json.dumps(value, ensure_ascii=False))


def _json_child(parent: QTreeWidgetItem, name: str, value: Any) -> None:
    item = QTreeWidgetItem(parent, [name, "", ""])
    if isinstance(value, dict | list):
        _json_tree(item, value)
        item.setExpanded(True)
    else:
        item.setText(1, json.dumps(value, ensure_ascii=False))


__all__ = ["ToolCallTree"]
