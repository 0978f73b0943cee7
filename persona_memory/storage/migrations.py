"""The schema, as one ordered list of migrations written once for SQLite and PostgreSQL.

Migration N makes the same tables, columns, constraints and indexes on both backends, so a
database at version N holds what a file at version N holds. ``schema.py`` applies them to an
SQLite file, ``postgres_schema.py`` to a PostgreSQL database; each records the version its own
way (``PRAGMA user_version``; the row of ``persona_memory_schema``).

Rules:
- A migration is a sequence of steps. A step is a template in both dialects' shared SQL whose
  ``{word}`` fields ``dialect.Dialect.ddl`` fills in (the words and what each becomes are
  tabled in ``dialect.py``): ``{json:7}`` is a column holding JSON, ``TEXT`` in SQLite and
  ``jsonb`` in PostgreSQL. A literal brace is doubled (``'{{}}'``).
- Where the two cannot share one text, the step is ``Apart(sqlite=…, postgresql=…)``: both
  variants side by side, each in its own dialect's SQL as it is run, with the reason beside
  it. Two steps are so: the version trigger (a trigger body in SQLite, a PL/pgSQL function in
  PostgreSQL) and the registry's generation sequence (PostgreSQL only).
- What a step renders to in SQLite is the text SQLite keeps as the file's schema
  (``sqlite_master``), indentation included: a template is never re-laid out, so a file made
  now has the schema text of a file made by any earlier version (``tests/schema_v12.sql``).
- Migration 1 is the design's §1 to the letter: ``persona_memory`` with every listed column,
  ``users`` (``memory_note`` ≤ 400, ``memory_on`` default on) and ``persona_memory_mute``.
  Constraints both backends can hold are in the table (the six kinds, importance 1..10, text
  ≤ 200).
- Later migrations only add: never rewrite or drop what users stored. A migration, once
  released, is never edited: a new need is a new migration at the end.
"""

from __future__ import annotations

import attrs

from .dialect import Dialect


@attrs.frozen
class Apart:
    """A step that needs a different statement in each dialect, each given as it is run."""

    sqlite: str
    postgresql: str

    def text_for(self, dialect: Dialect) -> str:
        match dialect.name:
            case "sqlite":
                return self.sqlite
            case "postgresql":
                return self.postgresql
        raise ValueError(f"no statement for dialect {dialect.name!r}")


Step = str | Apart


@attrs.frozen
class Migration:
    """One version's change to the schema: its steps, run in order in one transaction."""

    steps: tuple[Step, ...]

    @classmethod
    def of(cls, *steps: Step) -> Migration:
        return cls(tuple(steps))

    def script(self, dialect: Dialect) -> str:
        """The migration's statements in ``dialect``, in order, as one script."""
        return "\n".join(
            step.text_for(dialect) if isinstance(step, Apart) else dialect.ddl(step) for step in self.steps
        )


