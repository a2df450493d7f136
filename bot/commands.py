"""Chat commands (README, "Console"): every adapter maps them onto these handlers.

Each handler takes the engine, the speaker's context and the argument text, and returns reply
lines. Commands that destroy data ask for confirmation through ``engine.pending``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import timedelta

from bot.command_table import help_text
from memory.service import Context
from memory.text import normalise
from memory.types import ChatKind, Fact, FactStatus, IncomingMessage

def _origin(fact: Fact) -> str:
    if fact.origin_kind is ChatKind.PRIVATE:
        return "private chat"
    return f"group {fact.origin_title or fact.origin_thread_id}"


def _day(value) -> str:
    return value.strftime("%Y-%m-%d") if value else "now"


async def cmd_help(engine, ctx: Context, arg: str, lang: str = "en") -> list[str]:
    return [help_text(lang, engine.commands)]


_NEW_REPLIES = {
    "saved": "Started a new conversation. I saved a summary of the last one.",
    "later": "Started a new conversation. I will save a summary of the last one shortly.",
    "off": "Started a new conversation. Memory is off, so nothing of the last one was kept.",
    "nothing": "Started a new conversation (there was nothing to save).",
}


async def cmd_new(engine, ctx: Context, arg: str) -> list[str]:
    return [_NEW_REPLIES[await engine.close_conversation(ctx, reason="new")]]


async def cmd_why(engine, ctx: Context, arg: str) -> list[str]:
    record = await engine.memory.store.load_prompt_record(ctx.thread.id, ctx.user.id)
    if record is None:
        return ["I haven't replied to you in this chat yet, so there is nothing to explain."]
    item_tokens = sum(item["tokens"] for item in record["items"])
    headings = record["memory_tokens"] - item_tokens  # block headings and separators
    parts = f" ({item_tokens} in the items, {headings} in headings)" if headings > 0 else ""
    profile = [item for item in record["items"] if item.get("profile")]
    recalled = [item for item in record["items"] if not item.get("profile")]
    lines = [f"For my last reply I recalled {len(record['items'])} memory item(s), "
             f"{record['memory_tokens']} of {record['budget']} memory tokens{parts}; working memory held "
             f"{record['working_turns']} turn(s), {record['working_tokens']} tokens "
             f"(model: {record['model']})."]
    if profile:  # in every prompt, whatever the message: shown as its own part, first
        lines.append(f"Profile ({len(profile)} fact(s), {record.get('profile_tokens', 0)} "
                     "tokens, in every prompt):")
        for n, item in enumerate(profile, start=1):
            lines.append(f"{n}. [fact] score {item['score']:.2f}, {item['tokens']} tokens, "
                         f"noted {(item['created_at'] or '')[:10]}: {item['text'].lstrip('- ')}")
        if recalled:
            lines.append("Recalled for the message:")
    for n, item in enumerate(recalled, start=len(profile) + 1):
        source = (f"conversation of {item['created_at'][:10]} (session {item['session_id']})"
                  if item["session_id"] is not None
                  else f"facts, noted {(item['created_at'] or '')[:10]}")
        pin = ", pinned as the last conversation" if item["pinned"] else ""
        lines.append(f"{n}. [{item['kind']}] score {item['score']:.2f}, {item['tokens']} tokens, "
                     f"from the {source}{pin}: {item['text'].lstrip('- ')}")
    return ["\n".join(lines)]


async def cmd_memories(engine, ctx: Context, arg: str) -> list[str]:
    memory = engine.memory
    mode = arg.strip().lower()
    if mode not in ("", "all", "episodes"):
        return [f"/memories has no option \"{arg.strip()}\"; send /memories, /memories all or "
                "/memories episodes."]
    state = "" if ctx.user.memory_enabled else "Memory is OFF for you (/memory_on to resume).\n"
    if mode == "episodes":
        episodes = await memory.episodes_for(ctx.user.id)
        if not episodes:
            return [state + "No earlier conversations are saved."]
        lines = [f"{n}. ({_day(e.started_at)}) {e.summary}"
                 + (f"\n   Open tasks: {'; '.join(e.open_tasks)}" if e.open_tasks else "")
                 for n, e in enumerate(episodes, 1)]
        return [state + "Earlier conversations:\n" + "\n".join(lines)]
    facts = await memory.facts_for(ctx.user.id)
    episodes = await memory.episodes_for(ctx.user.id)
    lines = [f"{n}. {f.text} ({_day(f.valid_from)}, {_origin(f)})" for n, f in enumerate(facts, 1)]
    if not lines:
        lines = ["You have no saved memories."]
    if mode == "all":
        history = [f for f in await memory.facts_for(ctx.user.id, history=True)
                   if f.status is not FactStatus.ACTIVE]
        if history:
            lines.append("Superseded and archived:")
            start = len(facts) + 1
            lines += [f"{n}. {f.text} (valid {_day(f.valid_from)} to {_day(f.valid_to)})"
                      for n, f in enumerate(history, start)]
            lines += _history_lines(facts + history)
    lines.append(f"Earlier conversations: {len(episodes)} (see /memories episodes).")
    return [state + "\n".join(lines)]


def _history_lines(facts: list[Fact]) -> list[str]:
    """One line per topic that changed value: "History of primary language: The user mainly
    programs in Python until 2024-12, then The user mainly programs in Go"."""
    chains: dict[str, list[Fact]] = {}
    for f in facts:
        if f.topic:
            chains.setdefault(f.topic, []).append(f)
    out = []
    for topic, chain in sorted(chains.items()):
        if len(chain) < 2:
            continue
        chain.sort(key=lambda f: (f.valid_from, f.id))
        parts = []
        for f in chain:
            parts.append(f"{f.text} until {f.valid_to:%Y-%m}" if f.valid_to else f.text)
        out.append(f"History of {topic.replace('_', ' ')}: " + ", then ".join(parts))
    return out


