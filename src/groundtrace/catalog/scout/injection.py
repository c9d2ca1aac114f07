"""Prompt-injection spans: sentences that read like instructions to a model are never evidence.

:func:`instruction_spans` lists them; engines blank them (``sentences.mask_spans``) before matching and
flag a quote that overlaps one (``injection_quote``).
"""

from __future__ import annotations

import functools
import re

from groundtrace.catalog.scout.sentences import ascii_fold, sentence_spans

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


# -- beyond English: instructions in other languages, text addressed to a bot, forged data delimiters -------
_IGNORE_WORDS = (
    r"ignor\w*|disregard\w*|forget|override|bypass|vergiss\w*|vergessen|missachte\w*|oubli\w*|olvid\w*|"
    r"dimentic\w*|esque[cç]\w*|negeer\w*|vergeet|игнорир\w*|забудь\w*"
)
_INSTRUCTION_WORDS = (
    r"instruction\w*|prompt\w*|rules?|directions?|guidelines?|context|above|previous|prior|earlier|"
    r"anweisung\w*|befehl\w*|regeln|vorherig\w*|bisherig\w*|consignes?|précédent\w*|precedent\w*|"
    r"instruccion\w*|anterior\w*|istruzion\w*|precedent\w*|instruç\w*|instruc\w*|instructies|vorige|"
    r"инструкци\w*|указани\w*"
)
_STRICT_ADDRESSEE = r"bot|robot|crawler|scraper|spider|extractor|chatbot|llm|gpt|scout|judge"
_SOFT_ADDRESSEE = r"ai|a\.i\.|assistant|model|agent|ki|ia"
_QUALIFIER = (
    r"catalog|catalogue|product|shopping|data|extraction|scraping|crawling|labell?ing|listing|indexing|"
    r"enrichment|review|content|seo"
)
_MULTILINGUAL = re.compile(
    # ignore … instructions, in European languages, across sentence and line breaks (split instructions)
    rf"\b(?:{_IGNORE_WORDS})\b[\s\S]{{0,80}}?\b(?:{_INSTRUCTION_WORDS})"
    # mark/label this product as … (de/fr/es/it/pt/nl)
    r"|\b(?:markiere|kennzeichne|marquez?|marque|étiquet\w*|marca|etiqueta|segna|contrassegna|markeer)\w*\s+"
    r"(?:dieses|das|ce|cet|este|esta|el|le|la|questo|il|o|dit|het)\s+(?:produkt|produit|producto|prodotto|"
    r"produto|product|artikel|article|artículo)\b"
    # Chinese / Japanese: ignore … instructions; mark this product
    r"|(?:忽略|无视|無視|忽视|忽視|不要理会|不要理會|不理会)[^。！？\n]{0,20}?(?:指令|指示|说明|說明|提示|规则|規則|"
    r"以上|之前|先前|上述)"
    r"|(?:将|將|把)(?:此|该|該|这个|這個|本)?(?:产品|產品|商品)(?:标记|標記|标注|標註|标为|標為)"
    # text addressed to a bot: "Attention catalog bot:", "Dear crawler,", "Catalog AI:" (sentence start)
    rf"|(?<![^.!?\n])\s*(?:(?:attention|attn|achtung|hinweis|note|notice|dear|hey|hello|hi|to)\s+)?"
    rf"(?:the\s+|any\s+|all\s+)?(?:{_QUALIFIER}\s+)?(?:{_STRICT_ADDRESSEE})s?\s*[:,]"
    rf"|(?<![^.!?\n])\s*(?:attention|attn|achtung|hinweis|dear|hey|hello|hi)\s+(?:the\s+|any\s+|all\s+)?"
    rf"(?:{_QUALIFIER}\s+)?(?:{_SOFT_ADDRESSEE}|{_STRICT_ADDRESSEE})s?\s*[:,]"
    rf"|\b(?:{_QUALIFIER})\s+(?:{_SOFT_ADDRESSEE}|{_STRICT_ADDRESSEE})s?\s*:"
    # a sentence opening with "Instructions:" / "New rules:" (the second half of a split instruction)
    r"|(?<![^.!?\n])\s*(?:new\s+|updated\s+|neue\s+|nouvelles?\s+)?(?:instructions?|rules|directives?|"
    r"commands?|anweisungen|consignes?|instrucciones)\s*:"
    # forged data delimiters (any bracket look-alike; NFKC already folded full-width forms)
    r"|(?:<{2,}|>{2,}|‹{2,}|›{2,}|«|»|\[{2,}|\]{2,}|〈|〉)\s*/?\s*(?:end\s*(?:of\s*)?)?data\b"
    r"|</?\s*(?:data|untrusted|evidence|document|context)\s*>"
    r"|\bend\s+(?:of\s+)?(?:data|untrusted\s+data|evidence|document)\s*(?:block)?\s*(?:>|\]|\)|=|-{2,}|\*{2,})",
    re.IGNORECASE,
)
_BOT_ROLE_PREFIX = re.compile(r"^\W{0,3}(?:system|assistant|user|developer|human)\s*:", re.IGNORECASE)


