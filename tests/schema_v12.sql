-- The schema of a persona-memory SQLite file at version 12, as SQLite keeps it
-- (sqlite_master, by name). Files written by earlier releases hold exactly this text;
-- tests/test_migrations.py checks that a file migrated now still does.

-- table cluster_rooms on cluster_rooms
CREATE TABLE cluster_rooms (
        room_id    TEXT    PRIMARY KEY,
        state      TEXT    NOT NULL,
        generation INTEGER NOT NULL
    );

-- table cursors on cursors
CREATE TABLE cursors (
        persona      TEXT    NOT NULL,
        room_id      TEXT    NOT NULL,
        last_line_id INTEGER NOT NULL,
        PRIMARY KEY (persona, room_id)
    ) WITHOUT ROWID;

-- trigger memory_added on persona_memory
CREATE TRIGGER memory_added AFTER INSERT ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (new.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;

-- index memory_by_counterpart on persona_memory
CREATE INDEX memory_by_counterpart ON persona_memory (counterpart) WHERE counterpart IS NOT NULL;

-- index memory_by_persona_created on persona_memory
CREATE INDEX memory_by_persona_created ON persona_memory (persona, created);

-- index memory_by_subject on persona_memory
CREATE INDEX memory_by_subject ON persona_memory (subject);

-- trigger memory_changed on persona_memory
CREATE TRIGGER memory_changed AFTER UPDATE OF persona, subject, counterpart, witnessed,
        kind, text, importance, valid_from, valid_to, closed_by, embedding, embedding_scale,
        embedder ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (new.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;

-- index memory_closed_by on persona_memory
CREATE INDEX memory_closed_by ON persona_memory (closed_by) WHERE closed_by IS NOT NULL;

-- trigger memory_deleted on persona_memory
CREATE TRIGGER memory_deleted AFTER DELETE ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (old.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;

-- index memory_open_by_persona on persona_memory
CREATE INDEX memory_open_by_persona ON persona_memory (persona, subject) WHERE valid_to IS NULL;

-- table notices on notices
CREATE TABLE notices (
        id         INTEGER PRIMARY KEY,
        user_id    INTEGER NOT NULL,
        persona    TEXT    NOT NULL,
        room_id    TEXT,
        text       TEXT    NOT NULL,
        memory_ids TEXT    NOT NULL,
        created    TEXT    NOT NULL
    , undone TEXT);

-- index notices_by_user on notices
CREATE INDEX notices_by_user ON notices (user_id, id);

-- table outbox on outbox
CREATE TABLE outbox (
        id      INTEGER PRIMARY KEY,
        kind    TEXT    NOT NULL,
        user_id INTEGER,
        persona TEXT,
        data    TEXT    NOT NULL,
        created TEXT    NOT NULL
    );

-- index outbox_by_created on outbox
CREATE INDEX outbox_by_created ON outbox (created);

-- table outbox_cursors on outbox_cursors
CREATE TABLE outbox_cursors (
        subscriber    TEXT    PRIMARY KEY,
        last_event_id INTEGER NOT NULL
    ) WITHOUT ROWID;

-- table parked_slices on parked_slices
CREATE TABLE parked_slices (
        persona  TEXT    NOT NULL,
        room_id  TEXT    NOT NULL,
        error    TEXT    NOT NULL,
        attempts INTEGER NOT NULL,
        retry_at TEXT    NOT NULL,
        PRIMARY KEY (persona, room_id)
    ) WITHOUT ROWID;

-- table persona_events on persona_events
CREATE TABLE persona_events (
        id      INTEGER PRIMARY KEY,
        persona TEXT NOT NULL,
        room_id TEXT NOT NULL,
        event   TEXT NOT NULL,
        room    TEXT NOT NULL
    );

-- index persona_events_by_persona on persona_events
CREATE INDEX persona_events_by_persona ON persona_events (persona, id);

-- table persona_leases on persona_leases
CREATE TABLE persona_leases (
        persona    TEXT    PRIMARY KEY,
        owner      TEXT,
        epoch      INTEGER NOT NULL CHECK (epoch >= 1),
        expires_at TEXT    NOT NULL
    );

-- table persona_memory on persona_memory
CREATE TABLE persona_memory (
        id            INTEGER PRIMARY KEY,
        persona       TEXT    NOT NULL,
        subject       TEXT    NOT NULL CHECK (subject IN ('self', 'world') OR subject GLOB 'u:[1-9]*'),
        counterpart   TEXT    CHECK (counterpart IS NULL OR counterpart GLOB 'u:[1-9]*'),
        witnessed     TEXT    NOT NULL DEFAULT '[]',
        room_id       TEXT,
        kind          TEXT    NOT NULL CHECK (kind IN
                        ('fact', 'preference', 'event', 'promise', 'open_loop', 'relationship')),
        text          TEXT    NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
        importance    INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 10),
        valid_from    TEXT,
        valid_to      TEXT,
        closed_by     INTEGER REFERENCES persona_memory(id) ON DELETE SET NULL,
        evidence      TEXT    NOT NULL DEFAULT '[]',
        created       TEXT    NOT NULL,
        last_recalled TEXT,
        recall_count  INTEGER NOT NULL DEFAULT 0,
        embedding     BLOB, embedding_scale REAL, embedder TEXT,
        CHECK (subject <> 'self' OR counterpart IS NOT NULL)
    );

-- table persona_memory_mute on persona_memory_mute
CREATE TABLE persona_memory_mute (
        user_id INTEGER NOT NULL CHECK (user_id > 0),
        persona TEXT    NOT NULL,
        PRIMARY KEY (user_id, persona)
    ) WITHOUT ROWID;

-- table persona_versions on persona_versions
CREATE TABLE persona_versions (
        persona TEXT PRIMARY KEY,
        version INTEGER NOT NULL
    ) WITHOUT ROWID;

-- table rooms on rooms
CREATE TABLE rooms (
        room_id   TEXT PRIMARY KEY,
        private   INTEGER NOT NULL CHECK (private IN (0, 1)),
        incognito INTEGER NOT NULL CHECK (incognito IN (0, 1)),
        kit       TEXT,
        topic     TEXT,
        personas  TEXT NOT NULL,
        humans    TEXT NOT NULL,
        opened    TEXT NOT NULL,
        archived  TEXT
    , names TEXT NOT NULL DEFAULT '{}', title TEXT CHECK (title IS NULL OR length(title) BETWEEN 1 AND 200));

-- index sqlite_autoindex_cluster_rooms_1 on cluster_rooms

-- index sqlite_autoindex_persona_leases_1 on persona_leases

-- index sqlite_autoindex_rooms_1 on rooms

-- index sqlite_autoindex_workers_1 on workers

-- index transcript_by_room on transcript_lines
CREATE INDEX transcript_by_room ON transcript_lines (room_id, id);

-- index transcript_kits on transcript_lines
CREATE INDEX transcript_kits ON transcript_lines (room_id, id) WHERE kit IS NOT NULL;

-- table transcript_lines on transcript_lines
CREATE TABLE transcript_lines (
        id      INTEGER PRIMARY KEY,
        room_id TEXT NOT NULL,
        speaker TEXT NOT NULL,
        text    TEXT NOT NULL,
        at      TEXT NOT NULL
    , humans TEXT, personas TEXT, kit TEXT, incognito INTEGER NOT NULL DEFAULT 0
        CHECK (incognito IN (0, 1)));

-- table user_names on user_names
CREATE TABLE user_names (
        user_id    INTEGER PRIMARY KEY CHECK (user_id > 0),
        name       TEXT    NOT NULL,
        first_word TEXT    NOT NULL,
        updated    TEXT    NOT NULL
    );

-- index user_names_by_name on user_names
CREATE INDEX user_names_by_name ON user_names (first_word);

-- table users on users
CREATE TABLE users (
        user_id     INTEGER PRIMARY KEY CHECK (user_id > 0),
        memory_note TEXT    NOT NULL DEFAULT '' CHECK (length(memory_note) <= 400),
        memory_on   INTEGER NOT NULL DEFAULT 1 CHECK (memory_on IN (0, 1))
    );

-- table web_revocations on web_revocations
CREATE TABLE web_revocations (
        kind       TEXT NOT NULL CHECK (kind IN ('link', 'session')),
        token      TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (kind, token)
    ) WITHOUT ROWID;

-- index web_revocations_by_expiry on web_revocations
CREATE INDEX web_revocations_by_expiry ON web_revocations (expires_at);

-- table workers on workers
CREATE TABLE workers (
        worker     TEXT PRIMARY KEY,
        joined_at  TEXT NOT NULL,
        expires_at TEXT NOT NULL
    , address TEXT);
