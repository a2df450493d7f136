"""Value types shared by the memory core, its stores and the adapters.

All datetimes are timezone-aware UTC. Ids are SQLite integer row ids unless said otherwise.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime


class Role(str, enum.Enum):
    """Who produced a turn."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"  # system notes (e.g. "memory was switched off"); never evicted first
    TOOL = "tool"  # tool results; never evicted first


class ChatKind(str, enum.Enum):
    """Privacy class of a chat: decides where memory learned in it may surface."""

    PRIVATE = "private"
    GROUP = "group"


@dataclass(frozen=True, slots=True)
class ThreadKey:
    """Where turns happen: a chat, or a topic/thread inside a chat.

    Attributes:
        platform: ``console``, ``telegram``, ``discord`` or ``eval``.
        chat_id: the platform's chat/channel id, as text.
        thread_id: forum topic / Discord thread id, or None for the chat itself.
    """

    platform: str
    chat_id: str
    thread_id: str | None = None

    def __str__(self) -> str:
        suffix = f"/{self.thread_id}" if self.thread_id is not None else ""
        return f"{self.platform}:{self.chat_id}{suffix}"


@dataclass(frozen=True, slots=True)
class Scope:
    """Where memory may surface: private to one user, or one group thread.

    Every stored episode, round and fact belongs to one scope, and recall reads one scope only:
    what a user said in private chats is recalled in their private chats (``Scope.private``),
    what was said in a group thread only in that thread (``Scope.group``). The text form
    (``str(scope)``: ``user:<user id>`` or ``thread:<thread id>``) is what stores and the search
    index keep.

    Attributes:
        kind: ``user`` (private to one user) or ``thread`` (one group thread).
        id: the user's or the thread's row id.
    """

    kind: str
    id: int

    USER = "user"
    THREAD = "thread"

    def __post_init__(self) -> None:
        if self.kind not in (Scope.USER, Scope.THREAD):
            raise ValueError(f"a scope is 'user' or 'thread', not {self.kind!r}")

    @classmethod
    def private(cls, user_id: int) -> "Scope":
        """The private memory of one user."""
        return cls(Scope.USER, int(user_id))

    @classmethod
    def group(cls, thread_id: int) -> "Scope":
        """The memory of one group thread."""
        return cls(Scope.THREAD, int(thread_id))

    @classmethod
    def of_chat(cls, chat_kind: ChatKind, *, user_id: int, thread_id: int) -> "Scope":
        """The scope a user's words in a thread belong to: their own in a private chat, the
        thread's in a group."""
        if chat_kind is ChatKind.PRIVATE:
            return cls.private(user_id)
        return cls.group(thread_id)

    @classmethod
    def parse(cls, text: str) -> "Scope":
        """The scope of its text form (``user:3``, ``thread:12``).

        Raises:
            ValueError: ``text`` is not a scope's text form.
        """
        kind, _, ident = str(text).partition(":")
        if kind not in (Scope.USER, Scope.THREAD) or not ident.isdigit():
            raise ValueError(f"not a scope: {text!r}")
        return cls(kind, int(ident))

    @property
    def is_private(self) -> bool:
        """True for a user's private memory."""
        return self.kind == Scope.USER

    @classmethod
    def imported(cls, text: str, *, old_user_id: int, new_user_id: int,
                 threads: Mapping[int, int]) -> str:
        """The text form of a scope read from another store's export, in this store's ids:
        the exported user's private scope becomes ``new_user_id``'s, a group thread's scope
        follows ``threads`` (exported thread id -> id here); any other text is kept as it is."""
        try:
            old = cls.parse(text)
        except ValueError:
            return text
        if old.is_private and old.id == old_user_id:
            return str(cls.private(new_user_id))
        if not old.is_private and old.id in threads:
            return str(cls.group(threads[old.id]))
        return text

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """A message normalised by an adapter, ready for the conversation engine.

    Attributes:
        thread: where it was said.
        chat_kind: private or group.
        platform_user_id: the author's id on the platform (text).
        display_name: the author's name as shown to the model in groups.
        text: the message text (captions count as text).
        sent_at: when the platform says it was sent (aware UTC).
        platform_message_id: the platform's message id, unique within the thread, or None.
        chat_title: title of a group chat, used in ``/memories`` origins.
        is_admin: the author administers this group chat (set by adapters that know it; only
            admins may run ``/memory_off chat`` and ``/memory_on chat``). False by default.
        update_key: the platform delivery that carried it (Telegram: ``<bot id>:<update id>``)
            when the adapter keeps received deliveries until handled; the user turn's
            transaction marks it handled. None otherwise.
        language: the platform's hint of the author's language, as the platform tags it
            (Telegram ``language_code`` such as ``"zh-hans"``, Discord ``locale`` such as
            ``"zh-CN"``, the console's locale), or None; replies use it when neither the user's
            setting nor the message itself says which language to answer in.
    """

    thread: ThreadKey
    chat_kind: ChatKind
    platform_user_id: str
    display_name: str
    text: str
    sent_at: datetime
    platform_message_id: str | None = None
    chat_title: str | None = None
    is_admin: bool = False
    update_key: str | None = None
    language: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One stored message of a thread (user, assistant, system note or tool result)."""

    id: int
    thread_id: int
    session_id: int
    role: Role
    text: str
    created_at: datetime
    user_id: int | None = None
    speaker: str | None = None
    platform_message_id: str | None = None
    generated_by: str | None = None  # model name for assistant turns ("offline" for the offline model)
    memory_off: bool = False  # said while the user's memory was off: deleted when the session closes


class FactStatus(str, enum.Enum):
    """Life cycle of a semantic fact."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


