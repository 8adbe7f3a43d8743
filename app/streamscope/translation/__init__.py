"""Translation of a stream: decode with one codec, encode with another, frame by frame.

``pipeline`` is the one path every proxied stream takes (repair or passthrough, with
the error frame a broken upstream needs); ``offline`` drives it over a whole recording
(the ``translate`` command). Request translation is the codecs' own
(``Codec.decode_request``/``encode_request`` through the canonical request).
"""

from streamscope.translation.offline import translate_frames
from streamscope.translation.pipeline import StreamPipeline

__all__ = ["StreamPipeline", "translate_frames"]
