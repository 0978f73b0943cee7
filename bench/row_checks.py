"""The checks ``quality.py`` reads a memory row with: pure functions of the row's text.

A row is read the way a person reads it months later, alone, with no chat around it. Each
check returns ``None`` when the row passes it, else a short reason (the word or phrase that
failed), so the bench can count failures per check and show what failed:

- **subject** (``subject_problem``): the row begins with whom it is about — a ``u:`` id
  (``u:42``, ``u:42's``) or a capitalised name — not a pronoun, article, preposition, adverb,
  gerund, clause, auxiliary or the word a fragment opens on ("Was busy…", "Same with…",
  "Glad…"), nor a word followed by a comma; and, given the id the row is about, it
  names that id somewhere.
- **dangling reference** (``dangling_reference``): a pronoun or demonstrative with nothing in
  the row it can point at. ``it``/``its``/``this``/``that``/``these``/``those``/``one``/
  ``the same``/``so`` (as in "thinks so") need a thing named before them: a noun, a name, a
  quoted title. ``there`` (not "there is") needs a place. ``he``/``she``/``him``/``her``/
  ``his`` need a person other than the row's ``u:`` id — the rows call their human "they", so
  a "he" is somebody else. ``them`` in the same clause as the row's own subject ("u:42 has to
  get them ready") cannot be that subject, and needs a plural noun before it. A demonstrative
  with its noun ("those letters", "this weekend") points outside the row unless the noun was
  named earlier in it. "It" in "it was hard to leave" (the subject of an adjective and an
  infinitive) points at nothing and needs nothing, nor does "it" in a fixed phrase ("made it
  to the final", "make it happen", "give it a try", "gave it their all").
- **first person** (``first_person``): I, me, my, mine, myself, we, us, our, ours (quoted
  titles aside).
- **second person** (``second_person``): you, your, yours, yourself (quoted titles aside).
- **says frame** (``says_frame``): the row opens on a verb of saying — "u:42 says/said/
  mentioned/explained …": the frame adds nothing a row does not already mean. A verb of
  opinion ("thinks", "believes", "found that") is no frame: what a person thinks is the fact.
  "feels", "shared", "told", "added" and "knows" are a frame only before a clause ("feels
  that…", "feels the move was right", "added that…"), not before an adjective or an object
  ("feels tired", "shared a photo", "added some sage").
- **length / one sentence** (``length_problem``): at most 200 characters, at least 4 words,
  one full stop at the end, no question, no sentence break inside
  (``write.validation.is_one_sentence``).
- **chat English** (``chat_english``): contractions left without their apostrophe ("Im",
  "dont", "ill" for I'll, "its just" for it's just), a dropped g ("livin'") and chat
  spellings ("gonna", "u", "lol").

The word lists here are plain English grammar, written for these checks; they are apart from
the reader's own rules on purpose (a bench that asked the reader's code whether the reader's
rows are good would learn nothing). The dangling-reference check guesses nouns without a
tagger — a word after an article, a possessive, a number or a preposition, or a word after a
verb — so it is strict where the grammar is plain and gives the row the benefit of the doubt
where it is not.
"""

from __future__ import annotations

import re

from persona_memory.write.validation import is_one_sentence

CHECKS = (
    "subject",
    "dangling reference",
    "first person",
    "second person",
    "says frame",
    "length / one sentence",
    "chat English",
)

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_QUOTED = re.compile(r"\"[^\"]+\"|(?<![A-Za-z0-9])'[^']+'(?![A-Za-z0-9])")
_TOKEN = re.compile(
    r"u:\d+(?:'s)?|\"[^\"]+\"|(?<![A-Za-z0-9])'[^']+'(?![A-Za-z0-9])"
    r"|[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*|[^\sA-Za-z0-9]"
)
_ID = re.compile(r"u:\d+")


def _words(*groups: str) -> frozenset[str]:
    return frozenset(w for group in groups for w in group.split())


