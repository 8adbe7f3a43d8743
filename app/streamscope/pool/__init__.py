"""The account pool: credentials per upstream, failure classification, live state.

``rules`` classifies failures (a table, extended from the config), ``strategies`` picks
an account, ``state`` holds what is known of each, and ``pool`` ties them together and
emits change events. What outlives the pool is its backend's (``backend``: none, the
SQLite file of ``store``, or, with several replicas on one PostgreSQL database, ``shared``
with its SQL in ``shared_rows`` and its merge rule in ``merge``). What a reader sees, this
pool's or a proxy elsewhere's, is in ``source`` (the snapshot, the events). No Qt, no
HTTP: the proxy's ``attempts`` module drives it.
"""
