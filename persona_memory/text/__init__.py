"""What both the guards and the offline reader read in a text: shared matchers, no rules. Pure.

Each module holds one concept and imports nothing of persona-memory outside this package, so
the write path (``write.guards``) and the offline reader (``minds.offline``) can both use it
without importing each other:

- ``folded`` — a case-insensitive pattern with a fast search on ASCII text (``Folded``);
- ``plain`` — a text with its Unicode look-alikes written the plain ASCII way;
- ``secrets`` — a password, card, account, key or id, or a promise to hand one over;
- ``orders`` — an order to the persona, or a claim of power over it;
- ``links`` — a link, tag, e-mail address or bare domain;
- ``names`` — how a display name is found in a text;
- ``stopwords`` and ``user_ids`` — what the matchers above leave out or look through.
"""