_ARTICLES = _words("a an the")
_POSSESSIVES = _words("my your his her its our their whose")
_DETERMINERS = _ARTICLES | _POSSESSIVES | _words(
    "some any every each another no other such several many few both all more most much"
)
_PREPOSITIONS = _words(
    """about above across after against along among around at before behind below beside
    between beyond by despite during except for from in inside into like near of off on onto
    out outside over past per since through throughout to toward towards under until up upon
    via with within without"""
)
_PLACE_PREPOSITIONS = _words(
    """at in into to from near around inside outside across through toward towards visit
    visits visited visiting"""
)
_AUXILIARIES = _words(
    """am is are was were be been being has have had do does did will would can could should
    may might must 's 're 've 'll 'd to don't doesn't didn't won't can't isn't aren't wasn't
    weren't hasn't haven't hadn't wouldn't couldn't shouldn't it's that's they're they've
    they'll they'd feel feels felt seem seems seemed become becomes became get gets got getting
    keep keeps kept stay stays stayed look looks looked sound sounds sounded"""
)
_SUBJECT_PRONOUNS = _words("i we you he she it they who which")
_ADVERBS = _words(
    """just really also finally recently still already always never often usually sometimes
    even actually now soon again totally definitely probably only truly currently lately not
    so too very quite pretty almost nearly once later then ever rather"""
)
_CONJUNCTIONS = _words(
    "and or but nor yet because when while if since as though although unless until where whether so"
)
_PRONOUNS = _words(
    """i me my mine myself we us our ours ourselves you your yours yourself he him his himself
    she her hers herself it its itself they them their theirs themselves themself this that
    these those one someone something everyone everything anyone anything nothing nobody
    somebody everybody who whom what which whatever here there"""
)
_FUNCTION = (
    _DETERMINERS | _PREPOSITIONS | _AUXILIARIES | _ADVERBS | _CONJUNCTIONS | _PRONOUNS
    | _words("than how why yes no not same own")
)
_ADJECTIVES = _words(
    """great good bad happy sad excited proud glad nice fun tough hard ready amazing awesome
    cool fine sure busy tired grateful thankful lucky worried nervous stressed easy difficult
    important special interesting beautiful wonderful thrilled super able unable eager keen
    afraid scared curious free full new old big small little huge tiny long short best better
    worse worst favorite favourite fantastic incredible exciting inspiring rewarding
    challenging stressful relaxing lovely perfect crazy wild right wrong true real worth
    possible impossible different same own whole such last first next final recent entire"""
)
_OBJECTS = _words("it them him her us me its their his a an the")
_PERSON_NOUNS = _words(
    """friend friends brother brothers sister sisters mom mum mother dad father parent parents
    son sons daughter daughters husband wife partner boyfriend girlfriend fiance fiancee boss
    coworker coworkers colleague colleagues teacher teachers coach doctor therapist neighbor
    neighbour kid kids child children baby guy guys girl girls boy boys man men woman women
    grandma grandpa grandmother grandfather grandparents uncle aunt auntie cousin nephew niece
    roommate mentor student students buddy pal family team teammate teammates classmate
    classmates manager client clients customer customers dog dogs cat cats puppy kitten pet
    pets pup horse bird someone somebody youngest oldest eldest"""
)
_PLURAL_NOUNS = _words(
    "people children kids men women folks family team crew group staff police parents"
)
_MONTHS_AND_DAYS = _words(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday"""
)
_EXISTENTIAL = _words(
    """is are was were 's 're has have had will would might may could must seems seem seemed
    used isn't aren't wasn't weren't be being been hasn't haven't won't wouldn't can can't
    should appears remains remained exist exists existed"""
)
_EXTRAPOSING = _words(
    """is was 's isn't wasn't be been feels felt seems seemed becomes became takes took"""
)
_EXTRAPOSING_VERBS = _words("find finds found make makes made think thinks thought consider considers")
_CLAUSE_BREAKS = _words(
    """, ; : - and but or because when while if since so that who which as after before until
    though although where whether"""
)
_THAT_PRONOUN_NEXT = _words(
    """about for in at with on to from too again yet now today anymore though happen happened
    happens is was would will sounds sounded seems seemed made makes means meant must could
    might can helps helped feels felt kind way"""
)
_SO_VERBS = _words(
    """think thinks thought hope hopes hoped believe believes believed guess guesses guessed
    suppose supposes say says said told do does did doing done if not seems seemed imagine
    imagines expect expects expected"""
)
_ONE_PRONOUN_NEXT = _words(
    """and but or so too for to with in on at that which who they because when soon yet now
    again today either as is was has had will would can could 's"""
)
_BAD_OPENERS = _words(
    """it its it's this that these those there here they he she his her we our you your the a
    an some when if while after before since because as so and but or being one each every
    everything something nothing everyone someone on in at for with from to by of about
    during over under sometimes today yesterday tomorrow tonight now then still also just
    once last next even maybe perhaps overall plus anyway i i'm my me was were been has have had
    did does do am are is pretty glad definitely totally same almost somewhat yeah yes no oh wow
    appreciate kudos"""
)

