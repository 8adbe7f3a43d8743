"""The local proxy: an ASGI app (``app``), its upstream client (``upstream``), model
routing (``routing``), the per-request stream relay (``relay``) and the embeddable server
(``server``). Protocol knowledge stays in the codecs; this package moves bytes."""
