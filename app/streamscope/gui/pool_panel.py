"""The account-pool panel: every upstream's accounts, live from the pool's events, with
enable and disable (the pool's own methods: the panel decides nothing), and below them
the recent attempts — which rule fired on which account, for which request.

Enable is offered for an account that is cooling or disabled, Disable for one that is
not disabled; the buttons follow the selection and the selected account's changes.

The panel says whose pool it shows: this machine's proxy's ("local"), or a proxy
elsewhere that the window is attached to (its URL). A switch there changes the pool
every client and replica of that proxy shares, so Enable and Disable ask first, naming
it; a local switch is this user's own and is done at once.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from streamscope.gui.models.pool import AttemptsModel, PoolModel
from streamscope.pool.source import PoolSource


def _table(model: PoolModel | AttemptsModel) -> QTableView:
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
    table.verticalHeader().setVisible(False)
    table.setWordWrap(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    return table


class PoolPanel(QWidget):
    """The window's Account pool tab: the accounts table with Enable and Disable over
    the recent attempts (see the module docstring).

    It owns the two models (:class:`~streamscope.gui.models.pool.PoolModel`,
    :class:`~streamscope.gui.models.pool.AttemptsModel`), which follow the pool's
    events until :meth:`unfollow`; the buttons call the pool's own methods.
    :class:`~streamscope.gui.window.MainWindow` makes it with the core's pool, calls
    :meth:`follow` when the proxy is rebuilt on new settings and :meth:`stop` on
    closing. GUI thread only: the pool reports on the qasync loop the proxy runs on."""

    def __init__(self, pool: PoolSource) -> None:
        super().__init__()
        self.pool = pool
        self.shared: str | None = None  # the URL of the proxy elsewhere shown, if any
        self.confirm: QMessageBox | None = None  # a switch on a shared pool, asked
        self.target = QLabel()
        self.target.setWordWrap(True)
        self.target.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model = PoolModel(parent=self)
        self.attempts = AttemptsModel(self)
        self._unfollow = (self.model.follow(pool), self.attempts.follow(pool))
        self.table = _table(self.model)
        self.attempts_table = _table(self.attempts)
        for column, width in ((PoolModel.STATUS, 190), (PoolModel.FAILURES, 200)):
            self.table.setColumnWidth(column, width)
        self.table.setColumnWidth(PoolModel.LAST_ERROR, 320)
        self.attempts_table.setColumnWidth(AttemptsModel.REQUEST, 120)
        self.enable = QPushButton("Enable")
        self.disable = QPushButton("Disable")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.enable)
        buttons.addWidget(self.disable)
        accounts = QWidget()
        top = QVBoxLayout(accounts)
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.table)
        top.addLayout(buttons)
        recent = QWidget()
        bottom = QVBoxLayout(recent)
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(QLabel("Recent attempts: which rule fired on which account"))
        bottom.addWidget(self.attempts_table)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(accounts)
        splitter.addWidget(recent)
        splitter.setSizes([400, 300])
        layout = QVBoxLayout(self)
        layout.addWidget(self.target)
        layout.addWidget(splitter)
        self.enable.clicked.connect(self._enable)
        self.disable.clicked.connect(self._disable)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        self.model.dataChanged.connect(self._update_buttons)
        self.model.modelReset.connect(self._update_buttons)
        self._update_buttons()
        self._say_target()

    def follow(self, pool: PoolSource, shared: str | None = None) -> None:
        """Show another pool from now on: the proxy was rebuilt on new settings, or the
        window attached to the proxy at ``shared`` (a URL) or detached (None)."""
        self.unfollow()
        self.pool = pool
        self.shared = shared
        self._unfollow = (self.model.follow(pool), self.attempts.follow(pool))
        self._update_buttons()
        self._say_target()

    def target_name(self) -> str:
        """Whose pool this is, in a word: "local", or the attached proxy's URL."""
        return self.shared or "local"

    def _say_target(self) -> None:
        if self.shared is None:
            self.target.setText("Accounts of this machine's proxy (local)")
        else:
            self.target.setText(
                f"Accounts of the shared proxy at {self.shared} (attached): Enable and "
                "Disable switch them there, for everyone who uses it"
            )

    def unfollow(self) -> None:
        """Stop following the pool."""
        for unsubscribe in self._unfollow:
            unsubscribe()

    def stop(self) -> None:
        """Let go of the pool and stop the timers (the window is closing)."""
        self.unfollow()
        self.model.stop()
        self.attempts.stop()

    def _selected(self) -> tuple[str, str] | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.key_at(rows[0].row()) if rows else None

    def _update_buttons(self, *_: object) -> None:
        rows = self.table.selectionModel().selectedRows()
        state = self.model.state_at(rows[0].row()) if rows else None
        self.enable.setEnabled(state is not None and state.status != "active")
        self.disable.setEnabled(state is not None and state.status != "disabled")

    def _enable(self) -> None:
        self._switch("enable")

    def _disable(self) -> None:
        self._switch("disable")

    def _switch(self, action: str) -> None:
        """Switch the selected account: at once on this machine's pool; on a shared one
        once the user has confirmed it in :attr:`confirm` (opened, never exec(): the
        qasync loop keeps running)."""
        key = self._selected()
        if key is None:
            return
        pool, shared = self.pool, self.shared
        switch = pool.enable if action == "enable" else pool.disable
        if shared is None:
            switch(*key)
            return
        upstream, account = key
        effect = (
            "its clients' requests may use it again"
            if action == "enable"
            else "no request through it uses this account until someone enables it"
        )
        box = QMessageBox(
            QMessageBox.Icon.Question,
            f"{action.capitalize()} on the shared proxy?",
            f"{action.capitalize()} {upstream}/{account} on the shared proxy at {shared}?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setInformativeText(f"Every client and replica of that proxy shares its pool: {effect}.")
        go = box.addButton(action.capitalize(), QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def answered() -> None:
            # Only the pool it was asked about: an answer after a detach does nothing.
            if box.clickedButton() is go and self.pool is pool:
                switch(upstream, account)
            self.confirm = None

        box.finished.connect(answered)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.confirm = box
        box.open()


__all__ = ["PoolPanel"]
