"""Scripted chat for the write benchmarks: varied English chat between a human and a persona.

The lines are generated from templates written for these benchmarks (none taken from any data
set): each human gets a small life — a job, a city, a pet, a hobby, a sibling, a plan — and an
evening is a mix of greetings, small talk, statements about that life, preferences, plans with
dates, requests to follow up, questions, and the persona's replies and promises. A later
evening (``round_no`` ≥ 1) also changes something that holds one value at a time (a new job,
a move, a habit quit), so the router has something to close.

Rules:
- Deterministic: the same ``seed`` gives the same lines.
- Pure: no I/O, no clock; the caller posts the lines and chooses their times.
"""

from __future__ import annotations

import random

import attrs

JOBS = [
    ("a nurse", "the county hospital"), ("a software tester", "Brightlane"),
    ("an electrician", "Volt & Sons"), ("a barista", "the Copper Kettle"),
    ("a high school chemistry teacher", "Westfield High"), ("an accountant", "Harlow Partners"),
    ("a bus driver", "the city transit office"), ("a graphic designer", "Pinegrove Studio"),
    ("a paramedic", "the north ambulance station"), ("a sous chef", "Marlow's Bistro"),
    ("a librarian", "the Elm Street library"), ("a warehouse supervisor", "Northgate Logistics"),
]
CITIES = ["Leeds", "Porto", "Denver", "Wellington", "Tampere", "Halifax", "Bristol", "Austin",
          "Ghent", "Adelaide", "Kraków", "Sapporo"]
PETS = [("dog", "Biscuit"), ("cat", "Mochi"), ("parrot", "Captain"), ("rabbit", "Clover"),
        ("dog", "Juniper"), ("cat", "Pepper"), ("tortoise", "Atlas"), ("dog", "Noodle")]
HOBBIES = ["rock climbing", "baking sourdough", "playing the cello", "birdwatching",
           "trail running", "knitting", "restoring old bikes", "salsa dancing", "chess",
           "growing chillies", "watercolour painting", "kayaking"]
FOODS = ["ramen", "tacos al pastor", "mushroom risotto", "pho", "lemon tart", "dumplings",
         "shakshuka", "fish and chips"]
SIBLINGS = [("sister", "Priya"), ("brother", "Tomas"), ("sister", "Greta"), ("brother", "Ollie"),
            ("sister", "Maya"), ("brother", "Kofi")]
PLANS = ["a dentist appointment", "a job interview at a bank", "a driving test",
         "a half marathon", "my cousin's wedding", "a flight to Madrid", "a piano recital",
         "a meeting with my landlord", "a physio session", "a first date"]
DAYS = ["on Monday", "on Tuesday", "on Wednesday", "next Thursday", "on Friday", "this Saturday",
        "next week", "tomorrow"]
BOOKS = ["Piranesi", "The Remains of the Day", "Project Hail Mary", "A Gentleman in Moscow",
         "The Overstory", "Circe"]
SHOWS = ["a documentary about octopuses", "an old detective series", "a cooking competition",
         "a space opera", "a stand-up special"]

GREETINGS = [
    "hey {p}!", "hi there", "good morning!", "evening {p}", "hello again", "hey, you around?",
    "hiya", "morning! how's things",
]
SMALL_TALK = [
    "it's been raining all day here", "ugh, long week", "haha yeah", "lol true", "ok cool",
    "same here honestly", "nice nice", "anyway, how are you?", "not much going on today",
    "sorry, got distracted for a sec", "hope your day is going well", "right?", "fair enough",
    "the weather is finally nice", "just got home", "coffee is kicking in now",
]
FACTS = [
    "I work as {job} at {employer}.", "I've been living in {city} for about {n} years now.",
    "I have a {pet} called {pet_name}.", "My {sibling} {sibling_name} just had a baby girl.",
    "I grew up in a small town outside {city}.", "I started {hobby} last spring.",
    "My {sibling} {sibling_name} is moving in with me for a month.",
    "I finally paid off my student loan this month.", "I bought a second-hand car last week.",
    "I'm allergic to peanuts, which makes eating out tricky.",
    "I'm training for a 10k in {city} in October.",
]
PREFERENCES = [
    "I really love {hobby}.", "Honestly {food} is my favourite food.",
    "I can't stand horror films.", "I prefer mornings, my brain shuts off after 9pm.",
    "I've been reading {book} and I love it.", "I hate driving in the city.",
    "I'm really into {show} at the moment.", "I love cooking {food} on Sundays.",
]
PLAN_LINES = [
    "I have {plan} {day}.", "I'm going to {city} {day} to see friends.",
    "We're planning a trip to the coast with my {sibling} {day}.",
    "I'm thinking about signing up for a {hobby} class.",
]
FOLLOW_UPS = [
    "Ask me how {plan} went next time we talk.", "Remind me to call my {sibling} {day}.",
    "Check in with me after {plan}, I'm nervous.",
]
QUESTIONS = [
    "what have you been up to?", "do you like {food}?", "have you ever tried {hobby}?",
    "any good books lately?", "what would you do in my place?", "is that weird?",
]
PERSONA_REPLIES = [
    "That sounds wonderful, how long have you been doing that?", "Oh no, I'm sorry to hear that.",
    "Ha, I know exactly what you mean.", "That's a big step, congratulations!",
    "What made you decide on that?", "I'd love to hear more about it.",
    "You must be excited.", "That makes sense.", "Good luck, I'm sure it'll go fine!",
    "Enjoy the sunshine while it lasts.", "Tell me everything!",
]
PROMISES = [
    "I'll send you that {food} recipe tomorrow.", "I'll look up a good {hobby} club in {city} for you.",
    "I'll remember to ask about {plan}.", "I'll find you the name of that book this week.",
]
CHANGES = [
    "Big news: I left {employer} and I now work at {new_employer}.",
    "We moved! I live in {new_city} now.", "I quit {hobby}, it was taking too much time.",
    "I went vegetarian last month.", "I sold my car, I cycle everywhere now.",
    "I got promoted to team lead at {employer}.", "I'm engaged!",
]


