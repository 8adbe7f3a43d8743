"""What the LM Studio codec knows of the native ``/api/v1/chat`` API, by place
(:mod:`streamscope.codecs.vocabulary`). LM Studio publishes no SDK types to walk; the
names are its REST documentation's."""

from __future__ import annotations

from streamscope.codecs.vocabulary import Vocabulary, names

VOCABULARY = Vocabulary(
    "lmstudio",
    {
        "request": {
            **names(
                "mapped",
                "model input system_prompt stream temperature top_p top_k "
                "max_output_tokens reasoning",
            ),
            **names(
                "carried",
                "integrations min_p repeat_penalty context_length store previous_response_id",
            ),
        },
        "input.item": names("mapped", "message image"),
    },
)
"""The LM Studio codec's declared vocabulary."""
