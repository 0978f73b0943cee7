"""Orders to the persona and claims of power over it, in a text. Pure.

``order_or_authority`` is the second rule of what a memory row may say (``write.guards``: a
memory is a fact about a person, never an order to the persona), and the offline reader runs
it on whole chat lines (``minds.offline.sentences``), there without the persona's name: "you"
and "the persona" still count. The text is read ``plain``.

What counts: "from now on…", "ignore previous…", "in every reply…", "disregard", "system
prompt", "new instructions", "act as", "pretend to be", "you must always…", an always/never
order (not a habit: "u:42 never says no to dumplings" is a fact), "every persona must…", "is
the administrator of this app", "has admin rights", lines dressed as the system ("system:",
"[system]", "<system>"); and a standing order in any wording when it is addressed to the
persona — by its name, "you" or "the persona": a wish or a request that it act always, never
or every time, "make sure you recommend…", "remember to always…", "end each message with…".
The same words about someone else are a fact ("u:42 always mentions their cat").
"""

from __future__ import annotations

import re

from .folded import Folded
from .names import name_regex
from .plain import plain

_PERSONAS = r"(?:personas?|assistants?|bots?|chatbots?|ais?|the ai)"
_PLACE = r"(?:app|application|system|platform|site|website|server|service|chat|bot|product|network)"
_ORDER_VERBS = (
    r"(?:respond|reply|answer|say|call|end|start|mention|tell|talk|speak|use|write|recommend|"
    r"include|bring up|refer|promote|reveal|discuss|share|link|send|direct|remind|ask|obey)"
)
_ORDER = re.compile(
    r"\bfrom now on\b|\bfrom this (?:moment|point) (?:on|forward)\b|\bhenceforth\b|"
    r"\b(?:in|on) (?:every|each|all|your) (?:reply|replies|response|responses|answer|answers|"
    r"message|messages)\b|"
    r"\bignore (?:all |any |every )?(?:of )?(?:the |your |my |these |those )?(?:previous|prior|above|"
    r"earlier|preceding|other)\b|\bignore (?:your|the|all) (?:rules|instructions|guidelines)\b|"
    r"\bdisregard\b|\bforget (?:all |your |the )?(?:previous |prior )?(?:instructions|rules|guidelines)\b|"
    r"\bsystem prompt\b|\bnew instructions?\b|\bjailbreak\b|\bdeveloper mode\b|"
    r"\byou (?:must|should|will|shall|have to|need to|are to)(?: now)? (?:always|never|obey|"
    r"only (?:answer|reply|respond|speak|talk))\b|"
    rf"(?:^|[.!?,:;]\s*|\b(?:you|please|should|must|shall)\s+)(?:always|never)\s+{_ORDER_VERBS}\b|"
    r"\b(?:to|that|will) (?:always|never) (?:mention|recommend|promote|advertise|plug|respond|reply|"
    r"answer|bring up|refer|link|obey)\b|"
    r"(?<!\bi )(?<!\bwe )(?<!\bthey )(?<!\bpeople )(?<!\bfamily )\b(?:always|never) "
    r"(?:respond|reply|answer|say|mention)\b|"
    r"\balways (?:tell|remind|send|direct|refer|point|urge|encourage|ask) (?:people|everyone|"
    r"everybody|users|others|anyone|visitors|the user|customers|them) to\b|"
    r"\bremember to always\b|\bact as\b|\bpretend (?:to be|you)\b|\brole-?play as\b|"
    r"\b(?:must|shall|should) (?:always )?obey\b|\bobey (?:him|her|them|me|u:\d+|their|his|my|every)\b|"
    rf"\b(?:every|each|all|any) {_PERSONAS}\b(?: here| in this \w+)? (?:must|should|shall|will|has to|"
    r"have to|is required to|are required to|needs? to)\b|"
    rf"\b{_PERSONAS} (?:must|shall|are required to|is required to)\b|"
    r"\b(?:every|each|all) (?:reply|replies|response|responses|answer|answers|message|messages) "
    r"(?:must|should|shall|has to|have to|needs? to|will|to (?:end|start|begin|include|mention|"
    r"contain|close|carry|link))\b|"
    r"\b(?:admin|administrator|owner|developer|creator|operator|moderator|maker|programmer|staff|"
    rf"staff member|employee|team member) (?:of|at) (?:this|your|our|the persona's) {_PLACE}\b|"
    r"\b(?:verified|official|authori[sz]ed) (?:as )?(?:an? )?(?:staff|admin|administrator|developer|"
    r"moderator|operator)\b|"
    r"\b(?:has|have|with|holds?|got|gets) (?:full |root |special |superuser |elevated )?"
    r"(?:admin|administrator|root|superuser|moderator|elevated) (?:rights|access|privileges|powers|"
    r"permissions|mode|status)\b|"
    r"\b(?:authori[sz]ed|allowed|permitted) to (?:command|instruct|override|control|reprogram) "
    rf"(?:you|the persona|personas|the ai|{_PERSONAS})\b|"
    r"(?:^|[.!?]\s+)[\[(<{]?\s*(?:system|assistant|developer|admin)\s*[\]>)}]?\s*:|"
    r"[\[<{]\s*/?\s*(?:system|sys|inst|admin|developer)\s*[\]>}]|<<\s*sys\s*>>",
    re.IGNORECASE,
)


