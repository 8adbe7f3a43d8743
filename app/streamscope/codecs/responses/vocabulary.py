"""What the Responses codec knows of the OpenAI Responses API, by place
(:mod:`streamscope.codecs.vocabulary`): the request decoder (:mod:`.request`) maps the
``mapped`` names and carries every other (built-in tools, their calls and outputs, item
references, files), which go back to a Responses upstream unchanged."""

from __future__ import annotations

from streamscope.codecs.vocabulary import Vocabulary, names

BUILTIN_TOOLS = (
    "file_search computer computer_use_preview web_search web_search_2025_08_26 mcp "
    "code_interpreter programmatic_tool_calling image_generation local_shell shell "
    "tool_search web_search_preview web_search_preview_2025_03_11 apply_patch"
)
CARRIED_ITEMS = (
    "file_search_call computer_call computer_call_output web_search_call tool_search_call "
    "tool_search_output additional_tools configuration_update compaction "
    "image_generation_call code_interpreter_call local_shell_call local_shell_call_output "
    "shell_call shell_call_output apply_patch_call apply_patch_call_output mcp_list_tools "
    "mcp_approval_request mcp_approval_response mcp_call compaction_trigger item_reference "
    "program program_output"
)
MAPPED_ITEMS = (
    "message function_call function_call_output reasoning custom_tool_call custom_tool_call_output"
)

VOCABULARY = Vocabulary(
    "responses",
    {
        "request": {
            **names(
                "mapped",
                "model input instructions tools tool_choice parallel_tool_calls "
                "max_output_tokens temperature top_p stream reasoning text metadata user",
            ),
            **names(
                "carried",
                "access_programs background background_options context_management "
                "conversation image include max_tool_calls moderation previous_response_id "
                "prompt prompt_cache_key prompt_cache_options prompt_cache_retention "
                "safety_identifier service_tier store stream_options top_logprobs truncation",
            ),
        },
        "input.item": {**names("mapped", MAPPED_ITEMS), **names("carried", CARRIED_ITEMS)},
        "message.role": names("mapped", "user assistant system developer"),
        "input.content": {
            **names("mapped", "input_text input_image output_text refusal"),
            **names("carried", "input_file input_audio"),
        },
        "tool": {**names("mapped", "function custom namespace"), **names("carried", BUILTIN_TOOLS)},
        "function_call_output.output": {
            **names("mapped", "input_text input_image"),
            **names("carried", "input_file"),
        },
        "reasoning.summary": names("mapped", "summary_text"),
        "text.format": names("mapped", "text json_schema json_object"),
        "include": names(
            "carried",
            "code_interpreter_call.outputs computer_call_output.output.image_url "
            "file_search_call.results message.input_image.image_url "
            "message.output_text.logprobs reasoning.encrypted_content "
            "web_search_call.action.sources web_search_call.results",
        ),
        "tool_choice": {
            **names("mapped", "none auto required function custom"),
            **names(
                "carried",
                "allowed_tools file_search web_search_preview computer computer_use_preview "
                "computer_use web_search_preview_2025_03_11 image_generation code_interpreter "
                "mcp programmatic_tool_calling apply_patch shell",
            ),
        },
        "stream.event": {
            **names(
                "mapped",
                "response.created response.in_progress response.completed response.failed "
                "response.incomplete response.queued error response.output_item.added "
                "response.output_item.done response.content_part.added "
                "response.content_part.done response.output_text.delta "
                "response.output_text.done response.refusal.delta response.refusal.done "
                "response.function_call_arguments.delta response.function_call_arguments.done "
                "response.reasoning_summary_part.added response.reasoning_summary_part.done "
                "response.reasoning_summary_text.delta response.reasoning_summary_text.done "
                "response.reasoning_text.delta response.reasoning_text.done "
                "response.output_text.annotation.added "
                "response.custom_tool_call_input.delta response.custom_tool_call_input.done",
            ),
            **names(
                "carried",
                "response.audio.delta response.audio.done response.audio.transcript.delta "
                "response.audio.transcript.done response.code_interpreter_call_code.delta "
                "response.code_interpreter_call_code.done "
                "response.code_interpreter_call.completed "
                "response.code_interpreter_call.in_progress "
                "response.code_interpreter_call.interpreting response.compaction.compacting "
                "response.file_search_call.completed response.file_search_call.in_progress "
                "response.file_search_call.searching response.shell_call_command.added "
                "response.shell_call_command.delta response.shell_call_command.done "
                "response.shell_call_output_content.delta "
                "response.shell_call_output_content.done "
                "response.web_search_call.completed response.web_search_call.in_progress "
                "response.web_search_call.searching response.image_generation_call.completed "
                "response.image_generation_call.generating "
                "response.image_generation_call.in_progress "
                "response.image_generation_call.partial_image "
                "response.mcp_call_arguments.delta response.mcp_call_arguments.done "
                "response.mcp_call.completed response.mcp_call.failed "
                "response.mcp_call.in_progress response.mcp_list_tools.completed "
                "response.mcp_list_tools.failed response.mcp_list_tools.in_progress",
            ),
        },
        "output.item": {
            **names("mapped", "message function_call reasoning custom_tool_call"),
            **names(
                "carried",
                "file_search_call function_call_output web_search_call computer_call "
                "computer_call_output program program_output tool_search_call "
                "tool_search_output additional_tools compaction image_generation_call "
                "code_interpreter_call local_shell_call local_shell_call_output shell_call "
                "shell_call_output apply_patch_call apply_patch_call_output mcp_call "
                "mcp_list_tools mcp_approval_request mcp_approval_response "
                "custom_tool_call_output",
            ),
        },
        "output.content": names("mapped", "output_text refusal"),
    },
)
"""The Responses codec's declared vocabulary."""
