"""What a user's words mean, per language: a question, the speaker as subject, a statement
about the speaker (not a pleasantry, not said to or of the listener, not a maxim), a request to
remember, a task, a correction, a hypothetical, a passing state.

One definition of each, for English and Chinese, read from the lexicons
(``memory.lexicon.en`` / ``memory.lexicon.zh``), in three modules this one gathers:
``memory.sentences`` (tokens, sentences, quotes), ``memory.clauses`` (questions, the
speaker, suppositions, passing states, corrections) and ``memory.requests`` (requests to
remember, tasks). Every rule is a row of :data:`RULES` with its own examples that must and
must not satisfy it; one parametrised test runs every row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memory.clauses import (
    about_the_speaker,
    after_openers,
    asks,
    clause_spans,
    has_cue,
    is_boundary,
    is_correction,
    is_hypothetical,
    is_maxim,
    is_pleasantry,
    is_question,
    is_transient,
    lasting_statement,
    mentions_speaker,
    names_the_listener,
    speaker_subject,
    speaking_state,
    strip_openers,
    zh_clause_spans,
    zh_question_word,
    zh_speaker_at,
    zh_speaker_is_subject,
)
from memory.requests import Request, find_request, is_task
from memory.sentences import (
    Token,
    find_phrase,
    norms,
    split_sentences,
    starts_with,
    tokens,
    without_abbreviation_dots,
    without_quotes,
)

__all__ = [
    "RULES", "Request", "Rule", "Token", "about_the_speaker", "after_openers", "asks",
    "clause_spans", "find_phrase", "find_request", "has_cue", "is_boundary", "is_correction",
    "is_hypothetical", "is_maxim", "is_pleasantry", "is_question", "is_task", "is_transient",
    "lasting_statement", "mentions_speaker", "names_the_listener", "norms", "speaker_subject",
    "speaking_state",
    "split_sentences", "starts_with", "strip_openers", "tokens", "without_abbreviation_dots",
    "without_quotes", "zh_clause_spans", "zh_question_word", "zh_speaker_at",
    "zh_speaker_is_subject",
]


@dataclass(frozen=True)
class Rule:
    """One rule of the language module with the examples that show it: every ``yes`` example
    satisfies ``check``, no ``no`` example does."""

    name: str
    lang: str
    check: Callable[[str], bool]
    yes: tuple[str, ...]
    no: tuple[str, ...]


def _requested(text: str) -> bool:
    return find_request(text) is not None


RULES: tuple[Rule, ...] = (
    Rule("question", "en", is_question,
         ("Should I take the train?", "Do you live in Graz", "where do I live",
          "Which bank am I with", "Is it normal that my cat sleeps all day?",
          "Can you suggest a film for tonight"),
         ("Don't message me on weekends.", "When I was young I lived in Rome.",
          "I live in Graz.", "What I like is jazz.", "Have a nice day.")),
    Rule("question", "zh", is_question,
         ("我需要带护照吗", "我的牙医是谁", "周末去哪儿玩比较好", "你是不是忘了", "今晚做点什么菜好",
          "沙爹酱我能吃吗？"),
         ("我什么都吃。", "我住在上海。", "别在周末给我发消息。", "我哪儿都不想去。")),
    Rule("speaker", "en", lambda s: speaker_subject(s, "en"),
         ("I live in Graz", "My dentist is Dr. Weber", "we are vegan", "Oh, my bike is a Cube"),
         ("Can you help me with this?", "If I moved to Tokyo, what would rent cost",
          "Priya moved to Lisbon", "He said I was wrong",
          "Write me a short email to my landlord")),
    Rule("speaker", "zh", lambda s: speaker_subject(s, "zh"),
         ("我住在上海", "我的牙医是王医生", "我女儿对猫毛过敏", "其实我不吃香菜"),
         ("别在周末给我发消息", "假如我搬到东京", "你能帮我看看吗", "他叫李明")),
    Rule("about the speaker", "en", lambda s: about_the_speaker(s, "en"),
         ("I live in Graz", "My sister is a nurse", "we keep bees",
          "I work with kids, you know"),
         ("And remember, I'm always there for you", "I'm so proud of you",
          "Thanks so much, Marta!", "Believe in yourself", "Priya moved to Lisbon")),
    Rule("about the speaker", "zh", lambda s: about_the_speaker(s, "zh"),
         ("我住在上海", "我女儿在读小学", "我们家养了一只猫", "跟你说，我搬到成都了"),
         ("我会一直在你身边", "我为你感到骄傲", "好的，谢谢！", "相信你自己", "他叫李明")),
    Rule("pleasantry", "en", lambda s: is_pleasantry(s, "en"),
         ("Thanks, Caroline!", "Yep!", "Nice one, Gina!", "Thank you so much!",
          "Hey Sam, good morning!", "Cheers!"),
         ("Thanks, I moved to Graz", "I'm good", "Caroline!", "Nice weather in Graz",
          "Great, my bike is fixed")),
    Rule("pleasantry", "zh", lambda s: is_pleasantry(s, "zh"),
         ("谢谢！", "好的好的", "嗯嗯", "哈哈，太棒了！", "谢谢小王！"),
         ("谢谢，我搬到成都了", "我好了", "好的，我对芒果过敏", "小王")),
    Rule("maxim", "en", lambda s: is_maxim(s, "en"),
         ("staying positive is very important", "being patient really matters",
          "everybody makes mistakes", "honesty is the best policy", "the best is yet to come",
          "money doesn't grow on trees", "time heals everything",
          "sometimes stumbling blocks can be opened doors"),
         ("the meeting code is 4411", "the wedding is on June 3", "my gym is FitZone",
          "family dinner is at 7", "work starts at 8 on Mondays")),
    Rule("maxim", "zh", lambda s: is_maxim(s, "zh"),
         ("保持好心态非常重要", "坚持是最难的", "一切都会好起来的", "失败是成功之母", "金钱不是万能的"),
         ("会议室密码是4411", "婚礼在六月三号", "健康检查在周五")),
    Rule("request", "en", _requested,
         ("Remember that I prefer tea.", "Please answer briefly from now on.",
          "Could you reply in bullet points from now on?",
          "I'm planning a trip, and by the way, remember that my passport expires in March.",
          "Can you keep in mind that I work night shifts?",
          "My flat is on the fourth floor, please remember that.",
          "Would you mind remembering that my partner's name is Alex?",
          "Hey, could you note down that my son's practice is on Wednesdays?",
          "Remember I'm vegan, okay?", "Don't forget that I'm left-handed.",
          "Remember the meeting code is 4411.", "Thanks Jon, and remember that I'm vegan.",
          "Mia, my flat is on the fourth floor, remember that.",
          "Remember, I told you my sister lives in Lyon", "Remember the meeting moved to 3pm",
          "My daughter's school is St. Mary's, keep that in mind.",
          "for future reference, my blood type is O negative",
          "Plan me a weekend in Rome and keep in mind I hate museums.",
          "Could you remember something for me? My locker code is 4471.",
          "Oh and remember I'm left-handed", "My name's Priya btw, remember it",
          "Keep this in mind for later: I commute by bike", "Save this: my bike lock code is 3391"),
         ("Can you suggest a film, keeping in mind what I like?", "Remember to call the plumber.",
          "Do you remember what I told you about my sister?",
          "I remember when we used to drive to the coast.",
          'My grandmother always said "remember that you are loved".',
          "Keep in mind this is only hypothetical: if I moved to Tokyo, what would rent cost?",
          "Remember that time we went to Rome?", "I can't remember that.", "Thanks. Remember that.",
          "Can you remember what I said about Rome?", "And remember, I'm always there for you.",
          "Don't forget, trust yourself and your instincts.",
          "Remember that being kind is what matters most.", "Remember, Sam, just keep going!",
          "Sure, and I'll keep writing down our best moments with you from now on.",
          "Remember, money doesn't grow on trees.", "Keep in mind, I'm just asking for a friend.",
          "Remember, I told you I'd get back to you on that.",
          "Remember the early bird catches the worm", "remember the time we went to Rome",
          "I always go there and remember my grandma", "I just remember that it rained",
          "Save that for the weekend", "You should know that already")),
    Rule("request", "zh", _requested,
         ("记住我不吃辣", "以后回答我尽量简短一点，好吗？", "对了，你帮我记一下，我女儿对猫毛过敏。",
          "你能记住我每周四晚上有合唱排练吗？", "我的车牌号是沪A12345，记住了啊。",
          "顺便说一句，请记住我的工位在三楼东边。", "我在西门子工作，记住了", "请以后都用繁体字回复我。",
          "好的，谢谢！记住我吃素。", "记住，我跟你说过我妹妹住在成都。", "能帮我记一下吗？我每周二晚上上瑜伽课。",
          "周五的会改到下午三点了，记一下。", "帮我记个事：我家的wifi是电信的", "这事你记着：下周一我开始休假",
          "我想让你记住，我不喜欢被叫全名", "你就记住一点：我不喝酒"),
         ("周末有什么好玩的推荐吗？记着我喜欢什么。", "记得明天提醒我交水电费。", "你还记得我上次说的那家火锅店吗？",
          "我记得小时候每年暑假都去外婆家。", "我老板常说“记住，客户永远是对的”。", "我朋友说他还记得那场大雪。",
          "晚上十点以后不要给我发通知。", "记得带伞", "记住，你永远是最棒的！", "别忘了，保持好心态非常重要。",
          "记住，我会一直在你身边。", "记住，一定要坚持下去！", "记住，一切都会好起来的。",
          "以后有机会再聊吧。", "以后的事以后再说。", "记住，明天早上七点叫我起床。", "记住，我只是随便问问")),
    Rule("task", "en", lambda s: is_task(s, "en"),
         ("to call Mum tomorrow", "remind me about the dentist"),
         ("my dentist is Dr. Weber", "I take the bus to work")),
    Rule("task", "zh", lambda s: is_task(s, "zh"),
         ("明天提醒我交水电费", "带伞", "给妈妈打电话", "2026-12-03提醒我交水电费", "明天早上七点叫我起床",
          "周五10点提醒我开会"),
         ("我明天要去看牙医", "我不吃辣", "2026-12-04是我妈妈的生日")),
    Rule("correction", "en", is_correction,
         ("No, I live in Linz", "Actually, my landlord is Mr. Brandl", "That's wrong, it's 5",
          "Correction: my bike is a Canyon", "Sorry, no, it's 41."),
         ("I live in Linz", "Nobody knows", "Now I use Go", "Sorry, I'm late",
          "No worries, Jon! I got it", "No thanks, I'm fine")),
    Rule("correction", "zh", is_correction,
         ("不对，我住在上海", "我说错了，我的工号是A1032", "更正一下，我的搭档是阿伟"),
         ("我住在上海", "对了，我搬家了", "不客气，我住在上海")),
    Rule("lasting statement", "en", lambda s: lasting_statement(s, "en"),
         ("I have two cats", "I mainly use Go", "My wife is a teacher", "I really love jazz"),
         ("I think so", "My tortoise Humphrey loves strawberries", "nice weather today",
          "Can you help me", "I love it!", "I have been there too", "I love how you put it")),
    Rule("lasting statement", "zh", lambda s: lasting_statement(s, "zh"),
         ("我养了两只猫", "我平时喝茶", "我老婆是老师"),
         ("今天天气不错", "给我讲个笑话", "他有两只猫", "我也喜欢这样", "我一直在你身边")),
    Rule("speaking state", "en", lambda s: speaking_state(s, "en"),
         ("I'm just asking for a friend", "I'm only kidding", "I'm so tired"),
         ("I'm a nurse", "I'm tired of my job", "I'm training for a marathon")),
    Rule("speaking state", "zh", lambda s: speaking_state(s, "zh"),
         ("我只是随便问问", "我开玩笑的", "我好累"), ("我是护士", "我每天跑步")),
    Rule("hypothetical", "en", lambda s: is_hypothetical(s, "en"),
         ("If I moved to Tokyo, what would rent cost?", "Suppose I quit my job"),
         ("I moved to Tokyo", "My gym is FitZone")),
    Rule("hypothetical", "zh", lambda s: is_hypothetical(s, "zh"),
         ("假如我搬到东京住", "如果我辞职了"), ("我搬到东京了", "我的健身房是乐刻")),
    Rule("transient", "en", lambda s: is_transient(s, "en"),
         ("I'm exhausted and a bit grumpy this morning", "I'm tired today"),
         ("I'm allergic to peanuts", "I have two cats")),
    Rule("transient", "zh", lambda s: is_transient(s, "zh"),
         ("今天好累啊，心情有点烦", "我现在很饿"), ("我对芒果过敏", "我养了两只猫")),
)