_NOT_ADVERBS = _words("family july italy emily kelly lily holly sally molly ally rally")
_FIRST_PERSON = _words(
    "i me my mine myself we us our ours ourselves i'm i've i'll i'd we're we've we'll we'd let's"
)
_SECOND_PERSON = _words("you your yours yourself yourselves you're you've you'll you'd y'all")

_RELATIVES = _words("who whom which that where when whose")
_FRAME_ALWAYS = _words(
    """says said say mentions mentioned claims claimed notes noted states stated explains
    explained admits admitted reports reported remarks remarked insists insisted"""
)
_FRAME_BEFORE_CLAUSE = _words(
    """feels felt shares shared tells told knows knew realizes realized realises realised expresses
    expressed adds added"""
)
_SAYING = _FRAME_ALWAYS | _FRAME_BEFORE_CLAUSE
_THAT_CLAUSE_VERBS = _words(
    """hope hopes hoped wish wishes wished know learn learns learned learnt realize realise
    decide decides decided promise promises promised notice notices noticed find finds found
    understand understands understood remember remembers remembered forget forgets forgot
    agree agrees agreed admit see sees saw hear hears heard show shows showed mean means meant
    guess bet doubt doubts expect expects expected figure feel ensure ensures ensured prove
    proves proved suggest suggests suggested say tell think believe read reads"""
)
_FRAME_NOT_AFTER = _words(
    "about of to for with on in at up out over goodbye hi hello thanks sorry so"
) | _ADJECTIVES
_CLAUSE_SUBJECTS = _words("they it there he she everyone everything nothing someone we i you")
_FRAME_ADVERBS = _words("also just really still often always never now later then once even")

_UNAPOSTROPHISED = _words(
    """im cant wont dont didnt doesnt isnt wasnt arent werent couldnt wouldnt shouldnt havent
    hasnt hadnt thats ive youre theyre theyve theyll youve youll whats shes"""
)
_CHAT_SPELLINGS = _words(
    "gonna wanna gotta u ur lol omg lmao idk btw tbh imo thx pls plz cuz"
)
_ILL_AFTER = _words(
    """is are was were be been being am feel feels felt feeling fell fall falls become became
    got get gets getting seriously very mentally terminally chronically critically so too"""
)
_AFTER_ITS_MEANING_IT_IS = _words(
    "just so not a an the been going really very always never all ok okay too gonna such"
)
_DROPPED_G = re.compile(r"\b[A-Za-z]+in'(?=\s|[.,;:!?]|$)")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.translate(_QUOTES))


def _is_quoted(token: str) -> bool:
    return len(token) > 2 and token[0] in "\"'" and token[-1] == token[0]


def _is_id(token: str) -> bool:
    return _ID.fullmatch(token) is not None


def _is_word(token: str) -> bool:
    return token[:1].isalpha() and not token.startswith("u:")