# -- exact prefilters: literals that every match of a pattern contains -------------------------------------
# Both patterns try dozens of alternatives at every character, so most of the cost is spent on text that
# holds no cue at all. Each alternative of a pattern needs one of its literals below (lowercase, whitespace
# runs as one space), so text whose :func:`_cue_text` contains none of them cannot match and is skipped;
# any other text gets the full pattern, so the spans are exactly those without the prefilter.
# ``tests/catalog/test_injection_prefilter.py`` checks this on strings generated from the patterns.
def _suffixed(words: tuple[str, ...], ends: tuple[str, ...]) -> tuple[str, ...]:
    """``word + [s] + [space] + end`` for every word and end (``bot:``, ``bots ,``)."""
    return tuple(w + p + sp + e for w in words for p in ("", "s") for sp in ("", " ") for e in ends)


_ADDRESSEE_WORDS = (
    *("ai", "a.i.", "assistant", "model", "language", "llm", "chatbot", "bot", "gpt", "chatgpt", "agent"),
)
_ROLE_WORDS = ("system", "assistant", "user", "developer", "human", "ai", "chatbot", "llm", "gpt")
_STRICT_WORDS = ("bot", "crawler", "scraper", "spider", "extractor", "llm", "gpt", "scout", "judge")
_INSTRUCTION_CUES = (
    # ignore ... previous; new/system ... instructions/prompt/message
    *("ignore", "disregard", "forget", "override", "bypass", "instruction", "prompt", "message"),
    *("you are", "from now on"),  # you are (now) ...; from now on, you
    *(" " + w for w in _ADDRESSEE_WORDS),  # as an AI; note to the assistant; to the AI reading; Dear AI
    *(f"{d} {o}" for d in ("this", "the") for o in ("product", "item", "sku", "attribute", "listing")),
    *("respond ", "reply ", "answer ", "output "),  # respond with ...
    *(f"{w}{sp}:" for w in _ROLE_WORDS for sp in ("", " ")),  # role prefix
    *("im_start", "im_end", "endoftext", "<system", "<|system"),  # chat tokens
    *("inst]", "system]", "assistant]", "user]", "sys>>", "system>", "assistant>", "user>", "##"),
)  # fmt: skip
_MULTILINGUAL_CUES = (
    # ignore ... instructions (the Cyrillic words need non-ASCII text)
    *("ignor", "disregard", "forget", "override", "bypass", "vergiss", "vergessen", "missachte", "oubli"),
    *("olvid", "dimentic", "esque", "negeer", "vergeet"),
    *("markiere", "kennzeichne", "marque", "marca", "tiquet", "segna", "markeer"),  # mark this product
    # a bot / AI addressed: "... bot:", "Dear assistant,", "catalog AI:"
    *_suffixed(_STRICT_WORDS, (":", ",")),
    *_suffixed(("ai", "a.i.", "assistant", "model", "agent", "ki", "ia"), (":", ",")),
    *(f"{w}{sp}:" for w in ("instruction", "instructions", "rules", "directive", "directives", "command",
                           "commands", "anweisungen", "consigne", "consignes", "instrucciones")
      for sp in ("", " ")),  # "Instructions:" opening a sentence
    *("<<", ">>", "[[", "]]"),  # <<<END DATA>>> (the look-alike brackets need non-ASCII text)
    *(f"{w}{sp}>" for w in ("data", "untrusted", "evidence", "document", "context") for sp in ("", " ")),
    *(f"end {o}{w}" for o in ("", "of ") for w in ("data", "untrusted", "evidence", "document")),
)  # fmt: skip


