"""An upstream's accounts as an editable table (app/streamscope/gui/accounts_table.py): the
rows give back the account's fields (numbers as typed, the fields it does not show kept),
keys are shown masked unless revealed, and a masked key is edited blind: its editor
starts empty and only what is typed replaces it. (In the settings dialog:
tests/gui/test_settings.py.)"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit, QStyleOptionViewItem

from streamscope.gui.accounts_table import KEY, NAME, SECRET, AccountsTable, shown
from streamscope.redact import mask

MAIN = "sk-main-0123456789-abcd"
SPARE = "sk-spare-9876543210-wxyz"
ACCOUNTS: list[dict[str, Any]] = [
    {"name": "main", "api_key": MAIN, "weight": 1.0, "balance": None},
    {"name": "spare", "api_key": SPARE, "weight": 0.1 + 0.2, "balance": 12.5, "fault": "429"},
]


def key_cells(table: AccountsTable) -> list[str]:
    return [table.cell(row, KEY).text() for row in range(table.rowCount())]


def edit_key(table: AccountsTable, row: int, typed: str | None) -> str:
    """Open the key cell's editor as the view does, type ``typed`` (None: nothing) and
    commit; what the editor showed when it opened."""
    delegate = table.itemDelegateForColumn(KEY)
    index = table.model().index(row, KEY)
    editor = delegate.createEditor(table.viewport(), QStyleOptionViewItem(), index)
    assert isinstance(editor, QLineEdit)
    delegate.setEditorData(editor, index)
    opened = editor.text()
    masked = editor.echoMode() == QLineEdit.EchoMode.Password
    assert masked != table.revealed
    if typed is not None:
        editor.setText(typed)
    delegate.setModelData(editor, table.model(), index)
    assert editor.text() == ""  # no key left in an editor that lives on
    editor.deleteLater()
    return opened


def test_shown_masks_a_key_unless_revealed() -> None:
    assert shown(MAIN, revealed=False) == mask(MAIN) == "…abcd"
    assert shown(MAIN, revealed=True) == MAIN
    assert shown("", revealed=False) == shown("", revealed=True) == ""


def test_the_rows_are_the_accounts_fields(qapp: QApplication) -> None:
    table = AccountsTable()
    table.set_accounts(ACCOUNTS)
    assert key_cells(table) == ["…abcd", "…wxyz"]
    assert [table.cell(1, c).text() for c in (NAME, 2, 3)] == [
        "spare",
        repr(0.1 + 0.2),  # never rounded away: 0.30000000000000004 is what the config says
        "12.5",
    ]
    assert table.accounts() == [
        {"name": "main", "api_key": MAIN, "weight": "1", "balance": None},
        # the fields the table does not show (a demo account's fault) come back too
        {"name": "spare", "api_key": SPARE, "weight": repr(0.1 + 0.2), "balance": "12.5",
         "fault": "429"},
    ]  # fmt: skip
    table.cell(0, 2).setText("  ")
    table.cell(0, NAME).setText(" primary ")
    assert table.account(0) == {"name": "primary", "api_key": MAIN, "weight": 1.0, "balance": None}
    table.set_accounts(ACCOUNTS[:1])  # replaces, not appends
    assert table.rowCount() == 1


def test_reveal_shows_the_keys_and_hides_them_again(qapp: QApplication) -> None:
    table = AccountsTable()
    table.set_accounts(ACCOUNTS)
    table.set_revealed(True)
    assert key_cells(table) == [MAIN, SPARE]
    table.set_revealed(False)
    assert key_cells(table) == ["…abcd", "…wxyz"]
    assert [table.cell(r, KEY).data(SECRET) for r in (0, 1)] == [MAIN, SPARE]


def test_a_masked_key_is_edited_blind(qapp: QApplication) -> None:
    table = AccountsTable()
    table.set_accounts(ACCOUNTS)
    assert edit_key(table, 0, None) == ""  # opened empty, closed with nothing typed
    assert table.account(0)["api_key"] == MAIN  # kept
    assert edit_key(table, 0, "  sk-new-key-5555  ") == ""
    assert table.account(0)["api_key"] == "sk-new-key-5555" and key_cells(table)[0] == "…5555"
    # Revealed: the editor holds the key, and emptying it empties the key.
    table.set_revealed(True)
    assert edit_key(table, 1, "") == SPARE
    assert table.account(1)["api_key"] == "" and key_cells(table)[1] == ""


def test_a_new_account_gets_a_free_name_and_its_key_cell_open(qapp: QApplication) -> None:
    table = AccountsTable()
    table.set_accounts([{**ACCOUNTS[0], "name": "account1"}])
    table.add_new()
    assert table.account(1) == {"name": "account2", "api_key": "", "weight": "1", "balance": None}
    assert table.state() == QAbstractItemView.State.EditingState
    assert (table.currentRow(), table.currentColumn()) == (1, KEY)
    editor = table.findChild(QLineEdit)
    assert editor is not None and editor.echoMode() == QLineEdit.EchoMode.Password