def _plain(word: str) -> str:
    """A word folded for matching "letters" with "letter": lower case, no plural ending."""
    word = word.lower()
    if word.endswith("'s"):
        word = word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _verb_slot(tokens: list[str], j: int) -> bool:
    """Whether the word at ``j`` sits where a verb or an adjective goes: right after a subject
    (a bare ``u:`` id, a subject pronoun) or an auxiliary, with only adverbs between."""
    k = j - 1
    while k >= 0 and (tokens[k].lower() in _ADVERBS or tokens[k].lower().endswith("ly")):
        k -= 1
    if k < 0:
        return False
    before = tokens[k].lower()
    return _is_id(tokens[k]) or before in _AUXILIARIES or before in _SUBJECT_PRONOUNS


def _noun_at(tokens: list[str], j: int) -> bool:
    """Whether the token at ``j`` can be a thing a later pronoun points at (see the module
    docstring: a guess without a tagger)."""
    token = tokens[j]
    if _is_quoted(token):
        return True
    if not _is_word(token):
        return False
    lower = token.lower()
    if j == 0:
        return token[:1].isupper() and lower not in _BAD_OPENERS and not lower.endswith("ing")
    if token[:1].isupper() and lower != "i" and lower not in _FUNCTION:
        return True  # a name, a place, a brand
    if lower in _FUNCTION or lower in _ADJECTIVES or lower.endswith("ly") or len(lower) < 2:
        return False
    before = tokens[j - 1].lower()
    after = tokens[j + 1].lower() if j + 1 < len(tokens) else ""
    if after in _OBJECTS and _is_word(tokens[j - 1]) and before not in _FUNCTION:
        return False  # between a noun and its object: a verb ("the rollers give it")
    return not _verb_slot(tokens, j)


def _nouns_before(tokens: list[str], index: int) -> list[int]:
    return [j for j in range(index) if _noun_at(tokens, j)]


def _is_person_at(tokens: list[str], j: int, first_id: str | None) -> bool:
    token = tokens[j]
    if _is_id(token.removesuffix("'s")):
        return token.removesuffix("'s") != first_id
    if not _is_word(token):
        return False
    lower = token.lower()
    if lower in _PERSON_NOUNS or lower.endswith("-old"):
        return True
    if token[:1].isupper() and lower not in _MONTHS_AND_DAYS and lower not in _FUNCTION:
        return j > 0 or lower not in _BAD_OPENERS
    return False


def _is_plural_at(tokens: list[str], j: int) -> bool:
    lower = tokens[j].lower()
    if lower in _PLURAL_NOUNS:
        return True
    return _noun_at(tokens, j) and lower.endswith("s") and not lower.endswith(("ss", "'s")) and len(lower) > 3


def _noun_phrase_after(tokens: list[str], index: int) -> str | None:
    """The noun a determiner at ``index`` stands before ("those old letters" → letters), or
    ``None`` when no content word follows it (the determiner is a pronoun)."""
    noun = None
    for token in tokens[index + 1 : index + 4]:
        lower = token.lower()
        if not _is_word(token) or lower in _FUNCTION:
            break
        noun = token
        if lower not in _ADJECTIVES:
            break
    return noun


def _named_earlier(tokens: list[str], index: int, noun: str) -> bool:
    wanted = _plain(noun)
    return any(_is_word(t) and _plain(t) == wanted for t in tokens[:index])


def _extraposed_it(tokens: list[str], i: int) -> bool:
    """"it" that points at nothing: "it was hard to leave", "finds it easy to rest", "it is
    great that…"."""
    before = tokens[i - 1].lower() if i > 0 else ""
    after = [t.lower() for t in tokens[i + 1 : i + 6]]
    if tokens[i].lower() == "it's":
        after = ["is", *after]
    elif not after or (after[0] not in _EXTRAPOSING and before not in _EXTRAPOSING_VERBS):
        return False
    for k, word in enumerate(after[1:4], start=1):
        if word in ("that", "how"):
            return True
        if word == "to":
            following = after[k + 1] if k + 1 < len(after) else ""
            return following not in _DETERMINERS and following not in _PRONOUNS and not following.startswith("u:")
        if word in _CLAUSE_BREAKS:
            return False
    return False


