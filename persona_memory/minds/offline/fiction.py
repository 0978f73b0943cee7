"""Lines said in a role-play are not facts about the person who says them.

"Pretend you're a ship's captain and I'm your first mate" opens a scene; what follows in it
("I've sailed these seas for forty years") is a character speaking, not the human. Design §2.1
keeps nothing from a mounted game or role-play; a scene started by the people themselves, with
no kit mounted, is read here.

Rules:
- A line *opens a scene* when it asks for or starts a make-believe: "let's pretend", "pretend
  (that) you're / I'm / we're", "let's play (a game where / that)", "role-play" / "roleplay" /
  "RP", "in this story / scene / game", "you are now a/an …", "imagine you're / I'm / we're", or it
  opens on an action written between asterisks ("*draws a sword*"). The opening line itself
  is in the scene.
- Every line after it, whoever says it, is in the scene until a line *closes* it: "out of
  character" / "OOC" / "(ooc", "back to reality", "end scene", "stop the game", "jokes aside",
  "for real though", "seriously though", "in real life", "that was fun" — the closing line is
  the first line out of the scene again, read as any other.
- A line in a scene yields no row, about anyone.
"""

from __future__ import annotations

import re

_OPENS = re.compile(
    r"\blet'?s (?:pretend|play (?:a game )?(?:where|that|pretend|make-believe)|role-?play|do a role-?play)\b|"
    r"\bpretend (?:that )?(?:you'?re|you are|I'?m|I am|we'?re|we are|to be)\b|"
    r"\brole-?play(?:ing)?\b|\bRP\b|\bin this (?:story|scene|game|role-?play)\b|\byou are now (?:a|an|playing)\b|"
    r"\bimagine (?:that )?(?:you'?re|you are|I'?m|I am|we'?re|we are)\b|^\s*\*[^*\n]{2,80}\*",
    re.IGNORECASE,
)
_CLOSES = re.compile(
    r"\bout of character\b|\(?\booc\b|\bback to reality\b|\bend (?:the )?scene\b|\bstop the game\b|"
    r"\bjokes? aside\b|\bfor real,? though\b|\bseriously,? though\b|\bin real life\b|\bthat was fun\b",
    re.IGNORECASE,
)


def in_fiction(texts: list[str]) -> list[bool]:
    """For each line of a slice, in order: whether it is said inside a role-play scene (see
    the module rules)."""
    out = []
    scene = False
    for text in texts:
        if scene and _CLOSES.search(text):
            scene = False
        elif not scene and _OPENS.search(text):
            scene = True
        out.append(scene)
    return out
