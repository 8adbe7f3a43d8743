"""The account pool: credentials per upstream, failure classification, live state.

``rules`` classifies failures (a table, extended from the config), ``strategies`` picks
an account, ``state`` holds what is known of each, ``store`` persists it in SQLite and
``pool`` ties them together and emits change events. With several replicas on one
PostgreSQL database, ``shared`` (its SQL in ``shared_rows``, its merge rule in ``merge``)
shares the state among them instead of the store. No Qt, no HTTP: the proxy's
``attempts`` module drives it.
"""