def _idiom_it(tokens: list[str], i: int) -> bool:
    """"made it to the final", "make it through the winter", "make it happen", "give it a
    try", "gave it their all": "it" in a fixed phrase."""
    before = tokens[i - 1].lower() if i > 0 else ""
    after = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
    later = tokens[i + 2].lower() if i + 2 < len(tokens) else ""
    if before in ("make", "makes", "made", "making"):
        return after in ("to", "through", "happen", "work", "count")
    if before in ("give", "gives", "gave", "giving"):
        return after == "a" and later in ("try", "go", "shot") or after in _POSSESSIVES and later in ("all", "best")
    return False


def _them_is_bound(tokens: list[str], i: int) -> bool:
    """Whether "them" at ``i`` stands in the same clause as the row's own subject ("u:42 has
    to get them ready"), where it cannot mean that subject."""
    for j in range(i - 1, -1, -1):
        token = tokens[j]
        lower = token.lower()
        if lower in _CLAUSE_BREAKS or token in ",;:-":
            return False
        if _is_id(token) or lower == "they":
            return True
        if _noun_at(tokens, j) or token.endswith("'s"):
            return False
    return False


def _pointing_problem(tokens: list[str], i: int, first_id: str | None) -> str | None:
    """The word at ``i`` if it points outside the row, else ``None``."""
    token = tokens[i]
    lower = token.lower()
    before = tokens[i - 1].lower() if i > 0 else ""
    after = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
    nouns = _nouns_before(tokens, i)
    things = [j for j in nouns if not _is_plural_at(tokens, j) and tokens[j].lower() not in _PERSON_NOUNS]
    clause_end = not after or not after[:1].isalnum()

    if lower in ("it", "its", "it's", "itself"):
        if lower != "its" and (_extraposed_it(tokens, i) or _idiom_it(tokens, i)):
            return None
        return None if things or (lower != "its" and _clause_before(tokens, i)) else token
    if lower in ("he", "she", "him", "her", "his", "hers", "himself", "herself"):
        return None if any(_is_person_at(tokens, j, first_id) for j in range(i)) else token
    if lower in ("they", "their", "theirs"):
        people = any(_is_id(t.removesuffix("'s")) or _is_person_at(tokens, j, None) for j, t in enumerate(tokens))
        return None if people or any(_is_plural_at(tokens, j) for j in range(i)) else token
    if lower == "them":
        if not _them_is_bound(tokens, i):
            people = any(_is_id(t.removesuffix("'s")) or _is_person_at(tokens, j, None) for j, t in enumerate(tokens))
            if people:
                return None
        return None if any(_is_plural_at(tokens, j) for j in range(i)) else token
    if lower == "there":
        if after in _EXISTENTIAL or before == "out" or (after == "for" and before in _AUXILIARIES):
            return None
        places = [j for j in nouns if tokens[j][:1].isupper() or _is_quoted(tokens[j])
                  or _PLACE_PREPOSITIONS & {t.lower() for t in tokens[max(0, j - 3) : j]}]
        return None if places else token
    if lower == "there's":
        return None
    if lower in ("this", "these", "those", "that", "that's"):
        return _demonstrative_problem(tokens, i, things if lower in ("this", "that", "that's") else nouns)
    if lower == "one":
        if before in ("no", "every", "any", "some", "each") or after in ("of", "another", "more"):
            return None
        if clause_end or after in _ONE_PRONOUN_NEXT:
            return None if nouns else token
        return None
    if lower == "same" and before == "the" and tokens[i - 2].lower() not in ("share", "shares", "shared", "sharing"):
        noun = _noun_phrase_after(tokens, i)
        if "as" in [t.lower() for t in tokens[i + 1 : i + 6]]:
            return None
        if noun is None:
            return None if nouns else "the same"
        return None if _named_earlier(tokens, i - 1, noun) else f"the same {noun}"
    if lower == "so" and (clause_end or after in ("and", "but", "too")) and before in _SO_VERBS:
        content = [t for t in tokens[: i - 1] if _is_word(t) and t.lower() not in _FUNCTION]
        return None if content else f"{tokens[i - 1]} so"
    return None