async def cmd_forget(engine, ctx: Context, arg: str) -> list[str]:
    memory = engine.memory
    arg = arg.strip()
    if not arg:
        return ["Usage: /forget N (a number from /memories), /forget <words>, or /forget all."]
    if arg.lower() != "all" and _first_word(arg) == "all":
        return ["To delete everything I keep about you, send exactly /forget all (I ask before "
                "deleting); to find facts by words, leave out \"all\". Nothing was deleted."]
    facts = await memory.facts_for(ctx.user.id)
    if arg.lower() == "all":
        # the counts forget_all deletes: facts of every status, group conversations too
        preview = await memory.forget_all_preview(ctx.user.id)
        if not (preview.facts or preview.episodes or preview.turns):
            return ["Nothing to forget."]

        async def forget_everything() -> str:
            # copies outside the stores first (the console's input history): a crash after this
            # leaves the data to delete again, never a copy of what was deleted
            await engine.forgot_everything(ctx.user.id)
            result = await memory.forget_all(ctx.user.id)  # export files go with it
            return (f"Deleted everything I kept about you: {result.facts} fact(s), "
                    f"{result.episodes} earlier conversation(s), {result.rounds} indexed "
                    f"exchange(s) and {result.turns} message(s).")

        earlier = preview.facts - len(facts)
        versions = f" (including {earlier} earlier version(s))" if earlier else ""
        description = (f"delete all {preview.facts} fact(s){versions}, {preview.episodes} earlier "
                       "conversation(s) and every message of yours")
        engine.pending[(ctx.thread.id, ctx.user.id)] = _pending(description, forget_everything,
                                                               ctx.user.id)
        return [f"This will {description}. It cannot be undone. Reply yes to confirm."]
    if _NUMBER_LIKE.fullmatch(arg):  # a number attempt, not words to search for
        listed = facts + [f for f in await memory.facts_for(ctx.user.id, history=True)
                          if f.status is not FactStatus.ACTIVE]  # numbered as in /memories all
        n = int(arg) if arg.isdecimal() else 0
        if not 1 <= n <= len(listed):
            wrong = (f"There is no fact number {n}." if arg.isdecimal()
                     else f"\"{arg}\" is not a fact number.")
            return [f"{wrong} {_numbers_hint(len(facts), len(listed))} Nothing was deleted."]
        fact = listed[n - 1]
        going = await memory.forget_fact_preview(ctx.user.id, fact.id)

        async def forget_them() -> str:
            # copies of the doomed messages outside the stores first (the console's input
            # history), as for /forget all
            await engine.forgetting_messages(
                ctx.user.id, await memory.forget_fact_messages(ctx.user.id, fact.id))
            result = await memory.forget_fact(ctx.user.id, fact.id)
            if not result.fact_texts:
                return "That fact is already gone; nothing was deleted."
            return _forgotten(result)

        if len(going) <= 1:  # nothing beyond the fact named: no question
            return [await forget_them()]
        earlier = "; ".join(f.text for f in going[1:])
        description = (f"delete fact {n} ({fact.text}) and {len(going) - 1} earlier value(s) "
                       f"of it ({earlier}), with the messages they came from")
        engine.pending[(ctx.thread.id, ctx.user.id)] = _pending(description, forget_them,
                                                               ctx.user.id)
        lines = "\n".join(f"- {f.text}" for f in going)
        return [f"This will delete fact {n} and the earlier value(s) it replaced:\n{lines}\n"
                "with the messages they came from. Reply yes to confirm."]
    words = normalise(arg)
    matches = [(n, f) for n, f in enumerate(facts, 1) if words in normalise(f.text)]
    if not matches:
        return [f"No saved fact matches \"{arg}\". /memories lists them all."]
    lines = [f"{n}. {f.text}" for n, f in matches]
    how = (f"Send /forget {matches[0][0]} to delete it." if len(matches) == 1 else
           f"Send /forget with one of these numbers (for example /forget {matches[0][0]}) to "
           "delete it.")
    return ["Matching facts:\n" + "\n".join(lines) + "\n" + how]


