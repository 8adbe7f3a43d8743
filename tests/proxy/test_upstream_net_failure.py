"""The one mapping of the network's failures to the proxy's answers
(:func:`streamscope.proxy.upstream.net_failure`), row by row: what each failure of the
family becomes before the client's stream began, and whether the pool sees a ``network``
failure (an :class:`UpstreamUnreachable`: the next account) or the server's doing (an
:class:`UpstreamUnreadable`: no account blamed)."""

from __future__ import annotations

import pytest

from streamscope.model.errors import ProxyError, UpstreamUnreachable, UpstreamUnreadable
from streamscope.net import errors
from streamscope.proxy.upstream import net_failure

ROWS = [
    # failure, status, code, what the account loop makes of it
    (errors.AnswerTooLarge("over 4 MiB", 4), 502, "upstream_too_large", UpstreamUnreadable),
    (errors.DecodingError("corrupt gzip"), 502, "upstream_unreadable", UpstreamUnreadable),
    (errors.LocalProtocolError("a line break"), 502, "upstream_error", ProxyError),
    (errors.UnsupportedProtocol("ftp://"), 502, "upstream_error", ProxyError),
    (errors.ConnectTimeout("no connection"), 504, "upstream_timeout", UpstreamUnreachable),
    (errors.ReadTimeout("no answer"), 504, "upstream_timeout", UpstreamUnreachable),
    (errors.WriteTimeout("no bytes taken"), 504, "upstream_timeout", UpstreamUnreachable),
    (errors.ConnectError("refused"), 502, "upstream_unreachable", UpstreamUnreachable),
    (errors.ReadError("reset"), 502, "upstream_unreachable", UpstreamUnreachable),
    (errors.WriteError("reset"), 502, "upstream_unreachable", UpstreamUnreachable),
    (errors.RemoteProtocolError("not HTTP"), 502, "upstream_unreachable", UpstreamUnreachable),
    (errors.NetError("anything else"), 502, "upstream_unreachable", UpstreamUnreachable),
]


@pytest.mark.parametrize(("failure", "status", "code", "kind"), ROWS)
def test_each_failure_of_the_family_has_one_answer(
    failure: errors.NetError, status: int, code: str, kind: type[ProxyError]
) -> None:
    answer = net_failure(failure, "upstream u at http://u")
    assert (answer.status, answer.error.code) == (status, code)
    assert type(answer) is kind
    assert str(failure) in answer.error.message  # what failed is said
    if not isinstance(failure, errors.AnswerTooLarge):
        assert answer.error.message.startswith("upstream u at http://u")
