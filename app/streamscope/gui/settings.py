"""The Settings dialog: the config's proxy, upstreams (with their accounts) and aliases as
widgets, saved to the config file and run by the proxy control.

It edits a copy of ``control.config``; settings it shows no widget for (models, demo
pace, capture, pool rules, ...) pass through untouched. It maps widgets to the config's
fields and nothing more: :meth:`SettingsDialog.result_config` hands them to the pydantic
model, whose errors are shown in the dialog, and Save hands the result to
:meth:`ProxyControl.apply` (which saves and restarts). Keys are shown masked (their last
four characters) until Reveal is pressed; a masked key cell is edited blind, in a
password field that starts empty.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, get_args

from pydantic import SecretStr, ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from streamscope.config import (
    Config,
    ConfigError,
    Strategy,
    UpstreamConfig,
    UpstreamProtocol,
    describe_errors,
    generate_local_key,
)
from streamscope.gui.accounts_table import AccountsTable, shown
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.theme import tint

KEY = Qt.ItemDataRole.UserRole  # where a local key's item keeps the real key
PROTOCOLS: tuple[str, ...] = get_args(UpstreamProtocol)
MODES: tuple[str, ...] = get_args(UpstreamConfig.model_fields["mode"].annotation)
STRATEGIES: tuple[str, ...] = get_args(Strategy)

# What the upstream form's choices mean (the README's "Add a real upstream" and "Accounts:
# the pool", in a line each): shown under the form and on each choice's tooltip.
MODE_HELP = {
    "repair": "the upstream's stream is decoded and encoded again: broken streams are"
    " fixed, and any client protocol can use this upstream",
    "passthrough": "a client of the upstream's protocol gets the upstream's bytes"
    " unchanged (what it really sent); other clients are translated",
}
STRATEGY_HELP = {
    "lru": "each request takes the account least recently used",
    "balance": "the account with the highest known balance (idle ones first)",
    "round_robin": "the accounts in turn, in the order listed",
    "weighted": "the accounts in turn, each as often as its weight",
}
RETRIES_HELP = "how many distinct accounts a request may try, one after another, when one fails"
BASE_URL_EXAMPLES = {
    "openai-chat": "https://api.example.com/v1",
    "responses": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
    "lmstudio": "http://localhost:1234",
    "demo": "none: the demo backend is built in",
}


class Seconds(QDoubleSpinBox):
    """Seconds as written: ``15 s``, ``0.25 s`` (the box's own ``15.000 s`` misleads)."""

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt's name
        return f"{value:g}"


def _explain(combo: QComboBox, help_: dict[str, str]) -> None:
    """Each choice's meaning on its tooltip (in the drop-down, and on the box)."""
    for i in range(combo.count()):
        combo.setItemData(i, help_.get(combo.itemText(i), ""), Qt.ItemDataRole.ToolTipRole)
    combo.currentTextChanged.connect(lambda text: combo.setToolTip(help_.get(text, "")))


def _buttons(*labels: str) -> tuple[QHBoxLayout, list[QPushButton]]:
    row = QHBoxLayout()
    buttons = [QPushButton(label) for label in labels]
    for b in buttons:
        row.addWidget(b)
    row.addStretch(1)
    return row, buttons


class SettingsDialog(QDialog):
    """Open with ``open()`` (never ``exec()``: the window's qasync loop must keep
    running). ``applied`` is emitted with :meth:`ProxyControl.apply`'s result after a
    Save; the dialog closes itself when it succeeded."""

    applied = Signal(bool)

    def __init__(self, control: ProxyControl, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.control = control
        self.config = control.config.model_copy(deep=True)
        self.revealed = False
        self.pending: asyncio.Future[bool] | None = None  # the last Save's apply()
        self._upstreams: list[dict[str, Any]] = [
            _revealed(u.model_dump()) for u in self.config.upstreams
        ]
        self._current = -1  # the upstream shown in the form
        self.tabs = tabs = QTabWidget()
        tabs.addTab(self._proxy_page(), "Proxy")
        tabs.addTab(self._upstreams_page(), "Upstreams")
        tabs.addTab(self._aliases_page(), "Aliases")
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        self.reveal = QPushButton("Reveal keys")
        self.reveal.setCheckable(True)
        self.reveal.toggled.connect(self._set_revealed)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.buttons.accepted.connect(self._save)
        self.buttons.rejected.connect(self.reject)
        bottom = QHBoxLayout()
        bottom.addWidget(self.reveal)
        bottom.addStretch(1)
        bottom.addWidget(self.buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        layout.addWidget(self.error)
        layout.addLayout(bottom)
        self.resize(760, 560)
        self.upstream_list.setCurrentRow(0 if self._upstreams else -1)
        self._show_upstream(self.upstream_list.currentRow())

    # -- pages ----------------------------------------------------------------------------

    def _proxy_page(self) -> QWidget:
        proxy = self.config.proxy
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setValue(proxy.port)
        self.port.setToolTip("0: any free port")
        self.keepalive = Seconds()
        self.keepalive.setRange(0, 86400)
        self.keepalive.setDecimals(3)
        self.keepalive.setValue(proxy.keepalive_seconds)
        self.keepalive.setSuffix(" s")
        self.keepalive.setToolTip('A ": keepalive" comment during upstream silence; 0: off')
        self.keys = QListWidget()
        for key in proxy.api_keys:
            self._add_local_key(key.get_secret_value())
        self.new_key = QLineEdit()
        self.new_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.new_key.setPlaceholderText("paste a key a client already has")
        row, (self.add_key, self.generate_key, self.remove_key) = _buttons(
            "Add", "Generate key", "Remove"
        )
        row.insertWidget(0, self.new_key, 1)
        self.add_key.clicked.connect(self._add_typed_key)
        self.generate_key.clicked.connect(lambda: self._add_local_key(generate_local_key()))
        self.remove_key.clicked.connect(lambda: self.keys.takeItem(self.keys.currentRow()))
        page = QWidget()
        form = QFormLayout(page)
        form.addRow("Port", self.port)
        form.addRow("Keepalive", self.keepalive)
        form.addRow(QLabel("Local keys (clients send one of these):"))
        form.addRow(self.keys)
        form.addRow(row)
        return page

    def _upstreams_page(self) -> QWidget:
        self.upstream_list = QListWidget()
        for u in self._upstreams:
            self.upstream_list.addItem(u["name"])
        list_row, (self.add_upstream, self.remove_upstream) = _buttons("Add", "Remove")
        left = QVBoxLayout()
        left.addWidget(self.upstream_list)
        left.addLayout(list_row)
        self.name = QLineEdit()
        self.protocol = QComboBox()
        self.protocol.addItems(list(PROTOCOLS))
        self.base_url = QLineEdit()
        self.mode = QComboBox()
        self.mode.addItems(list(MODES))
        _explain(self.mode, MODE_HELP)
        self.default = QCheckBox("the default upstream (for models no other one has)")
        self.strategy = QComboBox()
        self.strategy.addItems(list(STRATEGIES))
        _explain(self.strategy, STRATEGY_HELP)
        self.max_retries = QSpinBox()
        self.max_retries.setRange(1, 1000)
        self.max_retries.setToolTip(RETRIES_HELP)
        self.upstream_help = tint(QLabel(), "muted")  # what the chosen mode and strategy do
        self.upstream_help.setWordWrap(True)
        self.accounts = AccountsTable()
        account_row, (self.add_account, self.remove_account) = _buttons(
            "Add account", "Remove account"
        )
        self.form = QWidget()
        form = QFormLayout(self.form)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Name", self.name)
        form.addRow("Protocol", self.protocol)
        form.addRow("Base URL", self.base_url)
        form.addRow("Mode", self.mode)
        form.addRow("", self.default)
        form.addRow("Strategy", self.strategy)
        form.addRow("Accounts tried", self.max_retries)
        form.addRow(self.upstream_help)
        form.addRow(self.accounts)
        form.addRow(account_row)
        page = QWidget()
        layout = QHBoxLayout(page)
        layout.addLayout(left, 1)
        layout.addWidget(self.form, 3)
        self.upstream_list.currentRowChanged.connect(self._select_upstream)
        self.name.textEdited.connect(self._rename_upstream)
        self.protocol.currentTextChanged.connect(self._explain_upstream)
        self.mode.currentTextChanged.connect(self._explain_upstream)
        self.strategy.currentTextChanged.connect(self._explain_upstream)
        self.add_upstream.clicked.connect(self._new_upstream)
        self.remove_upstream.clicked.connect(self._drop_upstream)
        self.add_account.clicked.connect(self.accounts.add_new)
        self.remove_account.clicked.connect(
            lambda: self.accounts.removeRow(self.accounts.currentRow())
        )
        return page

    def _aliases_page(self) -> QWidget:
        self.aliases = QTableWidget(0, 2)
        self.aliases.setHorizontalHeaderLabels(["Model a client asks for", "Routed to"])
        self.aliases.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.aliases.verticalHeader().setVisible(False)
        for alias, target in self.config.aliases.items():
            self._add_alias(alias, target)
        row, (self.add_alias, self.remove_alias) = _buttons("Add", "Remove")
        self.add_alias.clicked.connect(self._new_alias)
        self.remove_alias.clicked.connect(lambda: self.aliases.removeRow(self.aliases.currentRow()))
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(QLabel("upstream/model, or a model name routed as usual"))
        layout.addWidget(self.aliases)
        layout.addLayout(row)
        return page

    # -- local keys -------------------------------------------------------------------------

    def _add_local_key(self, key: str) -> None:
        item = QListWidgetItem(shown(key, self.revealed))
        item.setData(KEY, key)
        self.keys.addItem(item)

    def _add_typed_key(self) -> None:
        key = self.new_key.text().strip()
        self.new_key.clear()
        if key:
            self._add_local_key(key)

    def _set_revealed(self, revealed: bool) -> None:
        self.revealed = revealed
        self.reveal.setText("Hide keys" if revealed else "Reveal keys")
        for i in range(self.keys.count()):
            key_item = self.keys.item(i)
            key_item.setText(shown(key_item.data(KEY), revealed))
        self.accounts.set_revealed(revealed)

    # -- upstreams --------------------------------------------------------------------------

    def _select_upstream(self, row: int) -> None:
        self._store_upstream()
        self._show_upstream(row)

    def _show_upstream(self, row: int) -> None:
        self._current = row
        self.form.setEnabled(row >= 0)
        self.accounts.set_accounts([])
        if row < 0:
            return
        u = self._upstreams[row]
        self.name.setText(u["name"])
        self.protocol.setCurrentText(u["protocol"])
        self.base_url.setText(u["base_url"])
        self.mode.setCurrentText(u["mode"])
        self.default.setChecked(bool(u["default"]))
        self.strategy.setCurrentText(u["strategy"])
        self.max_retries.setValue(int(u["max_retries"]))
        self.accounts.set_accounts(u["accounts"])
        self._explain_upstream()

    def _explain_upstream(self) -> None:
        """The base URL's example for the protocol, and the chosen mode and strategy in
        words (the demo is built in: it has no URL)."""
        protocol = self.protocol.currentText()
        self.base_url.setPlaceholderText(BASE_URL_EXAMPLES.get(protocol, ""))
        self.base_url.setEnabled(protocol != "demo" or bool(self.base_url.text()))
        self.upstream_help.setText(
            f"{self.mode.currentText()}: {MODE_HELP.get(self.mode.currentText(), '')}\n"
            f"{self.strategy.currentText()}: {STRATEGY_HELP.get(self.strategy.currentText(), '')}"
            f"\nAccounts tried: {RETRIES_HELP}"
        )

    def _store_upstream(self) -> None:
        """The form's values into the upstream it shows."""
        if not 0 <= self._current < len(self._upstreams):
            return
        u = self._upstreams[self._current]
        u.update(
            name=self.name.text().strip(),
            protocol=self.protocol.currentText(),
            base_url=self.base_url.text().strip(),
            mode=self.mode.currentText(),
            default=self.default.isChecked(),
            strategy=self.strategy.currentText(),
            max_retries=self.max_retries.value(),
            accounts=self.accounts.accounts(),
        )

    def _rename_upstream(self, name: str) -> None:
        item = self.upstream_list.item(self._current)
        if item is not None:
            item.setText(name)

    def _new_upstream(self) -> None:
        taken = {u["name"] for u in self._upstreams}
        name = next(f"upstream{n}" for n in range(1, len(taken) + 2) if f"upstream{n}" not in taken)
        self._store_upstream()
        fresh = UpstreamConfig(name=name, protocol="demo").model_dump()
        self._upstreams.append(_revealed({**fresh, "protocol": "openai-chat"}))
        self.upstream_list.addItem(name)
        self.upstream_list.setCurrentRow(len(self._upstreams) - 1)
        self.name.setFocus()

    def _drop_upstream(self) -> None:
        row = self._current
        if row < 0:
            return
        self._current = -1  # nothing to store: it is going
        del self._upstreams[row]
        self.upstream_list.takeItem(row)
        self._show_upstream(self.upstream_list.currentRow())

    # -- aliases ----------------------------------------------------------------------------

    def _add_alias(self, alias: str, target: str) -> QTableWidgetItem:
        row = self.aliases.rowCount()
        self.aliases.insertRow(row)
        alias_item = QTableWidgetItem(alias)
        self.aliases.setItem(row, 0, alias_item)
        self.aliases.setItem(row, 1, QTableWidgetItem(target))
        return alias_item

    def _new_alias(self) -> None:
        self.aliases.editItem(self._add_alias("", ""))

    def _alias_rows(self) -> list[tuple[str, str]]:
        rows = []
        for row in range(self.aliases.rowCount()):
            cells = [self.aliases.item(row, c) for c in (0, 1)]
            alias, target = (c.text().strip() if c is not None else "" for c in cells)
            if alias or target:
                rows.append((alias, target))
        return rows

    # -- the result -------------------------------------------------------------------------

    def result_config(self) -> Config | None:
        """The config the widgets say, validated; None (and the reason shown in the
        dialog) when the model rejects it."""
        self._store_upstream()
        aliases = self._alias_rows()
        names = [alias for alias, _ in aliases]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            self._show_error(f"Not saved — aliases: listed more than once: {', '.join(twice)}")
            return None
        data = self.config.model_dump()
        data["proxy"].update(
            port=self.port.value(),
            keepalive_seconds=self.keepalive.value(),
            api_keys=[self.keys.item(i).data(KEY) for i in range(self.keys.count())],
        )
        data["upstreams"] = copy.deepcopy(self._upstreams)
        data["aliases"] = dict(aliases)
        try:
            config = Config.model_validate(data)
        except ValidationError as exc:
            self._show_error(f"Not saved — {describe_errors(exc)}")
            return None
        self._show_error("")
        return config

    def _show_error(self, problem: str) -> None:
        self.error.setText(problem)
        self.error.setVisible(bool(problem))

    def _save(self) -> None:
        config = self.result_config()
        if config is None or (self.pending is not None and not self.pending.done()):
            return
        self.save.setEnabled(False)
        self.pending = asyncio.ensure_future(self._apply(config))

    async def _apply(self, config: Config) -> bool:
        try:
            ok = await self.control.apply(config)
        except (ConfigError, OSError) as exc:
            self._show_error(f"Not saved — {exc}")
            ok = False
        else:
            if not ok:
                self._show_error(f"Saved, but the proxy did not start: {self.control.error}")
        finally:
            self.save.setEnabled(True)
        self.applied.emit(ok)
        if ok:
            self.accept()
        return ok


def _revealed(data: dict[str, Any]) -> dict[str, Any]:
    """An upstream's dump with its account keys as plain strings (the widgets' values)."""
    for account in data["accounts"]:
        key = account["api_key"]
        account["api_key"] = key.get_secret_value() if isinstance(key, SecretStr) else key
    return data


__all__ = ["SettingsDialog"]