def _forgotten(result) -> str:
    """The answer to a done ``/forget N``: every fact that went, and how many messages."""
    first, *earlier = result.fact_texts
    text = f"Forgotten: {first}"
    if earlier:
        text += f" and its earlier value(s): {'; '.join(earlier)}"
    if result.turns:
        text += (f" (with the {result.turns} message(s) "
                 f"{'they' if earlier else 'it'} came from)")
    return text


# numbers with an optional sign or "#", separated by spaces or commas ("-1", "+2", "1 2",
# "1, 2"): meant as fact numbers, not as words to search for (dates such as 2024-06-01 are words)
_NUMBER_LIKE = re.compile(r"[#+\-\u2212]?\d+(?:\s*[,\s]\s*[#+\-\u2212]?\d+)*")


def _first_word(text: str) -> str:
    """The first word of ``text``, lowercased, without the punctuation that may follow it."""
    words = text.split(maxsplit=1)
    return words[0].lower().rstrip(".,!?;:。，！？；：~～") if words else ""


def _numbers_hint(active: int, listed: int) -> str:
    """Which numbers ``/forget N`` accepts: those /memories (with history: /memories all)
    shows, one per command."""
    if not listed:
        return "You have no saved facts to forget."
    where = "/memories" if listed == active else "/memories all"
    if listed == 1:
        return f"Send /forget 1 to delete the only fact {where} lists."
    return f"Send /forget N with one number from 1 to {listed}, as {where} numbers them."


def _pending(description: str, action: Callable[[], Awaitable[str]], user_id: int):
    from bot.engine import PendingConfirmation

    return PendingConfirmation(description=description, action=action, user_id=user_id)


