"""The client pane's model list at the window's default size shows
each model's whole name (it read ``replay/broken/r…-no-annotations``): the combo stays
narrow, its popup is as wide as its longest name (gui/widgets.elide_combo)."""

from __future__ import annotations

import pytest

from tests.gui.support import open_window, wait_until
from tests.proxy.harness import make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]


@pytest.mark.qasync
async def test_the_model_popup_fits_the_longest_name_at_the_default_size() -> None:
    async with open_window(make_config(DEMO)) as window:
        assert (window.width(), window.height()) == (1360, 860)
        await wait_until(lambda: window.control.running, 5.0)
        combo = window.client.model
        window.client.refresh_models.click()  # the proxy's models, as the user lists them
        await wait_until(lambda: combo.count() > 10, 5.0)
        names = [combo.itemText(i) for i in range(combo.count())]
        assert any(n.startswith("replay/broken/") for n in names)
        longest = max(names, key=combo.view().fontMetrics().horizontalAdvance)
        combo.showPopup()
        view = combo.view()
        try:
            await wait_until(view.isVisible, 2.0)
            need = view.fontMetrics().horizontalAdvance(longest)
            assert view.viewport().width() >= need, (longest, view.viewport().width(), need)
            assert combo.width() < need  # the combo itself stays narrow
        finally:
            combo.hidePopup()