def _demonstrative_problem(tokens: list[str], i: int, nouns: list[int]) -> str | None:
    token = tokens[i]
    lower = token.lower()
    before = tokens[i - 1].lower() if i > 0 else ""
    after = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
    noun_before = i > 0 and _noun_at(tokens, i - 1)
    if lower in ("that", "that's"):
        if lower == "that's" or not after[:1].isalnum() or after in _THAT_PRONOUN_NEXT:
            if noun_before:
                return None  # a relative pronoun: "a bike that was red"
            return None if nouns or _clause_before(tokens, i) else token
        elif _noun_phrase_after(tokens, i) and (
            (before in _PREPOSITIONS and before != "like")
            or (_verb_slot(tokens, i - 1) and before not in _SAYING and before not in _THAT_CLAUSE_VERBS)
        ):
            noun = _noun_phrase_after(tokens, i)  # a determiner: "painted that lake"
            at = tokens.index(noun, i + 1)
            if at + 1 < len(tokens) and tokens[at + 1].lower() in _OBJECTS:
                return None  # a relative clause: "a company they like that needs their skills"
            return None if _named_earlier(tokens, i, noun) else f"{token} {noun}"
        else:
            return None  # "says that…", "a bike that they…": a clause, not a pointer
        return None if nouns else token
    if after in ("who", "which", "that") and lower in ("these", "those"):
        return None  # "those who…": the clause says who
    if before in ("like", "as") and nouns:
        return None  # "moments like these": the noun is just before
    noun = _noun_phrase_after(tokens, i)
    if noun is None:
        return None if nouns or _clause_before(tokens, i) else token
    at = next(k for k in range(i + 1, len(tokens)) if tokens[k] == noun)
    if at + 1 < len(tokens) and tokens[at + 1].lower() in _RELATIVES:
        return None  # "those moments when…": the clause says which
    return None if _named_earlier(tokens, i, noun) else f"{token} {noun}"


def _clause_before(tokens: list[str], i: int) -> bool:
    """Whether "it", "that" or "this" at ``i`` opens a clause after a break with a whole
    clause before it to point at: "u:42 moved to a new flat in May, and that was hard"."""
    b = i - 1
    while b > 0 and (tokens[b].lower() in _CLAUSE_BREAKS or tokens[b] in ",;:-"):
        b -= 1
    if b == i - 1:
        return False
    return any(_is_word(t) and t.lower() not in _FUNCTION and t.lower() not in _SAYING for t in tokens[: b + 1])


def dangling_reference(text: str) -> str | None:
    """The first pronoun or demonstrative that points outside the row (see the module
    docstring), or ``None``."""
    tokens = _tokens(text)
    ids = [t.removesuffix("'s") for t in tokens if _is_id(t.removesuffix("'s"))]
    first_id = ids[0] if ids else None
    for i in range(len(tokens)):
        problem = _pointing_problem(tokens, i, first_id)
        if problem:
            return problem
    return None


def _unquoted_words(text: str) -> list[str]:
    return [t for t in _tokens(_QUOTED.sub(" ", text.translate(_QUOTES))) if _is_word(t)]


def first_person(text: str) -> str | None:
    """The first word of the first person outside quoted titles ("US" the country aside)."""
    return next((w for w in _unquoted_words(text) if w.lower() in _FIRST_PERSON and w != "US"), None)


def second_person(text: str) -> str | None:
    """The first word of the second person outside quoted titles."""
    return next((w for w in _unquoted_words(text) if w.lower() in _SECOND_PERSON), None)


