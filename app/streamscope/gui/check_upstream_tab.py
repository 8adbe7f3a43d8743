"""Check an upstream… as the main window holds it: each view
(:class:`~streamscope.gui.check_upstream.CheckUpstreamView`) a closable tab of the
window's tabs, titled as its relay once it runs; closing one stops its run, and the view
is deleted once the run's task has ended (not under it)."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget

from streamscope.gui.check_upstream import TITLE, CheckUpstreamView


def open_tab(tabs: QTabWidget, view: CheckUpstreamView) -> None:
    """Add ``view`` to the window's ``tabs`` as a closable tab (the window's own tabs keep
    no close button), shown, titled as its relay once it runs."""
    if not tabs.tabsClosable():
        tabs.setTabsClosable(True)
        for i in range(tabs.count()):
            tabs.tabBar().setTabButton(i, tabs.tabBar().ButtonPosition.RightSide, None)
        tabs.tabCloseRequested.connect(lambda i: _close_tab(tabs, i))
    index = tabs.addTab(view, TITLE)
    view.retitled.connect(lambda title: tabs.setTabText(tabs.indexOf(view), title))
    tabs.setCurrentIndex(index)


def _close_tab(tabs: QTabWidget, index: int) -> None:
    view = tabs.widget(index)
    if isinstance(view, CheckUpstreamView):
        view.stop()
        tabs.removeTab(index)
        task = view.task
        if task is not None and not task.done():
            task.add_done_callback(lambda _task: view.deleteLater())
        else:
            view.deleteLater()


def close_tabs(tabs: QTabWidget) -> None:
    """Close every Check an upstream tab (the window is closing): their runs stop."""
    for i in reversed(range(tabs.count())):
        _close_tab(tabs, i)


__all__ = ["close_tabs", "open_tab"]
