"""StreamScope: a workbench and local proxy that makes LLM streaming APIs visible and correct.

The package is split so the architecture shows in the tree:

- ``wire``    SSE bytes <-> frames (exact raw bytes, arrival times), the frame encoder;
- ``model``   the canonical stream events, request and response (no protocol knowledge);
- ``codecs``  one package per protocol: decode wire -> canonical, encode canonical -> wire;
- ``cli``     the ``streamscope`` command.

Nothing outside ``gui`` may import Qt.
"""

__version__ = "0.1.0"
