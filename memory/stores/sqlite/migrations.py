"""Numbered SQLite migrations, applied in order at start-up (``PRAGMA user_version``)."""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: the walking skeleton's schema.
    """
    CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        display_name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        memory_enabled INTEGER NOT NULL DEFAULT 1,
        timezone TEXT
    );
    CREATE TABLE accounts (
        platform TEXT NOT NULL,
        platform_user_id TEXT NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        PRIMARY KEY (platform, platform_user_id)
    );
    CREATE TABLE threads (
        id INTEGER PRIMARY KEY,
        platform TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        topic_id TEXT NOT NULL DEFAULT '',
        chat_kind TEXT NOT NULL,
        title TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (platform, chat_id, topic_id)
    );
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        started_at TEXT NOT NULL,
        last_turn_at TEXT NOT NULL,
        closed_at TEXT,
        close_reason TEXT
    );
    CREATE UNIQUE INDEX sessions_one_open ON sessions(thread_id) WHERE closed_at IS NULL;
    CREATE TABLE turns (
        id INTEGER PRIMARY KEY,
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        user_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
        role TEXT NOT NULL,
        speaker TEXT,
        text TEXT NOT NULL,
        created_at TEXT NOT NULL,
        platform_message_id TEXT,
        generated_by TEXT,
        memory_off INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX turns_session ON turns(session_id, id);
    CREATE INDEX turns_thread ON turns(thread_id, id);
    CREATE INDEX turns_user ON turns(user_id);
    CREATE UNIQUE INDEX turns_platform_message
        ON turns(thread_id, platform_message_id) WHERE platform_message_id IS NOT NULL;
    CREATE TABLE episodes (
        id INTEGER PRIMARY KEY,
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        session_id INTEGER NOT NULL UNIQUE REFERENCES sessions(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        summary TEXT NOT NULL,
        key_data TEXT NOT NULL,
        turn_ids TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX episodes_thread ON episodes(thread_id, id);
    CREATE INDEX episodes_scope ON episodes(scope);
    CREATE TABLE rounds (
        id INTEGER PRIMARY KEY,
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        turn_ids TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX rounds_session ON rounds(session_id);
    CREATE INDEX rounds_scope ON rounds(scope);
    CREATE TABLE facts (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        topic TEXT,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        valid_from TEXT NOT NULL,
        valid_to TEXT,
        last_confirmed_at TEXT NOT NULL,
        last_recalled_at TEXT,
        confirmations INTEGER NOT NULL DEFAULT 1,
        origin_thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        origin_kind TEXT NOT NULL,
        origin_title TEXT,
        source_turn_ids TEXT NOT NULL,
        lang TEXT NOT NULL,
        scope TEXT NOT NULL
    );
    CREATE INDEX facts_user ON facts(user_id, status);
    CREATE TABLE work (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        done_at TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        UNIQUE (kind, session_id)
    );
    CREATE INDEX work_pending ON work(done_at) WHERE done_at IS NULL;
    CREATE TABLE prompt_records (
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (thread_id, user_id)
    );
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        user_id INTEGER,
        action TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 2: semantic memory: topic values, write mode, subject; candidates for repetition.
    """
    ALTER TABLE facts ADD COLUMN value TEXT;
    ALTER TABLE facts ADD COLUMN mode TEXT NOT NULL DEFAULT 'explicit';
    CREATE INDEX facts_topic ON facts(user_id, topic, status);
    CREATE TABLE fact_candidates (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        topic TEXT,
        value TEXT,
        text TEXT NOT NULL,
        norm TEXT NOT NULL,
        lang TEXT NOT NULL,
        vector BLOB,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        consumed_at TEXT
    );
    CREATE INDEX fact_candidates_user ON fact_candidates(user_id, scope, consumed_at);
    """,
    # 3: language-model usage and cost per user, UTC day and model (/stats).
    """
    CREATE TABLE model_usage (
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        day TEXT NOT NULL,
        model TEXT NOT NULL,
        calls INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL,
        PRIMARY KEY (user_id, day, model)
    );
    """,
    # 4: episodes done right: running episodes folded incrementally, their content fields,
    # per-turn token counts for the fold trigger, several folds per session in the work table.
    """
    ALTER TABLE turns ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN folded_through INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE episodes ADD COLUMN goal TEXT;
    ALTER TABLE episodes ADD COLUMN decisions TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE episodes ADD COLUMN open_tasks TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE episodes ADD COLUMN state TEXT;
    ALTER TABLE episodes ADD COLUMN participants TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE episodes ADD COLUMN status TEXT NOT NULL DEFAULT 'closed';
    ALTER TABLE episodes ADD COLUMN folds INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE work_new (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        done_at TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        UNIQUE (kind, session_id, seq)
    );
    INSERT INTO work_new (id, kind, session_id, seq, created_at, done_at, attempts, last_error)
        SELECT id, kind, session_id, 0, created_at, done_at, attempts, last_error FROM work;
    DROP TABLE work;
    ALTER TABLE work_new RENAME TO work;
    CREATE INDEX work_pending ON work(done_at) WHERE done_at IS NULL;
    """,
    # 5: privacy and control: when a user was told that facts are kept (the consent
    # note, once), and memory switched off for a whole group chat by its admins.
    """
    ALTER TABLE users ADD COLUMN consent_noted_at TEXT;
    CREATE TABLE chat_settings (
        platform TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        memory_enabled INTEGER NOT NULL DEFAULT 1,
        changed_at TEXT NOT NULL,
        PRIMARY KEY (platform, chat_id)
    );
    """,
    # 6: chat platforms: accounts that blocked the bot, and platform updates already
    # handled (a redelivered update is answered once, also across a restart).
    """
    ALTER TABLE accounts ADD COLUMN blocked_at TEXT;
    CREATE TABLE seen_updates (
        platform TEXT NOT NULL,
        update_id TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        PRIMARY KEY (platform, update_id)
    );
    CREATE INDEX seen_updates_at ON seen_updates(seen_at);
    """,
    # 7: who wrote an episode's summary: ``rules`` (no model
    # call), ``llm`` (the consolidation model), ``rules-fallback`` (the model's output was
    # rejected, cut or empty, so the rules' episode was kept).
    """
    ALTER TABLE episodes ADD COLUMN source TEXT NOT NULL DEFAULT 'rules';
    """,
    # 8: a failed consolidation job waits before it is tried again (exponential backoff,
    # ``memory.work_runner.retry_delay``) instead of being retried at every turn.
    """
    ALTER TABLE work ADD COLUMN retry_after TEXT;
    """,
    # 9: a deletion's purge from disk (index rows and their old versions, export files, the
    # WAL), recorded in the deletion's own transaction and removed when the purge is done, so
    # that a crash in between is finished at the next start-up. Holds ids only, never text.
    """
    CREATE TABLE purges (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL,
        index_keys TEXT NOT NULL,
        resummarise TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL
    );
    """,
    # 10: where a reply came from: the keys of the memory items its prompt recalled
    # (``fact:3 episode:7``), so forgetting an item also deletes the replies derived from it.
    """
    ALTER TABLE turns ADD COLUMN recalled TEXT;
    """,
    # 11: nothing lost across a crash. A platform update is kept (``payload``, its JSON) from the
    # moment it is received until it is handled, so one received but not yet stored is handled
    # at the next start; a user turn's reply is due until the adapter delivered it, so one
    # stored but unanswered is answered at the next start.
    """
    ALTER TABLE seen_updates ADD COLUMN payload TEXT;
    CREATE INDEX seen_updates_received ON seen_updates(platform) WHERE payload IS NOT NULL;
    CREATE TABLE replies_due (
        turn_id INTEGER PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE
    );
    CREATE INDEX replies_due_thread ON replies_due(thread_id);
    """,
    # 12: the language a user chose for replies (``/language``); NULL = chosen by each message.
    """
    ALTER TABLE users ADD COLUMN language TEXT;
    """,
    # 13: a destructive command's question waiting for its author's ``yes`` (one per thread and
    # user, until answered or expired), in the store so that any process may take the answer.
    """
    CREATE TABLE questions (
        thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        action TEXT NOT NULL,
        target INTEGER,
        description TEXT NOT NULL,
        language TEXT NOT NULL,
        asked_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (thread_id, user_id)
    );
    CREATE INDEX questions_user ON questions(user_id);
    """,
    # 14: the days whose daily maintenance was claimed (``started_at``) and done (``done_at``),
    # so that processes on one store run it once a day.
    """
    CREATE TABLE maintenance_runs (
        day TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        done_at TEXT
    );
    """,
)
