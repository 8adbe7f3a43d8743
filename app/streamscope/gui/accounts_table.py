"""An upstream's accounts as an editable table — name, key, weight, balance — whose keys
are shown masked (their last four characters) unless revealed.

A masked key cell is edited blind: its editor is a password field that starts empty,
and what is typed (when anything) replaces the key. The table holds the accounts as the
config's fields, numbers as typed: the pydantic model parses and judges them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLineEdit,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from streamscope.redact import mask

SECRET = Qt.ItemDataRole.UserRole  # a key cell's real key; a name cell's account fields
NAME, KEY, WEIGHT, BALANCE = range(4)


def shown(key: str, revealed: bool) -> str:
    """A key as a widget may show it."""
    if not key:
        return ""
    return key if revealed else mask(key)


def _number(value: Any) -> str:
    """A number for a cell (as typed, when the model has not parsed it yet)."""
    if value is None or isinstance(value, str):
        return value or ""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)  # never round a value away


class KeyDelegate(QStyledItemDelegate):
    """Edits a key cell: the real key when revealed, else a blank password field."""

    def __init__(self, table: AccountsTable) -> None:
        super().__init__(table)
        self.table = table

    def createEditor(  # noqa: N802 - Qt's name
        self,
        parent: QWidget,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> QWidget:
        editor = QLineEdit(parent)
        if not self.table.revealed:
            editor.setEchoMode(QLineEdit.EchoMode.Password)
            editor.setPlaceholderText("type a new key")
        return editor

    def setEditorData(  # noqa: N802 - Qt's name
        self, editor: QWidget, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        assert isinstance(editor, QLineEdit)
        editor.setText((index.data(SECRET) or "") if self.table.revealed else "")

    def setModelData(  # noqa: N802 - Qt's name
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        assert isinstance(editor, QLineEdit)
        key = editor.text().strip()
        if key or self.table.revealed:
            model.setData(index, key, SECRET)
            model.setData(index, shown(key, self.table.revealed))
        editor.clear()  # it lives on until deleted later: no key left in it meanwhile


class AccountsTable(QTableWidget):
    def __init__(self) -> None:
        super().__init__(0, 4)
        self.revealed = False
        self.setHorizontalHeaderLabels(["Name", "Key", "Weight", "Balance"])
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setVisible(False)
        self.setItemDelegateForColumn(KEY, KeyDelegate(self))

    def cell(self, row: int, column: int) -> QTableWidgetItem:
        """The item of a cell (created empty if the cell has none)."""
        item = self.item(row, column)
        if item is None:
            item = QTableWidgetItem("")
            self.setItem(row, column, item)
        return item

    def set_accounts(self, accounts: list[dict[str, Any]]) -> None:
        self.setRowCount(0)
        for account in accounts:
            self.add(account)

    def add(self, account: dict[str, Any]) -> None:
        row = self.rowCount()
        self.insertRow(row)
        self.cell(row, NAME).setText(account["name"])
        # The name cell keeps the fields the table does not show (a demo account's fault).
        self.cell(row, NAME).setData(SECRET, account)
        self.cell(row, KEY).setData(SECRET, account["api_key"])
        self.cell(row, KEY).setText(shown(account["api_key"], self.revealed))
        self.cell(row, KEY).setToolTip("Double-click to type a new key")
        self.cell(row, WEIGHT).setText(_number(account["weight"]))
        self.cell(row, BALANCE).setText(_number(account["balance"]))

    def account(self, row: int) -> dict[str, Any]:
        """A row as the account's fields."""
        return {
            **(self.cell(row, NAME).data(SECRET) or {}),
            "name": self.cell(row, NAME).text().strip(),
            "api_key": self.cell(row, KEY).data(SECRET) or "",
            "weight": self.cell(row, WEIGHT).text().strip() or 1.0,
            "balance": self.cell(row, BALANCE).text().strip() or None,
        }

    def accounts(self) -> list[dict[str, Any]]:
        return [self.account(row) for row in range(self.rowCount())]

    def add_new(self) -> None:
        """A new account, named ``accountN``, with its key cell open for typing."""
        taken = {a["name"] for a in self.accounts()}
        name = next(f"account{n}" for n in range(1, len(taken) + 2) if f"account{n}" not in taken)
        self.add({"name": name, "api_key": "", "weight": 1.0, "balance": None})
        row = self.rowCount() - 1
        self.setCurrentCell(row, KEY)
        self.editItem(self.cell(row, KEY))

    def set_revealed(self, revealed: bool) -> None:
        self.revealed = revealed
        for row in range(self.rowCount()):
            item = self.cell(row, KEY)
            item.setText(shown(item.data(SECRET), revealed))


__all__ = ["AccountsTable", "KeyDelegate", "shown"]
