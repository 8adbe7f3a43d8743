"""Responses conversation state: what the proxy answered before, kept so that a client
may refer back to it.

A Responses client may name earlier items by id (``item_reference`` input items) or a
whole earlier answer (``previous_response_id``, with ``store``, which defaults to true).
When the ids are ones this proxy handed out (its Responses encoder mints them over a
translated upstream, and in repair mode over a Responses upstream too), only the proxy
can say what they were. This package keeps its recent answers and resolves such ids:

- ``answers``: an answer as kept (:class:`~streamscope.conversation.answers.Answer`), the
  limits, and the in-memory store (one machine);
- ``pg_rows``: the same answers in the PostgreSQL database replicas share;
- ``store``: :class:`~streamscope.conversation.store.Conversations`, the one the core
  owns: memory first, then the database when there is one;
- ``resolve``: the pure function that rewrites a Responses request body with what was
  found, for the route's upstream, and says what it changed;
- ``turn``: the proxy's two hooks: before the request is read (resolution) and as the
  client's answer goes out (recording it).

Where it sits: below ``proxy`` (which calls it), above ``storage``, ``config``, ``model``
and ``wire`` (which it uses). It works on the Responses request and response JSON, not
through a codec: the codecs translate one request or stream with no memory between
requests, and this is memory between requests. It imports no protocol package.
"""
