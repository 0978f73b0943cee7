"""Words too common to say anything about a person: left out where content words are compared
(``write.guards``' support by the evidence), never read as a name unless capitalised
(``text.names``), never the word before a spelled-out domain (``text.links``)."""

from __future__ import annotations

STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from about into onto over under
    up down out off as than that this these those there here it its is are was were be been being
    am do does did doing done have has had having will would can could should shall may might must
    not no nor very too just really also still me my mine myself we us our ours you your yours he
    him his she her hers they them their theirs themself themselves what which who whom whose when
    where why how all any some each every more most much many such own same other again once only
    now then yet ever even lot lots thing things something anything everything someone anyone way
    said says say told tell tells get gets got make makes made go goes went gone come comes came
    like likes one two three new old good great nice well back since ago last next week weeks
    day days today yesterday tomorrow month months year years time times recently currently soon
    per via because while though although after before during until around quite doesn didn
    isn wasn aren weren don won can couldn wouldn shouldn haven hasn hadn""".split()
)
