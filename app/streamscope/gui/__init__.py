"""The desktop app: the only package that imports PySide6 and qasync. It observes the
core (proxy, pool, capture, client sessions) through callbacks and holds no protocol
logic of its own."""
