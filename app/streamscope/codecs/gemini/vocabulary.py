"""What the Gemini codec knows of the generateContent API, by place
(:mod:`streamscope.codecs.vocabulary`), named as the REST API and the google-genai SDK's
types (by alias) name them: the request decoder (:mod:`.request`) maps the ``mapped``
names and carries every other name it meets; the stream decoder does the same for a
chunk's and a candidate's fields and for a part's.

Places: ``request`` (the body's fields), ``content.role``, ``part`` (a part's fields),
``tool`` (a ``tools[]`` entry's kinds), ``functionCallingConfig.mode``,
``generationConfig``, ``thinkingConfig``; stream and response: ``chunk`` (a
GenerateContentResponse's fields), ``candidate``, ``finishReason``.
"""

from __future__ import annotations

from streamscope.codecs.vocabulary import Vocabulary, names

_PART_CARRIED = (
    "fileData executableCode codeExecutionResult videoMetadata mediaResolution partMetadata "
    "toolCall toolResponse audioTranscription mediaProcessing speechMetadata "
    "documentMetadata spreadsheetMetadata audioMetadata"
)

VOCABULARY = Vocabulary(
    "gemini",
    {
        "request": {
            **names("mapped", "contents systemInstruction tools toolConfig generationConfig"),
            **names("carried", "safetySettings cachedContent labels serviceTier"),
        },
        "content.role": names("mapped", "user model function"),
        "part": {
            **names(
                "mapped", "text inlineData functionCall functionResponse thought thoughtSignature"
            ),
            **names("carried", _PART_CARRIED),
        },
        "tool": {
            **names("mapped", "functionDeclarations"),
            **names(
                "carried",
                "retrieval computerUse fileSearch googleSearch googleMaps codeExecution "
                "enterpriseWebSearch googleSearchRetrieval parallelAiSearch urlContext "
                "mcpServers exaAiSearch",
            ),
        },
        "functionCallingConfig.mode": names("mapped", "AUTO ANY NONE VALIDATED"),
        "generationConfig": {
            **names(
                "mapped",
                "maxOutputTokens temperature topP topK stopSequences candidateCount thinkingConfig",
            ),
            **names(
                "carried",
                "modelSelectionConfig responseJsonSchema audioTimestamp enableAffectiveDialog "
                "frequencyPenalty logprobs mediaResolution presencePenalty responseLogprobs "
                "responseMimeType responseModalities responseSchema routingConfig seed "
                "speechConfig enableEnhancedCivicAnswers responseFormat translationConfig "
                "audioTranscriptionConfig imageConfig",
            ),
        },
        "thinkingConfig": names("mapped", "thinkingBudget includeThoughts thinkingLevel"),
        "chunk": {
            **names("mapped", "candidates usageMetadata modelVersion responseId promptFeedback"),
            **names("carried", "createTime modelStatus"),
        },
        "candidate": {
            **names("mapped", "content finishReason index"),
            **names(
                "carried",
                "citationMetadata finishMessage tokenCount groundingMetadata avgLogprobs "
                "logprobsResult safetyRatings urlContextMetadata continuationToken",
            ),
        },
        "finishReason": names(
            "mapped",
            "FINISH_REASON_UNSPECIFIED STOP MAX_TOKENS SAFETY RECITATION LANGUAGE OTHER "
            "BLOCKLIST PROHIBITED_CONTENT SPII MALFORMED_FUNCTION_CALL IMAGE_SAFETY "
            "IMAGE_PROHIBITED_CONTENT IMAGE_OTHER NO_IMAGE IMAGE_RECITATION "
            "UNEXPECTED_TOOL_CALL TOO_MANY_TOOL_CALLS MISSING_THOUGHT_SIGNATURE "
            "MALFORMED_RESPONSE ESCALATION PUP_LIMITED_DISABLED CONTINUATION MODEL_ARMOR",
        ),
    },
)
"""The Gemini codec's declared vocabulary."""