MIGRATIONS: tuple[Migration, ...] = (
    # 1 — design §1: the memory table and the three user-side fields.
    Migration.of("""
    CREATE TABLE persona_memory (
        id            {new_id},
        persona       {text:7} NOT NULL,
        subject       {text:7} NOT NULL CHECK (subject IN ('self', 'world') OR {user_key:subject}),
        counterpart   {text:7} CHECK (counterpart IS NULL OR {user_key:counterpart}),
        witnessed     {json:7} NOT NULL DEFAULT '[]',
        room_id       {text},
        kind          {text:7} NOT NULL CHECK (kind IN
                        ('fact', 'preference', 'event', 'promise', 'open_loop', 'relationship')),
        text          {text:7} NOT NULL CHECK ({length:text} BETWEEN 1 AND 200),
        importance    {int:7} NOT NULL CHECK (importance BETWEEN 1 AND 10),
        valid_from    {partial_date},
        valid_to      {partial_date},
        closed_by     {int:7} REFERENCES persona_memory(id) ON DELETE SET NULL{deferrable},
        evidence      {json:7} NOT NULL DEFAULT '[]',
        created       {instant:7} NOT NULL,
        last_recalled {instant},
        recall_count  {int:7} NOT NULL DEFAULT 0,
        embedding     {blob},
        CHECK (subject <> 'self' OR counterpart IS NOT NULL)
    );
    CREATE TABLE users (
        user_id     {int:7} PRIMARY KEY CHECK (user_id > 0),
        memory_note {text:7} NOT NULL DEFAULT '' CHECK ({length:memory_note} <= 400),
        memory_on   {flag:7} NOT NULL DEFAULT {true} {flag_check:memory_on}
    );
    CREATE TABLE persona_memory_mute (
        user_id {int:7} NOT NULL CHECK (user_id > 0),
        persona {text:7} NOT NULL,
        PRIMARY KEY (user_id, persona)
    ){without_rowid};
    """),
    # 2 — the runtime state around the rows: rooms, the transcript, cursors, notices.
    Migration.of("""
    CREATE TABLE rooms (
        room_id   {text} PRIMARY KEY,
        private   {flag} NOT NULL {flag_check:private},
        incognito {flag} NOT NULL {flag_check:incognito},
        kit       {text},
        topic     {text},
        personas  {json} NOT NULL,
        humans    {json} NOT NULL,
        opened    {instant} NOT NULL,
        archived  {instant}
    );
    CREATE TABLE transcript_lines (
        id      {new_id},
        room_id {text} NOT NULL,
        speaker {text} NOT NULL,
        text    {text} NOT NULL,
        at      {instant} NOT NULL
    );
    CREATE INDEX transcript_by_room ON transcript_lines (room_id, id);
    CREATE TABLE cursors (
        persona      {text:7} NOT NULL,
        room_id      {text:7} NOT NULL,
        last_line_id {int:7} NOT NULL,
        PRIMARY KEY (persona, room_id)
    ){without_rowid};
    CREATE TABLE notices (
        id         {new_id},
        user_id    {int:7} NOT NULL,
        persona    {text:7} NOT NULL,
        room_id    {text},
        text       {text:7} NOT NULL,
        memory_ids {json:7} NOT NULL,
        created    {instant:7} NOT NULL
    );
    CREATE INDEX notices_by_user ON notices (user_id, id);
    """),
    # 3 — int8 vectors need their scale and the name of the model that made them;
    #     indexes for the read path and the manage page; a per-persona version that every
    #     change to a row bumps (touches excepted), so an actor's cached rows know when
    #     they are stale without reading them.
    Migration.of(
        """
    ALTER TABLE persona_memory ADD COLUMN embedding_scale {real};
    ALTER TABLE persona_memory ADD COLUMN embedder {text};
    CREATE INDEX memory_open_by_persona ON persona_memory (persona, subject) WHERE valid_to IS NULL;
    CREATE INDEX memory_by_subject ON persona_memory (subject);
    CREATE INDEX memory_by_counterpart ON persona_memory (counterpart) WHERE counterpart IS NOT NULL;
    CREATE INDEX memory_closed_by ON persona_memory (closed_by) WHERE closed_by IS NOT NULL;
    CREATE TABLE persona_versions (
        persona {text} PRIMARY KEY,
        version {int} NOT NULL
    ){without_rowid};
    """,
        # The bump itself: SQLite's triggers carry their body; PostgreSQL's run a function,
        # written once in PL/pgSQL for the three triggers (``TG_OP`` tells the old row's
        # persona from the new one's).
        Apart(
            sqlite="""
    CREATE TRIGGER memory_added AFTER INSERT ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (new.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER memory_deleted AFTER DELETE ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (old.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER memory_changed AFTER UPDATE OF persona, subject, counterpart, witnessed,
        kind, text, importance, valid_from, valid_to, closed_by, embedding, embedding_scale,
        embedder ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (new.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;
    """,
            postgresql="""
    CREATE FUNCTION persona_memory_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO persona_versions AS v VALUES (
            CASE WHEN TG_OP = 'DELETE' THEN OLD.persona ELSE NEW.persona END, 1)
            ON CONFLICT (persona) DO UPDATE SET version = v.version + 1;
        RETURN NULL;
    END;
    $$;
    CREATE TRIGGER memory_added AFTER INSERT ON persona_memory
        FOR EACH ROW EXECUTE FUNCTION persona_memory_bump_version();
    CREATE TRIGGER memory_deleted AFTER DELETE ON persona_memory
        FOR EACH ROW EXECUTE FUNCTION persona_memory_bump_version();
    CREATE TRIGGER memory_changed AFTER UPDATE OF persona, subject, counterpart, witnessed,
        kind, text, importance, valid_from, valid_to, closed_by, embedding, embedding_scale,
        embedder ON persona_memory
        FOR EACH ROW EXECUTE FUNCTION persona_memory_bump_version();
    """,
        ),
    ),
    # 4 — the write path's bookkeeping: slices that keep failing are parked with their error
    #     and a retry time (never skipped silently); an undone notice is kept, marked.
    Migration.of("""
    CREATE TABLE parked_slices (
        persona  {text:7} NOT NULL,
        room_id  {text:7} NOT NULL,
        error    {text:7} NOT NULL,
        attempts {int:7} NOT NULL,
        retry_at {instant:7} NOT NULL,
        PRIMARY KEY (persona, room_id)
    ){without_rowid};
    ALTER TABLE notices ADD COLUMN undone {instant};
    CREATE INDEX memory_by_persona_created ON persona_memory (persona, created);
    """),
    # 5 — presence per line: each transcript line records who was in the room when it was said
    #     (humans and personas, JSON lists), the kit mounted then, and whether the room was
    #     incognito. A line whose ``humans`` is NULL was said while the room was not open:
    #     nobody's slice reads it. Lines stored before this migration take their room's
    #     recorded cast and flags (what the write path assumed for them until now); a line
    #     whose room was never recorded keeps NULL and "not incognito". Rooms keep the display
    #     names the runtime last gave, for the sweep; ``user_names`` keeps the latest display
    #     name of every user (``first_word`` folded), so a row that names another user by name
    #     can be refused wherever that user was met.
    Migration.of("""
    ALTER TABLE transcript_lines ADD COLUMN humans {json};
    ALTER TABLE transcript_lines ADD COLUMN personas {json};
    ALTER TABLE transcript_lines ADD COLUMN kit {text};
    ALTER TABLE transcript_lines ADD COLUMN incognito {flag} NOT NULL DEFAULT {false}
        {flag_check:incognito};
    UPDATE transcript_lines SET
        humans = (SELECT r.humans FROM rooms r WHERE r.room_id = transcript_lines.room_id),
        personas = (SELECT r.personas FROM rooms r WHERE r.room_id = transcript_lines.room_id),
        kit = (SELECT r.kit FROM rooms r WHERE r.room_id = transcript_lines.room_id),
        incognito = coalesce(
            (SELECT r.incognito FROM rooms r WHERE r.room_id = transcript_lines.room_id), {false});
    ALTER TABLE rooms ADD COLUMN names {json} NOT NULL DEFAULT '{{}}';
    CREATE TABLE user_names (
        user_id    {int:7} PRIMARY KEY CHECK (user_id > 0),
        name       {text:7} NOT NULL,
        first_word {text:7} NOT NULL,
        updated    {instant:7} NOT NULL
    );
    CREATE INDEX user_names_by_name ON user_names (first_word);
    """),
    # 6 — the title the runtime may give a room (``RoomOpened.title``), for the human's page;
    #     rooms recorded before it have none and read as "a private chat with …"/"a group chat".
    Migration.of("""
    ALTER TABLE rooms ADD COLUMN title {text} CHECK (title IS NULL OR {length:title} BETWEEN 1 AND 200);
    """),
    # 7 — a lease per persona, for workers sharing one PostgreSQL (``leases.py``): who owns the
    #     persona's writes (a worker id; NULL once released), the epoch of the latest grant,
    #     and until when, in the server's time. A single SQLite process never writes it; it is
    #     in both schemas so they stay one.
    Migration.of("""
    CREATE TABLE persona_leases (
        persona    {text:7} PRIMARY KEY,
        owner      {text},
        epoch      {int:7} NOT NULL CHECK (epoch >= 1),
        expires_at {instant:7} NOT NULL
    );
    """),
    # 8 — the live workers sharing one PostgreSQL (``membership.py``): a worker id, when it
    #     joined and until when its last heartbeat keeps it live, in the server's time.
    Migration.of("""
    CREATE TABLE workers (
        worker     {text} PRIMARY KEY,
        joined_at  {instant} NOT NULL,
        expires_at {instant} NOT NULL
    );
    """),
    # 9 — the room registry workers share (``room_registry.py``): each open room's state and
    #     generation, the events queued for each persona's owner, and the address each worker
    #     answers at. A single process keeps its registry in memory.
    Migration.of(
        """
    CREATE TABLE cluster_rooms (
        room_id    {text:7} PRIMARY KEY,
        state      {json:7} NOT NULL,
        generation {int:7} NOT NULL
    );
    """,
        # Generations come from one sequence, so a reopened room never reuses a number; only
        # the registry on PostgreSQL draws from it (SQLite has no sequences, and needs none).
        Apart(sqlite="", postgresql="""
    CREATE SEQUENCE cluster_room_generations;
    """),
        """
    CREATE TABLE persona_events (
        id      {new_id},
        persona {text} NOT NULL,
        room_id {text} NOT NULL,
        event   {json} NOT NULL,
        room    {json} NOT NULL
    );
    CREATE INDEX persona_events_by_persona ON persona_events (persona, id);
    ALTER TABLE workers ADD COLUMN address {text};
    """,
    ),
    # 10 — the lines said with a kit mounted, by room (``writes.last_kit``): without it, finding
    #      that a room never had a kit read every line of the room's history back.
    Migration.of("""
    CREATE INDEX transcript_kits ON transcript_lines (room_id, id) WHERE kit IS NOT NULL;
    """),
    # 11 — the web app's revocations (``revocations.py``): a login link's nonce once it was
    #      used and a session once it was signed out, by kind and SHA-256, until the link or
    #      session would have expired anyway — so both hold after a restart and on every worker.
    Migration.of("""
    CREATE TABLE web_revocations (
        kind       {text} NOT NULL CHECK (kind IN ('link', 'session')),
        token      {text} NOT NULL,
        expires_at {instant} NOT NULL,
        PRIMARY KEY (kind, token)
    ){without_rowid};
    CREATE INDEX web_revocations_by_expiry ON web_revocations (expires_at);
    """),
    # 12 — the event outbox (``outbox.py``): what changed for a person or the runtime (a memory
    #      noted, closed or deleted, a notice undone, a person's controls), written in the
    #      same transaction as the change, ids only — never a memory's text; and how far each
    #      webhook has been delivered, so a restart or a dead worker loses nothing.
    Migration.of("""
    CREATE TABLE outbox (
        id      {new_id},
        kind    {text:7} NOT NULL,
        user_id {int},
        persona {text},
        data    {json:7} NOT NULL,
        created {instant:7} NOT NULL
    );
    CREATE INDEX outbox_by_created ON outbox (created);
    CREATE TABLE outbox_cursors (
        subscriber    {text:7} PRIMARY KEY,
        last_event_id {int:7} NOT NULL
    ){without_rowid};
    """),
)

LATEST = len(MIGRATIONS)


def script(number: int, dialect: Dialect) -> str:
    """Migration ``number`` (1 to ``LATEST``) in ``dialect``, as one script of statements."""
    if not 1 <= number <= LATEST:
        raise ValueError(f"there is no migration {number}: they are numbered 1 to {LATEST}")
    return MIGRATIONS[number - 1].script(dialect)
