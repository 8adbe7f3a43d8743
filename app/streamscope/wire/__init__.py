"""SSE on the wire: bytes in, frames out (with their exact bytes and arrival times), and back."""

from streamscope.wire.decoder import DEFAULT_MAX_LINE_BYTES, FrameTooLarge, SSEDecoder, decode_all
from streamscope.wire.encoder import encode_comment, encode_done, encode_frame
from streamscope.wire.frame import Frame

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "Frame",
    "FrameTooLarge",
    "SSEDecoder",
    "decode_all",
    "encode_comment",
    "encode_done",
    "encode_frame",
]
