"""Analysis: what a captured leg means, read once.

``decode`` is the one frame -> event driver (frames numbered as the frames table shows
them); ``reading.LegReading`` decodes a leg once and gives every view of it — the
numbered events, the assembled answer, the timing figures and chart series
(``timing``), the lint report; ``view`` is a flow as the admin API, the store's summary
and the verdicts read it; ``har_lint`` lints a HAR file's entries. ``capture`` only
stores: nothing here changes a flow.

This package's ``__init__`` imports nothing, so the linter can use ``decode`` without a
cycle (``reading`` imports the linter).
"""
