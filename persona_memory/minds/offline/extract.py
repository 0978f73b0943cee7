"""Call A without a model: read a transcript slice and note what each person said about themselves.

The pipeline for one human line: drop the line if it carries a link or an order → cut it into
sentences → peel off greetings, interjections and the names used to address someone → put back
an "I" the chat left out → drop chatter (questions, thanks, fragments) → keep a sentence only if
it speaks of its speaker and names nobody in the room → resolve its dates against the line's time
→ turn it to the third person about the speaker's ``u:`` id → judge its kind and importance →
shape it into one sentence of at most 200 characters.

Rules:
- Only what a person said about themselves and their view of things: the subject of every
  memory from a human line is that human's ``u:`` id. A sentence about somebody else ("Cara
  is pregnant", "He told me…") is not a memory about them, and not about the speaker either. A sentence that
  frames someone through the speaker ("my sister just had a baby") is the speaker's
  relationship, and kept as such. A thing named with a demonstrative ("This brooch is
  special to me") is a thing, not a pointer: it reads "The brooch is special to u:42". A
  sentence that names no person and is the speaker's view of a thing ("The ferry to Arran is
  always late") is kept as what they think: "u:42 thinks the ferry to Arran is always late"
  (after a colon when its first word keeps its capital: "u:42 thinks: Setbacks are
  chances…"; a view in the present that opens on no article or possessive speaks of people at
  large, so its "we" and "us" are "people": "u:42 thinks: Pets make people happier") — when it
  opens on what it is about (not a fragment such as "like being on another planet"), when it
  has at least three words that say something, points at nothing outside itself ("That
  cake looks great" is about the listener's photo), is not an order ("Grab the chance!": a
  word other than a gerund straight before an article, an object or an amount: "Read lots
  and try new routes" is advice to the listener) and does not speak to
  the listener, nor guesses at what the listener lived ("The crowd must have been wild"), nor
  reacts to how a thing looks or sounds now ("The kids look so happy", "Dinner with the
  cousins sounds fun": a reaction to what the chat showed or told, unless the thing is the
  speaker's own), nor is a fragment with no subject ("Exciting but scary", "Finally giving it
  a go").
  A sentence led by a gerund ("Taking breaks is nice",
  "Hoping to hear back soon, though I…") is kept only when it names something of the
  speaker's ("Painting landscapes is my favourite", "Writing is a passion of mine"). A
  sentence led by a capitalised word is about that someone ("Cara is pregnant") unless it
  says what the word is to the speaker ("Dance is my stress fix", "Rowan is my oldest friend"),
  or says it is a place ("Ghent is a must-see city": the speaker's view of it; "Rosa is a
  nurse at the city hospital" is still about Rosa).
- A sentence led by a thing only the chat showed ("The colours make me calm", "That pic
  takes me back") is no fact about the speaker: a reader of the row could not say which thing.
  A thing the sentence names as the speaker's ("The maps in my attic…", "This ring is special
  to me - my aunt left it") or the line's photo shows is kept.
- A row names its subject: one that opens on an adverb and a verb ("Really got u:42
  wondering…") lost its subject in the chat and is not offered; a capitalised word in -ly
  before "is", "was", "has" or "means" is a subject, not an adverb ("Family is everything
  to u:42").
- Display names never reach the text; a sentence that still names someone present is dropped.
- Wishes, hypotheticals and conditions ("I wish I…", "if I could…", "If the boiler breaks,
  I'll…") are not facts, nor is a leaning clause alone ("Even though I kept slipping.",
  "Especially when I'm baking, …"); "we"
  that means the speaker and the listener ("we should…", "we both…", "each other") is not
  about the speaker.
- "you" is the listener: in a private chat it is the persona, and named ("I'll send you the
  photos" → "u:42 will send Warren the photos"); in a group nobody could tell whom it meant, so
  the sentence is dropped. A sentence that is only about feelings toward the listener ("I'm so
  proud of you") is dropped everywhere: it says nothing lasting about the speaker.
- Follow-ups ("ask me how it went", "I'll let you know") join the statement they follow, one
  follow-up per row: a second one never joins a row that already holds one.
- A "them" that cannot be the speaker, a bare "there" and a "her" are named by what the chat
  named just before — "I took them to the museum" after "My kids are off school" →
  "u:42 took their kids to the museum" — or the row does without them (``mentions``); a
  sentence whose "them" stays unnamed is kept only when three more words say something; a
  reply about a thing asked by a pronoun is written with the question that names it
  ("Asked how Lisbon was, u:42 answered: it was wonderful.", ``answers``).
- An answer's opening "it", "she" or "they" is the thing the line just before asked about
  ("How are your twins?" → "They're in Year 2 now" is "My twins are in Year 2 now"; see
  ``references``).
- What a line showed ("[shares a photo of …]") is never a row by itself — a caption with
  nothing said about it tells a persona nothing about the speaker — but it can say what the
  line's "this" or "it" points at ("I made this!" → "u:42 made a clay bowl"); a "this" standing
  alone as a thing is the photo's even when the row names something else ("My kids made this
  at the fair!" → "u:42's kids made a clay bowl at the fair"). A "here's…" or "check out…"
  whose thing is only pointed at ("this moment I caught", "one I did") keeps the photo's
  description ("u:42 shared this moment they caught: two herons on a jetty") or is no row.
- A row that still opens on no subject of its own is a fragment, and no row: "Same with me…",
  "Definitely one of my favourites", "Was so…" (an "I" left out is put back first, ``person``).
- A row keeps the specific words of its sentence (names, objects, places, numbers, dates,
  titles); chat fillers ("also", "lol") and intensifiers ("really") are taken out; "those
  letters" becomes "the letters"; a row whose "it", "this" or "there" points at nothing inside
  it (``references``) is joined to the row before it from the same line ("u:42 bought a bike and
  rides it daily"); when the two are too long for one row, an "it" taken somewhere ("submit it
  to…", "hang it in…") is named by the one thing that row named ("u:42 is going to submit the
  thesis to three journals"); when neither can be, the row keeps the clauses before the one that
  points nowhere ("u:42 took up fencing and it's giving them focus" → "u:42 took up fencing"),
  and is dropped when no clause is left.
- A sentence with no row before it to continue, whose opening "it" or "they" is named by
  what follows ("It's a map of the old city") keeps that name: "u:42 mentioned a map of the
  old city" (``identity``).
- What a line showed joins the row that shows it: "Here's my new quilt [a photo of a
  patchwork quilt]" → "u:42 shared their new quilt: a patchwork quilt"; "Take a look!" after
  a statement of the same line → "…and shared a photo of …"; a row that names the photo's
  thing takes the photo's words for it ("I made a quilt!" [a quilt with red stars] → "u:42
  made a quilt with red stars"); a photo no row took joins the line's one row when that row
  says next to nothing besides ("I've had quite the ride!" [a trophy for a chess final] →
  "u:42 has had quite the ride and shared a photo of a trophy for a chess final"). A note of
  "a photo", "a photograph" or "a photography" of something is read the same way.
- The persona's own lines yield only its promises, about ``self`` with the human it promised
  as ``counterpart``: in a private chat the one human there; in a group the human who spoke last
  before the promise.
- Lines of other personas, and of humans not present, yield nothing. (A line said inside a
  role-play is refused at the row, for every mind: ``write.fiction``.)
- A reply is kept with what it answers: the first row of a line said straight after someone
  else's line cites that line too (its evidence is both), so the question ("How often do you
  swim?") stays beside the answer ("u:42 swims three times a week") for whoever reads or
  searches the row later.
- At most ``max_per_line`` memories per line: those of importance 7 and up first, then the
  ones with the most specific words (a line's plainest sentences say least); a statement
  left over joins the kept row said just before it when the two fit in one ("u:42 saw a
  film; u:42 baked bread."); none below
  ``importance_min``; none the block already holds; evidence is the line's id (and, for a
  reply's first row, the line it replies to).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from ...errors import InvalidInput
from ..port import ExtractionRequest, Line, Person
from ...ids import persona_name
from ...text.folded import Folded
from .answers import (
    Thing,
    antecedents,
    answer_row,
    indirect_question_about,
    is_plural,
    name_the_pronoun,
    noun_phrases,
    places_named,
)
from .continuation import first_clause, joined, may_continue, points_back, sentence_case, specific_words
from .dates import resolve_dates
from .followups import FollowUp, follow_ups
from .identity import named_thing
from .kinds import Kind, importance_of, kind_of, tense_of
from .lexicon import ING_ADJECTIVES, IRREGULAR_PAST, PEOPLE_AND_PETS, RELATIONS, STOPWORDS, SUBORDINATORS, VAGUE
from .listener import about_the_listener
from .mentions import (
    bound_them,
    name_bound_them,
    name_opening_they,
    name_the_person,
    name_there,
    own_plurals,
    people_named,
    plurals_said,
    them_named,
)
from .person import (
    Voice,
    addresses_listener,
    company_of,
    feeling_of_the_speaker,
    generic_your,
    has_first_person,
    restore_subject,
    to_third_person,
)
from .references import (
    asked_thing,
    asks_by_pronoun,
    dangling,
    may_mean,
    name_the_asked,
    name_the_work,
    opens_on_dummy_it,
    point_at,
    settle_demonstratives,
    shown_thing,
    shows_someone,
    this_alone,
)
from .promises import act_points_nowhere, promise_text, promised_act
from .sentences import (
    carries_link_or_order,
    drop_fillers,
    drop_suggestion,
    drop_tag_question,
    is_chatter,
    mentions_name,
    normalise,
    own_the_thing_there_is,
    split_sentences,
    strip_address,
    take_attachments,
    undo_cleft,
)
from .shape import LIMIT, as_memory_text
from .stems import content_stems, likeness

_FOREIGN_SUBJECT = re.compile(
    r"^(?:it|it's|its|that|that's|this|these|those|they|they're|they've|their|he|he's|his|she|"
    r"she's|her|there|there's|here|here's|you|your|you're|what|which|who|everything|something|"
    r"nothing|everyone|someone|anyone|nobody|one|such|both|each|seeing|hearing|knowing|"
    r"having|being|sounds|looks|seems|reminds|makes|means|gives|keeps|helps|brings|feels|takes|"
    r"lets|gets|gonna|going)\b",
    re.IGNORECASE,
)
_NAMED_SUBJECT = re.compile(
    r"^(?!(?:The|A|An|My|Our|Me|We|I|Just|Being)\b)[A-Z][a-z]+(?:'s)?\s+"
    r"(?:is|was|has|had|told|said|says|thinks|got|just|will|looks|looked|sounds|seems|and(?! (?:I|me)\b(?!'))|'s)\b"
)
# A name said to be a place is no person: "Porto is a must-visit city", "Kyoto was the best
# place we went" — the speaker's view of a place
_PLACE_VIEW = re.compile(
    r"^[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\s+(?:is|was|'s)\s+(?:(?:just|really|definitely|honestly|such)\s+)?"
    r"(?:a|an|the|my|our)\s+(?:(?!(?:at|in|of|for|with|from|on|near|by|the|a|an|and)\b)[\w'-]+\s+){0,3}?"
    r"(?:city|town|country|village|island|place|spot|destination|restaurant|caf[eé]|bar|park|beach|museum|"
    r"neighbou?rhood|area|region|capital|getaway|venue|market)"
    r"(?=\s*[.!,;]|\s*$|\s+(?:to|for|in|I|we|ever|around|of|on)\b)"
)
_FRAMED_BY_SPEAKER = re.compile(
    r"^[A-Z][a-z]+(?:'s\s+|\s+(?:is|was|has been)\s+)(?:\w+\s+){0,4}?(?:my|mine|(?:to|for) me)\b"
)
_JUST_US = re.compile(
    r"\bwe (?:should|could|can|both|all|gotta|got this|'ll make it|will make it|'re both|are both)\b|\bwe've got this\b|\bboth of us\b|\beach other\b|"
    r"\bwe'll see\b",
    re.IGNORECASE,
)
_ABOUT_LISTENER = Folded(
    r"\b(?:proud of|happy for|glad|thankful|grateful|miss|love|appreciate|believe in|agree with|"
    r"hope|hoping|wish|wishing|here for|rooting for|thank|admire|envy|jealous of|impressed (?:by|with)|"
    r"inspired by|sorry|excited for|thrilled for) (?:you|your)\b|\byou (?:too|as well)\b",
    re.IGNORECASE,
)
# "Painting landscapes is…" — but "During the holidays, we…" opens on a preposition
_GERUND_SUBJECT = re.compile(
    r"^(?!(?:during|regarding|including|concerning|according|considering|following|notwithstanding|"
    r"nothing|something|everything|anything|morning|evening|spring)\b)[A-Za-z]+ing\b",
    re.IGNORECASE,
)
_VIEW_OPENER = re.compile(
    r"^(?:it|it's|its|that|that's|this|these|those|they|they're|they've|their|he|he's|his|she|"
    r"she's|her|him|there|there's|here|here's|what|which|who|someone|everyone|anyone|nobody|"
    r"one|such|both|each|sounds|looks|seems|wish|hope|maybe|perhaps|if|when|glad|so|too|"
    r"really|very|yes|no|not|never|always|just|only|thanks|thank|sorry|congrats|good|great|"
    r"awesome|amazing|nice|cool|wow|love|hate|means|makes|feels|brings|gives|keeps|takes|reminds|gets|helps|"
    r"is|was|were|are|has|had|have|can|"
    r"could|would|will|did|does|do|oops|whoops|yikes|lucky|proud|happy)\b",
    re.IGNORECASE,
)
_NARRATED = re.compile(
    rf"\b(?:[a-z]+ed|was|were|had|{'|'.join(sorted(IRREGULAR_PAST))})\b", re.IGNORECASE
)
_GENERIC_OPENER = re.compile(
    r"^(?!(?:the|a|an|this|that|these|those|my|our|your|his|her|their|its|some|one)\b)[A-Za-z]", re.IGNORECASE
)
_GENERIC_WE = re.compile(r"\b(?:us|we|our|ourselves|we're|we've)\b", re.IGNORECASE)
_PEOPLE = {"us": "people", "we": "people", "our": "people's", "ourselves": "themselves",
           "we're": "people are", "we've": "people have"}
# a "here's…" row whose thing is only pointed at, with no photo description joined to it
_SHARED_A_POINTER = re.compile(r"^ shared (?:this|that|these|those|one|it|the one)\b(?![^:]*:)", re.IGNORECASE)
_FRAGMENT_VIEW = re.compile(
    rf"^(?:[A-Za-z]+ly\s+)?(?:(?:{'|'.join(sorted(ING_ADJECTIVES))})\b(?=\s*(?:[,.!;]|$|(?:but|and|to|that|how)\b))|"
    r"[A-Za-z]+ing\s+(?:it|them|me|us)\b)",
    re.IGNORECASE,
)
# how a thing looks or sounds now: a reaction to what was shown or told, not a view the
# speaker holds ("The cabin looks so cosy", "Dinner with the cousins sounds fun")
_REACTION_VIEW = re.compile(r"^(?:[\w'&-]+,?\s+){1,6}?(?:look|looks|sound|sounds|seem|seems)\b", re.IGNORECASE)
# a row that is only the person's noun phrase, no verb ("u:42's full support.")
_VERBLESS = re.compile(
    rf"^u:\d+'s(?:\s+(?!(?:[a-z'-]*(?:s|ed)|{'|'.join(sorted(IRREGULAR_PAST))}|"
    r"win|lose|run|go|come|get|grow|need|want|love|hate|live|work|play)\b)[a-z'-]+){1,4}[.!]?$"
)
_GUESSED = re.compile(r"\bmust(?:'ve| have)? (?:been|felt|be|feel)\b", re.IGNORECASE)
_SUBJECTLESS = re.compile(
    # A capitalised word in -ly before "is", "was", "has" or "means" is a subject, not an
    # adverb: "Family is everything to u:42", "Italy was…".
    rf"^(?:[A-Z][a-z]+ly(?!\s+(?:is|was|has|means)\b)|Really|Just|Also|Still|Even|Totally|Kinda|Sorta)\s+"
    rf"(?:[a-z]+ed|[a-z]+s|{'|'.join(sorted(IRREGULAR_PAST))})\b|"
    # a fragment that kept no subject of its own: "Same with u:42 on the court", "Definitely one
    # of u:42's favourites", "Was so busy with…", "Almost as silly as when…"
    r"^(?:Was|Were|Has been|Have been|Had been|Been|Definitely|Same|Almost|Somewhat|Yeah|Yep|Glad)\b"
)
_THING_SUBJECT = re.compile(
    r"^(?:this|that|these|those)\s+(?!(?:is|was|are|were|has|had|will|would|can|could|must|"
    r"makes|made|means|sounds|looks|seems|feels|gives|keeps|reminds|helps|one|ones|kind|sort|"
    r"way|stuff|thing|things|time|times|day|days|moment|moments|'s)\b)[a-z][a-z'-]+\b",
    re.IGNORECASE,
)
# A sentence led by a thing only the chat showed: "The colours make me calm", "That pic takes
# me back" — a row read alone could not say which (``_points_at_a_chat_thing``).
_POINTED_SUBJECT = re.compile(
    r"^(?:[Tt]he|[Tt]his|[Tt]hat|[Tt]hese|[Tt]hose)\s+(?!(?:one|same|other)\b)(?P<noun>(?:[a-z][\w'-]*\s+){0,3}?[a-z][\w'-]*)"
    r"(?=\s+(?:is|are|was|were|has|have|had|makes?|made|takes?|took|reminds?|reminded|means?|meant|"
    r"brings?|brought|gives?|gave|helps?|helped|keeps?|kept|feels?|felt|looks?|looked|seems?|"
    r"seemed|blows?|blew|symboli[sz]es|represents?|belong(?:s|ed)?|will|would|can|could)\b)"
)
_OWN_IN_IT = re.compile(r"\b(?:my|our|I|we|us)\b")
# "This ring means the world to me - my aunt left it": what the sentence says makes it theirs.
_SPEAKERS_THING = re.compile(r"\b(?:to me|for me|mine|of mine|gift from my|from my|belonged to my|my own)\b", re.IGNORECASE)
# a question that asks by "they" ("How did they take it?")
_ASKS_BY_THEY = re.compile(r"\bthey\b", re.IGNORECASE)
# "Made me smile", "Loved that" — but "Knowing that my work helps…" is a gerund and its clause
_VERB_OPENER = re.compile(
    r"^(?![A-Za-z]+ing\s+that\s+(?:I|my|our|we|the|a|an|people|someone)\b)[A-Za-z]+s?\s+(?:me|us|them|him|her|you|that|it)\b"
)
_ORDER_OPENER = re.compile(
    r"^(?![A-Za-z]+ing\b)[A-Za-z]+\s+(?:the|a|an|your|my|some|it|this|that|these|those|them|him|her|me|us|"
    r"lots|plenty|more|every|something|anything|everything)\b"
)
_TRAILING_JOIN = re.compile(r"[\s,;:–—-]*(?:\b(?:and|but|so|then|please|pls)\b[\s,]*)*$", re.IGNORECASE)
_HYPOTHETICAL = Folded(
    r"\bif (?:I|we) (?:could|had|were|was|did)\b|\bI wish\b|\bwould have\b|\bimagine\b", re.IGNORECASE
)
_WORD = re.compile(r"u:\d+|[A-Za-z0-9]+(?:'[A-Za-z]+)?")
# A view opens on what it is about, not on a preposition, a modal or an adjective: "like
# being…", "must have been…", "inspiring they…" are fragments of a reaction.
_A_CLAUSE = re.compile(
    r"^(?!(?:like|must|inspiring|such|so|as|with|without|for|to|of|in|on|at|by|from)\b)",
    re.IGNORECASE,
)
_BARE_PRESENTER = re.compile(
    r"^(?:(?:look|check|see)(?: at)? (?:this|these|it|them)(?: out)?|check (?:it|this|these|them) out|"
    r"take a look(?: at (?:this|these|it|them))?|look|see|here (?:it is|they are)|this is (?:it|them))"
    r"\s*[.!]*$",
    re.IGNORECASE,
)
PRONOUNS = frozenset({"he", "she", "they"})
_BLOCK_LINE = re.compile(r'^- (".*?(?<!\\)")')
_LIKE_KNOWN = 0.8
_DANGLING = frozenset({"it", "that", "this", "them", "those", "these", "one", "there", "so", "too"})
_ENDS_ON_THE_SPEAKER = re.compile(r"\b(?:me|us)\W*$", re.IGNORECASE)


@attrs.define
class _Memory:
    subject: str
    kind: Kind
    text: str
    importance: int
    evidence: list[int]
    valid_from: str | None = None
    counterpart: str | None = None
    order: int = 0
    followed: bool = False
    continued: bool = False

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"subject": self.subject}
        if self.counterpart is not None:
            out["counterpart"] = self.counterpart
        out |= {"kind": self.kind, "text": self.text, "importance": self.importance}
        if self.valid_from is not None:
            out["valid_from"] = self.valid_from
        out["evidence"] = list(self.evidence)
        return out


def display_name(slug: str) -> str:
    """A persona's name as its memories write it ("warren" → "Warren")."""
    return persona_name(slug)


