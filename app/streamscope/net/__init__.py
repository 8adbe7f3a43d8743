"""The network layer: the HTTP clients StreamScope talks to upstreams and targets with,
made in one place (:mod:`.clients`) with one TLS context (:mod:`.tls`), and the lean
HTTP/1.1 client of the proxy's hot path (:mod:`.http1`)."""