_ORDER_WORDS = (
    "from", "henceforth", "repl", "respons", "answer", "message", "ignore", "disregard", "forget",
    "sys", "inst", "jailbreak", "developer", "always", "never", "obey", "only", "act as",
    "pretend", "role", "persona", "assistant", "bot", "admin", "owner", "creator", "operator",
    "moderator", "maker", "programmer", "staff", "employee", "team member", "root", "superuser",
    "elevated", "command", "override", "control", "reprogram",
)
"""Every alternative of ``_ORDER`` holds one of these (or the word "ai"/"ais"): an ASCII text
with none of them cannot match, and is cleared without running ``_ORDER`` (90 µs a sentence;
this check, 6 µs). A text that is not ASCII always runs the full pattern, as case-insensitive
matching beyond ASCII is not ``str.casefold``."""
_AI_WORD = re.compile(r"\bais?\b", re.IGNORECASE)


def _may_be_an_order(text: str) -> bool:
    if not text.isascii():
        return True
    return any(map(text.lower().__contains__, _ORDER_WORDS)) or _AI_WORD.search(text) is not None


_PERSONA_REF = r"(?:you|ya|the persona|the assistant|the bot|the ai|the chatbot|(?:every |each |all |any )?personas?)"
_REQUEST = (
    r"(?:wants?|wanted|asks?|asked|expects?|expected|needs?|needed|requires?|required|would like|'d like|"
    r"would love|'d love|would prefer|'d prefer|told|tells|instructs?|instructed|insists?|insisted|"
    r"demands?|demanded|begs?|begged|reminds?|reminded|wish(?:es|ed)?|prefers?|preferred|orders?|"
    r"ordered|urges?|urged|requests?|requested|counts? on|relies on|rely on|trusts?|get|gets|got|hopes?|"
    r"hoped|(?:wish|hope|request|demand|preference|rule|instruction|order|dream) (?:is|was))"
)
_STANDING = (
    r"(?:always|never|whenever|constantly|forever|without fail|no matter what|all the time|"
    r"at all times|from now on|going forward|in (?:the )?future|"
    r"(?:every|each) (?:single )?(?:time|reply|message|answer|response|conversation|chat|day|session|"
    r"turn|post|text|sentence|greeting|talk)|"
    r"(?:at|in) the (?:start|end|beginning|top|bottom) of (?:every|each|all|your) \w+)"
)
_NEW_CLAUSE = r"(?:i|we|they|he|she|u:\d+|because|since|although|though|while|if|but)"
_GAP = rf"(?:\s+(?!{_NEW_CLAUSE}\b)[\w'-]+){{0,10}}?\s+"
"""Up to ten words of the same clause: no punctuation, no new subject or conjunction."""
_MODAL = r"(?:to|should|must|will|would|'d|'ll|shall|could|can|is to|are to)"
_STANDING_ORDER = Folded(
    # a wish or a request that the persona do something every time ("u:42 wants Warren to
    # always mention…", "u:42 asked that you never…", "u:42 expects the persona to … every time")
    rf"\b{_REQUEST}\s+(?:(?:that|for|it if|it when)\s+)?{_PERSONA_REF}(?:\s+|(?='))"
    rf"(?:(?:{_MODAL}\s+)?(?:always|never)\b|{_MODAL}\b{_GAP}{_STANDING}\b)|"
    # the same with the habit first ("u:42 always wants Warren to …")
    rf"\b(?:always|never|constantly)\s+(?:\w+\s+)?{_REQUEST}\s+(?:(?:that|for)\s+)?{_PERSONA_REF}\s+"
    r"(?:to|should|must|will|would|shall)\b|"
    # an order addressed to the persona ("you must bring it up every time", "the persona will
    # always recommend…")
    rf"\b{_PERSONA_REF}(?:\s+|(?='))(?:must|should|shall|has to|have to|needs? to|is to|are to|ought to|"
    r"(?:is|are) (?:expected|required|supposed) to|will|'ll|would|'d|to)\s+"
    rf"(?:(?:always|never)\s+{_ORDER_VERBS}\b|{_ORDER_VERBS}\b{_GAP}{_STANDING}\b)|"
    # "make sure you recommend…", "Don't forget to mention…", at the head of a clause, with a
    # verb of what the persona says ("make sure you take breaks" is advice, not an order)
    r"(?:^|[.!?:;,*(]\s*|\b(?:please|just|and|so|to)\s+)(?:make sure|be sure|make certain)\s+(?:that\s+)?"
    rf"(?:{_PERSONA_REF}\s+|to\s+)(?:(?:always|never)\s+)?{_ORDER_VERBS}\b|"
    r"(?:^|[.!?:;,*(]\s*|\bplease\s+)(?:remember|don't forget|do not forget|never forget)\s+to\s+"
    rf"(?:(?:always|never)\s+)?{_ORDER_VERBS}\b|"
    r"\b(?:remember|forget) to (?:always|never)\b|"
    # the shape of every reply ("end each message with…", "sign every answer as…")
    r"\b(?:end|start|begin|open|close|finish|sign(?: off)?|fill|pepper|sprinkle|prefix|suffix)\s+"
    r"(?:every|each|all|any|your)\s+(?:single\s+)?(?:reply|replies|response|responses|answer|answers|"
    r"message|messages|sentence|sentences|post|posts|text|texts|greeting|greetings)\b",
    re.IGNORECASE,
)
_PERSONA_THEN = re.compile(
    r"(?:you|ya|persona|assistant|bot|\bai)s?(?:\s+|(?='))(?:to|should|must|will|would|'d|'ll|shall|"
    r"could|can|is|are|always|never|has|have|needs?|ought)\b"
)
_PERSONA_WORDS = ("you", "ya", "persona", "assistant", "bot", " ai", "ai ", "ais ")
_ORDER_HEADS = ("sure", "certain", "forget", "remember")
_EVERY = ("every", "each", "all", "any", "your")
_REPLY = ("repl", "respons", "answer", "message", "sentence", "post", "text", "greeting")


