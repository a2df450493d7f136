"""Chat commands (README, "Console"): every adapter maps them onto these handlers.

Each handler takes the engine, the speaker's context, the argument text and the language of
the reply (``ConversationEngine.language_of_reply``), and returns reply lines worded from the
catalogue (:mod:`i18n`). Commands that destroy data ask for confirmation through
``bot.confirmation`` (the question is kept in the store).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import timedelta

from bot.command_table import help_text
from bot.confirmation import ask
from i18n import language_of_code, message_ids, say
from i18n.facts import fact_text, mid_sentence
from i18n.items import item_text
from memory.records import PendingQuestion
from memory.service import Context
from memory.text import normalise
from memory.types import ChatKind, Fact, FactStatus, IncomingMessage

def _origin(fact: Fact, lang: str) -> str:
    if fact.origin_kind is ChatKind.PRIVATE:
        return say(lang, "memories.origin.private")
    return say(lang, "memories.origin.group", title=fact.origin_title or fact.origin_thread_id)


def _day(value, lang: str) -> str:
    return value.strftime("%Y-%m-%d") if value else say(lang, "memories.now")


async def cmd_help(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    return [help_text(lang, engine.commands)]


async def cmd_new(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    return [say(lang, f"new.{await engine.close_conversation(ctx, reason='new')}")]


async def cmd_why(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    record = await engine.memory.last_prompt_record(ctx)
    if record is None:
        return [say(lang, "why.none")]
    item_tokens = sum(item["tokens"] for item in record["items"])
    headings = record["memory_tokens"] - item_tokens  # block headings and separators
    parts = (say(lang, "why.parts", item_tokens=item_tokens, headings=headings)
             if headings > 0 else "")
    profile = [item for item in record["items"] if item.get("profile")]
    recalled = [item for item in record["items"] if not item.get("profile")]
    lines = [say(lang, "why.head", items=len(record["items"]),
                 memory_tokens=record["memory_tokens"], budget=record["budget"], parts=parts,
                 turns=record["working_turns"], working_tokens=record["working_tokens"],
                 model=record["model"])]

    def kind(item) -> str:
        msgid = f"why.kind.{item['kind']}"
        return say(lang, msgid) if msgid in message_ids() else item["kind"]

    if profile:  # in every prompt, whatever the message: shown as its own part, first
        lines.append(say(lang, "why.profile", count=len(profile),
                         tokens=record.get("profile_tokens", 0)))
        for n, item in enumerate(profile, start=1):
            lines.append(say(lang, "why.profile_item", n=n, kind=kind(item),
                             score=f"{item['score']:.2f}", tokens=item["tokens"],
                             day=(item["created_at"] or "")[:10],
                             text=item_text(item["kind"], item.get("parts"), item["text"], lang)))
        if recalled:
            lines.append(say(lang, "why.recalled"))
    for n, item in enumerate(recalled, start=len(profile) + 1):
        source = (say(lang, "why.source.conversation", day=item["created_at"][:10],
                      session=item["session_id"])
                  if item["session_id"] is not None
                  else say(lang, "why.source.facts", day=(item["created_at"] or "")[:10]))
        pin = say(lang, "why.pinned") if item["pinned"] else ""
        lines.append(say(lang, "why.item", n=n, kind=kind(item), score=f"{item['score']:.2f}",
                         tokens=item["tokens"], source=source, pin=pin,
                         text=item_text(item["kind"], item.get("parts"), item["text"], lang)))
    return ["\n".join(lines)]


async def cmd_memories(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    memory = engine.memory
    mode = arg.strip().lower()
    if mode not in ("", "all", "episodes"):
        return [say(lang, "memories.bad_option", option=arg.strip())]
    state = "" if ctx.user.memory_enabled else say(lang, "memories.off") + "\n"
    if mode == "episodes":
        episodes = await memory.episodes_for(ctx.user.id)
        if not episodes:
            return [state + say(lang, "memories.no_episodes")]
        lines = [say(lang, "memories.episode", n=n, day=_day(e.started_at, lang), summary=e.summary)
                 + ("\n" + say(lang, "memories.open_tasks",
                                tasks=say(lang, "list.semicolon").join(e.open_tasks))
                    if e.open_tasks else "")
                 for n, e in enumerate(episodes, 1)]
        return [state + say(lang, "memories.episodes_heading") + "\n" + "\n".join(lines)]
    facts = await memory.facts_for(ctx.user.id)
    episodes = await memory.episodes_for(ctx.user.id)
    lines = [say(lang, "memories.fact", n=n, text=fact_text(f.text), day=_day(f.valid_from, lang),
                 origin=_origin(f, lang)) for n, f in enumerate(facts, 1)]
    if not lines:
        lines = [say(lang, "memories.none")]
    if mode == "all":
        history = [f for f in await memory.facts_for(ctx.user.id, history=True)
                   if f.status is not FactStatus.ACTIVE]
        if history:
            lines.append(say(lang, "memories.history_heading"))
            start = len(facts) + 1
            lines += [say(lang, "memories.history_fact", n=n, text=fact_text(f.text),
                          start=_day(f.valid_from, lang), end=_day(f.valid_to, lang))
                      for n, f in enumerate(history, start)]
            lines += _history_lines(facts + history, lang)
    lines.append(say(lang, "memories.episode_count", count=len(episodes)))
    return [state + "\n".join(lines)]


def topic_name(topic: str, lang: str) -> str:
    """A fact topic (``memory.topics`` key, maybe with a detail: ``allergy:peanuts``) as words
    of ``lang``; a key the catalogue does not name is shown with spaces for underscores."""
    key, _, detail = topic.partition(":")
    name = (say(lang, f"topic.{key}") if f"topic.{key}" in message_ids()
            else key.replace("_", " "))
    return say(lang, "topic.detail", name=name, detail=detail) if detail else name


def _history_lines(facts: list[Fact], lang: str) -> list[str]:
    """For each topic that changed value, a heading and one line per value, oldest first,
    each stating the fact as the sentence it is ("History of primary language:", "   until
    2024-12: The user mainly programs in Python", "   then: The user mainly programs in Go")."""
    chains: dict[str, list[Fact]] = {}
    for f in facts:
        if f.topic:
            chains.setdefault(f.topic, []).append(f)
    out = []
    for topic, chain in sorted(chains.items()):
        if len(chain) < 2:
            continue
        chain.sort(key=lambda f: (f.valid_from, f.id))
        out.append(say(lang, "memories.topic_history", topic=topic_name(topic, lang)))
        for f in chain:
            out.append(say(lang, "memories.topic_until", month=f"{f.valid_to:%Y-%m}",
                           text=fact_text(f.text))
                       if f.valid_to else say(lang, "memories.topic_current", text=fact_text(f.text)))
    return out


async def cmd_forget(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    memory = engine.memory
    arg = arg.strip()
    if not arg:
        return [say(lang, "forget.usage")]
    if arg.lower() != "all" and _first_word(arg) == "all":
        return [say(lang, "forget.all_is_exact")]
    facts = await memory.facts_for(ctx.user.id)
    if arg.lower() == "all":
        # the counts forget_all deletes: facts of every status, group conversations too
        preview = await memory.forget_all_preview(ctx.user.id)
        if not (preview.facts or preview.episodes or preview.turns):
            return [say(lang, "forget.nothing")]
        earlier = preview.facts - len(facts)
        versions = say(lang, "forget.versions", earlier=earlier) if earlier else ""
        description = say(lang, "forget.all_description", facts=preview.facts,
                          versions=versions, episodes=preview.episodes)
        await ask(engine, ctx, action="forget_all", target=None, description=description,
                  lang=lang)
        return [say(lang, "forget.confirm_all", description=description)]
    if _NUMBER_LIKE.fullmatch(arg):  # a number attempt, not words to search for
        listed = facts + [f for f in await memory.facts_for(ctx.user.id, history=True)
                          if f.status is not FactStatus.ACTIVE]  # numbered as in /memories all
        n = int(arg) if arg.isdecimal() else 0
        if not 1 <= n <= len(listed):
            wrong = (say(lang, "forget.no_such_number", n=n) if arg.isdecimal()
                     else say(lang, "forget.not_a_number", arg=arg))
            return [say(lang, "forget.bad_number", wrong=wrong,
                        hint=_numbers_hint(len(facts), len(listed), lang))]
        fact = listed[n - 1]
        going = await memory.forget_fact_preview(ctx.user.id, fact.id)
        if len(going) <= 1:  # nothing beyond the fact named: no question
            return [await _forget_fact(engine, ctx.user.id, fact.id, lang)]
        earlier = say(lang, "list.semicolon").join(mid_sentence(f.text) for f in going[1:])
        description = say(lang, "forget.fact_description", n=n, fact=mid_sentence(fact.text),
                          count=len(going) - 1, earlier=earlier)
        await ask(engine, ctx, action="forget_fact", target=fact.id, description=description,
                  lang=lang)
        lines = "\n".join(f"- {fact_text(f.text)}" for f in going)
        return [say(lang, "forget.confirm_fact", n=n, lines=lines)]
    words = normalise(arg)
    matches = [(n, f) for n, f in enumerate(facts, 1) if words in normalise(f.text)]
    if not matches:
        return [say(lang, "forget.no_match", words=arg)]
    lines = "\n".join(f"{n}. {fact_text(f.text)}" for n, f in matches)
    how = say(lang, "forget.send_one" if len(matches) == 1 else "forget.send_some",
              n=matches[0][0])
    return [say(lang, "forget.matches", lines=lines, how=how)]


def _forgotten(result, lang: str) -> str:
    """The answer to a done ``/forget N``: every fact that went, and how many messages."""
    first, *earlier = result.fact_texts
    text = (say(lang, "forgotten.with_earlier", fact=fact_text(first),
                earlier=say(lang, "list.semicolon").join(fact_text(t) for t in earlier))
            if earlier else say(lang, "forgotten.one", fact=fact_text(first)))
    if result.turns:
        text = say(lang, "forgotten.messages_they" if earlier else "forgotten.messages_it",
                   text=text, turns=result.turns)
    return text


# numbers with an optional sign or "#", separated by spaces or commas ("-1", "+2", "1 2",
# "1, 2"): meant as fact numbers, not as words to search for (dates such as 2024-06-01 are words)
_NUMBER_LIKE = re.compile(r"[#+\-\u2212]?\d+(?:\s*[,\s]\s*[#+\-\u2212]?\d+)*")


def _first_word(text: str) -> str:
    """The first word of ``text``, lowercased, without the punctuation that may follow it."""
    words = text.split(maxsplit=1)
    return words[0].lower().rstrip(".,!?;:。，！？；：~～") if words else ""


def _numbers_hint(active: int, listed: int, lang: str) -> str:
    """Which numbers ``/forget N`` accepts: those /memories (with history: /memories all)
    shows, one per command."""
    if not listed:
        return say(lang, "forget.hint.none")
    where = "/memories" if listed == active else "/memories all"
    if listed == 1:
        return say(lang, "forget.hint.one", where=where)
    return say(lang, "forget.hint.many", listed=listed, where=where)


async def _forget_everything(engine, user_id: int, lang: str) -> str:
    """``/forget all``, confirmed: copies outside the stores first (the console's input
    history), so a crash after this leaves the data to delete again, never a copy of what was
    deleted; export files go with the stores' data."""
    await engine.forgot_everything(user_id)
    result = await engine.memory.forget_all(user_id)
    return say(lang, "forget.all_done", facts=result.facts, episodes=result.episodes,
               rounds=result.rounds, turns=result.turns)


async def _forget_fact(engine, user_id: int, fact_id: int, lang: str) -> str:
    """``/forget N`` (confirmed when it takes more than the fact named): copies of the doomed
    messages outside the stores first, as for ``/forget all``."""
    memory = engine.memory
    await engine.forgetting_messages(user_id, await memory.forget_fact_messages(user_id, fact_id))
    result = await memory.forget_fact(user_id, fact_id)
    if not result.fact_texts:
        return say(lang, "forget.already_gone")
    return _forgotten(result, lang)


#: What a confirmed question runs, by its ``action`` (``bot.confirmation``).
CONFIRMED: dict[str, Callable[..., Awaitable[str]]] = {
    "forget_all": lambda engine, q: _forget_everything(engine, q.user_id, q.language),
    "forget_fact": lambda engine, q: _forget_fact(engine, q.user_id, q.target, q.language),
}


async def run_confirmed(engine, question: PendingQuestion) -> str:
    """Run the action of a question its author confirmed; the reply text."""
    return await CONFIRMED[question.action](engine, question)


async def cmd_memory_chat(engine, ctx: Context, msg: IncomingMessage, enabled: bool,
                          lang: str) -> list[str]:
    """``/memory_off chat`` / ``/memory_on chat``: a group admin switches memory for everyone
    in the whole chat (all its topics). Adapters set ``IncomingMessage.is_admin``."""
    if msg.chat_kind is not ChatKind.GROUP:
        return [say(lang, "memory_chat.not_group")]
    if not msg.is_admin:
        return [say(lang, "memory_chat.not_admin")]
    memory = engine.memory
    await memory.set_chat_memory(ctx, enabled)
    return [say(lang, "memory_chat.on" if enabled else "memory_chat.off")]


async def cmd_memory_off(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    await engine.memory.set_memory(ctx, False)
    return [say(lang, "memory_off.done")]


async def cmd_memory_on(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    if ctx.user.memory_enabled:
        return [say(lang, "memory_on.already")]
    await engine.memory.set_memory(ctx, True)
    return [say(lang, "memory_on.done")]


async def cmd_stats(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    from bot.usage import STATS_DAYS, render_stats, utc_day

    now = engine.memory.clock.now()
    rows = await engine.memory.model_usage(
        ctx.user.id, since_day=utc_day(now - timedelta(days=STATS_DAYS - 1)))
    return [render_stats(rows, today=now, lang=lang)]


async def cmd_timezone(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    from memory.dates import canonical_zone

    name = arg.strip()
    if not name:
        current = ctx.user.timezone or engine.memory.config.default_timezone
        return [say(lang, "timezone.current", zone=current)]
    zone = canonical_zone(name)  # "europe/vienna" -> "Europe/Vienna"
    if zone is None:
        shown = name if len(name) <= 40 else name[:40] + "…"
        return [say(lang, "timezone.unknown", name=shown)]
    await engine.memory.set_timezone(ctx, zone)
    return [say(lang, "timezone.set", zone=zone)]


async def cmd_language(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    """``/language [en|zh]``: show or set the language of the user's replies (stored with the
    user, like ``/timezone``); it wins over the language of each message and the platform's
    hint. ``/language`` alone says which one is in force."""
    code = arg.strip().lower()
    if not code:
        chosen = getattr(ctx.user, "language", None)
        if chosen is None:
            return [say(lang, "language.automatic")]
        return [say(lang, "language.current", language=say(lang, f"language.name.{chosen}"),
                    code=chosen)]
    chosen = language_of_code(code)
    if chosen is None or chosen != code.split("-")[0].split("_")[0]:
        shown = code if len(code) <= 20 else code[:20] + "…"
        return [say(lang, "language.unknown", code=shown)]
    await engine.memory.set_language(ctx, chosen)
    return [say(chosen, "language.set", language=say(chosen, f"language.name.{chosen}"))]


async def cmd_export(engine, ctx: Context, arg: str, lang: str) -> list[str]:
    """Everything stored about the user as one JSON document (``memory.portability``). Chat
    platforms get the document itself (Discord attaches it as a file); the console writes it to
    ``<data folder>/exports/`` (owner-only) and answers with the path."""
    import json

    doc = await engine.memory.export_user(ctx.user.id)
    body = json.dumps(doc, ensure_ascii=False, indent=1)
    if ctx.thread.key.platform != "console" or engine.memory.exports is None:
        return [body]
    stamp = engine.memory.clock.now().strftime("%Y%m%dT%H%M%SZ")
    path = engine.memory.exports.write(ctx.user.id, stamp, body)
    return [say(lang, "export.done", facts=len(doc["facts"]), episodes=len(doc["episodes"]),
                turns=len(doc["turns"]), path=path.resolve())]


COMMANDS: dict[str, Callable] = {
    "start": cmd_help,
    "help": cmd_help,
    "new": cmd_new,
    "why": cmd_why,
    "memories": cmd_memories,
    "forget": cmd_forget,
    "memory_off": cmd_memory_off,
    "memory_on": cmd_memory_on,
    "export": cmd_export,
    "stats": cmd_stats,
    "timezone": cmd_timezone,
    "language": cmd_language,
}




async def run_command(engine, ctx: Context, msg: IncomingMessage, text: str) -> list[str]:
    """Route ``/name args`` to its handler; unknown commands get a pointer to ``/help``."""
    name, _, arg = text[1:].partition(" ")
    name = name.split("@", 1)[0].lower()
    extra = arg.strip()
    lang = await engine.language_for(msg, text, ctx)
    if name in ("memory_off", "memory_on") and extra.lower() == "chat":
        return await cmd_memory_chat(engine, ctx, msg, enabled=name == "memory_on", lang=lang)
    handler, command = COMMANDS.get(name), engine.commands.get(name)
    if handler is None or command is None:
        return [say(lang, "command.unknown", name=name)]
    # a bad argument changes nothing: it is refused before the handler runs
    if extra and command.argument is None and command.strict:
        return [say(lang, "command.no_argument", name=name, extra=extra)]
    if extra and name in ("memory_off", "memory_on"):
        return [say(lang, "command.memory_switch.bad_option", name=name, extra=extra)]
    return await handler(engine, ctx, arg, lang)