@dataclass(frozen=True, slots=True)
class Fact:
    """A short, dated statement about a user (semantic memory).

    ``text`` is in the user's language, about 20 CJK characters or 15 English words.
    ``origin_thread_id`` and ``origin_kind`` decide where it may be recalled: private facts in
    private chats of the owner, group facts only in their group thread.
    """

    id: int
    user_id: int
    kind: str  # preference | profile | prohibition | task | note
    text: str
    topic: str | None
    status: FactStatus
    created_at: datetime
    valid_from: datetime
    valid_to: datetime | None
    last_confirmed_at: datetime
    last_recalled_at: datetime | None
    confirmations: int
    origin_thread_id: int
    origin_kind: ChatKind
    origin_title: str | None
    source_turn_ids: tuple[int, ...]
    lang: str  # "en" or "zh"
    value: str | None = None  # normalised topic value ("graz"; "like"/"dislike" for opinions)
    mode: str = "explicit"  # how it was written: explicit | correction | statement | repetition


@dataclass(frozen=True, slots=True)
class KeyDatum:
    """A line kept verbatim from a turn because it holds numbers, dates, amounts, versions or
    addresses."""

    text: str
    turn_id: int


@dataclass(frozen=True, slots=True)
class Episode:
    """What happened in one session of a thread (episodic memory)."""

    id: int
    thread_id: int
    session_id: int
    summary: str
    key_data: tuple[KeyDatum, ...]
    turn_ids: tuple[int, ...]
    started_at: datetime
    ended_at: datetime
    created_at: datetime
    scope: Scope
    goal: str | None = None
    decisions: tuple[str, ...] = ()
    open_tasks: tuple[str, ...] = ()
    state: str | None = None
    participants: tuple[str, ...] = ()
    status: str = "closed"  # "running" while its session is open and folding, then "closed"
    folds: int = 0
    source: str = "rules"  # who wrote the summary: rules | llm | rules-fallback


@dataclass(frozen=True, slots=True)
class Round:
    """A user turn with the assistant reply to it, indexed for recall.

    In a thread without assistant replies (recorded group chats), each user turn is a round.
    """

    id: int
    thread_id: int
    session_id: int
    turn_ids: tuple[int, ...]
    text: str
    created_at: datetime
    scope: Scope


class ItemKind(str, enum.Enum):
    """Kinds of memory items in the search index."""

    FACT = "fact"
    EPISODE = "episode"
    ROUND = "round"


@dataclass(frozen=True, slots=True)
class IndexItem:
    """One row of the derived search index (LanceDB), written by id.

    Attributes:
        key: ``"<kind>:<id>"``, unique.
        kind: fact, episode or round.
        item_id: the SQLite id of the fact/episode/round.
        owner: user id as text ("" for items owned by a thread).
        scope: the text form of the item's :class:`Scope` (``user:<id>`` for private memory,
            ``thread:<id>`` for a group thread's memory).
        status: fact status, or "active".
        text: display text.
        search_text: lexical text (segmented, expanded keys) for full-text search.
        vector: L2-normalised embedding of ``text``.
    """

    key: str
    kind: ItemKind
    item_id: int
    owner: str
    scope: str
    status: str
    text: str
    search_text: str
    vector: list[float]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class IndexHit:
    """A search result from the index, before fusion.

    ``cosine`` is the cosine similarity in [-1, 1] (None when only the lexical side found it);
    ``bm25`` is the raw full-text score (>= 0; None when only the dense side found it).
    """

    key: str
    kind: ItemKind
    item_id: int
    cosine: float | None = None
    bm25: float | None = None