def extract_memories(
    request: ExtractionRequest,
    *,
    max_per_line: int = 2,
    importance_min: int = 3,
    pronouns: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The extraction answer for ``request``: ``{"memories": [...]}`` (see ``minds.port``)."""
    pronoun = (pronouns or {}).get(request.persona, "they")
    if pronoun not in PRONOUNS:
        raise InvalidInput(f"a persona's pronoun must be one of {sorted(PRONOUNS)}, got {pronoun!r}")
    reader = _Reader(request, max_per_line=max_per_line, importance_min=importance_min, pronoun=pronoun)
    return {"memories": [m.as_json() for m in reader.read()]}


class _Reader:
    """One pass over a slice's lines, in order (follow-ups and counterparts look back)."""

    def __init__(
        self, request: ExtractionRequest, *, max_per_line: int, importance_min: int, pronoun: str
    ) -> None:
        self.request = request
        self.max_per_line = max_per_line
        self.importance_min = importance_min
        self.pronoun = pronoun
        self.persona_name = display_name(request.persona)
        self.humans: dict[str, Person] = {p.ref: p for p in request.present}
        self.names = tuple(
            [p.name for p in request.present if p.name]
            + [display_name(slug) for slug in {request.persona, *request.personas}]
        )
        self.human_names = tuple(p.name for p in request.present if p.name)
        self.known = [content_stems(text) for text in block_statements(request.block)]
        self.memories: list[_Memory] = []
        self.last_of: dict[str, tuple[int, _Memory]] = {}
        self.last_human: str | None = None
        self.company: dict[str, str] = {}
        self.plurals_of: dict[str, tuple[Thing, ...]] = {}  # the plurals each speaker's last line named
        self.they_of: dict[str, tuple[Thing, ...]] = {}  # …or, when it named none and opened on "They", the line's before
        self.position = 0

    def read(self) -> list[_Memory]:
        previous: Line | None = None
        for index, line in enumerate(self.request.lines):
            asked = previous.text if previous is not None and previous.speaker != line.speaker else ""
            previous_line = previous if asked else None
            previous = line
            if line.speaker == self.request.persona:
                found = self._promises(line, asked)
            elif line.speaker in self.humans:
                thing = asked_thing(asked) if asked else None
                carried = self._asked_about_last(line.speaker, index, asked) if asked and thing is None else None
                found = self._statements(line, index, thing, carried, previous_line)
                if found and previous_line is not None:
                    _cite_what_it_answers(found[0], previous_line)
                self.last_human = line.speaker
            else:
                continue
            found = [m for m in found if not self._known(m)]
            best = sorted(found, key=_worth_keeping)[: self.max_per_line]
            _fold_the_rest(found, best)
            last = self.last_of.get(line.speaker)
            if last is not None and last[0] == index and all(m is not last[1] for m in best):
                del self.last_of[line.speaker]
            self.memories.extend(sorted(best, key=lambda m: m.order))
        return self._unique(self.memories)

    # -- human lines -----------------------------------------------------------------------

    def _asked_about_last(self, speaker: str, index: int, question: str) -> _Memory | None:
        """The speaker's row from their line just before ``question`` (the line before this
        one) when the question asks about it by a pronoun ("I adopted two rabbits." — "What do
        they eat?"): the answer may go on about that row (``continuation``)."""
        last = self.last_of.get(speaker)
        if last is None or last[0] != index - 2 or not asks_by_pronoun(question):
            return None
        return last[1]

    def _spoke_before_the_question(self, line: Line, index: int) -> bool:
        """Whether the line before the question this line answers was this speaker's own: the
        question's "they" means what that line spoke of."""
        return index >= 2 and self.request.lines[index - 2].speaker == line.speaker

    def _statements(
        self,
        line: Line,
        index: int,
        asked: str | None,
        carried: _Memory | None = None,
        replied_to: Line | None = None,
    ) -> list[_Memory]:
        text = normalise(line.text)
        if carries_link_or_order(text):
            return []
        said_company = company_of(text)
        if said_company is not None:
            self.company[line.speaker] = said_company
        voice = Voice(ref=line.speaker, company=self.company.get(line.speaker, "others"))
        text, shown = take_attachments(text)
        things = [t for t in (shown_thing(s) for s in shown) if t]
        if carried is not None and not may_mean(text, carried.text):
            carried = None
        found = self._said(split_sentences(text), line, index, voice, things, asked, carried, replied_to)
        if things and len(found) == 1 and not shows_someone(things[0]) and specific_words(found[0].text) < 2:
            self._shown(things.pop(0), found, line)  # "I've had quite the week! [a certificate…]"
        named = tuple(own_plurals(text))
        self.plurals_of[line.speaker] = named
        # "Of course! They look tired…" names no plural and still speaks of "my turtles"
        still = self.they_of.get(line.speaker, ()) if _STILL_THEY.match(text) else ()
        self.they_of[line.speaker] = named or still
        return found

    def _said(
        self,
        sentences: list[str],
        line: Line,
        index: int,
        voice: Voice,
        things: list[str],
        asked: str | None,
        carried: _Memory | None = None,
        replied_to: Line | None = None,
    ) -> list[_Memory]:
        found: list[_Memory] = []
        question = normalise(replied_to.text) if replied_to is not None else None
        # the things the line before named (never a person: a name is no "it") name a pronoun
        # until the speaker has said a row of their own (after that, "it" is more likely the
        # speaker's own thing)
        thing_before = tuple(t for t in antecedents(question) if not mentions_name(t.words, self.names)) if question else ()
        it_before = thing_before  # what may still name an "it": until the reply names a thing itself
        # the row the sentence just before made or continued; for the line's first sentence,
        # the speaker's row the listener's question just asked about (``_asked_about_last``)
        last: _Memory | None = carried
        own: list[Thing] = []  # the plurals this line named so far, the last first
        # the plurals the sentence before named; for the line's first sentence, when the
        # question asks about the speaker's row by "they", the plurals of the speaker's line
        # that row came from ("…made an impact on my kids." — "How did they react?" — "They…")
        said_before: list[Thing] = (
            list(self.plurals_of.get(line.speaker, ())) if carried is not None and _ASKS_BY_THEY.search(question or "")
            else list(self.they_of.get(line.speaker, ())) if _ASKS_BY_THEY.search(question or "") and self._spoke_before_the_question(line, index)
            else []
        )
        places = places_named(question) if question else []  # the places named so far, the last first
        people: list[tuple[str, str | None]] = []  # the speaker's own people named so far, the last first
        for raw in sentences:
            said_places = places_named(raw)
            said = undo_cleft(own_the_thing_there_is(drop_tag_question(strip_address(raw, self.names))))
            sentence = feeling_of_the_speaker(generic_your(drop_fillers(drop_suggestion(said))))
            if asked is not None:
                sentence = name_the_asked(sentence, asked)
            if things and _BARE_PRESENTER.match(sentence):
                earlier = self.last_of.get(line.speaker)
                if not found and earlier is not None and index - earlier[0] <= 2:
                    # "Dyed my hair!" — "What colour?" — "Check it out! [a photo]": the photo
                    # shows what the speaker's row just before told
                    self._shown(things.pop(0), [earlier[1]], line)
                else:
                    self._shown(things.pop(0), found, line)
                last = None
                continue
            if question is not None and _only_a_reaction(sentence):
                continue  # "Thanks!" before an answer about a thing: the answer is the next sentence
            # a fragment answers straight after the question, or after a "Thanks!" to it
            answer = self._answer(question, sentence, line, replied_to) if question is not None else None
            if answer is not None:
                last = self._kept_answer(answer, found, index)
                question = asked = None
                continue
            if it_before and not found:
                sentence = name_the_pronoun(sentence, it_before)
            if last is None or last.continued or last.followed or not may_continue(sentence):
                # a "They…" that cannot go on about the row before as its clause is named
                sentence = name_opening_they(sentence, said_before)
            # a "them" that cannot be the speaker: what they just named, or the line before,
            # or their own line before that named
            them = them_named(sentence, [*own, *thing_before, *self.plurals_of.get(line.speaker, ())])
            sentence = name_bound_them(sentence, [them] if them is not None else [])
            # a plural named here by a pronoun counts as said ("I love having my geckos around")
            said_before = plurals_said(sentence, said_before) or list(
                dict.fromkeys(t for t in (them, *thing_before) if t is not None and t.plural and t.words in sentence)
            )
            if bound_them(sentence) and _count_specific(sentence) < _SPECIFIC_BESIDE_THEM:
                last = None
                continue  # "I'd love to check them out": what "them" is stayed further back in the chat
            own[:0] = own_plurals(sentence)
            sentence = name_there(sentence, places)
            places[:0] = said_places
            sentence = name_the_person(sentence, people)
            people[:0] = people_named(sentence)
            opening = next((words for at, _, words in noun_phrases(sentence) if at == 0), None)
            if opening is not None and not any(t.words.split()[-1] == opening.split()[-1] for t in it_before):
                # "That page has three scenes. It's a sad story": a later "it" means the thing
                # the reply went on to speak of, not what the line before named (but "That
                # series looks great!" after "…this series" speaks of the line before's)
                it_before = ()
            if question is not None:
                answer = self._about_what_was_asked(question, sentence, line, voice, replied_to, it_before)
            if answer is not None:
                last = self._kept_answer(answer, found, index)
                question = asked = None
                continue
            # the line before is answered by the first sentence only
            asked = question = None
            if last is None:
                sentence = named_thing(sentence) or sentence
            sentence = restore_subject(sentence)
            if _CONDITION_OR_FRAGMENT.match(sentence):
                last = None
                continue  # "If the boiler breaks, I'll ring the landlord", "Even though I kept slipping."
            wanted = follow_ups(sentence) if sentence else []
            if not sentence or sentence.rstrip().endswith("?") and not wanted:
                last = None
                continue
            head = _TRAILING_JOIN.sub("", sentence[: wanted[0].start]) if wanted else sentence
            before = found[-1].text if found else None
            memory = self._statement(head, line, voice, things, found) if head else None
            if memory is not None:
                found.append(memory)
                self.last_of[line.speaker] = (index, memory)
                last = memory
            elif found and found[-1].text != before:
                last = found[-1]  # joined to the row before it (``_continue``)
            elif not (last is not None and not wanted and self._carry_on(head, line, voice, last)):
                if not (last is not None and _BARE_VERDICT.match(head)):
                    last = None  # (a bare verdict, "it was gripping", leaves the row open to the next)
            for request in wanted:
                self._follow_up(request, line, index, voice, found, () if found else thing_before)
                last = None
        return found

    def _answer(self, question: str, sentence: str, line: Line, asker: Line | None) -> _Memory | None:
        """The row for a short reply to the question before it (``answers``): "Asked what
        pizza they usually order, u:42 answered: Margherita." ``None`` when the sentence is
        no short answer, or the question names a human or cannot be turned."""
        listener = display_name(asker.speaker) if asker is not None and asker.speaker == self.request.persona else None
        text = answer_row(question, sentence, line.speaker, listener)
        if text is None or mentions_name(text.replace(line.speaker, ""), self.human_names):
            return None
        text = as_memory_text(text)
        importance = max(self.importance_min, importance_of(text, "fact"))
        return self._new(line.speaker, "fact", text, importance, line, None)

    def _kept_answer(self, answer: _Memory, found: list[_Memory], index: int) -> _Memory:
        """A reply's row that answers the line before: kept, and the speaker's last row."""
        found.append(answer)
        self.last_of[answer.subject] = (index, answer)
        return answer

    def _about_what_was_asked(
        self, question: str, sentence: str, line: Line, voice: Voice, asker: Line | None, things: tuple[Thing, ...]
    ) -> _Memory | None:
        """The row for a reply that answers a question about a thing by a pronoun (``answers``):
        "…I've always wanted to see Lisbon. How was it?" — "It was wonderful, every street has
        a café." → "Asked how Lisbon was, u:42 answered: it was wonderful, every street has a
        café." The question says what the reply's "it" is; ``None`` when it cannot."""
        if not _OPENS_ON_A_PRONOUN.match(sentence) or opens_on_dummy_it(sentence) or is_chatter(sentence):
            return None
        listener = display_name(asker.speaker) if asker is not None and asker.speaker == self.request.persona else None
        indirect = indirect_question_about(question, things, listener)
        if indirect is None or mentions_name(indirect, self.names):
            return None
        tense = tense_of(sentence)
        dated = resolve_dates(sentence, line.at.date(), tense)
        turn = attrs.evolve(voice, listener=self.persona_name if self.request.private else None)
        said = to_third_person(dated.text, turn, named=True)
        if said is None or addresses_listener(sentence):
            return None
        said = settle_demonstratives(said[0].lower() + said[1:] if said[:2] != "I " else said)
        text = f"Asked {indirect}, {line.speaker} answered: {said}"
        if len(text) > LIMIT:
            first = first_clause(said)
            text = f"Asked {indirect}, {line.speaker} answered: {first}" if first else text
        text = as_memory_text(text)
        head, _, answer = text.partition(" answered: ")
        # the answer's opening pronoun is the question's thing; anything else must point inside
        if len(text) > LIMIT or dangling(f"{head} answered: the thing {answer.split(None, 1)[-1]}"):
            return None
        importance = max(self.importance_min, importance_of(sentence, kind_of(sentence, tense)))
        return self._new(line.speaker, "fact", text, importance, line, dated.valid_from)

    @staticmethod
    def _shown(thing: str, found: list[_Memory], line: Line) -> None:
        """A photo the speaker drew the listener to ("Look at this!") joins the line's row
        before it when that row opens on its subject: "u:42 got a kayak and shared a photo of
        a red kayak on a lake." With no such row, nothing was said about the photo, and it is
        no row."""
        if not found or found[-1].followed or not found[-1].text.startswith(found[-1].subject):
            return
        if ": " in found[-1].text:
            return  # a view ("u:42 thinks: …") or an answer is no deed to add a photo to
        joined = f"{found[-1].text.rstrip('.')} and shared a photo of {thing}"
        if len(joined) <= LIMIT:
            found[-1].text = as_memory_text(joined)
            if line.id not in found[-1].evidence:
                found[-1].evidence.append(line.id)

    def _carry_on(self, sentence: str, line: Line, voice: Voice, row: _Memory) -> bool:
        """Join ``sentence`` to ``row`` when it goes on about what the row says (see
        ``continuation``). True when joined."""
        if row.followed or row.continued or not may_continue(sentence) or is_chatter(sentence):
            return False
        if addresses_listener(sentence) or mentions_name(sentence, self.names):
            return False
        dated = resolve_dates(sentence, line.at.date(), tense_of(sentence))
        turned = to_third_person(dated.text, voice, named=True)
        if turned is None:
            return False
        turned = settle_demonstratives(turned)
        if not points_back(sentence, turned):
            return False
        if importance_of(sentence, kind_of(sentence, tense_of(sentence))) < self.importance_min:
            return False  # small talk ("can't wait to hear about it") adds nothing
        text = joined(row.text, turned)
        if text is None:  # too long: its first clause may still fit ("…for 15 years and it's…")
            first = first_clause(turned)
            text = joined(row.text, first) if first is not None and may_continue(first) else None
        if text is None or dangling(text):
            return False
        row.text = as_memory_text(text)
        row.valid_from = row.valid_from or dated.valid_from
        row.continued = True
        if line.id not in row.evidence:  # it went on in a later line: that line is evidence too
            row.evidence.append(line.id)
        return True

    def _statement(
        self, sentence: str, line: Line, voice: Voice, things: list[str], found: list[_Memory]
    ) -> _Memory | None:
        if _points_at_a_chat_thing(sentence, things) or not self._about_the_speaker(sentence):
            return self._view(sentence, line, voice) if self._a_view(sentence) else None
        tense = tense_of(sentence)
        kind = kind_of(sentence, tense)
        importance = importance_of(sentence, kind)
        if importance < self.importance_min:
            return None
        listener = self.persona_name if self.request.private else None
        dated = resolve_dates(sentence, line.at.date(), tense)
        turn = attrs.evolve(voice, listener=listener)
        third = to_third_person(dated.text, turn)
        if third is None:
            return None
        text = as_memory_text(settle_demonstratives(third))
        if things and not shows_someone(things[0]) and (dangling(text) or this_alone(dated.text)):
            at_photo = point_at(dated.text, things[0])
            pointed = to_third_person(at_photo, turn) if at_photo != dated.text else None
            if pointed is not None:  # the photo is used up only where a pointer took it
                text = as_memory_text(settle_demonstratives(pointed))
                things.pop(0)
        if not things and dangling(text):
            worked = to_third_person(name_the_work(dated.text), turn)  # "I painted this after…"
            if worked is not None and not dangling(worked):
                text = as_memory_text(settle_demonstratives(worked))
        if things and sentence.startswith("I shared") and not dangling(text):
            text = with_what_was_shown(text, things.pop(0))
        elif things and not dangling(text):
            shown = described_by_photo(text, things[0])
            if shown is not None:
                text = shown
                things.pop(0)
        # about the speaker's own people ("u:42's family…"), a last "them" is the speaker
        # ("…means everything to me") or what the row names ("…grateful to have them")
        them_named = text.startswith(f"{line.speaker}'s ") and (
            _ENDS_ON_THE_SPEAKER.search(dated.text) is not None or not dangling(text)
        )
        if not self._specific(text, them_named) or _reads_as_order(text, line.speaker) or _SUBJECTLESS.match(text):
            return None
        if _VERBLESS.match(text):
            return None  # "Plus my full support." is no sentence
        if _SHARED_A_POINTER.match(text[len(line.speaker) :]):
            return None  # "u:42 shared this moment they snapped": what was shown is not said
        if dangling(text):
            if found and self._continue(found[-1], text, line):
                return None
            named = _it_named_by_the_row_before(text, found[-1]) if found and line.id in found[-1].evidence else None
            if named is not None:
                return self._new(line.speaker, kind, named, importance, line, dated.valid_from)
            text = _before_dangling_clause(text)
            if text is None or line.speaker not in text or not self._specific(text) or len(text.split()) < 3:
                return None  # what is left must still say who and what ("u:42 put." is no row)
        return self._new(line.speaker, kind, text, importance, line, dated.valid_from)

    def _a_view(self, sentence: str) -> bool:
        """Whether a sentence that is not about its speaker is their view of a thing (see the
        module rules): "The ferry to Arran is always late", not "Cara is pregnant"."""
        if is_chatter(sentence) or mentions_name(sentence, self.names) or addresses_listener(sentence):
            return False
        if _NAMED_SUBJECT.match(sentence) and not _PLACE_VIEW.match(sentence) or _VERB_OPENER.match(sentence):
            return False
        if _VIEW_OPENER.match(sentence) or _ORDER_OPENER.match(sentence):
            return False  # a pointer, a reaction, or an order ("Grab the chance!")
        if _GUESSED.search(sentence):
            return False  # "The crowd must have been wild": a guess at what the listener lived
        if _REACTION_VIEW.match(sentence) and not _OWN_IN_IT.search(sentence):
            return False  # "The kids look so happy", "That plan sounds great": a reaction to what the chat showed
        if _FRAGMENT_VIEW.match(sentence):
            return False  # "Exciting but nerve-wracking", "Finally giving it a go": no subject
        return not (_JUST_US.search(sentence) or _HYPOTHETICAL.search(sentence))

    def _view(self, sentence: str, line: Line, voice: Voice) -> _Memory | None:
        tense = tense_of(sentence)
        if tense == "present" and _GENERIC_OPENER.match(sentence) and not _NARRATED.search(sentence):
            # of people at large: "Pets make us happier" (but "The bakery near us…" is theirs)
            sentence = _GENERIC_WE.sub(lambda m: _PEOPLE[m[0].lower()], sentence)
        dated = resolve_dates(sentence, line.at.date(), tense)
        third = to_third_person(dated.text, voice, named=True)
        if third is None:
            return None
        first = _WORD.match(third)
        common = first is not None and (first[0].lower() in STOPWORDS or first[0].lower() in VAGUE
                                        or first[0].lower() in SUBORDINATORS or first[0].lower().endswith("ing"))
        said = settle_demonstratives(third[0].lower() + third[1:] if common else third)
        # a word kept capitalised (a name, or a noun no rule can tell from one) is quoted
        if not _A_CLAUSE.match(said):
            return None  # a fragment ("like being on another planet") is no view
        # the speaker's view is what they think (of a thing in the past: what they found);
        # "says" would add a frame and nothing else
        verb = "found that" if tense == "past" or _NARRATED.search(sentence) else "thinks"
        text = as_memory_text(f"{line.speaker} {verb} {said}" if said[:1].islower() else f"{line.speaker} {verb}: {said}")
        if _count_specific(text) < 3 or dangling(text):
            return None
        importance = importance_of(sentence, "fact")
        if importance < self.importance_min:
            return None
        return self._new(line.speaker, "fact", text, min(importance, 4), line, dated.valid_from)

    @staticmethod
    def _continue(previous: _Memory, text: str, line: Line) -> bool:
        """Join a row whose "it" points back to the row before it, from the same line:
        "u:42 bought a bike." + "u:42 rides it daily." → "u:42 bought a bike and rides it
        daily." — after a row that took a clause of its own, with its subject said again
        ("…; it made them think…; u:42 felt calm after reading it"). True when joined."""
        subject = f"{previous.subject} "
        if previous.followed or not text.startswith(subject) or line.id not in previous.evidence:
            return False
        if not previous.text.startswith(subject):
            return False  # "u:42's brother moved…": "and visits him" would make the brother do it
        rest = text[len(subject) :]
        if rest.startswith("and "):
            return False  # "u:42 and others paddle it" has a subject of its own, not the row's
        # after a clause of its own ("…; it made them think…") "and felt…" would read as that
        # clause's: the row's subject is said again
        glue = f"; {text[: -len(rest)]}" if previous.continued else " and "
        joined = as_memory_text(f"{previous.text.rstrip('.')}{glue}{rest}")
        if not joined.endswith(rest) or dangling(joined):
            return False
        previous.text = joined
        return True

    def _about_the_speaker(self, sentence: str) -> bool:
        """Whether a sentence says something about its speaker (see the module rules)."""
        if is_chatter(sentence) or not has_first_person(sentence) or mentions_name(sentence, self.names):
            return False
        if _FOREIGN_SUBJECT.match(sentence) and not _THING_SUBJECT.match(sentence):
            return False
        if _NAMED_SUBJECT.match(sentence) and not _FRAMED_BY_SPEAKER.match(sentence):
            return False
        if _GERUND_SUBJECT.match(sentence) and not re.search(r"\b(?:[Mm]y|me|mine)\b", sentence):
            return False
        return not (
            _JUST_US.search(sentence) or _ABOUT_LISTENER.search(sentence) or _HYPOTHETICAL.search(sentence)
            or about_the_listener(sentence)
        )

    def _follow_up(
        self,
        asked: FollowUp,
        line: Line,
        index: int,
        voice: Voice,
        found: list[_Memory],
        thing_before: tuple[Thing, ...] = (),
    ) -> None:
        if mentions_name(asked.clause, self.names):
            return
        said = name_the_pronoun(asked.clause, thing_before)
        dated = resolve_dates(said, line.at.date(), "future")
        listener = self.persona_name if self.request.private else None
        clause = to_third_person(dated.text, attrs.evolve(voice, listener=listener), named=True)
        if clause is None:
            return
        previous = self.last_of.get(line.speaker)
        if asked.needs_antecedent and previous is not None and index - previous[0] <= 2:
            memory = previous[1]
            joined = as_memory_text(f"{memory.text.rstrip('.')} and {clause}")
            if memory.followed:
                return  # one follow-up per row: "…and will report back" is said once
            if joined.endswith(f"{clause}."):
                memory.text = joined
                memory.kind = "open_loop"
                memory.followed = True
                memory.importance = max(memory.importance, 7)
                memory.valid_from = memory.valid_from or dated.valid_from
                if line.id not in memory.evidence:
                    memory.evidence.append(line.id)
                return
        if asked.needs_antecedent:
            return
        text = as_memory_text(f"{line.speaker} {clause}")
        if dangling(text):
            return  # "u:42 will check it out": what "it" is stayed in the chat
        memory = self._new(line.speaker, "open_loop", text, 7, line, dated.valid_from)
        memory.followed = True
        found.append(memory)
        self.last_of[line.speaker] = (index, memory)

    # -- persona lines ---------------------------------------------------------------------

    def _promises(self, line: Line, asked: str = "") -> list[_Memory]:
        """The persona's promises in ``line``; an "it" in one is named by what the line before
        (``asked``, another's) named — "Can you send me the bus timetable?" — "Sure, I'll send
        it to you later" → "Warren said he would send the bus timetable to u:42 later" — or the
        promise is not kept: nobody could tell later what was promised."""
        counterpart = self._counterpart()
        text = normalise(line.text)
        if counterpart is None or carries_link_or_order(text):
            return []
        found = []
        for raw in split_sentences(text):
            sentence = strip_address(raw, self.names)
            act = promised_act(sentence)
            if act is None or mentions_name(act, self.names):
                continue
            if act_points_nowhere(act, counterpart):
                named = name_the_pronoun(act, antecedents(asked)) if asked else act
                if named == act or act_points_nowhere(named, counterpart):
                    continue
                act = named
            dated = resolve_dates(act, line.at.date(), "future")
            said = promise_text(dated.text, self.persona_name, self.pronoun, counterpart)
            if said is None:
                continue
            text_out = as_memory_text(said)
            importance = max(7, importance_of(act, "promise"))
            found.append(
                self._new("self", "promise", text_out, importance, line, dated.valid_from, counterpart)
            )
        return found

    def _counterpart(self) -> str | None:
        if len(self.humans) == 1:
            return next(iter(self.humans))
        if self.request.private:
            return None
        return self.last_human

    # -- shared ----------------------------------------------------------------------------

    def _new(
        self,
        subject: str,
        kind: Kind,
        text: str,
        importance: int,
        line: Line,
        valid_from: str | None,
        counterpart: str | None = None,
    ) -> _Memory:
        self.position += 1
        return _Memory(
            subject=subject,
            kind=kind,
            text=text,
            importance=importance,
            evidence=[line.id],
            valid_from=valid_from,
            counterpart=counterpart,
            order=self.position,
        )

    @staticmethod
    def _specific(text: str, them_named: bool = False) -> bool:
        """At least one word that says something, and no ending on a bare "it" or "that"
        unless the rest is telling ("u:1 loves it" and "u:1 is keen to hear about it" say
        nothing a reader later could use). ``them_named``: a last "them" is the speaker or
        what the row names ("u:42's family means everything to them", "…grateful to have
        them"), not a pointer."""
        words = [w.lower() for w in _WORD.findall(text) if not w.startswith("u:")]
        specific = [w for w in words if w not in STOPWORDS and w not in VAGUE and not w.isdigit()]
        if them_named and words and words[-1] == "them":
            words = words[:-1]
        if words and words[-1] in _DANGLING and len(specific) < 3:
            return False
        return len(specific) >= 1

    def _known(self, memory: _Memory) -> bool:
        stems = content_stems(memory.text)
        return any(stems <= known or likeness(stems, known) >= _LIKE_KNOWN for known in self.known)

    @staticmethod
    def _unique(memories: list[_Memory]) -> list[_Memory]:
        seen: set[tuple[str, frozenset[str]]] = set()
        out = []
        for memory in memories:
            key = (memory.subject, content_stems(memory.text))
            if key in seen:
                continue
            seen.add(key)
            out.append(memory)
        return out


def _points_at_a_chat_thing(sentence: str, things: list[str]) -> bool:
    """Whether the sentence is led by a thing only the chat showed ("The colours make me calm",
    "That pic takes me back"), not by one it names as the speaker's ("The maps in my attic…")
    or one the line's photo shows ("This brooch…" with a photo of a silver brooch)."""
    led = _POINTED_SUBJECT.match(sentence)
    if led is None or _OWN_IN_IT.search(led["noun"]) or _SPEAKERS_THING.search(sentence, led.end()):
        return False
    noun = led["noun"].split()[-1].lower()
    return not any(re.search(rf"\b{re.escape(noun)}\b", thing, re.IGNORECASE) for thing in things)


# a line that names no plural and opens on "they" (after a word of reply: "Of course! They…")
# goes on about the plural its speaker named before
_STILL_THEY = re.compile(r"^(?:[A-Za-z]+(?: [a-z]+)?[!,.]+\s+)?(?:they|they're|they've)\b", re.IGNORECASE)
# "It was really gripping.": a verdict on what the row before named, and nothing else
_BARE_VERDICT = re.compile(
    r"^(?:it|that|this|they)(?:'s|'re|\s+is|\s+was|\s+are|\s+were)"
    r"(?:\s+(?:so|really|very|pretty|quite|super|too|just|totally|absolutely))*\s+[a-z-]+\s*[.!]*$",
    re.IGNORECASE,
)
# A condition is no fact ("If the boiler breaks, I'll…"), and a clause that only leans on
# another is no sentence ("Even though I kept slipping.")
_CONDITION_OR_FRAGMENT = re.compile(
    r"^(?:if|unless|especially (?:when|if|since|as|because))\b|"
    r"^(?:even though|although|though|because|whereas|even if)\b[^,;:–—-]*[.!]?$",
    re.IGNORECASE,
)
_OPENS_ON_A_PRONOUN = re.compile(r"^(?:it|it's|they|they're|they've)\s+\w", re.IGNORECASE)
_REACTION_WORDS = re.compile(r"[A-Za-z']+")


def _only_a_reaction(sentence: str) -> bool:
    """A reply's opening that answers nothing: "Thanks!", "Yeah!", "Thank you so much!" —
    what the question asked is answered by the sentence after it."""
    if not sentence.strip():
        return True
    return (
        not sentence.rstrip().endswith("?")
        and is_chatter(sentence)
        and len(_REACTION_WORDS.findall(sentence)) <= 4
        and _count_specific(sentence) == 0  # "Margherita, always!" answers; "Thanks!" does not
    )


_CLAUSE_BOUNDARY = re.compile(r",\s|;\s|\s[-–—]+\s|\s(?:and|but|so|because|which|while)\s")


def _before_dangling_clause(text: str) -> str | None:
    """The row up to the clause whose pointing word has nothing to point at: "u:42 is doing
    judo and it's giving them energy." → "u:42 is doing judo." ``None`` when no clause before
    it stands alone (the subject's clause itself points nowhere)."""
    cuts = [m.start() for m in _CLAUSE_BOUNDARY.finditer(text)]
    for cut in reversed(cuts):
        head = as_memory_text(text[:cut])
        if not dangling(head):
            return head
    return None


_SHOWN_HEAD = re.compile(
    r"^(?:a|an|the|my|our|some|two|three|four|five)\s+(?P<head>(?:[\w'-]+\s+){0,3}?[\w'-]+?)"
    r"(?=\s+(?:of|with|on|in|at|from|by|under|over|near|and|that)\b|$)", re.I)


def described_by_photo(text: str, thing: str) -> str | None:
    """A row that names the thing the line's photo shows, with the photo's description of it:
    "u:42 made a quilt." and a photo of "a quilt with red stars" → "u:42 made a quilt with red
    stars." ``None`` when the row does not name the photo's thing (its last noun before any
    "of", "with", "on"… after an article or possessive), when the photo shows people, or when
    what follows that noun says only where it was ("on a lake")."""
    match = _SHOWN_HEAD.match(thing.strip())
    if match is None or match.end() >= len(thing.strip()) or shows_someone(thing):
        return None
    if not re.match(r"\s+(?:of|with|that)\b", thing.strip()[match.end() :]):
        return None  # "a red kayak on a lake": where the photo was taken describes no kayak
    head = match["head"].split()[-1]
    if head.lower() in STOPWORDS or head.lower() in VAGUE:
        return None
    named = re.search(rf"\b(?:a|an|the|their|this|that)\s+(?:[\w'-]+\s+){{0,2}}?{re.escape(head)}\b(?![\w'-])", text, re.I)
    if named is None:
        return None
    rest = thing.strip()[match.end() :].rstrip(" .")
    return as_memory_text(f"{text[: named.end()]} {rest}{text[named.end() :]}")


def with_what_was_shown(text: str, thing: str) -> str:
    """A row that shows something ("u:42 shared their new quilt.") with what the line's photo
    showed: "u:42 shared their new quilt: a patchwork quilt with blue squares." Unchanged
    when the row already holds most of the photo's words."""
    shown = content_stems(thing)
    if not shown or len(shown - content_stems(text)) * 2 <= len(shown):
        return text
    return as_memory_text(f"{text.rstrip('.')}: {thing}")


def _reads_as_order(text: str, speaker: str) -> bool:
    """A turned row that no longer starts with its speaker can read as an order ("Never remind
    u:42…"); validation would drop it, so it is not offered. Rows that start with the
    speaker are statements and skip the (costly) check."""
    return not text.startswith(speaker) and carries_link_or_order(text)


def _it_named_by_the_row_before(text: str, before: _Memory) -> str | None:
    """A row whose object "it" points back at the one thing the line's row before it named,
    when the two are too long to join: "u:42 finished their thesis on river otters after four
    years in Devon." + "u:42 is going to submit it to three journals." → "u:42 is going to
    submit the thesis to three journals." ``None`` when that row names no single thing or the
    named row still points nowhere."""
    if _OBJECT_IT.search(text) is None or len(before.text) + len(text) <= LIMIT:
        return None  # short enough to join: the row before takes it, or it is no clause of it
    things = {
        words
        for _, _, words in noun_phrases(_THEIR.sub("the ", before.text))
        if not is_plural(words) and words.split()[-1].lower() not in PEOPLE_AND_PETS | RELATIONS
    }
    if len(things) != 1:
        return None
    named = as_memory_text(_OBJECT_IT.sub(f"the {things.pop()}", text, count=1))
    return None if dangling(named) or len(named) > LIMIT else named


# an object "it" taken somewhere or to someone ("submit it to", "hang it in"), not an idiom's
# ("dance it out", "make it", "take it easy") nor a subject ("it's", "it was")
_OBJECT_IT = re.compile(r"(?<=[a-z] )(?<!\bmake )(?<!\bmade )it(?= (?:to|into|for|at|in|on|with|from)\b)")
_THEIR = re.compile(r"\btheir\s+|\bu:\d+'s\s+")


def _cite_what_it_answers(memory: _Memory, before: Line) -> None:
    """A reply's first row cites the line it replies to beside its own: what the row means
    ("u:42 swims three times a week") is read with what was asked or said to the speaker ("How
    often do you get to the pool?"), and a search for the one finds the other."""
    if before.id not in memory.evidence:
        memory.evidence.append(before.id)


def _fold_the_rest(found: list[_Memory], kept: list[_Memory]) -> None:
    """A row a line could not keep joins the kept row said just before it, when both are
    statements about the same subject, the two fit in one row, and that row has taken no
    other."""
    hosts: list[_Memory] = []
    for memory in sorted(found, key=lambda m: m.order):
        if any(memory is k for k in kept):
            continue
        before = [k for k in kept if k.order < memory.order and k.subject == memory.subject]
        if not before or before[-1].followed or memory.followed or memory.kind in ("promise", "open_loop"):
            continue
        host = before[-1]
        if any(host is h for h in hosts):
            continue  # one row joined per kept row: a chain of them reads as a list of scraps
        clause = memory.text
        if sentence_case(clause.split(" ", 1)[0]):
            clause = clause[0].lower() + clause[1:]  # "…; certain authors inspire u:42."
        text = f"{host.text.rstrip('.')}; {clause}"
        if len(text) <= LIMIT and not dangling(text):
            host.text = as_memory_text(text)
            hosts.append(host)


_SPECIFIC_BESIDE_THEM = 3
_HIGH_IMPORTANCE = 7


def _worth_keeping(memory: _Memory) -> tuple[int, int]:
    """The order in which a line's rows are kept: what matters a lot first (life events,
    follow-ups and promises, importance 7 and up), then the rows that say the most — the
    most specific words, one more for a row that opens on its subject — in the order they
    were said."""
    return (-(memory.importance >= _HIGH_IMPORTANCE), -_count_specific(memory.text) - memory.text.startswith(memory.subject))


def _count_specific(text: str) -> int:
    words = [w.lower() for w in _WORD.findall(text) if not w.startswith("u:")]
    return sum(1 for w in words if w not in STOPWORDS and w not in VAGUE and not w.isdigit())


def block_statements(block: str) -> list[str]:
    """The memory texts quoted in a rendered block (``- "text" · tags`` lines)."""
    out = []
    for line in block.splitlines():
        match = _BLOCK_LINE.match(line.strip())
        if match is None:
            continue
        try:
            text = json.loads(match.group(1))
        except ValueError:
            continue
        if isinstance(text, str):
            out.append(text)
    return out