def says_frame(text: str) -> str | None:
    """The opening frame ("u:42 says", "u:42 felt that") when the row opens with one."""
    tokens = _tokens(text)
    if not tokens or not (_is_id(tokens[0]) or (tokens[0][:1].isupper() and tokens[0].lower() not in _BAD_OPENERS)):
        return None
    k = 1
    while k < len(tokens) and tokens[k].lower() in _FRAME_ADVERBS:
        k += 1
    if k >= len(tokens):
        return None
    verb = tokens[k].lower()
    after = [t.lower() for t in tokens[k + 1 : k + 5]]
    nxt = after[0] if after else ""
    frame = " ".join(tokens[: k + 1])
    if verb in _FRAME_ALWAYS:
        return None if nxt in _FRAME_NOT_AFTER else frame
    if verb in _FRAME_BEFORE_CLAUSE:
        if verb in ("shares", "shared", "tells", "told", "adds", "added"):
            return frame if "that" in after[:3] else None
        if nxt == "like":
            nxt = after[1] if len(after) > 1 else ""
        if nxt == "that" or nxt.startswith("u:") or nxt in _CLAUSE_SUBJECTS:
            return frame
    return None


def _names(text: str, about: str) -> bool:
    return re.search(rf"(?<![\w:]){re.escape(about)}(?!\d)", text) is not None


def has_subject(text: str, about: str | None = None) -> bool:
    """The row begins with whom it is about and, given ``about``, names that id."""
    first = text.split(" ", 1)[0].translate(_QUOTES)
    if about is not None and not _names(text, about):
        return False
    if re.fullmatch(r"u:\d+(?:'s)?", first):
        return True
    word = first.strip(".;:'\"")
    if word.endswith(",") or word.lower().endswith("ing"):
        return False
    if word.lower().endswith("ly") and word.lower() not in _NOT_ADVERBS:
        return False
    return bool(word[:1].isupper() and word.lower() not in _BAD_OPENERS)


def subject_problem(text: str, about: str | None = None) -> str | None:
    """Why the row does not name whom it is about (``has_subject``), or ``None``."""
    if has_subject(text, about):
        return None
    if about is not None and not _names(text, about):
        return f"does not name {about}"
    return f"opens with {text.split(' ', 1)[0]!r}"


def one_sentence(text: str) -> bool:
    """At most 200 characters, one full stop at the end, no question, no break inside."""
    return (
        len(text) <= 200 and text.endswith(".") and not text.endswith("..") and "?" not in text
        and is_one_sentence(text)
    )


def length_problem(text: str) -> str | None:
    """Too long, too short (under 4 words), or more than one sentence; else ``None``."""
    if len(text) > 200:
        return f"{len(text)} characters"
    if len(text.split()) < 4:
        return f"{len(text.split())} words"
    return None if one_sentence(text) else "not one sentence"


def chat_english(text: str) -> str | None:
    """The first contraction left without its apostrophe, or chat spelling, outside titles."""
    words = _unquoted_words(text)
    for i, word in enumerate(words):
        lower = word.lower()
        if lower in _UNAPOSTROPHISED or lower in _CHAT_SPELLINGS:
            return word
        if lower == "ill" and (i == 0 or words[i - 1].lower() not in _ILL_AFTER) and i + 1 < len(words):
            return word
        if lower == "its" and i + 1 < len(words) and words[i + 1].lower() in _AFTER_ITS_MEANING_IT_IS:
            return f"{word} {words[i + 1]}"
    dropped = _DROPPED_G.search(_QUOTED.sub(" ", text.translate(_QUOTES)))
    return dropped.group(0) if dropped else None


def problems(text: str, about: str | None = None) -> dict[str, str]:
    """Every failed check of ``CHECKS`` with its reason; empty when the row passes them all."""
    found = {
        "subject": subject_problem(text, about),
        "dangling reference": dangling_reference(text),
        "first person": first_person(text),
        "second person": second_person(text),
        "says frame": says_frame(text),
        "length / one sentence": length_problem(text),
        "chat English": chat_english(text),
    }
    return {name: reason for name, reason in found.items() if reason}
