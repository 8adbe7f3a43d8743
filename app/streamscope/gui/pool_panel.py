"""The account-pool panel: every upstream's accounts, live from the pool's events, with
enable and disable (the pool's own methods: the panel decides nothing)."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTableView, QVBoxLayout, QWidget

from streamscope.gui.models.pool import PoolModel
from streamscope.pool.pool import AccountPool


class PoolPanel(QWidget):
    def __init__(self, pool: AccountPool) -> None:
        super().__init__()
        self.pool = pool
        self.model = PoolModel(parent=self)
        self.unfollow = self.model.follow(pool)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.enable = QPushButton("Enable")
        self.disable = QPushButton("Disable")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.enable)
        buttons.addWidget(self.disable)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.enable.clicked.connect(self._enable)
        self.disable.clicked.connect(self._disable)

    def stop(self) -> None:
        """Let go of the pool and stop the countdown (the window is closing)."""
        self.unfollow()
        self.model.stop()

    def _selected(self) -> tuple[str, str] | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.key_at(rows[0].row()) if rows else None

    def _enable(self) -> None:
        key = self._selected()
        if key is not None:
            self.pool.enable(*key)

    def _disable(self) -> None:
        key = self._selected()
        if key is not None:
            self.pool.disable(*key)


__all__ = ["PoolPanel"]