@attrs.frozen
class Life:
    """The facts one human's lines draw on."""

    job: str
    employer: str
    city: str
    pet: str
    pet_name: str
    hobby: str
    food: str
    sibling: str
    sibling_name: str
    plan: str
    book: str
    show: str
    new_employer: str
    new_city: str

    @classmethod
    def draw(cls, rng: random.Random) -> "Life":
        job, employer = rng.choice(JOBS)
        new_job, new_employer = rng.choice([j for j in JOBS if j[1] != employer])
        pet, pet_name = rng.choice(PETS)
        sibling, sibling_name = rng.choice(SIBLINGS)
        city = rng.choice(CITIES)
        return cls(
            job=job, employer=employer, city=city, pet=pet, pet_name=pet_name,
            hobby=rng.choice(HOBBIES), food=rng.choice(FOODS), sibling=sibling,
            sibling_name=sibling_name, plan=rng.choice(PLANS), book=rng.choice(BOOKS),
            show=rng.choice(SHOWS), new_employer=new_employer,
            new_city=rng.choice([c for c in CITIES if c != city]),
        )

    def fill(self, template: str, rng: random.Random, persona: str) -> str:
        return template.format(
            **attrs.asdict(self), p=persona.capitalize(), n=rng.randint(2, 15), day=rng.choice(DAYS)
        )


def human_line(life: Life, rng: random.Random, persona: str, *, first: bool, round_no: int) -> str:
    """One line a human says: a greeting first, then a weighted mix of the kinds of chat."""
    if first:
        return life.fill(rng.choice(GREETINGS), rng, persona)
    pools = [(SMALL_TALK, 4), (FACTS, 3), (PREFERENCES, 2), (PLAN_LINES, 2), (FOLLOW_UPS, 1),
             (QUESTIONS, 2)]
    if round_no > 0:
        pools.append((CHANGES, 1))
    pool = rng.choices([p for p, _ in pools], weights=[w for _, w in pools])[0]
    return life.fill(rng.choice(pool), rng, persona)


def persona_line(life: Life, rng: random.Random, persona: str) -> str:
    """One line the persona says: mostly replies, now and then a promise."""
    pool = PROMISES if rng.random() < 0.15 else PERSONA_REPLIES
    return life.fill(rng.choice(pool), rng, persona)


def private_evening(life: Life, rng: random.Random, persona: str, human: str, lines: int,
                    round_no: int) -> list[tuple[str, str]]:
    """``lines`` (speaker, text) pairs of a private chat: the human and the persona in turn,
    the human now and then saying two lines in a row."""
    out: list[tuple[str, str]] = []
    while len(out) < lines:
        out.append((human, human_line(life, rng, persona, first=not out, round_no=round_no)))
        if len(out) < lines and rng.random() < 0.3:
            out.append((human, human_line(life, rng, persona, first=False, round_no=round_no)))
        if len(out) < lines:
            out.append((persona, persona_line(life, rng, persona)))
    return out


def group_evening(lives: dict[str, Life], rng: random.Random, personas: tuple[str, ...],
                  lines: int, round_no: int) -> list[tuple[str, str]]:
    """``lines`` (speaker, text) pairs of a group room: humans talk, personas answer now and then."""
    humans = list(lives)
    out: list[tuple[str, str]] = []
    spoke: set[str] = set()
    while len(out) < lines:
        if rng.random() < 0.3:
            persona = rng.choice(personas)
            out.append((persona, persona_line(lives[rng.choice(humans)], rng, persona)))
            continue
        human = rng.choice(humans)
        line = human_line(lives[human], rng, personas[0], first=human not in spoke, round_no=round_no)
        spoke.add(human)
        out.append((human, line))
    return out
