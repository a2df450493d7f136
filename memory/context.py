"""Who is speaking where (:class:`Context`) and the memory settings the core needs
(:class:`MemoryConfig`): the values the memory service and its collaborators share."""

from __future__ import annotations

from dataclasses import dataclass

from memory.profile import PROFILE_TOKENS
from memory.records import ThreadRow, UserRow
from memory.types import Scope


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The memory settings the core needs (built by ``bot/`` from the product settings).

    Attributes:
        max_working_messages: turns in the prompt window.
        max_working_tokens: tokens in the prompt window.
        top_k: facts recalled per prompt (1-5).
        threshold: minimum recall score in [0, 1] (``memory.recall``).
        budget_tokens: tokens for all memory blocks of one prompt.
        episode_summary_tokens: tokens of an offline episode summary.
        default_timezone: IANA zone for users who set none (relative dates in facts).
        summary_trigger_messages: unfolded turns of a session that trigger a fold.
        profile_tokens: most tokens of the profile block (``memory.profile``), counted in
            ``budget_tokens``; 0 = no profile block.
    """

    max_working_messages: int = 30
    max_working_tokens: int = 4000
    top_k: int = 3
    threshold: float = 0.30
    budget_tokens: int = 1000
    episode_summary_tokens: int = 60
    default_timezone: str = "UTC"
    summary_trigger_messages: int = 40
    profile_tokens: int = PROFILE_TOKENS


@dataclass(frozen=True, slots=True)
class Context:
    """Who is speaking where: the user, the thread and the scope their memory lives in."""

    user: UserRow
    thread: ThreadRow

    @property
    def scope(self) -> Scope:
        """The user's private scope in private chats, the thread's in groups."""
        return Scope.of_chat(self.thread.chat_kind, user_id=self.user.id,
                             thread_id=self.thread.id)
