"""What the Anthropic codec knows of the Messages API, by place
(:mod:`streamscope.codecs.vocabulary`): the request decoder (:mod:`.request`) maps the
``mapped`` names and carries every other name it meets; the stream decoder does the same
for events, blocks and deltas."""

from __future__ import annotations

from streamscope.codecs.vocabulary import Vocabulary, names

# Blocks with no canonical slot: server tools' calls and results, documents, search
# results, uploads. They go back to an Anthropic upstream where they stood.
SERVER_BLOCKS = (
    "server_tool_use web_search_tool_result web_fetch_tool_result code_execution_tool_result "
    "bash_code_execution_tool_result text_editor_code_execution_tool_result "
    "tool_search_tool_result container_upload"
)
CONTENT = {
    **names("mapped", "text image tool_use tool_result thinking redacted_thinking"),
    **names("carried", "document search_result " + SERVER_BLOCKS),
}

VOCABULARY = Vocabulary(
    "anthropic",
    {
        "request": {
            **names(
                "mapped",
                "model messages system max_tokens stop_sequences stream tools tool_choice "
                "thinking metadata output_config temperature top_p top_k",
            ),
            **names(
                "carried",
                "cache_control container diagnostics inference_geo service_tier speed "
                "user_profile_id workspace_id context_management mcp_servers",
            ),
        },
        "message.role": names("mapped", "user assistant system"),
        "user.content": CONTENT,
        "assistant.content": CONTENT,
        "system.content": names("mapped", "text"),
        "tool_result.content": {
            **names("mapped", "text image"),
            **names("carried", "document search_result tool_reference browser_state"),
        },
        "tool": {
            **names("mapped", "custom"),
            **names(
                "carried",
                "bash_20250124 code_execution_20250522 code_execution_20250825 "
                "code_execution_20260120 code_execution_20260521 browser_toolset_20260801 "
                "memory_20250818 computer_toolset_20260801 text_editor_20250124 "
                "text_editor_20250429 text_editor_20250728 web_search_20250305 "
                "web_fetch_20250910 web_search_20260209 web_fetch_20260209 web_fetch_20260309 "
                "web_search_20260318 web_fetch_20260318 tool_search_tool_bm25_20251119 "
                "tool_search_tool_bm25 tool_search_tool_regex_20251119 tool_search_tool_regex",
            ),
        },
        "tool_choice": names("mapped", "auto any tool none"),
        "thinking": {
            **names("mapped", "enabled disabled adaptive"),
            **names("carried", "between_tools"),
        },
        "output_config": names("mapped", "effort format"),
        "image.source": {**names("mapped", "base64 url"), **names("carried", "file")},
        "document.source": names("carried", "base64 content file text url"),
        # Citations on a text block the client sends back: Anthropic's own (the request
        # goes to it as sent); another protocol has no place for them (noted).
        "citation": names(
            "dropped",
            "char_location content_block_location page_location search_result_location "
            "web_search_result_location",
        ),
        "stream.citation": names(
            "carried",
            "char_location content_block_location page_location search_result_location "
            "web_search_result_location",
        ),
        "stream.event": names(
            "mapped",
            "message_start message_delta message_stop content_block_start "
            "content_block_delta content_block_stop ping error",
        ),
        "stream.block": {
            **names("mapped", "text thinking redacted_thinking tool_use"),
            **names("carried", SERVER_BLOCKS),
        },
        "stream.delta": {
            **names("mapped", "text_delta input_json_delta thinking_delta signature_delta"),
            **names("carried", "citations_delta"),
        },
    },
)
"""The Anthropic codec's declared vocabulary."""