@dataclass(frozen=True, slots=True)
class ItemParts:
    """What a recalled item says, as data for a person to read: the edges word it in the
    reader's language (``bot``, ``adapters``), while :attr:`RecalledItem.text` is the same item
    worded for the model's prompt ("- The user lives in Graz (since 2026-12-02)").

    Attributes:
        text: a fact's text; an episode's summary (as far as the prompt's line shows it).
        day: a fact's ``valid_from``, an episode's ``started_at`` (UTC); None: the line shows
            no date (a profile fact).
        until: a fact no longer current: its ``valid_to`` (None: not known).
        current: False for a fact that is no longer current (superseded, archived).
        running: an episode of the conversation still open ("this conversation so far").
        open_tasks: the open tasks of an episode the line shows.
        key_data: the key data of an episode the line shows.
        cut: the prompt's line was cut to its token bound after what these parts hold.
    """

    text: str
    day: datetime | None = None
    until: datetime | None = None
    current: bool = True
    running: bool = False
    open_tasks: tuple[str, ...] = ()
    key_data: tuple[str, ...] = ()
    cut: bool = False

    def as_dict(self) -> dict:
        """The JSON form (dates as ISO 8601 strings, tuples as lists), as a ``/why`` record
        keeps it."""
        return {"text": self.text,
                "day": self.day.isoformat() if self.day else None,
                "until": self.until.isoformat() if self.until else None,
                "current": self.current, "running": self.running,
                "open_tasks": list(self.open_tasks), "key_data": list(self.key_data),
                "cut": self.cut}


@dataclass(frozen=True, slots=True)
class RecalledItem:
    """A memory item chosen for a prompt.

    Attributes:
        key: ``"<kind>:<id>"``.
        kind: fact, episode or round.
        text: rendered line as it appears in the memory block.
        score: fused recall score in [0, 1], higher = closer (see ``memory.recall``).
        tokens: tokens of ``text`` by the product's counter.
        source_turn_ids: turns whose content the item carries.
        source_session_id: the session it came from (None for facts).
        created_at: when the item was written.
        pinned: in the prompt whatever its score (the last episode of the thread, profile
            facts); its ``score`` is still the one it earned for the query (0.0: not a hit).
        profile: a fact of the profile block (``memory.profile``).
        parts: what ``text`` says, as data for a person to read (facts and episodes; None
            for a round, whose line is the conversation's own words and dates).
    """

    key: str
    kind: ItemKind
    text: str
    score: float
    tokens: int
    source_turn_ids: tuple[int, ...] = ()
    source_session_id: int | None = None
    created_at: datetime | None = None
    pinned: bool = False  # included regardless of score (e.g. last episode of the thread)
    profile: bool = False
    parts: ItemParts | None = None


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """A message for a language model: role is ``user`` or ``assistant``."""

    role: str
    content: str


@dataclass(frozen=True, slots=True)
class ModelReply:
    """A language model's answer and what it cost.

    Token counts are as reported by the provider (0 when unknown), summed over every attempt of
    the call (a retried call pays for each try). ``input_tokens`` excludes cached input:
    ``cache_creation_input_tokens`` were written to the provider's prompt cache,
    ``cache_read_input_tokens`` were read from it. ``stop_reason`` is ``end_turn`` for a finished
    reply and ``max_tokens`` for one cut off at the output limit (its text then ends with a
    visible note); other provider values pass through.
    """

    text: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Prompt:
    """What a model is asked: a system prompt with the memory blocks, and the messages."""

    system: str
    messages: tuple[ChatMessage, ...]
    recalled: tuple[RecalledItem, ...] = ()
    memory_tokens: int = 0
    working_tokens: int = 0
    extras: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MemoryAnswerRequest:
    """What a chat model that answers from memory alone (no language model: the offline
    model) is given for one reply, as data rather than as prompt text.

    Attributes:
        items: the recalled items of the prompt, in prompt order (pinned first); a pinned
            item's ``score`` is the one it earned for this message.
        threshold: ``SIMILARITY_THRESHOLD``: an item relates to the message when its score
            reaches it (unpinned items always do: recall cut the others).
        facts: the speaker's facts of this chat's scope, every status, oldest first: to tell
            current values from earlier ones and which exchanges a fact came from.
        turn_id: the current message's turn (what it states is not "remembered" yet).
        first_reply: no reply of this model in this session yet: say once what it is.
        language: the language to answer in (ISO 639-1: ``"en"``, ``"zh"``).
    """

    items: tuple[RecalledItem, ...]
    threshold: float
    facts: tuple[Fact, ...] = ()
    turn_id: int | None = None
    first_reply: bool = True
    language: str = "en"