def _cue_text(text: str) -> str:
    """``text`` as the prefilters read it: :func:`~groundtrace.catalog.scout.sentences.ascii_fold`
    (lowercase, with the non-ASCII letters ``re.IGNORECASE`` equates with ASCII ones mapped), every
    whitespace run (``str.split``, the ``\\s`` of ``re``) one space."""
    return " ".join(ascii_fold(text).split())


def _may_hold(cue_text: str, cues: tuple[str, ...]) -> bool:
    return any(cue in cue_text for cue in cues)


def injection_matches(text: str) -> list[tuple[int, int]]:
    """Character spans of every injection cue in ``text`` (a match may cross a sentence break)."""
    return list(_matches(text))


@functools.lru_cache(maxsize=512)
def _matches(text: str) -> tuple[tuple[int, int], ...]:
    """One linear scan per distinct text: the engines and both judges ask about the same Documents many
    times (per attribute, per candidate), so the answer is cached."""
    # a non-ASCII text may hold the Chinese / Cyrillic / look-alike bracket cues: always scanned
    scan = not text.isascii() or _may_hold(_cue_text(text), _MULTILINGUAL_CUES)
    spans = [m.span() for m in _MULTILINGUAL.finditer(text)] if scan else []
    for s, e in sentence_spans(text):
        sentence = text[s:e]
        if not _may_hold(_cue_text(sentence), _INSTRUCTION_CUES):
            continue
        m = _INSTRUCTION.search(sentence)
        if m:
            spans.append((s + m.start(), s + m.end()))
    return tuple(sorted(spans))


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """Spans of sentences that read like instructions to a model — never evidence (prompt injection).

    English cues: ignore/disregard/forget/override ... instructions/prompt/previous; new/system/developer/
    hidden instructions, prompt or message; "you are (now) an AI/assistant", "you are now a ...
    assistant/bot/expert", "you are now in developer mode", "from now on, you"; "as an AI/assistant/LLM";
    a note, message, reminder or instruction to/for the assistant/AI/model/LLM/chatbot/bot/agent ("IMPORTANT
    NOTE TO THE ASSISTANT: ..."); "to the AI:" or "to the AI reading this"; a sentence opening with "To/Dear/
    Hey/Attention the AI/assistant ..."; mark/label/classify/set ... this product/item/attribute;
    respond/reply/answer/output with/only; a sentence starting with a role prefix (``system:``,
    ``assistant:``, ``user:``, ``developer:``, ``human:``, ``AI:``); chat-template and role tokens
    (``<|im_start|>``, ``[INST]``, ``<<SYS>>``, ``<assistant>``, ``### Response``).

    Beyond English (:data:`_MULTILINGUAL`, matched over the whole text, so an instruction split over two
    sentences — "Please ignore all previous. Instructions: ..." — is caught and both sentences are
    marked): "ignore … instructions" in German, French, Spanish, Italian, Portuguese, Dutch and Russian
    ("Ignoriere alle vorherigen Anweisungen", "Ignorez les instructions précédentes", "Ignora las
    instrucciones anteriores"), Chinese ("忽略之前的所有指令", "将此产品标记为 …"), "mark this
    product" in those languages; text addressed to a bot ("Attention catalog bot:", "Dear crawler,",
    "Catalog AI:"); forged data delimiters (``<<<END DATA>>>``, ``‹‹‹END DATA›››``, ``</data>``,
    "END OF DATA ---"). The text is
    expected to be clean already (``core.evidence.sanitize``: NFKC, no zero-width characters, Cyrillic/
    Greek look-alikes in Latin words mapped), which is how "Іgnоrе" and "Ig\\u200bnore" are caught.

    "AI" followed by a hyphen or letter ("AI-powered", "AIR") is no addressee, and a role word needs its
    colon at the start of the sentence, so "Our assistant manager recommends ...", "AI-powered thermostat",
    "Voice Assistant: Alexa" and "Model: X100" are product text, not instructions."""
    matches = injection_matches(text)
    if not matches:
        return []
    return [(s, e) for s, e in sentence_spans(text) if any(ms < e and s < me for ms, me in matches)]


def has_injection(text: str) -> bool:
    """Does ``text`` hold any injection cue (:func:`instruction_spans` non-empty)?

    A Document (web page, feed record, catalog field, OCR text) for which this is true is *flagged*: it is
    never evidence for a safety-critical attribute (``judge.safety``), whatever sentence is quoted."""
    return bool(injection_matches(text))
