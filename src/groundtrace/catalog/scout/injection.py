"""Prompt-injection spans: sentences that read like instructions to a model are never evidence.

:func:`instruction_spans` lists them; engines blank them (``sentences.mask_spans``) before matching and
flag a quote that overlaps one (``injection_quote``).
"""

from __future__ import annotations

import re

from groundtrace.catalog.scout.sentences import sentence_spans

# who a model-addressed sentence talks to: "the assistant", "the AI", "any LLM" ("AI-powered" is no addressee)
_ADDRESSEE = (
    r"(?:ai|a\.i\.|assistant|ai\s+assistant|ai\s+model|ai\s+agent|model|language\s+model|llm|chatbot|"
    r"bot|gpt|chatgpt|agent)s?(?![\w-])"
)
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,60}\b(?:instruction|prompt|rule|direction|"
    r"guideline|context|above|previous|prior|earlier)"
    r"|\b(?:new|updated|system|developer|hidden)\s+(?:instructions?|prompt|message)\b"
    r"|\byou\s+are\s+(?:now\s+)?(?:an?\s+)?(?:ai|assistant|language model|llm|chatbot|gpt)(?![\w-])"
    r"|\byou\s+are\s+now\s+(?:an?|the|my|our)\s+(?:[\w-]+\s+){0,3}?(?:ai|assistant|model|llm|chatbot|bot|agent|"
    r"expert|system)(?![\w-])"
    r"|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|admin|god|jailbreak|jailbroken|unrestricted|dan)(?:\s+mode)?\b"
    r"|\bfrom\s+now\s+on,?\s+you\b"
    r"|\bas\s+an?\s+(?:ai|assistant|language model|llm|chatbot)(?![\w-])"
    r"|\b(?:note|notice|message|instructions?|reminder|request|attention|memo|p\.?s\.?)\s+(?:to|for)\s+"
    r"(?:the\s+|any\s+|all\s+|every\s+|an\s+|a\s+)?"
    + _ADDRESSEE
    + r"|\bto\s+(?:the|any|all|every)\s+"
    + _ADDRESSEE
    + r"(?:\s*:|\s+(?:reading|processing|parsing|summari[sz]ing|"
    r"extracting|indexing|crawling|scraping|that\s+reads?|who\s+reads?))"
    r"|^\W{0,3}(?:to|dear|hey|hi|hello|attention|attn)\s*[,:]?\s+(?:the\s+|any\s+|all\s+)?"
    + _ADDRESSEE
    + r"|\b(?:mark|label|classify|tag|flag|set|record|list|treat|report)\s+(?:this|the)\s+"
    r"(?:product|item|sku|attribute|listing)\b"
    r"|\b(?:respond|reply|answer|output)\s+(?:only\s+)?(?:with|that|as)\b"
    r"|^\W{0,3}(?:system|assistant|user|developer|human|ai|chatbot|llm|gpt)\s*:\s"
    r"|<\|?(?:im_start|im_end|system|endoftext)\|?>"
    r"|\[/?(?:inst|system|assistant|user)\]|<</?sys>>|</?(?:system|assistant|user)>"
    r"|#{2,}\s*(?:system|assistant|instruction|response)\b",
    re.IGNORECASE,
)


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """Spans of sentences that read like instructions to a model — never evidence (prompt injection).

    Cues: ignore/disregard/forget/override ... instructions/prompt/previous; new/system/developer/hidden
    instructions, prompt or message; "you are (now) an AI/assistant", "you are now a ... assistant/bot/
    expert", "you are now in developer mode", "from now on, you"; "as an AI/assistant/LLM"; a note,
    message, reminder or instruction to/for the assistant/AI/model/LLM/chatbot/bot/agent ("IMPORTANT NOTE
    TO THE ASSISTANT: ..."); "to the AI:" or "to the AI reading this"; a sentence opening with "To/Dear/
    Hey/Attention the AI/assistant ..."; mark/label/classify/set ... this product/item/attribute;
    respond/reply/answer/output with/only; a sentence starting with a role prefix (``system:``,
    ``assistant:``, ``user:``, ``developer:``, ``human:``, ``AI:``); chat-template and role tokens
    (``<|im_start|>``, ``[INST]``, ``<<SYS>>``, ``<assistant>``, ``### Response``). "AI" followed by a
    hyphen or letter ("AI-powered", "AIR") is no addressee, and a role word needs its colon at the start of
    the sentence, so "Our assistant manager recommends ...", "AI-powered thermostat", "Voice Assistant:
    Alexa" and "Model: X100" are product text, not instructions."""
    return [(s, e) for s, e in sentence_spans(text) if _INSTRUCTION.search(text[s:e])]
