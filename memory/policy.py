"""The tuning knobs of recall and of the index rows it searches, as one frozen value.

Each knob's default is the module constant below, with what it does and where it was measured
(docs/evaluation.md, "Recall constants"; docs/benchmarks.md for the embedding bounds). The
memory service holds one :class:`RecallPolicy`; an evaluation or a test that needs another
value builds one (``RecallPolicy(speaker_weight=1.0)``) and gives it to the service instead of
changing a module global.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Most tokens an episode takes in a prompt (the pinned last episode is in every prompt of the
#: next session: measured on LoCoMo, a larger one cost 0.06 of evidence recall at 400 tokens).
EPISODE_PROMPT_TOKENS = 90
#: Most tokens the pinned last episode takes when it does not relate to the message (its score
#: for it is under the recall threshold): it is then shown by the first sentence of its summary
#: (what the last session was about), and in full (``EPISODE_PROMPT_TOKENS``) when it does
#: relate. 0 shows it in full always. See docs/evaluation.md, "Recall constants".
PINNED_UNRELATED_TOKENS = 30
#: Most tokens a recalled round takes in a prompt; a longer one is shown as an excerpt of its
#: best-matching turn around its best-matching sentences (``memory.excerpt``). See
#: docs/evaluation.md, "Recall constants".
ROUND_PROMPT_TOKENS = 60
#: A recalled one-turn round (a message in a conversation between people) brings the next
#: message of its session with this share of its score: the answer to a question is often the
#: reply to the message that shares the question's words ("How did the funding help?" ->
#: "It enabled repairs..."). See docs/evaluation.md, "Recall constants".
REPLY_WEIGHT = 0.9
#: The same for the message before a recalled one-turn round (the message it answers: the
#: question's words are often in the answer, and evidence is often the pair). 0 switches it off.
#: See docs/evaluation.md, "Recall constants".
PREV_WEIGHT = 0.8
#: Recall for the question a chatty message states after a marker such as "what I really want
#: to know is" / "我真正想问的是" (``memory.focus``).
FOCUS_QUESTION = True
#: Recall each part of a question in several parts ("A? 另外，B?", "A? Also, B?") on its own and
#: merge them (``memory.focus.question_parts``, ``memory.recall.merge_parts``).
SPLIT_QUESTIONS = True
#: In a group, when a question names exactly one of the speakers of the recalled rounds ("What
#: does Melanie do to destress?"), the rounds of the other speakers get this share of their
#: score. 1 switches it off. Private chats (one user and the assistant) are not affected. See
#: docs/evaluation.md, "Recall constants".
SPEAKER_WEIGHT = 0.8
#: At most this many dates on one line that merges rounds repeating the same words.
REPEAT_DATES = 5
#: A round whose text holds a reply gets as its vector the normalised sum of its own vector and
#: this weight x its user turn's vector: the reply still counts, but the vector leans to what
#: the user said (an assistant's long answer repeats the question's topic: "Here are some
#: museums you could visit..."). 0 switches it off. See docs/evaluation.md.
ROUND_USER_WEIGHT = 1.0
#: A round longer than this many characters is embedded from its first this many alone (its
#: user turn, and how the reply starts when the turn is short): recall shows a long round as an
#: excerpt of its best-matching sentences, which the words (full-text) find anywhere in it,
#: while the vector of a whole long answer blurs towards the answer's topic; and embedding time
#: grows with the text (faster than linearly: attention). LongMemEval_S rounds have a median
#: of ~1,900 characters (the replies ~1,700, the user turns ~180); LoCoMo and MemDaily
#: messages are mostly shorter. Measured in docs/benchmarks.md ("Ingest").
ROUND_EMBED_CHARS = 300


@dataclass(frozen=True, slots=True)
class RecallPolicy:
    """The recall and index-row knobs (defaults: the module constants of the same names).

    Attributes:
        episode_prompt_tokens: most tokens an episode takes in a prompt.
        pinned_unrelated_tokens: most tokens of the pinned last episode when its score for the
            message is under the threshold (the first sentence of its summary); 0: always full.
        round_prompt_tokens: most tokens a recalled round takes; longer ones become excerpts.
        reply_weight: share of a one-turn round's score its reply (the next round) gets; 0: off.
        prev_weight: the same for the round before it (the message it answers); 0: off.
        focus_question: recall the question a chatty message states after a marker.
        split_questions: recall each part of a question in several parts on its own.
        speaker_weight: in a group, share of their score the rounds of other speakers get when
            the question names exactly one speaker; 1: off.
        repeat_dates: most dates on one line merging rounds that repeat the same words.
        round_user_weight: weight of a round's user turn in the round's vector; 0: off.
        round_embed_chars: characters of a long round its vector is made from.
    """

    episode_prompt_tokens: int = EPISODE_PROMPT_TOKENS
    pinned_unrelated_tokens: int = PINNED_UNRELATED_TOKENS
    round_prompt_tokens: int = ROUND_PROMPT_TOKENS
    reply_weight: float = REPLY_WEIGHT
    prev_weight: float = PREV_WEIGHT
    focus_question: bool = FOCUS_QUESTION
    split_questions: bool = SPLIT_QUESTIONS
    speaker_weight: float = SPEAKER_WEIGHT
    repeat_dates: int = REPEAT_DATES
    round_user_weight: float = ROUND_USER_WEIGHT
    round_embed_chars: int = ROUND_EMBED_CHARS
