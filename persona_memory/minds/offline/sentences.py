"""Cutting a chat line into sentences and keeping the ones worth remembering.

Rules:
- An attachment note in the transcript ("[shares a photo of …]") is what the speaker showed.
- A line that carries a link or a domain, an instruction to the persona ("from now on…",
  "ignore previous…", "in every reply…") or a secret (a password, a card number) yields
  nothing at all: a memory is a fact, not an order. The matchers are ``persona_memory.text``'s
  — the same ones the guards check every mind's rows with.
- A line is cut at ``.``, ``!``, ``?``, line breaks, dashes between clauses ("I joined a rowing
  crew - it's demanding", "they're fine- we got a ferret": a hyphen glued to the word before it
  and a space after is a dash too; but not "precious to me - my uncle made it", nor before "so
  many/much/few": "packed - so many families came" is one sentence, its reason kept), and before
  a clause of the speaker's own after "; ", ", but" or ", so" ("It's hard to choose, but I
  mostly cook the spicy dishes"); never after ``Mr.``, ``Dr.``, ``e.g.``.
- Openers that carry no fact are peeled off the front of each sentence — interjections ("Wow,",
  "Oh", "Yeah!", "Not really,"), an agreement with what the listener just said ("It really is,",
  "You're so right,"), a thanks for the question ("And thanks for asking,"), discourse markers
  ("So", "Actually", "Yet", "By the way", "Then", "Speaking of long drives,", "Looky here,", "As
  for me,"), a while without a chat ("Haven't talked in a few days,"), news announced before it
  is told ("Wanted to fill you in -", "I just wanted to tell you that I…"), a short heading
  before a colon ("Quick update:", "Big news:"; never the speaker's own clause that a list
  follows: "I'm keen on two projects: …"), the names of the people in the room used as address
  ("Priya,") or a short form of one before the speaker's own clause ("Mel, I'm…" to Melanie;
  "Later, I…" shortens no name), a single capitalised word after an interjection ("Hey Jo!", a
  short form of a name no list could hold), and a leading clause about the speaker and the
  listener together before the speaker's own clause ("When we met, I…", "Since you asked, I…"),
  or closing it, with a "from" or "of" before it ("…, since we spoke on Monday", "a photo of
  when we met up"; "we" counts as the two of them only with what two people in a chat do
  together — spoke, met, caught up: "…when we spotted a pod of orcas" is the speaker's own and
  stays) — and an address at the end (", Priya!", ", Jo!": one capitalised word after a comma,
  closing an exclamation, that does not follow another capitalised word — so "Austin, Texas!"
  and "a work trip up north, Bergen." stay) is dropped.
- A closing clause that proposes something to the listener (", so let's get it done") or
  shows it something (", take a look", " - check it out!") is cut: a suggestion is not a
  fact about the speaker.
- An existential whose relative clause is the speaker's liking or habit says what they like:
  "There's a café near my flat that I really love." → "I really love a café near my flat."
- A cleft that puts a thing in focus before what it does to the speaker says it plainly: "It's
  the smell of rain that calms me." → "The smell of rain calms me."; "It was my aunt who
  taught me to swim." → "My aunt taught me to swim." A focus that names nothing ("something",
  "the one thing") or is no noun ("so good", "been a while") leaves the sentence as it is.
- A doing cut from its verdict by a dash is one sentence again: "Seeing them laugh - it's the
  best part." → "Seeing them laugh is the best part."
- A tag question asks only to be agreed with: "Tulips mean hope, right?" and "The harbour is
  lovely at night, isn't it?" are the statements before the tag.
- Chat fillers are taken out of what is left, wherever they stand — "also", "anyway", "lol",
  "haha", "btw", "tbh", "omg" and their like, and the intensifiers that only raise the voice
  ("really", "totally", "definitely", "actually", "honestly", "literally", "super" before an
  adjective, after the sentence's first word), an opening "just" before a time ("Just
  yesterday I…" is no order, and "just" says nothing), and a closing "too" or "as well" that only ties
  the sentence to what was said before ("I baked a cake too!" → "I baked a cake!"):
  "I also sold my bike lol" → "I sold my bike",
  "I'm really super excited" → "I'm excited". A row is read later in a block of limited size; emphasis costs room and
  says nothing.
- What is left is *chatter*, and yields nothing, when it is a question, a greeting or a goodbye
  ("Later, take care" — but "Later that week I…" is a time), thanks ("Appreciate the
  help"), praise for the listener ("Kudos for…", "Way to go", "Way to turn a hobby into a
  job!"), sympathy ("I'm sorry about your cat" — but "I'm sorry I was late, I was at…" goes on),
  a reply that stands alone ("I'm good, thanks", "I know!" — but "I'm in talks with a
  sponsor" and "I know three languages" go on to say something), a reaction to the listener
  ("Good to see you", "So glad you had fun" — but "So glad to have a studio of my own" is
  the speaker's), news announced and not yet told ("I've got something to share!"), small
  talk ("A lot's been going on", peeled as an opener when a clause of the speaker's follows
  it), an instruction or a wish addressed to the
  listener ("Enjoy the views", "Take care", "Good luck with the move", "Wishing you a calm
  week", "…, let me know"), an order, or a fragment: a single word, or
  two that do not start with the speaker ("I'm vegetarian" is a statement; "Love it" is not).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ...text.folded import Folded
from ...text.links import link_or_domain
from ...text.names import name_regex
from ...text.orders import order_or_authority
from ...text.secrets import secret
from .lexicon import ING_ADJECTIVES

_ABBREVIATION = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|Mt|Prof|Inc|Ltd|No)|\be\.g|\bi\.e|\b[A-HJ-Z])\.$"
)
_ATTACHMENT = re.compile(
    r"\[(?:shares|shared|sends|sent|shows|showed|attaches|attached)\s+(?P<what>[^\]]+)\]", re.I
)
_BREAK = re.compile(
    r"(?<=[.!?])(?P<close>[\"')\]]*)\s+|\s*\n\s*|"
    r"(?:\s+[-–—]+\s+|\s*[–—]+\s*|(?<=[a-z])-\s+)(?=[A-Z]|(?:it|it's|that|that's|this|"
    r"they|they're|there|there's|we|we're|my|so(?!\s+(?:many|much|few|little)\b)|which|he|she|and|but)\b)|"
    r"(?:;|,\s*(?:but|so))\s+(?=(?:I|I'm|I've|I'd|I'll|[Mm]y|[Ww]e|[Ww]e're|[Ww]e've)\b)"
)

_INTERJECTION = (
    r"hey+|hi+|hello|heya|yo|oh+|ooh+|ah+|aw+|wow+|whoa+|woah+|yay+|yeah+|yep|yup|yes|no|nope|"
    r"ugh+|meh|welp|argh+|phew|oof|oops|whoops|yikes|eek|"
    r"ok|okay|um+|uh+|hmm+|ha(?:ha)+|lol|lmao|omg|gosh|man|dude|wait|sure|nice|cool|great|"
    r"awesome|amazing|wonderful|fantastic|sweet|totally|absolutely|definitely|exactly|true|"
    r"right|indeed|agreed|of course|for sure|good|well done|same|haha"
)
_MARKER = (
    r"so(?! far\b)|well|and|but|plus|also|anyway|anyways|actually|honestly|btw|by the way|"
    r"to be honest|tbh|i mean|you know|guess what|fun fact|look(?:y|ie)? here|as for me|for example|for instance|"
    r"(?:i )?(?:just )?wanted to (?:tell you|fill you in|update you|give you (?:a|the) heads[- ]?up|let you know)"
    r"(?: (?:about|on) what'?s been (?:going on|happening|up)(?: lately| recently| with me)?)?(?=\s*(?:[-–—,:;!.]|$))|"
    r"(?:i )?(?:just )?wanted to (?:tell you|let you know)(?: that)?(?= (?:i|i'm|i've|i'll|we|we're|we've|my|our)\b)|"
    r"oh and|oh by the way|speaking of which|"
    r"speaking of (?:[\w'-]+ ){0,3}[\w'-]+(?=\s*,)|then|"
    r"in the meantime|meanwhile|though|however|yet|but yeah|long time no (?:see|talk)|"
    r"(?:I )?(?:haven't|have not|hadn't) (?:talked|spoken|chatted|caught up)(?: to you| with you)? in (?:a while|a bit|ages|forever|"
    r"some time|a (?:few|couple of) (?:days|weeks|months))|"
    r"on (?:another|a different|a (?:more )?(?:serious|lighter|happier|sadder) |that) ?note|in other news|"
    r"it'?s been (?:a while|ages|a few days|some time)|"
    r"(?:a lot|so much|lots|loads)(?:'s| has)? (?:been )?(?:going on|happening)(?= *[;:,–—-])|"
    r"(?:some )?(?:\w+ )?(?:stuff|things) (?:has|have|'s|'ve) been (?:going on|happening)(?= *[;:,–—-])"
)
# a reply peeled only before its punctuation: a "no", and an agreement with what the listener
# just said ("It really is, I still can't…", "You're so right, …")
_REPLY = (
    r"nah|not really|not exactly|not quite|"
    r"it (?:really |sure |definitely |totally |certainly )?(?:is|does|was|did)|"
    r"they (?:really |sure |definitely |totally )?(?:are|do|were|did)|"
    r"that(?:'s| is) (?:so |very |definitely )?true|you(?:'re| are) (?:so |totally |absolutely )?right|"
    r"me too|same here|(?:and )?thanks? (?:you )?(?:so much )?for asking"
)
_OPENER = re.compile(
    rf"^(?:(?![A-Za-z' ]*\b(?:I|I'm|I've|I'd|my|we|we're|we've|our)\b)[A-Za-z][A-Za-z' ]{{0,24}}:\s+|(?:{_REPLY})\s*[,!.:;]+\s*|(?:{_INTERJECTION})(?:\s*[,!.:;]+|\s*[-–—]+|"
    rf"\s+(?=(?:{_INTERJECTION}|{_MARKER}|I|I'm|I've|I'll|I'd|my|we|we're|our)\b))\s*|"
    rf"(?:{_MARKER})(?:\s*[,!.:;]+|\s*[-–—]+|\s+|$)\s*)",
    re.IGNORECASE,
)

# "we" is the speaker and the listener only with what the two of them did together: spoke,
# met, caught up ("when we spotted a pod of orcas" is the speaker's own trip).
_US_TWO = r"(?:we\s+(?:last\s+)?(?:spoke|talked|chatted|met|caught up|hung out|saw each other)|our last (?:chat|talk|call|catch-up)|you)\b"
_SHARED_CLAUSE = re.compile(
    rf"^(?:ever since|since|when|after|before|as|now that)\s+{_US_TWO}[^,.!?]{{0,60}}[,;]\s*",
    re.IGNORECASE,
)
_SHARED_TAIL = re.compile(
    rf",?\s+(?:(?:from|of)\s+)?(?:ever since|since|when|after|before) {_US_TWO}[^,.!?;]*(?=[.!?]*$)", re.IGNORECASE
)
_VOCATIVE = re.compile(
    rf"^(?:dear|(?:{_INTERJECTION}|thanks|thank you)\s+)([A-Z][a-z]+)\s*[,!.:;]+\s*", re.IGNORECASE
)
# a bare name before the speaker's own clause: "Mel, I'm so stoked…" (``_bare_vocative``)
_BARE_VOCATIVE = re.compile(r"^([A-Z][a-z]+),\s*(?=(?:I|I'm|I've|I'll|I'd)\b)")


def _bare_vocative(sentence: str, names: Iterable[str]) -> re.Match[str] | None:
    """A short form of a name in the room before the speaker's clause ("Mel, I'm…" to
    Melanie); a word that shortens no name ("Later, I…", "Sadly, I…") is not one."""
    found = _BARE_VOCATIVE.match(sentence)
    if found is None:
        return None
    word = found.group(1).lower()
    shortens = any(part.lower().startswith(word) for name in names for part in name.split())
    return found if shortens else None


_TRAILING_VOCATIVE = re.compile(r"(?P<before>\b[\w']+),\s*(?P<name>[A-Z][a-z]+)\s*(?=!+$)")
_NOT_A_NAME = frozenset(
    """i i'm monday tuesday wednesday thursday friday saturday sunday january february march
    april june july august september october november december today tonight yesterday
    tomorrow everyone guys all""".split()
)

_GREETING_OR_THANKS = re.compile(
    r"^(hi|hey|hello|good (morning|afternoon|evening|night)|bye|goodbye|later(?=\s*(?:[.!]|$|,\s*(?:take care|bye|see|talk|cheers)\b))|see (you|ya)|talk (to you )?"
    r"(soon|later)|ttyl|take care|thanks|thank you|thx|ty|cheers|congrats|congratulations|welcome|"
    r"kudos|way to(?= [a-z]+)|well done|(?:good|nice|great) job|bravo|props|(?:I )?(?:really |truly )?appreciate(?:d)?|"
    r"sorry|(?:I'm |I am )(?:so |really |very |truly )?sorry (?:about|for|to hear|that)|nice to (meet|see|hear)|good to (see|hear)|great to (see|hear|chat)|"
    r"glad to (hear|see)|happy to (hear|see)|have (a|fun)|good luck|best of luck|"
    r"keep (it up|going|up)|you got this|hang in there|no worries|no problem|my pleasure|"
    r"same here|me too|(I )?(got|have got) your back|how about you|what about you|let's|let us|"
    r"(?:(?:a lot|so much|lots|loads)(?:'s| has| is)? (?:been )?(?:going on|happening|happened)|"
    r"(?:some )?(?:\w+ )?(?:stuff|things) (?:has|have|'s|'ve) been (?:going on|happening))"
    r"(?=(?: (?:in my life|lately|recently|with me|at my end|here))?\s*(?:[.!]+\s*)?$)|"
    r"hope you|wish you|can't wait to (see|hear) (you|your|it|how|what|more)|(I'm |I am )?(so |really |very )?glad(?=\s+(?:you|your|it|it's|that|we|to (?:hear|see|know|help)|for)\b|\s*[.!,]|$)|"
    r"I (totally |completely |so |100% |fully |absolutely |really |definitely |do |"
    r"couldn't |can't )?(agree|disagree)|I know,? right|I feel you|I hear you|I bet|I guess|I see (?:what|why|how|where|your point)|"
    r"I hope so|I think so|I know what you mean|I'm sure|I'm happy "
    r"for|I'm so happy for|I'm (?:so )?proud of (?:you|ya|u)\b)\b"
    # Replies that are only replies when nothing follows them: "I'm good, thanks!" or "I know!",
    # but "I'm in talks with a sponsor", "I'm back at college", "I know three languages" say
    # something.
    r"|^(?:I get it|I understand|I know|I see|I remember|I agree|I'm (?:fine|good|ok|okay|here|back|in|down)|"
    r"(?:I )?(?:just )?wanted to (?:tell you|fill you in|update you|give you (?:a|the) heads[- ]?up|let you know)|"
    # news announced and not yet told: "I've got something to share!", "I have big news"
    r"(?:I've|I have|I)(?: got)? (?:some )?(?:\w+ )?(?:news|something (?:to (?:share|tell you|show you)|for you)))"
    r"(?=\s*(?:[,.!;:]|$))",
    re.IGNORECASE,
)

_TO_LISTENER = Folded(
    r"^(?:I'm |I am |I )?(?:wish|wishing|hope|hoping)\s+(?:you|your|u)\b|\blet me know\b|"
    r"^(?:enjoy|have (?:a|an|fun)|good luck|best of luck|take care|stay safe|be careful)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(tell|ask|call|text|look|check|see|take|give|send|show|let|don't|do|make|keep|try|go|"
    r"come|remember|imagine|guess|please|believe|push|trust|stay|enjoy|feel|stop|"
    r"just(?!(?:\s+[\w-]+){0,3}\s+(?:I|I'm|I've|I'd|we|we're|we've)\b)|be|wish|"
    r"hang|hold|have fun|good luck|never(?! been\b)|use|consider|avoid|focus|pick|choose|follow|"
    r"listen|watch|write|join|grab|treat|count)\b",
    re.IGNORECASE,
)

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_USER_ID = re.compile(r"(?<![\w:])u:\d+\b", re.IGNORECASE)
_SPEAKER_FIRST = re.compile(r"^(?:I|I'm|I've|I'd|I'll|[Ww]e|[Ww]e're|[Mm]y|[Oo]ur)\b")


def carries_link_or_order(text: str) -> bool:
    """True when a line holds a link or a domain, an instruction to the persona or a secret
    (the guards' rules 1–3: ``text.links``, ``text.orders``, ``text.secrets``): such a line
    yields no memory at all."""
    return bool(link_or_domain(text) or order_or_authority(text) or secret(text))


def normalise(text: str) -> str:
    """Curly quotes straightened, ellipses and spaces folded, lower-case "i" capitalised, and
    chat spellings written out: contractions typed without their apostrophe ("Im", "cant",
    "didnt", "thats"; "ill" only where it can only mean "I'll"; "its just" → "it's just"), a
    dropped g ("livin'" → "living"), a day's "'s" before a verb ("Tomorrow's going to be…" →
    "Tomorrow is going to be…") and chat words ("gonna" → "going to", "cuz" → "because",
    "u" → "you"). A row is English a person reads: the
    spellings of a quick chat must not leak into it."""
    if not text.isascii():  # an ASCII text holds no curly quote and no ellipsis
        text = text.translate(_QUOTES).replace("…", "...")
    text = _LOWER_I.sub(lambda m: "I" + (m.group(1) or ""), text)
    if _CHAT_CUE.search(text):
        text = _CHAT_WORD.sub(_write_out, text)
    if "ll " in text:
        text = _ILL.sub(r"\1I'll", text)
    if "in'" in text:
        text = _DROPPED_G.sub(r"\1ing", text)
    if "its " in text.lower():
        text = _ITS_IS.sub(lambda m: m[1] + "'s", text)
    if "'s " in text:
        text = _DAY_IS.sub(lambda m: m[1] + " is", text)
    if "  " in text or "\t" in text:  # else every run of spaces is one space already
        text = _SPACES.sub(" ", text)
    return text.strip()


_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_LOWER_I = re.compile(r"\bi('m|'ve|'ll|'d)?\b")
_SPACES = re.compile(r"[ \t]+")
# Negations typed without the apostrophe: every "Xnt" below is not an English word.
_NEGATIONS = "cant wont dont doesnt didnt isnt arent wasnt werent havent hasnt hadnt couldnt shouldnt wouldnt aint"
_WRITTEN_OUT = {
    **{word: word[:-2] + "n't" for word in _NEGATIONS.split()},
    "cant": "can't", "wont": "won't", "aint": "ain't",
    "im": "I'm", "ive": "I've", "youre": "you're", "youve": "you've", "theyre": "they're",
    "thats": "that's", "whats": "what's", "theres": "there's", "heres": "here's", "lets": "let's",
    "cuz": "because", "'cause": "because", "bc": "because", "gonna": "going to", "wanna": "want to",
    "gotta": "have to", "kinda": "kind of", "sorta": "sort of", "u": "you", "ur": "your",
    "ya": "you", "pls": "please", "plz": "please", "tho": "though", "thru": "through",
    "rn": "right now", "idk": "I don't know",
    "bday": "birthday", "bf": "boyfriend", "gf": "girlfriend",
}
# "lets" is a verb as often as "let's": written out only where a verb follows at a line's or
# sentence's start ("lets go" → "let's go"), never mid-sentence ("it lets me rest").
_CHAT_WORD = re.compile(
    r"(?<![\w'])(?:" + "|".join(re.escape(w) for w in sorted(_WRITTEN_OUT, key=len, reverse=True) if w != "lets")
    + r"|(?:(?<=^)|(?<=[.!?] ))lets(?= [a-z]))(?![\w']|:\d)",
    re.IGNORECASE,
)
_CHAT_CUE = re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(w) for w in _WRITTEN_OUT) + r")(?![\w'])", re.IGNORECASE)
_YOU_ARE_NEXT = re.compile(r" (?:[a-z]+ing|so|not|a|an|the|right|welcome|fine|too|very|really|such|always|never)\b")
# "ill" is an adjective ("I was ill", "tired and ill"): read as "I'll" only at a sentence's
# start, after a comma or after "and"/"but"/"then", and before a verb that follows "I'll".
_ILL = re.compile(
    r"(^|[.!?,] |\b(?:and|but|then) )[Ii]ll(?= (?:be|see|send|let|try|go|do|have|get|make|take|call|"
    r"text|tell|check|keep|bring|show|look|think|ask|start|write|come|give|miss|need|definitely|"
    r"probably|never|always|just|also|still)\b)"
)


# "livin'", "snackin'": a dropped g, written out
_DROPPED_G = re.compile(r"\b([A-Za-z]{2,})in'(?=[\s.,!?;:]|$)")
# "its just", "its been": "its" before what only follows "it is" or "it has"
_ITS_IS = re.compile(
    r"\b([Ii]t)s(?= (?:just|so|been|not|a|an|the|really|gonna|going|all|like|got|definitely|always|never|too|such|my|our|your|what|how|time|okay|ok|fine|great|amazing|awesome|hard|tough|true)\b)"
)
# "Tomorrow's going to be…": the day is the subject, "'s" is "is" (a possessive, "tomorrow's
# game", is followed by a noun, not by these)
_DAY_IS = re.compile(r"\b((?:[Tt]oday|[Tt]omorrow|[Tt]onight|[Yy]esterday))'s(?= (?:going|gonna|gon|been|a|an|the|my|our|so|really|just|finally|all)\b)")


def _write_out(match: re.Match[str]) -> str:
    word = match[0]
    written = _WRITTEN_OUT[word.lower()]
    if word.lower() == "ur" and _YOU_ARE_NEXT.match(match.string, match.end()):
        written = "you're"
    if word[:1].isupper() and written[:1].islower():
        return written[:1].upper() + written[1:]
    return written


def take_attachments(text: str) -> tuple[str, list[str]]:
    """The line without its attachment notes, and what they showed as first-person sentences:
    "Look! [shares a photo of a lake at sunrise]" → ("Look!", ["I shared a photo of a lake at
    sunrise."])."""
    shown = [f"I shared {m['what'].strip()}." for m in _ATTACHMENT.finditer(text)]
    return _ATTACHMENT.sub(" ", text).strip(), shown


def split_sentences(text: str) -> list[str]:
    """The sentences of one line, in order, with their end punctuation kept."""
    out: list[str] = []
    start = 0
    for match in _BREAK.finditer(text):
        piece = text[start : match.start() + len(match["close"] or "")].rstrip()  # a closing quote stays
        if _ABBREVIATION.search(piece):
            continue
        if piece:
            out.append(piece)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return _rejoin_dislocated([s for s in (p.strip() for p in out) if s])


def _rejoin_dislocated(pieces: list[str]) -> list[str]:
    """"Seeing them laugh - it's the best part." was cut at its dash; its "it" is the doing
    before it, so the two are one sentence: "Seeing them laugh is the best part." """
    out: list[str] = []
    for piece in pieces:
        said = _IT_IS_REST.match(piece)
        if said is not None and out and _DOING_ALONE.match(out[-1]) and not _FINITE.search(out[-1]):
            out[-1] = f"{out[-1].rstrip(' ,')} is {said['rest']}"
            continue
        out.append(piece)
    return out


# "it's the best part" — not "it's been…", nor an "it" that stands for a "to…" after it
# ("it's a dream to have a garden")
_IT_IS_REST = re.compile(r"^it(?:'s| is)\s+(?!been\b)(?P<rest>(?:(?!\bto\s+[a-z]).)+)$", re.IGNORECASE)
_DOING_ALONE = re.compile(
    rf"^(?!(?:{'|'.join(sorted(ING_ADJECTIVES))}|(?:some|no|any|every)thing|morning|evening|during)\b)[A-Z][a-z]+ing\b[^.!?]*$"
)
_FINITE = re.compile(r"\b(?:is|was|are|were|has|have|had|am|I|I'm|I've|we|we're|will|can|did|does|do)\b")


def strip_address(sentence: str, names: Iterable[str]) -> str:
    """The sentence without the openers, addresses and trailing address named in the rules."""
    address = _address_patterns(tuple(names))
    # A sentence that holds none of the names cannot be addressed by one (stripping openers
    # only shortens it, and what is left of it holds none either): the names are not looked for.
    named = address.finder(sentence) if address.may_name(sentence) else None
    previous = None
    while previous != sentence:
        previous = sentence
        sentence = _OPENER.sub("", sentence, count=1)
        sentence = _SHARED_CLAUSE.sub("", sentence, count=1)
        vocative = _VOCATIVE.match(sentence) or _bare_vocative(sentence, names)
        if vocative is not None and vocative.group(1).lower() not in _NOT_A_NAME:
            sentence = sentence[vocative.end() :]
        if named is not None:
            sentence = named.leading(sentence)
            sentence = named.after_opener(sentence)
    if named is not None:
        sentence = named.trailing(sentence)
    sentence = _SHARED_TAIL.sub("", sentence)
    trailing = _TRAILING_VOCATIVE.search(sentence) if "," in sentence and "!" in sentence else None
    if (
        trailing is not None
        and not trailing["before"][:1].isupper()
        and trailing["name"].lower() not in _NOT_A_NAME
    ):
        sentence = sentence[: trailing.end("before")] + sentence[trailing.end() :]
    return sentence.strip(" ,;:-–—")


class _Address:
    """How one set of names is found used as address: a cheap test of whether a sentence could
    hold one of the names at all, and a finder for a sentence that may.

    The address patterns hold the names' words as an alternation. When every word is plain —
    ASCII letters, digits, apostrophes and hyphens — and the sentence holds none of the four
    characters beyond ASCII that match an ASCII letter in any case (``_FOLDS_TO_ASCII``), a
    name there is a whole run of plain characters, so one pattern for any such run, compiled
    once, and a lookup of the run among the words find the same (``_PlainAddress``); else the
    set's own patterns, compiled when first needed (the one after an opener holds every
    interjection, so compiling it per set of names costs far more than a lookup), do
    (``_NamedAddress``)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = names
        forms = {part for name in names for part in name.split() if len(part) >= 2}
        # Every pattern needs a name's word (the first two in any case) as a substring; tested
        # on ASCII only, where case folding is ``str.lower``.
        self._words = tuple(f.lower() for f in forms) if all(f.isascii() for f in forms) else None
        plain = all(_PLAIN_NAME.fullmatch(f) for f in forms)
        self._plain = _PlainAddress(frozenset(forms)) if plain else None

    def may_name(self, sentence: str) -> bool:
        if self._words is None or not sentence.isascii():
            return True
        low = sentence.lower()
        return any(word in low for word in self._words)

    def finder(self, sentence: str) -> _PlainAddress | _NamedAddress:
        if self._plain is not None and (sentence.isascii() or _FOLDS_TO_ASCII.search(sentence) is None):
            return self._plain
        return self._named

    @functools.cached_property
    def _named(self) -> _NamedAddress:
        return _NamedAddress(_name_pattern(self._names))


_PLAIN_NAME = re.compile(r"[A-Za-z0-9'-]+")
_FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")
"""The characters beyond ASCII that a case-insensitive pattern matches to an ASCII letter: "İ"
and "ı" (to "i"), "ſ" (to "s") and the Kelvin sign (to "k")."""
_ANY_LEADING_NAME = re.compile(r"^(?:dear\s+)?(?P<name>[A-Za-z0-9'-]+)\s*[,!.:;]+\s*", re.IGNORECASE)
_ANY_NAME_AFTER_OPENER = re.compile(
    rf"^(?:{_INTERJECTION}|{_MARKER})\s+(?P<name>[A-Za-z0-9'-]+)\s*[,!.:;]+\s*", re.IGNORECASE
)
_ANY_TRAILING_NAME = re.compile(r"\s*,\s*(?P<name>[A-Za-z0-9'-]+)\s*(?=[.!?]*$)")


class _PlainAddress:
    """The address patterns of a set of plain words, on a sentence without ``_FOLDS_TO_ASCII``.

    Each address pattern puts a name's word between characters that cannot be in it (the
    start, a space, a comma or a mark), so on such a sentence it matches where the pattern
    for any run of the words' characters matches with a run that is one of the words (any
    case; as written, at the end); and each can match at one place only, so the first match
    of the pattern for any run is the only one to test."""

    __slots__ = ("_exact", "_folded")

    def __init__(self, forms: frozenset[str]) -> None:
        self._exact = forms
        self._folded = frozenset(f.lower() for f in forms)

    def leading(self, sentence: str) -> str:
        match = _ANY_LEADING_NAME.match(sentence)
        return sentence[match.end() :] if match is not None and match["name"].lower() in self._folded else sentence

    def after_opener(self, sentence: str) -> str:
        match = _ANY_NAME_AFTER_OPENER.match(sentence)
        return sentence[match.end() :] if match is not None and match["name"].lower() in self._folded else sentence

    def trailing(self, sentence: str) -> str:
        match = _ANY_TRAILING_NAME.search(sentence) if "," in sentence else None
        if match is None or match["name"] not in self._exact:
            return sentence
        return sentence[: match.start()] + sentence[match.end() :]


class _NamedAddress:
    """The address patterns of a set of names, with the words as an alternation."""

    __slots__ = ("_leading", "_after_opener", "_trailing")

    def __init__(self, alternatives: str) -> None:
        self._leading = self._after_opener = self._trailing = None
        if alternatives:
            self._leading = re.compile(rf"^(?:dear\s+)?(?:{alternatives})\s*[,!.:;]+\s*", re.IGNORECASE)
            self._after_opener = re.compile(
                rf"^(?:{_INTERJECTION}|{_MARKER})\s+(?:{alternatives})\s*[,!.:;]+\s*", re.IGNORECASE
            )
            self._trailing = re.compile(rf"\s*,\s*(?:{alternatives})\s*(?=[.!?]*$)")

    def leading(self, sentence: str) -> str:
        return self._leading.sub("", sentence, count=1) if self._leading is not None else sentence

    def after_opener(self, sentence: str) -> str:
        return self._after_opener.sub("", sentence, count=1) if self._after_opener is not None else sentence

    def trailing(self, sentence: str) -> str:
        return self._trailing.sub("", sentence) if self._trailing is not None else sentence


@functools.lru_cache(maxsize=2048)
def _address_patterns(names: tuple[str, ...]) -> _Address:
    """The address finders of one set of names (a slice reads every line with the same
    names), kept for the next slice with them."""
    return _Address(names)


def _name_pattern(names: Iterable[str]) -> str:
    """A regex alternation of the words of the names (of two letters or more)."""
    forms = {re.escape(part) for name in names for part in name.split() if len(part) >= 2}
    return "|".join(sorted(forms, key=len, reverse=True))


_FILLER = re.compile(
    r"\b(?:also|anyway|anyways|lol+|lmao|rofl|haha\w*|hehe\w*|btw|tbh|omg|imo|ngl)\b|"
    r"^just(?= (?:yesterday|today|tonight|last|this|recently|lately|the other day)\b)|"
    r"(?<=[A-Za-z'] )(?:actually|literally|honestly|basically|totally|definitely|seriously|truly|really)\b|"
    r"(?<=[A-Za-z'] )(?-i:super)(?= [a-z])|"
    r"(?<=[A-Za-z'] )(?:too|as well)(?=[.!]*$)",
    re.IGNORECASE,
)
_SPACE_BEFORE_MARK = re.compile(r"\s+([,.!?;:])")
_LOOSE_COMMAS = re.compile(r"(?:\s*,)+(?=\s*(?:[,.!?;:]|$))|^\s*,")


_SUGGESTION_AFTER = re.compile(
    r"(?<=\w)\s*(?:[,;]|\s[-–—])?\s+(?:(?:so|and|but|then)\s+)?let's\b.*$|"
    # "…too, take a look", "… - check it out!": the listener is shown the thing, nothing more is said
    r"(?<=\w)\s*(?:[,;]|\s[-–—])\s*(?:take a look|have a look|check (?:it|this|them) out|look|come (?:and )?see)\s*[.!]*$",
    re.IGNORECASE,
)


def drop_suggestion(sentence: str) -> str:
    """The sentence without a closing clause that proposes something to the listener ("I care
    about the clean-up, so let's get it done" → "I care about the clean-up") or shows it
    something ("I finished a quilt too, take a look" → "I finished a quilt too"): a suggestion
    to the listener is not a fact about the speaker. A sentence that opens on "let's" is
    chatter (``is_chatter``) and stays as it is here."""
    folded = sentence.casefold()
    if "let's" not in folded and "look" not in folded and "check" not in folded and "see" not in folded:
        return sentence
    cut = _SUGGESTION_AFTER.sub("", sentence)
    return f"{cut}." if cut != sentence and cut else sentence


_FILLER_WORDS = (
    "also", "anyway", "lol", "lmao", "rofl", "haha", "hehe", "btw", "tbh", "omg", "imo", "ngl", "just",
    "actually", "literally", "honestly", "basically", "totally", "definitely", "seriously", "truly",
    "really", "super", "too", "as well",
)
"""Every match of ``_FILLER`` holds one of these: an ASCII sentence whose lowercase holds none
is left as it is, unsearched (beyond ASCII the case-insensitive search always runs)."""


# A statement that asks only to be agreed with: "Tulips mean hope, right?", "…, isn't it?"
_TAG_QUESTION = re.compile(
    r"(?:,\s*(?:right|no|huh|eh|yeah|don't you think|wouldn't you say)\s*\?+|"
    # "…, isn't it?", "I should try it shouldn't I." — a tag after its auxiliary, comma or not
    r",?\s+(?:is|are|was|were|do|does|did|has|have|had|can|could|would|should|must|wo|ai)n't\s+"
    r"(?:it|they|he|she|I|we|you|there|that)\s*[?.!]+)\s*$",
    re.IGNORECASE,
)


def drop_tag_question(sentence: str) -> str:
    """A statement with a tag question ("Tulips mean hope, right?") as the statement it is
    ("Tulips mean hope."); any other sentence unchanged."""
    return _TAG_QUESTION.sub(".", sentence) if "?" in sentence or "n't" in sentence else sentence


# "There's a café near my flat that I love": the thing is the object of the speaker's verb
_THERE_IS_A_THING_I = re.compile(
    r"^there(?:'s| is) (?P<det>a|an|this|one) (?P<thing>(?:(?!that\b|which\b|I\b)[\w'.-]+ ){0,6}?[\w'-]+) "
    r"(?:that |which )?I (?P<verb>(?:(?:really|just|still|always|absolutely|often|totally) )*"
    r"(?:love|like|adore|enjoy|recommend|read|watch|listen to|keep listening to|keep going back to|go back to|visit|use|play))"
    r"(?P<rest>\s*(?:[,.;:!?\-–—].*)?)$",
    re.IGNORECASE,
)


def own_the_thing_there_is(sentence: str) -> str:
    """"There's a quote by Mary Oliver that I really like: …" → "I really like a quote by
    Mary Oliver: …": an existential whose relative clause is the speaker's own liking or habit
    says what the speaker likes; any other sentence unchanged."""
    found = _THERE_IS_A_THING_I.match(sentence) if sentence[:5].lower() == "there" else None
    if found is None:
        return sentence
    det = "a" if found["det"].lower() in ("this", "one") else found["det"].lower()
    if det == "a" and found["thing"][:1].lower() in "aeiou":
        det = "an"
    return f"I {found['verb']} {det} {found['thing']}{found['rest']}"


# "It's the smell of rain that calms me": the focus, then a verb of its own and the speaker
# as its object or owner; the focus is taken up to the last "that"/"who" before that verb
_CLEFT = re.compile(
    r"^it(?:'s| is| was) (?P<focus>.+) (?:that|who) "
    r"(?P<rest>(?:really |always |still |just |often )?(?:[a-z]+s|[a-z]+ed|kept|made|got|gave|taught|drove|brought|led|sent|told|showed)"
    r"\b.*\b(?:me|my|us|our)\b.*)$",
    re.IGNORECASE,
)
# the focus names a thing or a person: a determiner, a name or a gerund opens it ("so good",
# "amazing being there", "something" are no focus)
_FOCUS = re.compile(
    r"(?:the|a|an|my|our|his|her|their|this|that|these|those|[A-Z][a-z]+|[a-z]+ing)\b",
)
_NO_FOCUS = re.compile(r"(?:the (?:one|only|same) (?:thing|one)s?|a thing|something|nothing)\b", re.IGNORECASE)


def undo_cleft(sentence: str) -> str:
    """"It's the smell of rain that calms me." → "The smell of rain calms me.": a cleft whose
    focus does something to the speaker says it plainly; any other sentence unchanged."""
    found = _CLEFT.match(sentence) if sentence[:2].lower() == "it" else None
    if found is None or found["focus"].endswith(","):
        return sentence
    first = found["focus"].split()[0]
    if not _FOCUS.fullmatch(first) or _NO_FOCUS.match(found["focus"]) or first.lower() in ING_ADJECTIVES:
        return sentence
    focus = found["focus"]
    return f"{focus[0].upper()}{focus[1:]} {found['rest']}"


def drop_fillers(sentence: str) -> str:
    """The sentence without its chat fillers (see the module rules)."""
    if sentence.isascii() and not any(map(sentence.lower().__contains__, _FILLER_WORDS)):
        return sentence
    if not _FILLER.search(sentence):
        return sentence
    text = " ".join(_FILLER.sub(" ", sentence).split())
    text = _SPACE_BEFORE_MARK.sub(r"\1", text)
    return _LOOSE_COMMAS.sub("", text).strip(" ,")


def is_chatter(sentence: str) -> bool:
    """True for a question, greeting, thanks, order or fragment (see the module rules)."""
    stripped = sentence.rstrip()
    if not stripped or stripped.endswith("?") or "?" in stripped[-3:]:
        return True
    count = len(_WORD.findall(stripped))
    if count < 2 or count < 3 and not _SPEAKER_FIRST.match(stripped):
        return True
    if _GREETING_OR_THANKS.match(stripped) or _TO_LISTENER.search(stripped):
        return True
    return bool(_IMPERATIVE.match(stripped))


def mentions_name(sentence: str, names: Iterable[str]) -> bool:
    """True when a display name of someone in the room (or a word of it, found as
    ``text.names`` finds names), or a user's ``u:`` id, still stands in the sentence."""
    if _USER_ID.search(sentence):
        return True
    return any(pattern.search(sentence) for pattern in _name_patterns(tuple(names)))


@functools.lru_cache(maxsize=2048)
def _name_patterns(names: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The patterns of ``mentions_name`` for one set of names (a slice reads every line with
    the same names): one per word of a name, as ``text.names`` finds it."""
    return tuple(name_regex(form) for form in sorted({part for name in names for part in name.split() if len(part) >= 2}))