async def cmd_memory_chat(engine, ctx: Context, msg: IncomingMessage, enabled: bool
                          ) -> list[str]:
    """``/memory_off chat`` / ``/memory_on chat``: a group admin switches memory for everyone
    in the whole chat (all its topics). Adapters set ``IncomingMessage.is_admin``."""
    if msg.chat_kind is not ChatKind.GROUP:
        return ["/memory_off chat and /memory_on chat work in group chats; here use /memory_off."]
    if not msg.is_admin:
        return ["Only an admin of this group can switch memory for the whole chat."]
    memory = engine.memory
    await memory.store.set_chat_memory(ctx.thread.key.platform, ctx.thread.key.chat_id, enabled,
                                       memory.clock.now())
    if enabled:
        return ["Memory is on again for this chat."]
    return ["Memory is off for this whole chat: from now on what anyone says here stays only in "
            "this conversation and is deleted when it ends. An admin can undo it with "
            "/memory_on chat."]


async def cmd_memory_off(engine, ctx: Context, arg: str) -> list[str]:
    await engine.memory.set_memory(ctx, False)
    return ["Memory is off. From now on what you say stays only in this conversation and is "
            "deleted when it ends; nothing new is saved or recalled. /memory_on resumes."]


async def cmd_memory_on(engine, ctx: Context, arg: str) -> list[str]:
    if ctx.user.memory_enabled:
        return ["Memory is already on: I keep and recall what you tell me (/memory_off stops it)."]
    await engine.memory.set_memory(ctx, True)
    return ["Memory is on again. What you saved before is recalled again."]


async def cmd_stats(engine, ctx: Context, arg: str) -> list[str]:
    from bot.usage import STATS_DAYS, render_stats, utc_day

    now = engine.memory.clock.now()
    rows = await engine.memory.store.model_usage(
        ctx.user.id, since_day=utc_day(now - timedelta(days=STATS_DAYS - 1)))
    return [render_stats(rows, today=now)]


async def cmd_timezone(engine, ctx: Context, arg: str) -> list[str]:
    from memory.dates import canonical_zone

    name = arg.strip()
    if not name:
        current = ctx.user.timezone or engine.memory.config.default_timezone
        return [f"Your time zone is {current}. Set another with /timezone NAME, e.g. "
                "/timezone Europe/Vienna."]
    zone = canonical_zone(name)  # "europe/vienna" -> "Europe/Vienna"
    if zone is None:
        shown = name if len(name) <= 40 else name[:40] + "…"
        return [f"\"{shown}\" is not a time zone I know; use an IANA name such as "
                "Asia/Shanghai."]
    await engine.memory.store.set_timezone(ctx.user.id, zone)
    return [f"Time zone set to {zone}: dates like \"tomorrow\" are read in it from now on."]


async def cmd_export(engine, ctx: Context, arg: str) -> list[str]:
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
    return [f"Exported {len(doc['facts'])} fact(s), {len(doc['episodes'])} earlier "
            f"conversation(s) and {len(doc['turns'])} message(s) to {path.resolve()}"]


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
}




async def run_command(engine, ctx: Context, msg: IncomingMessage, text: str) -> list[str]:
    """Route ``/name args`` to its handler; unknown commands get a pointer to ``/help``."""
    name, _, arg = text[1:].partition(" ")
    name = name.split("@", 1)[0].lower()
    extra = arg.strip()
    if name in ("memory_off", "memory_on") and extra.lower() == "chat":
        return await cmd_memory_chat(engine, ctx, msg, enabled=name == "memory_on")
    handler, command = COMMANDS.get(name), engine.commands.get(name)
    if handler is None or command is None:
        return [f"Unknown command /{name}. /help lists what I understand."]
    # a bad argument changes nothing: it is refused before the handler runs
    if extra and command.argument is None and command.strict:
        return [f"/{name} takes no argument (got \"{extra}\"); send just /{name}."]
    if extra and name in ("memory_off", "memory_on"):
        return [f"/{name} has no option \"{extra}\"; send /{name} (just you) or /{name} chat "
                "(the whole group, its admins only)."]
    if handler is cmd_help:
        return await handler(engine, ctx, arg, engine.language_of_reply(msg, text))
    return await handler(engine, ctx, arg)