def _may_be_a_standing_order(low: str) -> bool:
    """False only when ``_STANDING_ORDER`` cannot match the lowercase ASCII ``low``: each
    alternative that names the persona has it followed by a modal, "to", "always" or "never"
    (``_PERSONA_THEN``); the others hold "make sure" or its like, "remember" or "forget", or
    a word of ``_EVERY`` and one of ``_REPLY``."""
    return (
        any(map(low.__contains__, _ORDER_HEADS))
        or (any(map(low.__contains__, _REPLY)) and any(map(low.__contains__, _EVERY)))
        or (any(map(low.__contains__, _PERSONA_WORDS)) and _PERSONA_THEN.search(low) is not None)
    )


def order_or_authority(text: str, persona_name: str = "") -> str | None:
    """The words that make ``text`` an order or a claim of authority (rule 2), or ``None``.

    ``text`` is read ``plain`` (look-alike letters and signs written the ASCII way). A standing
    order to the persona — a wish or a request that it do something always, never or every
    time, "make sure you mention…", "remember to always…" — counts in any wording when it addresses
    "you", "the persona" or the persona by ``persona_name``.
    """
    text = plain(text)
    if _may_be_an_order(text):
        match = _ORDER.search(text)
        if match:
            return " ".join(match[0].split())
    if persona_name and persona_name.casefold() in text.casefold():
        text = name_regex(persona_name).sub("the persona", text)
    if not text.isascii() or _may_be_a_standing_order(text.lower()):
        match = _STANDING_ORDER.search(text)
        if match:
            return " ".join(match[0].split())
    return None
