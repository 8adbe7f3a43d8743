"""The demo backend: an upstream inside the app that works offline.

``scenarios`` turns a request into timed canonical events (``demo-chat``, ``demo-tools``,
...), ``harmless`` says which of a client's tools ``demo-tools`` may call, ``schema_args``
makes tool arguments from JSON Schemas, ``replay`` finds recorded streams to play back
(``replay/<name>``), and ``upstream`` serves all of it to the proxy in whichever protocol
it is asked, with account faults for the pool to classify.
"""
