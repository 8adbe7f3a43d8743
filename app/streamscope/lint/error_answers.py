"""What each client does with an error answer (HTTP 400 and up, in its protocol's error
envelope): the words a flow's verdict leads with ("openai-node throws APIError 503: no
account"), per profile, as each real client was seen to do it by running it over one
(``tests/lint/test_error_answers.py`` runs them through the real-client runner at 400,
401, 404 and 503 and compares each wording here with what the client raised or printed).

A wording is a template of what follows the client's name: ``{said}`` is the status and
the envelope's message (``503: no account``), ``{status}``, ``{reason}`` (the status's
phrase) and ``{message}`` are its parts. It starts with what the client does:

- ``raises C``, ``throws C``, ``fails with C``: the SDK raises (Python), throws (Node)
  or reports in its stream (the AI SDK's ``streamText``) an error of class ``C`` or of a
  subclass: ``C`` is the class an app catches, whatever the status's own subclass;
- ``prints …``: an agent CLI prints that text (as its run ends on it).

Keys: an exact status (``"404"``), else its class (``"4xx"``, ``"5xx"``). A client or a
status not here gets neutral words (:func:`error_words` gives None): what it does was not
seen, so it is not said.
"""

from __future__ import annotations

from http import HTTPStatus

_PYTHON_SDK = {"4xx": "raises APIStatusError {said}", "5xx": "raises APIStatusError {said}"}
# The AI SDK's streamText reports an HTTP error as an error part of its stream, an
# APICallError named AI_APICallError (ai 6): Cherry Studio's provider layer runs it for
# every provider type.
_AI_SDK = {"4xx": "fails with AI_APICallError {said}", "5xx": "fails with AI_APICallError {said}"}
_NODE_SDK = {"4xx": "throws APIError {said}", "5xx": "throws APIError {said}"}

ERROR_WORDS: dict[str, dict[str, str]] = {
    "openai-python-chat": _PYTHON_SDK,
    "openai-python-responses": _PYTHON_SDK,
    "anthropic-python": _PYTHON_SDK,
    "google-genai-python": {"4xx": "raises ClientError {said}", "5xx": "raises ServerError {said}"},
    "openai-node": _NODE_SDK,  # NotFoundError, InternalServerError, … of its APIError
    "anthropic-node": _NODE_SDK,
    "google-genai-node": {"4xx": "throws ApiError {said}", "5xx": "throws ApiError {said}"},
    **{
        cherry: _AI_SDK
        for cherry in (
            "cherry-openai",
            "cherry-compatible",
            "cherry-responses",
            "cherry-anthropic",
            "cherry-gemini",
            "cherry-deepseek",
            "cherry-xai",
            "cherry-openrouter",
            "cherry-azure",
        )
    },
    # the agent CLIs print it (each run with no retries of its own where it has the
    # setting; Qwen Code asks again on a 5xx first, as its profile says)
    "qwen-code": {
        "4xx": "prints [API Error: {status} {message}]",
        "5xx": "prints [API Error: {status} {message}]",
    },
    "claude-code": {
        # a 404 is taken for a model it cannot use, whatever the body says
        "404": "prints There's an issue with the selected model",
        "4xx": "prints API Error: {status} {message}",
        "5xx": "prints API Error: {status} {message}",
    },
    "codex": {  # a 400 prints the error body as it came
        "401": "prints unexpected status {status} {reason}: {message}",
        "404": "prints unexpected status {status} {reason}: {message}",
        "5xx": "prints unexpected status {status} {reason}: {message}",
    },
    "gemini-cli": {  # a 400 or 401 prints the error body as it came
        "404": "prints [API Error: {message}]",
        "5xx": "prints [API Error: {message}]",
    },
}
"""Per profile, what it does with an error answer, by status (see the module docstring)."""


def error_template(profile: str | None, status: int) -> str | None:
    """The wording template for ``profile`` at ``status`` (None: not known)."""
    words = ERROR_WORDS.get(profile or "", {})
    return words.get(str(status)) or words.get(f"{status // 100}xx")


def error_words(profile: str | None, status: int, message: str = "") -> str | None:
    """What ``profile`` does with an error answer of ``status`` carrying ``message``
    (``raises APIStatusError 503: no account``); None when that was not seen."""
    template = error_template(profile, status)
    if template is None:
        return None
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    said = f"{status}: {message}" if message else str(status)
    return template.format(
        said=said, status=status, reason=reason, message=message or "(no message)"
    )


__all__ = ["ERROR_WORDS", "error_template", "error_words"]
