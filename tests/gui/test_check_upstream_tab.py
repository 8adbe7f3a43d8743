"""Check an upstream… as a tab of the window (gui/check_upstream_tab.py): the view is
added closable and shown (the window's own tabs keep no close button), titled as its
relay when it says so; closing it takes it out, and close_tabs closes every such tab and
leaves the others."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

from streamscope.gui.check_upstream import TITLE, CheckUpstreamView
from streamscope.gui.check_upstream_tab import close_tabs, open_tab


def test_a_view_opens_closable_retitles_and_closes(qapp: QApplication) -> None:
    tabs = QTabWidget()
    own = QWidget()
    tabs.addTab(own, "Traffic")
    first, second = CheckUpstreamView(), CheckUpstreamView()
    try:
        open_tab(tabs, first)
        assert tabs.tabsClosable() and tabs.currentWidget() is first
        assert tabs.tabText(tabs.indexOf(first)) == TITLE
        side = tabs.tabBar().ButtonPosition.RightSide
        assert tabs.tabBar().tabButton(0, side) is None  # the window's own tab stays
        assert tabs.tabBar().tabButton(tabs.indexOf(first), side) is not None
        first.retitled.emit("Check · relay.example")
        assert tabs.tabText(tabs.indexOf(first)) == "Check · relay.example"
        tabs.tabCloseRequested.emit(tabs.indexOf(first))
        assert tabs.indexOf(first) == -1 and tabs.count() == 1
        tabs.tabCloseRequested.emit(0)  # not a check: it stays
        assert tabs.widget(0) is own

        open_tab(tabs, second)
        assert tabs.count() == 2
        close_tabs(tabs)
        assert tabs.count() == 1 and tabs.widget(0) is own
    finally:
        tabs.deleteLater()
