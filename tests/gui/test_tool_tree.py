"""The Tool calls tab alone (app/streamscope/gui/tool_tree.py): a call's item grows by the
fragments that came since it was last shown, and once its arguments parse it ends with
their value as a tree, rebuilt (never repeated) as more comes."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QTreeWidgetItem

from streamscope.client.tools import ToolCallTracker
from streamscope.gui.tool_tree import ToolCallTree
from streamscope.model.events import ToolCallDelta, ToolCallStart


def children(item: QTreeWidgetItem) -> list[str]:
    return [item.child(i).text(0) for i in range(item.childCount())]


def test_a_call_grows_fragment_by_fragment_and_shows_its_value(qapp: QApplication) -> None:
    tracker, tree = ToolCallTracker(), ToolCallTree()
    (key,) = tracker.feed([(1, 10.0, ToolCallStart(0, "call_1", "get_weather"))])
    tracker.feed([(2, 12.5, ToolCallDelta(0, '{"city": '))])
    entry = tracker.get(key)
    assert entry is not None
    tree.show_call(entry)
    (call,) = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    assert call.text(0) == "#0 get_weather  call_1" and call.text(2) == "not yet"
    assert children(call) == ["frame 2  +12.5 ms"]
    tracker.feed([(3, 14.0, ToolCallDelta(0, '"Lyon", "days": [1, 2]}'))])
    tree.show_call(entry)
    tree.show_call(entry)  # shown again with nothing new: nothing repeated
    assert tree.topLevelItemCount() == 1
    assert call.text(1) == '{"city": "Lyon", "days": [1, 2]}' and call.text(2) == "yes"
    assert children(call) == ["frame 2  +12.5 ms", "frame 3  +14.0 ms", "parsed"]
    parsed = call.child(2)
    assert children(parsed) == ["city", "days"]
    assert parsed.child(0).text(1) == '"Lyon"'
    assert children(parsed.child(1)) == ["[0]", "[1]"]
    tree.clear_calls()
    assert tree.topLevelItemCount() == 0
    tree.show_call(entry)  # a new leg's first showing: the whole call again
    assert children(tree.topLevelItem(0))[-1] == "parsed"
    assert len(children(tree.topLevelItem(0))) == 3
    tree.deleteLater()
