"""A probe of semantic memory's write path, replayed through the console.

Every case is a short scripted chat of its own console user (``/new`` between conversations),
replayed in one process through the real console loop (``adapters.console.run_console``) with
the default embedder, real SQLite and LanceDB in a temporary data folder and the offline model.
What is checked is what a user would see: the facts stored (active ones, and the earlier
values kept as history) and, where a case asks a last question, what ``/why`` shows was
recalled for it.

Kinds:

* ``open_vocabulary``: an attribute outside the topic table ("my dentist", 我的宽带) stated,
  then given a new value; the new value is active, the old one history.
* ``junk``: messages that must write no fact at all: requests for advice, tasks, questions,
  narration, quotes, hypotheticals and passing moods, some with "remember" or "my" in them.
* ``constraint``: an allergy, diet, medical constraint or prohibition said once, without
  "remember": kept at once.
* ``request``: explicit requests in polite, mid-sentence, trailing and question form.
* ``correction``: a free-form fact corrected ("no, my ... is ...", 不对，...).
* ``ending``: a fact the user says no longer holds: no longer active, kept as history.
* ``advice``: an advice question sharing no words with the fact it needs, after two unrelated
  conversations; the fact must be in what the model was shown (these need a profile of the
  user in every prompt: ``Case.needs_profile``).

Run ``python -m tests.semantic_probe`` for passed/total per kind (``-v`` lists every failing
check). ``tests/integration/test_semantic_probe.py`` runs every case under pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: Two conversations on other subjects, put between a fact and the advice question needing it.
UNRELATED_EN = ("What's the capital of Australia?", "/new",
                "How do I get a red wine stain out of a cotton shirt?", "/new")
UNRELATED_ZH = ("澳大利亚的首都是哪里？", "/new", "白衬衫上的红酒渍怎么洗掉？", "/new")


@dataclass(frozen=True)
class Case:
    """One scripted chat and what it must leave behind.

    Attributes:
        id: unique, also the console user's name.
        kind: see the module docstring.
        lang: ``en`` or ``zh``.
        turns: console lines, in order (``/new`` ends a conversation).
        active: each string must occur (case-insensitively) in some active fact.
        not_active: no active fact may contain any of these.
        history: each string must occur in some fact that is no longer active (superseded or
            ended, kept as history).
        nothing: no fact at all may be stored (any status).
        ask: a last message, in a new conversation; ``/why`` is sent after it.
        recalled: each string must occur in what ``/why`` shows was given to the model for
            ``ask``, outside earlier conversations' summaries and exchanges (a fact, or the
            user's profile).
        needs_profile: the case depends on the user's profile being in every prompt.
    """

    id: str
    kind: str
    lang: str
    turns: tuple[str, ...]
    active: tuple[str, ...] = ()
    not_active: tuple[str, ...] = ()
    history: tuple[str, ...] = ()
    nothing: bool = False
    ask: str | None = None
    recalled: tuple[str, ...] = ()
    needs_profile: bool = False


def _c(id, kind, lang, turns, **kw) -> Case:
    return Case(id, kind, lang, tuple(turns), **{k: tuple(v) if isinstance(v, (list, tuple))
                                                   else v for k, v in kw.items()})


CASES: tuple[Case, ...] = (
    # ------------------------------------------------------------ open vocabulary, English
    _c("ov-en-dentist", "open_vocabulary", "en",
       ["Please remember my dentist is Dr. Lindqvist.", "/new",
        "My dentist is now Dr. Okafor, she took over the practice."],
       active=["Okafor"], not_active=["Lindqvist"], history=["Lindqvist"],
       ask="Who is my dentist?", recalled=["Okafor"]),
    _c("ov-en-gym", "open_vocabulary", "en",
       ["Remember that my gym is FitZone on Baker Street.", "/new",
        "I cancelled that membership. My gym is now Iron Temple."],
       active=["Iron Temple"], not_active=["FitZone"], history=["FitZone"]),
    _c("ov-en-carrier", "open_vocabulary", "en",
       ["Note that my mobile carrier is Telekom.", "/new",
        "I switched from Telekom to Vodafone last week."],
       active=["Vodafone"], not_active=["Telekom"], history=["Telekom"]),
    _c("ov-en-band", "open_vocabulary", "en",
       ["Remember: my favourite band is Radiohead.", "/new",
        "My favourite band is now Wet Leg, I can't stop listening to them."],
       active=["Wet Leg"], not_active=["Radiohead"], history=["Radiohead"],
       ask="What's my favourite band?", recalled=["Wet Leg"]),
    _c("ov-en-laptop", "open_vocabulary", "en",
       ["Keep in mind that my laptop is a ThinkPad X1.", "/new",
        "I changed my laptop to a MacBook Air."],
       active=["MacBook"], not_active=["ThinkPad"], history=["ThinkPad"]),
    _c("ov-en-shoe", "open_vocabulary", "en",
       ["Remember my shoe size is 42.", "/new",
        "I got measured properly and my shoe size is 43 now."],
       active=["43"], not_active=["42"], history=["42"]),
    _c("ov-en-bank", "open_vocabulary", "en",
       ["Remember that my bank is Sparkasse.", "/new",
        "I moved my savings over, so my bank is N26 now."],
       active=["N26"], not_active=["Sparkasse"], history=["Sparkasse"],
       ask="Which bank am I with?", recalled=["N26"]),
    _c("ov-en-yoga", "open_vocabulary", "en",
       ["Remember that my yoga teacher is Priya.", "/new",
        "Priya moved to Lisbon, so my yoga teacher is Lena now."],
       active=["Lena"], not_active=["Priya"], history=["Priya"]),
    _c("ov-en-internet", "open_vocabulary", "en",
       ["Please remember that my internet provider is Comcast.", "/new",
        "My internet provider is now Sonic, a small fibre company."],
       active=["Sonic"], not_active=["Comcast"], history=["Comcast"]),
    _c("ov-en-coffee-shop", "open_vocabulary", "en",
       ["Remember my favourite coffee shop is Blue Bottle.", "/new",
        "These days my favourite coffee shop is Kaffeekommune."],
       active=["Kaffeekommune"], not_active=["Blue Bottle"], history=["Blue Bottle"]),
    _c("ov-en-hairdresser", "open_vocabulary", "en",
       ["Remember that my hairdresser is Tomás.",
        "Hmm, what's a good shampoo for dry hair?",
        "Oh, and Tomás retired, my hairdresser is Inés now."],
       active=["Inés"], not_active=["Tomás"], history=["Tomás"]),
    _c("ov2-en-vet", "open_vocabulary", "en",
       ["Remember that our vet is Dr. Haas.", "/new",
        "We changed vets after the move, our vet is Dr. Moreau now."],
       active=["Moreau"], not_active=["Haas"], history=["Haas"],
       ask="Who's our vet again?", recalled=["Moreau"]),
    _c("ov2-en-pharmacy", "open_vocabulary", "en",
       ["Please note that my pharmacy is the Boots on King Street.", "/new",
        "My pharmacy these days is the Walgreens near work."],
       active=["Walgreens"], not_active=["Boots"], history=["Boots"]),
    _c("ov2-en-phone", "open_vocabulary", "en",
       ["Remember that my phone is a Pixel 7.", "/new",
        "I upgraded my phone to an iPhone 15 last month."],
       active=["iPhone"], not_active=["Pixel"], history=["Pixel"]),
    _c("ov2-en-team", "open_vocabulary", "en",
       ["Remember that my team at work is Payments.", "/new",
        "I got reorganised, my team at work is Search now."],
       active=["Search"], not_active=["Payments"], history=["Payments"],
       ask="Which team am I on at work?", recalled=["Search"]),
    _c("ov2-en-running-shoes", "open_vocabulary", "en",
       ["Note that my running shoes are Brooks Ghost 14.", "/new",
        "My running shoes are now Hoka Clifton 9, much softer."],
       active=["Hoka"], not_active=["Brooks"], history=["Brooks"]),
    _c("ov2-en-health-insurance", "open_vocabulary", "en",
       ["Remember my health insurance is TK.", "/new",
        "From January my health insurance is AOK."],
       active=["AOK"], not_active=["TK"], history=["TK"]),
    _c("ov2-en-barber", "open_vocabulary", "en",
       ["Remember that my barber is Sal on 5th Avenue.", "/new",
        "Sal closed his shop, so I switched to Dom at Fade Factory."],
       active=["Dom"], not_active=["Sal"], history=["Sal"]),
    _c("ov2-en-landlord", "open_vocabulary", "en",
       ["Remember that my landlord is Greystar.", "/new",
        "The building got sold, my landlord is now Vonovia."],
       active=["Vonovia"], not_active=["Greystar"], history=["Greystar"]),
    _c("ov2-en-electricity", "open_vocabulary", "en",
       ["Remember that my electricity supplier is Octopus.", "/new",
        "I've switched my electricity supplier to EDF."],
       active=["EDF"], not_active=["Octopus"], history=["Octopus"]),
    _c("ov2-en-gp", "open_vocabulary", "en",
       ["Remember my GP is Dr. Patel.", "/new",
        "Dr. Patel retired, my new GP is Dr. Chen."],
       active=["Chen"], not_active=["Patel"], history=["Patel"],
       ask="Who is my GP?", recalled=["Chen"]),
    _c("ov2-en-email", "open_vocabulary", "en",
       ["Keep in mind that my email provider is Gmail.", "/new",
        "I moved from Gmail to Proton Mail over the summer."],
       active=["Proton"], not_active=["Gmail"], history=["Gmail"]),
    _c("ov2-en-climbing", "open_vocabulary", "en",
       ["Remember that my climbing gym is Boulderwelt.", "/new",
        "My climbing gym is Der Kegel these days, it's closer to the office."],
       active=["Kegel"], not_active=["Boulderwelt"], history=["Boulderwelt"]),
    _c("ov3-en-provider", "open_vocabulary", "en",
       ["Remember our internet provider is Vodafone.", "/new",
        "We switched to Telekom because Vodafone kept dropping out."],
       active=["Telekom"], not_active=["Vodafone"], history=["Vodafone"]),
    _c("ov3-en-car-insurance", "open_vocabulary", "en",
       ["Remember my car insurance is Allianz.", "/new",
        "My car insurance at the moment is HUK24."],
       active=["HUK24"], not_active=["Allianz"], history=["Allianz"]),
    _c("ov3-en-hairdresser", "open_vocabulary", "en",
       ["Remember that my hairdresser is Kim.", "/new",
        "I switched hairdressers to Alex in October."],
       active=["Alex"], not_active=["Kim"], history=["Kim"]),
    _c("ov3-en-babysitter", "open_vocabulary", "en",
       ["Note that our babysitter is Emma.", "/new",
        "Emma went off to uni, our new babysitter is Zoe."],
       active=["Zoe"], not_active=["Emma"], history=["Emma"]),
    _c("ov3-en-dentist", "open_vocabulary", "en",
       ["Remember my dentist is Dr. Ruiz.", "/new",
        "Dr. Ruiz moved away, so I changed to Dr. Mendes."],
       active=["Mendes"], not_active=["Ruiz"], history=["Ruiz"]),
    # ------------------------------------------------------------ open vocabulary, Chinese
    _c("ov-zh-dentist", "open_vocabulary", "zh",
       ["记住，我的牙医是王医生。", "/new", "我的牙医换成了李医生。"],
       active=["李医生"], not_active=["王医生"], history=["王医生"],
       ask="我的牙医是谁？", recalled=["李医生"]),
    _c("ov-zh-gym", "open_vocabulary", "zh",
       ["帮我记一下，我的健身房是乐刻。", "/new", "我的健身房现在是超级猩猩了。"],
       active=["超级猩猩"], not_active=["乐刻"], history=["乐刻"]),
    _c("ov-zh-broadband", "open_vocabulary", "zh",
       ["记住我家的宽带是联通的。", "/new", "我家宽带换成了电信。"],
       active=["电信"], not_active=["联通"], history=["联通"]),
    _c("ov-zh-singer", "open_vocabulary", "zh",
       ["记住我最喜欢的歌手是周杰伦。", "/new", "我最喜欢的歌手现在是陈奕迅。"],
       active=["陈奕迅"], not_active=["周杰伦"], history=["周杰伦"],
       ask="我最喜欢哪个歌手？", recalled=["陈奕迅"]),
    _c("ov-zh-laptop", "open_vocabulary", "zh",
       ["记住我的笔记本电脑是联想小新。", "/new", "我的笔记本电脑换成了MacBook Pro。"],
       active=["MacBook"], not_active=["联想"], history=["联想"]),
    _c("ov-zh-landlord", "open_vocabulary", "zh",
       ["记住我的房东是刘先生。", "/new", "我的房东换成了张阿姨，房子卖给她了。"],
       active=["张阿姨"], not_active=["刘先生"], history=["刘先生"]),
    _c("ov-zh-kindergarten", "open_vocabulary", "zh",
       ["记住我女儿的幼儿园是阳光幼儿园。", "/new", "我女儿的幼儿园换成了蓝天幼儿园。"],
       active=["蓝天"], not_active=["阳光"], history=["阳光"]),
    _c("ov-zh-shoe", "open_vocabulary", "zh",
       ["记住我的鞋码是39。", "/new", "我的鞋码现在是40了。"],
       active=["40"], not_active=["39"], history=["39"]),
    _c("ov-zh-insurance", "open_vocabulary", "zh",
       ["记一下，我的车险是平安的。", "/new", "我的车险今年换成了太平洋保险。"],
       active=["太平洋"], not_active=["平安"], history=["平安"],
       ask="我的车险是哪家的？", recalled=["太平洋"]),
    _c("ov-zh-salary-card", "open_vocabulary", "zh",
       ["记住我的工资卡是招商银行的。", "/new", "我的工资卡换成了工商银行。"],
       active=["工商"], not_active=["招商"], history=["招商"]),
    _c("ov-zh-carrier", "open_vocabulary", "zh",
       ["记住我的手机运营商是移动。", "今天天气真不错。", "对了，我的运营商换成联通了。"],
       active=["联通"], not_active=["移动"], history=["移动"]),
    _c("ov2-zh-property", "open_vocabulary", "zh",
       ["记住我们小区的物业是万科物业。", "/new", "我们小区的物业换成了碧桂园服务。"],
       active=["碧桂园"], not_active=["万科"], history=["万科"],
       ask="我们小区的物业是哪家？", recalled=["碧桂园"]),
    _c("ov2-zh-insurer", "open_vocabulary", "zh",
       ["记一下，我的保险公司是中国人寿。", "/new", "我的保险公司现在是友邦了。"],
       active=["友邦"], not_active=["人寿"], history=["人寿"]),
    _c("ov2-zh-car", "open_vocabulary", "zh",
       ["记住我的车是一辆白色的卡罗拉。", "/new", "我把车换成了比亚迪汉。"],
       active=["比亚迪"], not_active=["卡罗拉"], history=["卡罗拉"],
       ask="我开的是什么车？", recalled=["比亚迪"]),
    _c("ov2-zh-barber", "open_vocabulary", "zh",
       ["记住我的理发师是Tony老师。", "/new", "我现在的理发师是Kevin，Tony去别的店了。"],
       active=["Kevin"], not_active=["Tony"], history=["Tony"]),
    _c("ov2-zh-courier", "open_vocabulary", "zh",
       ["记住我常用的快递是顺丰。", "/new", "我常用的快递改成京东快递了。"],
       active=["京东"], not_active=["顺丰"], history=["顺丰"]),
    _c("ov2-zh-pet-hospital", "open_vocabulary", "zh",
       ["记住我家的宠物医院是瑞鹏。", "/new", "我家的宠物医院换成了楼下的安安宠物医院。"],
       active=["安安"], not_active=["瑞鹏"], history=["瑞鹏"]),
    _c("ov2-zh-bank", "open_vocabulary", "zh",
       ["记住我的开户行是建设银行。", "/new", "开户行现在改成中国银行了。"],
       active=["中国银行"], not_active=["建设银行"], history=["建设银行"]),
    _c("ov2-zh-running-shoes", "open_vocabulary", "zh",
       ["记住我的跑鞋是亚瑟士Kayano。", "/new", "最近我的跑鞋换成了耐克飞马。"],
       active=["飞马"], not_active=["Kayano"], history=["Kayano"]),
    _c("ov2-zh-parking", "open_vocabulary", "zh",
       ["记住我的车位是B2-117。", "/new", "车位换成了B1-023，物业重新分配的。"],
       active=["B1-023"], not_active=["B2-117"], history=["B2-117"],
       ask="我的车位是几号？", recalled=["B1-023"]),
    _c("ov2-zh-supermarket", "open_vocabulary", "zh",
       ["记住我常去的超市是盒马。", "/new", "我现在常去的超市是山姆，离家近。"],
       active=["山姆"], not_active=["盒马"], history=["盒马"]),
    _c("ov2-zh-team", "open_vocabulary", "zh",
       ["记住我在公司的组是支付组。", "/new", "我在公司的组现在是搜索组了。"],
       active=["搜索组"], not_active=["支付组"], history=["支付组"]),
    _c("ov2-zh-phone-plan", "open_vocabulary", "zh",
       ["记一下，我的手机套餐是移动的128元套餐。", "/new", "我的手机套餐改成了联通的59元套餐。"],
       active=["59"], not_active=["128"], history=["128"]),
    _c("ov3-zh-gas", "open_vocabulary", "zh",
       ["记住我家的燃气公司是华润燃气。", "/new", "我们把燃气公司换成了港华燃气。"],
       active=["港华"], not_active=["华润"], history=["华润"]),
    _c("ov3-zh-checkup", "open_vocabulary", "zh",
       ["记住我的体检医院是美年。", "/new", "体检医院今年改成了爱康国宾。"],
       active=["爱康"], not_active=["美年"], history=["美年"]),
    # ------------------------------------------------------------ junk, English
    _c("junk-en-film", "junk", "en",
       ["Can you suggest a film for tonight, keeping in mind what I like?"], nothing=True),
    _c("junk-en-task", "junk", "en",
       ["Please remember to ping me about the plumber tomorrow morning."], nothing=True),
    _c("junk-en-do-you-remember", "junk", "en",
       ["Do you remember what I told you about my sister's wedding?"], nothing=True),
    _c("junk-en-narration", "junk", "en",
       ["I remember when we used to drive to the coast every summer, those were good days."],
       nothing=True),
    _c("junk-en-quote", "junk", "en",
       ['My grandmother always said "remember that you are loved, whatever happens".'],
       nothing=True),
    _c("junk-en-mood", "junk", "en",
       ["Ugh, I'm exhausted and a bit grumpy this morning."], nothing=True),
    _c("junk-en-advice", "junk", "en",
       ["What's a good way for a beginner to learn the ukulele?"], nothing=True),
    _c("junk-en-email", "junk", "en",
       ["Write me a short email to my landlord asking when the heating will be fixed."],
       nothing=True),
    _c("junk-en-cat-question", "junk", "en",
       ["Is it normal that my cat sleeps sixteen hours a day?"], nothing=True),
    _c("junk-en-hypothetical", "junk", "en",
       ["Keep in mind this is only hypothetical: if I moved to Tokyo, what would rent cost?"],
       nothing=True),
    _c("junk-en-translate", "junk", "en",
       ["Translate \"I live in Berlin and I work as a nurse\" into Spanish."], nothing=True),
    _c("junk-en-other-remembers", "junk", "en",
       ["My neighbour says he still remembers the big flood of 2002."], nothing=True),
    _c("junk-en-thanks-name", "junk", "en",
       ["Cheers, Marco! I love how you explained it.", "/new",
        "Cheers, Marco! I love how you explained it."], nothing=True),
    _c("junk-en-yep", "junk", "en",
       ["Yep! I have been there too.", "/new", "Yep! I have been there too."], nothing=True),
    _c("junk-en-there-for-you", "junk", "en",
       ["Hang in there. And remember, I'm always there for you."], nothing=True),
    _c("junk-en-trust-yourself", "junk", "en",
       ["Don't forget, trust yourself and your instincts."], nothing=True),
    _c("junk-en-maxim", "junk", "en",
       ["Remember that being patient really matters."], nothing=True),
    _c("junk-en-vocative", "junk", "en", ["Remember, Sam, just keep going!"], nothing=True),
    _c("junk-en-wish", "junk", "en",
       ["I wish I wasn't so allergic, spring is the worst!"], nothing=True),
    _c("junk-en-vegan-cake", "junk", "en", ["I baked a vegan carrot cake on Sunday."],
       nothing=True),
    _c("junk-en-love-you", "junk", "en",
       ["I love you guys!", "/new", "I love you guys!"], nothing=True),
    _c("junk-en-remind-plants", "junk", "en",
       ["Can you remind me to water the plants every Sunday?"], nothing=True),
    _c("junk-en-remember-when", "junk", "en",
       ["Remember when my dad taught me to ride a bike? Good times."], nothing=True),
    _c("junk-en-unquoted-saying", "junk", "en",
       ["my coach always says remember why you started"], nothing=True),
    _c("junk-en-forget-password", "junk", "en",
       ["If I ever forget my password, what should I do?"], nothing=True),
    _c("junk-en-exam-mood", "junk", "en", ["im so stressed about my exam tomorrow 😩"],
       nothing=True),
    _c("junk-en-friend-allergy", "junk", "en",
       ["My friend Sarah is allergic to shellfish. What can I cook for her?"], nothing=True),
    _c("junk-en-dont-let-me-forget", "junk", "en",
       ["Don't let me forget to buy milk on the way home."], nothing=True),
    _c("junk-en-hydrate", "junk", "en", ["Remember to hydrate, everyone! 💧"], nothing=True),
    _c("junk-en-imagine-chef", "junk", "en",
       ["Imagine I was a chef in Paris, what would my mornings look like?"], nothing=True),
    _c("junk-en-sister-told-me", "junk", "en",
       ["My sister told me to remember that I'm never alone."], nothing=True),
    _c("junk-en-money-trees", "junk", "en", ["Remember, money doesn't grow on trees."],
       nothing=True),
    _c("junk-en-for-a-friend", "junk", "en",
       ["Keep in mind, I'm just asking for a friend."], nothing=True),
    _c("junk-en-told-you-get-back", "junk", "en",
       ["Remember, I told you I'd get back to you on that."], nothing=True),
    _c("junk-en-saying-name", "junk", "en", ["Remember, Rome wasn't built in a day."],
       nothing=True),
    # ------------------------------------------------------------ junk, Chinese
    _c("junk-zh-weekend", "junk", "zh", ["周末有什么好玩的推荐吗？记着我喜欢什么。"], nothing=True),
    _c("junk-zh-task", "junk", "zh", ["记得明天提醒我交水电费。"], nothing=True),
    _c("junk-zh-do-you-remember", "junk", "zh", ["你还记得我上次说的那家火锅店吗？"], nothing=True),
    _c("junk-zh-narration", "junk", "zh", ["我记得小时候每年暑假都去外婆家住一个月。"], nothing=True),
    _c("junk-zh-quote", "junk", "zh", ["我老板常说“记住，客户永远是对的”，我听得耳朵都起茧了。"],
       nothing=True),
    _c("junk-zh-mood", "junk", "zh", ["今天好累啊，心情有点烦。"], nothing=True),
    _c("junk-zh-advice", "junk", "zh", ["怎么才能提高英语口语？"], nothing=True),
    _c("junk-zh-email", "junk", "zh", ["帮我写一封给房东的邮件，问一下暖气什么时候修好。"],
       nothing=True),
    _c("junk-zh-dog-question", "junk", "zh", ["我家狗最近一直掉毛，正常吗？"], nothing=True),
    _c("junk-zh-hypothetical", "junk", "zh", ["假如我搬到东京住，每个月房租大概要多少？"],
       nothing=True),
    _c("junk-zh-translate", "junk", "zh", ["把“我住在北京，我是一名护士”翻译成英文。"], nothing=True),
    _c("junk-zh-other-remembers", "junk", "zh", ["我朋友说他到现在还记得那场大雪。"], nothing=True),
    _c("junk-zh-thanks", "junk", "zh",
       ["嗯嗯，谢谢！我平时也喜欢这样。", "/new", "嗯嗯，谢谢！我平时也喜欢这样。"], nothing=True),
    _c("junk-zh-by-your-side", "junk", "zh",
       ["哈哈，好的！我一直都在你身边。", "/new", "哈哈，好的！我一直都在你身边。"], nothing=True),
    _c("junk-zh-you-are-best", "junk", "zh", ["记住，你永远是最棒的！"], nothing=True),
    _c("junk-zh-maxim", "junk", "zh", ["别忘了，保持好心态非常重要。"], nothing=True),
    _c("junk-zh-keep-going", "junk", "zh", ["记住，我会一直支持你的。"], nothing=True),
    _c("junk-zh-wish", "junk", "zh", ["我真希望自己不过敏。"], nothing=True),
    _c("junk-zh-vegan-dumplings", "junk", "zh", ["我给朋友做了素食饺子。"], nothing=True),
    _c("junk-zh-wish-if", "junk", "zh", ["要是我对猫毛不过敏就好了，好想养一只。"], nothing=True),
    _c("junk-zh-like-you", "junk", "zh", ["我很喜欢你们！", "/new", "我很喜欢你们！"], nothing=True),
    _c("junk-zh-remind-report", "junk", "zh", ["你记得提醒我周五交报告。"], nothing=True),
    _c("junk-zh-unquoted-saying", "junk", "zh", ["我妈总说记住吃亏是福"], nothing=True),
    _c("junk-zh-bad-mood", "junk", "zh", ["今天心情特别差，什么都不想干。"], nothing=True),
    _c("junk-zh-remember-book", "junk", "zh", ["你还记不记得我上次问你的那本书？"], nothing=True),
    _c("junk-zh-quit-mortgage", "junk", "zh", ["要是我辞职了，房贷怎么还？"], nothing=True),
    _c("junk-zh-colleague-peanut", "junk", "zh", ["我同事对花生过敏，聚餐点什么菜比较好？"],
       nothing=True),
    _c("junk-zh-narration-rain", "junk", "zh", ["我记得那天下着大雨，我们在路边等了好久。"],
       nothing=True),
    _c("junk-zh-wake-me", "junk", "zh", ["记住，明天早上七点叫我起床。"], nothing=True),
    _c("junk-zh-quote-vegetarian", "junk", "zh", ["他跟我说“我是素食者”，但我看见他吃肉了。"],
       nothing=True),
    _c("junk-zh-translate-remember", "junk", "zh", ["“记住我”用英语怎么说？"], nothing=True),
    _c("junk-zh-be-honest", "junk", "zh", ["你要记住，做人要诚实。"], nothing=True),
    _c("junk-zh-chat-later", "junk", "zh", ["以后有机会再聊吧。"], nothing=True),
    _c("junk-zh-later-later", "junk", "zh", ["以后的事以后再说。"], nothing=True),
    _c("junk-zh-saying", "junk", "zh", ["记住，失败是成功之母"], nothing=True),
    # ------------------------------------------------------------ constraints, English
    _c("con-en-sesame", "constraint", "en",
       ["I can't have anything with sesame, I'm seriously allergic to it."],
       active=["sesame"], ask="Is tahini made with sesame?", recalled=["sesame"]),
    _c("con-en-vegan", "constraint", "en",
       ["Quick one before we start: I'm vegan."], active=["vegan"]),
    _c("con-en-diabetes", "constraint", "en",
       ["I have type 1 diabetes, so I need to watch my carbs."], active=["diabetes"],
       ask="How do I plan carbs around diabetes on a hiking day?", recalled=["diabetes"]),
    _c("con-en-weekends", "constraint", "en",
       ["Please don't message me on weekends."], active=["weekend"]),
    _c("con-en-alcohol", "constraint", "en",
       ["Don't ever suggest alcohol to me, I've been sober for two years."],
       active=["alcohol"]),
    _c("con-en-ibuprofen", "constraint", "en",
       ["I'm on blood thinners, so no ibuprofen for me."], active=["ibuprofen"]),
    _c("con-en-pork", "constraint", "en",
       ["I don't eat pork, for religious reasons."], active=["pork"],
       ask="Is pork belly hard to cook?", recalled=["pork"]),
    _c("con-en-clause-so", "constraint", "en",
       ["I'm gluten intolerant, so I'll just grab the rice bowl."],
       active=["gluten intolerant"], not_active=["rice bowl"]),
    _c("con-en-clause-since", "constraint", "en",
       ["Since I'm diabetic I've been cooking a lot more at home lately."],
       active=["diabetic"], not_active=["cooking"]),
    _c("con-en-clause-but", "constraint", "en",
       ["We had a parrot when I was little, but then I became allergic and we gave him away."],
       active=["allergic"], not_active=["parrot"]),
    _c("con-en-gluten-lower", "constraint", "en", ["i cant eat gluten"], active=["gluten"]),
    _c("con-en-lactose-emoji", "constraint", "en", ["I'm lactose intolerant 🥛"],
       active=["lactose"]),
    _c("con-en-thinners-fyi", "constraint", "en", ["Just so you know, I'm on blood thinners."],
       active=["blood thinners"]),
    _c("con-en-call-before-9", "constraint", "en", ["please never call me before 9"],
       active=["before 9"]),
    _c("con-en-pregnant", "constraint", "en",
       ["I'm pregnant, so no soft cheese or sushi for me."], active=["pregnant"]),
    _c("con-en-epileptic", "constraint", "en", ["I'm epileptic, please no flashing images."],
       active=["epileptic"]),
    _c("con-en-penicillin", "constraint", "en", ["Heads up: I'm allergic to penicillin."],
       active=["penicillin"]),
    _c("con-en-avoid-salt", "constraint", "en",
       ["I have to avoid salt because of my kidneys."], active=["salt"]),
    _c("con-en-shellfish-btw", "constraint", "en",
       ["We're planning dinner for Saturday. I'm allergic to shellfish btw."],
       active=["shellfish"]),
    _c("con-en-no-texts-late", "constraint", "en",
       ["no texts after 10pm please, I go to bed early"], active=["10pm"]),
    _c("con-en-no-dairy", "constraint", "en", ["I don't do dairy."], active=["dairy"]),
    # ------------------------------------------------------------ constraints, Chinese
    _c("con-zh-mango", "constraint", "zh", ["我对芒果过敏。"], active=["芒果"],
       ask="芒果布丁怎么做？", recalled=["芒果"]),
    _c("con-zh-vegetarian", "constraint", "zh", ["我吃素，不吃任何肉。"], active=["素"]),
    _c("con-zh-blood-pressure", "constraint", "zh", ["我有高血压，医生让我少吃盐。"],
       active=["高血压"]),
    _c("con-zh-weekends", "constraint", "zh", ["别在周末给我发消息。"], active=["周末"]),
    _c("con-zh-lactose", "constraint", "zh", ["我乳糖不耐受，喝牛奶会拉肚子。"], active=["乳糖"],
       ask="乳糖不耐受的人可以喝酸奶吗？", recalled=["乳糖"]),
    _c("con-zh-late", "constraint", "zh", ["晚上十点以后不要给我发通知。"], active=["十点"]),
    _c("con-zh-coriander", "constraint", "zh", ["我不吃香菜，一点都不行。"], active=["香菜"]),
    _c("con-zh-clause-because", "constraint", "zh", ["因为我麸质不耐受，所以面包我都不碰。"],
       active=["麸质不耐受"], not_active=["面包"]),
    _c("con-zh-clause-so", "constraint", "zh", ["我有哮喘，所以跑步得慢慢来。"],
       active=["哮喘"], not_active=["跑步"]),
    _c("con-zh-clause-but", "constraint", "zh", ["我以前养过狗，但是后来我对狗毛过敏了。"],
       active=["过敏"], not_active=["养过狗"]),
    _c("con-zh-seafood", "constraint", "zh", ["我对海鲜过敏"], active=["海鲜"]),
    _c("con-zh-spicy", "constraint", "zh", ["我不吃辣"], active=["辣"]),
    _c("con-zh-trying-baby", "constraint", "zh", ["我在备孕"], active=["备孕"]),
    _c("con-zh-late-night", "constraint", "zh", ["晚上十点以后别给我发消息"], active=["十点"]),
    _c("con-zh-pregnant-coffee", "constraint", "zh", ["我怀孕了，最近不能喝咖啡。"],
       active=["怀孕"]),
    _c("con-zh-diabetic", "constraint", "zh", ["我是糖尿病患者，甜的要少吃"], active=["糖尿病"]),
    _c("con-zh-push", "constraint", "zh", ["工作日晚上请不要给我推送消息"], active=["推送"]),
    _c("con-zh-lactose-short", "constraint", "zh", ["我有点乳糖不耐，喝不了牛奶"],
       active=["乳糖"]),
    _c("con-zh-halal", "constraint", "zh", ["我只吃清真的"], active=["清真"]),
    _c("con-zh-blood-thinner", "constraint", "zh", ["我在吃抗凝药，不能吃布洛芬。"],
       active=["布洛芬"]),
    _c("con-zh-cannot-spicy", "constraint", "zh", ["我吃不了辣的"], active=["辣"]),
    # ------------------------------------------------------------ request wordings, English
    _c("req-en-bullets", "request", "en",
       ["Could you reply in bullet points from now on?"], active=["bullet"]),
    _c("req-en-mid-passport", "request", "en",
       ["I'm planning a trip, and by the way, remember that my passport expires in March."],
       active=["passport"]),
    _c("req-en-question-night", "request", "en",
       ["Can you keep in mind that I work night shifts?"], active=["night shift"]),
    _c("req-en-trailing-floor", "request", "en",
       ["My flat is on the fourth floor with no lift, please remember that."],
       active=["fourth floor"]),
    _c("req-en-would-you-mind", "request", "en",
       ["Would you mind remembering that my partner's name is Alex?"], active=["Alex"]),
    _c("req-en-going-forward", "request", "en",
       ["Going forward, please use metric units with me."], active=["metric"]),
    _c("req-en-note-down", "request", "en",
       ["Hey, could you note down that my son's football practice is on Wednesdays?"],
       active=["football"]),
    _c("req-en-vocative", "request", "en",
       ["Jon, my locker is number 12, remember that."], active=["locker"]),
    _c("req-en-told-you-sister", "request", "en",
       ["Remember, I told you my sister lives in Lyon"], active=["Lyon"]),
    _c("req-en-meeting-moved", "request", "en", ["Remember the meeting moved to 3pm"],
       active=["3pm"]),
    _c("req-en-running-relax", "request", "en", ["Remember: running is my way to relax"],
       active=["running"]),
    _c("req-en-future-reference", "request", "en",
       ["for future reference, my blood type is O negative"], active=["O negative"]),
    _c("req-en-keep-that-in-mind", "request", "en",
       ["My daughter's school is St. Mary's, keep that in mind."], active=["Mary's"]),
    _c("req-en-rome-museums", "request", "en",
       ["Plan me a weekend in Rome and keep in mind I hate museums."], active=["museums"]),
    _c("req-en-dont-forget-trailing", "request", "en",
       ["I'm moving to Porto next month, don't forget that!"], active=["Porto"]),
    _c("req-en-cat-emoji", "request", "en",
       ["could you please remember that my cat is called Miso 🐱"], active=["Miso"]),
    _c("req-en-lowercase", "request", "en", ["hey remember i work from home on mondays"],
       active=["home"]),
    _c("req-en-make-a-note", "request", "en",
       ["Make a note: I take the 7:40 train to work every day."], active=["7:40"]),
    _c("req-en-pls-remember", "request", "en",
       ["btw i moved to leeds last month, pls remember"], active=["leeds"]),
    _c("req-en-oh-and", "request", "en", ["Oh and remember I'm left-handed"],
       active=["left-handed"]),
    _c("req-en-name-btw", "request", "en", ["My name's Priya btw, remember it"],
       active=["Priya"]),
    _c("req-en-for-later", "request", "en", ["Keep this in mind for later: I commute by bike"],
       active=["bike"]),
    _c("req-en-quick-note", "request", "en", ["Quick note: my office is on the 5th floor"],
       active=["5th floor"]),
    _c("req-en-keep-a-note", "request", "en", ["Could you keep a note that I hate cilantro?"],
       active=["cilantro"]),
    _c("req-en-store-dash", "request", "en",
       ["Store this for later — my passport number ends in 442"], active=["442"]),
    # ------------------------------------------------------------ request wordings, Chinese
    _c("req-zh-brief", "request", "zh", ["以后回答我尽量简短一点，好吗？"], active=["简短"]),
    _c("req-zh-mid-daughter", "request", "zh", ["对了，你帮我记一下，我女儿对猫毛过敏。"],
       active=["猫毛"]),
    _c("req-zh-question-choir", "request", "zh", ["你能记住我每周四晚上有合唱排练吗？"],
       active=["合唱"]),
    _c("req-zh-trailing-plate", "request", "zh", ["我的车牌号是沪A12345，记住了啊。"],
       active=["沪A12345"]),
    _c("req-zh-meetings", "request", "zh", ["麻烦记住：我开会的时候不接电话。"], active=["开会"]),
    _c("req-zh-traditional", "request", "zh", ["请以后都用繁体字回复我。"], active=["繁体"]),
    _c("req-zh-desk", "request", "zh", ["顺便说一句，请记住我的工位在三楼东边。"], active=["三楼"]),
    _c("req-zh-pleasantry", "request", "zh", ["好的，谢谢！顺便记一下我的储物柜是12号。"],
       active=["储物柜"]),
    _c("req-zh-husband-birthday", "request", "zh", ["帮我记一下，我老公的生日是3月8号。"],
       active=["生日"]),
    _c("req-zh-tea", "request", "zh", ["你记着，我不喝咖啡，只喝茶。"], active=["咖啡"]),
    _c("req-zh-flight", "request", "zh", ["记好了：我的航班是CA1234。"], active=["CA1234"]),
    _c("req-zh-school", "request", "zh", ["麻烦记下：我女儿的学校是实验小学。"],
       active=["实验小学"]),
    _c("req-zh-blood-type-trailing", "request", "zh", ["我的血型是O型，你记一下哈"],
       active=["O型"]),
    _c("req-zh-told-you-sister", "request", "zh", ["记住，我跟你说过我妹妹住在成都。"],
       active=["成都"]),
    _c("req-zh-question-yoga", "request", "zh", ["能帮我记一下吗？我每周二晚上上瑜伽课。"],
       active=["瑜伽"]),
    _c("req-zh-running-relax", "request", "zh", ["记住哦，跑步是我放松的方式。"],
       active=["跑步"]),
    _c("req-zh-meeting-moved", "request", "zh", ["周五的会改到下午三点了，记一下。"],
       active=["三点"]),
    _c("req-zh-recommend-beef", "request", "zh", ["以后推荐餐厅的时候记得我不吃牛肉"],
       active=["牛肉"]),
    _c("req-zh-this-note", "request", "zh", ["这个你记一下：我的会员卡号是8831"],
       active=["8831"]),
    _c("req-zh-remember-oh", "request", "zh", ["我下周开始在家办公，记得哦"], active=["在家办公"]),
    _c("req-zh-a-bit", "request", "zh", ["你帮我记着点，我女朋友叫小雅"], active=["小雅"]),
    _c("req-zh-this-matter", "request", "zh", ["这事你记着：下周一我开始休假"], active=["休假"]),
    _c("req-zh-want-you-to", "request", "zh", ["我想让你记住，我不喜欢被叫全名"], active=["全名"]),
    _c("req-zh-one-thing", "request", "zh", ["你就记住一点：我不喝酒"], active=["酒"]),
    _c("req-zh-let-you-know", "request", "zh", ["跟你说一声，我换工作了，现在在字节"],
       active=["字节"]),
    # ------------------------------------------------------------ corrections, English
    _c("cor-en-piano", "correction", "en",
       ["Remember that my piano teacher is Mrs. Olsen.", "What's a good warm-up for scales?",
        "No, sorry, my piano teacher is Mrs. Nilsen."],
       active=["Nilsen"], not_active=["Olsen"], history=["Olsen"]),
    _c("cor-en-landlord", "correction", "en",
       ["Please remember my landlord is called Mr. Brandt.", "/new",
        "Actually, my landlord is Mr. Brandl, I misspelled it before."],
       active=["Brandl"], not_active=["Brandt"], history=["Brandt"]),
    _c("cor-en-school", "correction", "en",
       ["Remember that my daughter's school is Riverside Primary.", "/new",
        "That's wrong, my daughter's school is Oakfield Primary."],
       active=["Oakfield"], not_active=["Riverside"], history=["Riverside"],
       ask="Which school does my daughter go to?", recalled=["Oakfield"]),
    _c("cor-en-bike", "correction", "en",
       ["Note that my bike is a Cube Attain.", "/new", "Correction: my bike is a Canyon Endurace."],
       active=["Canyon"], not_active=["Cube"], history=["Cube"]),
    _c("cor-en-bare-value", "correction", "en",
       ["Remember that my favourite pizza topping is mushrooms.", "No wait, it's olives."],
       active=["olives"], not_active=["mushrooms"], history=["mushrooms"]),
    _c("cor2-en-landlady", "correction", "en",
       ["Remember my landlady's name is Mrs. Kowalski.",
        "Sorry, I got that wrong, it's Mrs. Kowalczyk."],
       active=["Kowalczyk"], not_active=["Kowalski"], history=["Kowalski"]),
    _c("cor2-en-car-insurance", "correction", "en",
       ["Remember that my car insurance is with Allianz.", "/new",
        "No, my car insurance is with HUK, not Allianz."],
       active=["HUK"], not_active=["Allianz"], history=["Allianz"]),
    _c("cor2-en-flat", "correction", "en",
       ["Please note my flat number is 14B.", "Oops, my flat number is 41B, not 14B."],
       active=["41B"], not_active=["14B"], history=["14B"]),
    _c("cor2-en-bank", "correction", "en",
       ["Remember that my bank is ING.", "What's a good budgeting app?",
        "Wait, I mixed that up: my bank is DKB."],
       active=["DKB"], not_active=["ING"], history=["ING"]),
    _c("cor2-en-vet", "correction", "en",
       ["Remember my vet is Dr. Novak.", "/new",
        "I gave you the wrong name before, my vet is Dr. Nowak."],
       active=["Nowak"], not_active=["Novak"], history=["Novak"],
       ask="What's my vet's name?", recalled=["Nowak"]),
    _c("cor2-en-coach", "correction", "en",
       ["Remember that my son's football coach is Jens.", "Correction - it's Jonas, not Jens."],
       active=["Jonas"], not_active=["Jens"], history=["Jens"]),
    _c("cor3-en-seat", "correction", "en",
       ["Remember my seat at the office is 3F.", "My bad, it's 5F."],
       active=["5F"], not_active=["3F"], history=["3F"]),
    _c("cor3-en-vet", "correction", "en",
       ["Remember our vet is Dr. Stone.", "/new", "Oops, our vet is Dr. Stein, not Stone."],
       active=["Stein"], not_active=["Stone"], history=["Stone"]),
    # ------------------------------------------------------------ corrections, Chinese
    _c("cor-zh-barber", "correction", "zh",
       ["记住我的理发师是小王。", "/new", "不对，我的理发师是小李。"],
       active=["小李"], not_active=["小王"], history=["小王"]),
    _c("cor-zh-staff-number", "correction", "zh",
       ["记一下，我的工号是A1023。", "我说错了，我的工号是A1032。"],
       active=["A1032"], not_active=["A1023"], history=["A1023"]),
    _c("cor-zh-partner", "correction", "zh",
       ["记住我的羽毛球搭档是阿杰。", "/new", "更正一下，我的羽毛球搭档是阿伟。"],
       active=["阿伟"], not_active=["阿杰"], history=["阿杰"],
       ask="我的羽毛球搭档是谁？", recalled=["阿伟"]),
    _c("cor-zh-locker", "correction", "zh",
       ["记住我的快递柜是3号柜。", "不对，是5号柜。"],
       active=["5号"], not_active=["3号"], history=["3号"]),
    _c("cor-zh-dish", "correction", "zh",
       ["记住我最喜欢的菜是红烧肉。", "/new", "其实我最喜欢的菜是糖醋排骨，不是那个。"],
       active=["糖醋排骨"], not_active=["红烧肉"], history=["红烧肉"]),
    _c("cor2-zh-steward", "correction", "zh",
       ["记住我的物业管家是小赵。", "不好意思说错了，是小周。"],
       active=["小周"], not_active=["小赵"], history=["小赵"]),
    _c("cor2-zh-plate", "correction", "zh",
       ["记住我的车牌是沪A12345。", "/new", "不对不对，我的车牌是沪A54321。"],
       active=["沪A54321"], not_active=["沪A12345"], history=["沪A12345"]),
    _c("cor2-zh-barber", "correction", "zh",
       ["记一下我的理发师是阿强。", "口误，我的理发师是阿康。"],
       active=["阿康"], not_active=["阿强"], history=["阿强"]),
    _c("cor2-zh-agent", "correction", "zh",
       ["记住我的保险经纪人是陈姐。", "/new", "我之前说的不对，我的保险经纪人是林姐。"],
       active=["林姐"], not_active=["陈姐"], history=["陈姐"],
       ask="我的保险经纪人是谁？", recalled=["林姐"]),
    _c("cor2-zh-teacher", "correction", "zh",
       ["记住我儿子的班主任是王老师。", "不是王老师，是汪老师。"],
       active=["汪老师"], not_active=["王老师"], history=["王老师"]),
    _c("cor2-zh-film", "correction", "zh",
       ["记住我最喜欢的电影是霸王别姬。", "/new", "纠正一下：我最喜欢的电影是活着。"],
       active=["活着"], not_active=["霸王别姬"], history=["霸王别姬"]),
    _c("cor3-zh-insurance", "correction", "zh",
       ["记住我的车险是人保。", "哎呀说错了，是平安。"],
       active=["平安"], not_active=["人保"], history=["人保"]),
    _c("cor3-zh-piano", "correction", "zh",
       ["记住我女儿的钢琴老师是周老师。", "不是周老师，是邹老师，我打错字了。"],
       active=["邹老师"], not_active=["周老师"], history=["周老师"]),
    _c("cor3-zh-desk", "correction", "zh",
       ["记住我的工位是A区12号。", "/new", "不是不是，我的工位是B区12号。"],
       active=["B区"], not_active=["A区"], history=["A区"]),
    # ------------------------------------------------------------ endings, English
    _c("end-en-club", "ending", "en",
       ["Remember that I'm a member of the Alpine Club.", "/new",
        "I'm no longer a member of the Alpine Club."],
       not_active=["Alpine"], history=["Alpine"]),
    _c("end-en-trainer", "ending", "en",
       ["Remember that my personal trainer is Marco.", "/new",
        "I don't have a personal trainer anymore."],
       not_active=["Marco"], history=["Marco"]),
    _c("end-en-vegetarian", "ending", "en",
       ["Remember that I'm vegetarian.", "/new",
        "I'm not vegetarian anymore, I eat fish and chicken again."],
       not_active=["vegetarian"], history=["vegetarian"]),
    _c("end-en-bus", "ending", "en",
       ["Please remember I take the bus to work.", "/new",
        "I no longer take the bus to work, I cycle now."],
       not_active=["bus"], history=["bus"]),
    _c("end2-en-board", "ending", "en",
       ["Remember that I'm on the board of the tenants' association.", "/new",
        "I stepped down from the tenants' association board."],
       not_active=["tenants"], history=["tenants"]),
    _c("end2-en-jazz-band", "ending", "en",
       ["Remember that I play in a jazz band on Thursdays.", "/new", "I quit the jazz band."],
       not_active=["jazz"], history=["jazz"]),
    _c("end2-en-portuguese", "ending", "en",
       ["Remember that I'm learning Portuguese.", "/new",
        "I've stopped learning Portuguese, no time."],
       not_active=["Portuguese"], history=["Portuguese"]),
    _c("end2-en-employer", "ending", "en",
       ["Remember that I work at Siemens.", "/new", "I left Siemens at the end of October."],
       not_active=["Siemens"], history=["Siemens"]),
    _c("end2-en-membership", "ending", "en",
       ["Remember that I have a membership at McFit.", "/new",
        "I cancelled my McFit membership."],
       not_active=["McFit"], history=["McFit"]),
    _c("end2-en-accountant", "ending", "en",
       ["Remember that my accountant is Ruth Meyer.", "/new",
        "I don't have an accountant any more, I do my own taxes now."],
       not_active=["Ruth"], history=["Ruth"]),
    _c("end3-en-volunteer", "ending", "en",
       ["Remember I'm a volunteer at the food bank.", "/new",
        "I stepped down as a volunteer at the food bank."],
       not_active=["food bank"], history=["food bank"]),
    _c("end3-en-choir", "ending", "en",
       ["Remember that I sing in the church choir.", "/new",
        "I dropped out of the church choir this autumn."],
       not_active=["choir"], history=["choir"]),
    _c("end3-en-netflix", "ending", "en",
       ["Remember I have a Netflix subscription.", "/new", "I cancelled Netflix."],
       not_active=["Netflix"], history=["Netflix"]),
    # ------------------------------------------------------------ endings, Chinese
    _c("end-zh-japanese", "ending", "zh",
       ["记住我在学日语。", "/new", "我不再学日语了。"],
       not_active=["日语"], history=["日语"]),
    _c("end-zh-badminton", "ending", "zh",
       ["记住我每周打两次羽毛球。", "/new", "我现在不打羽毛球了，膝盖受不了。"],
       not_active=["羽毛球"], history=["羽毛球"]),
    _c("end-zh-coffee", "ending", "zh",
       ["记住我每天早上喝咖啡。", "/new", "我已经戒咖啡了。"],
       not_active=["咖啡"], history=["咖啡"]),
    _c("end-zh-coach", "ending", "zh",
       ["记一下，我的私教是小陈。", "/new", "我现在没有私教了，不再找小陈上课。"],
       not_active=["小陈"], history=["小陈"]),
    _c("end2-zh-yoga", "ending", "zh",
       ["记住我在练瑜伽。", "/new", "我已经不练瑜伽了。"],
       not_active=["瑜伽"], history=["瑜伽"]),
    _c("end2-zh-member", "ending", "zh",
       ["记住我是游泳馆的会员。", "/new", "我不再是游泳馆的会员了。"],
       not_active=["游泳馆"], history=["游泳馆"]),
    _c("end2-zh-employer", "ending", "zh",
       ["记住我在腾讯工作。", "/new", "我已经从腾讯离职了。"],
       not_active=["腾讯"], history=["腾讯"]),
    _c("end2-zh-nanny", "ending", "zh",
       ["记一下，我家的保姆是张阿姨。", "/new", "我们家现在没有保姆了。"],
       not_active=["张阿姨"], history=["张阿姨"]),
    _c("end2-zh-running", "ending", "zh",
       ["记住我每天晚上跑步。", "/new", "我最近不跑步了，脚踝受伤了。"],
       not_active=["跑步"], history=["跑步"]),
    _c("end2-zh-smoking", "ending", "zh",
       ["记住我抽烟。", "/new", "我戒烟了，已经三个月了。"],
       not_active=["抽烟"], history=["抽烟"]),
    _c("end3-zh-cleaner", "ending", "zh",
       ["记住我们家的钟点工是李阿姨。", "/new", "我们家现在没有钟点工了。"],
       not_active=["李阿姨"], history=["李阿姨"]),
    _c("end3-zh-employer", "ending", "zh",
       ["记住我在字节跳动上班。", "/new", "我上个月从字节跳动辞职了。"],
       not_active=["字节"], history=["字节"]),
    _c("end3-zh-drinking", "ending", "zh",
       ["记住我每周末都喝酒。", "/new", "我戒酒了。"],
       not_active=["酒"], history=["酒"]),
    # ------------------------------------------------------------ advice, no shared words
    _c("adv-en-framework", "advice", "en",
       ["Remember that I'm a quant developer and I mainly use Python.", "/new", *UNRELATED_EN],
       ask="What framework should I learn?", recalled=["Python"], needs_profile=True),
    _c("adv-en-satay", "advice", "en",
       ["I'm allergic to peanuts.", "/new", *UNRELATED_EN],
       ask="Can I eat satay sauce?", recalled=["peanut"], needs_profile=True),
    _c("adv-en-dinner", "advice", "en",
       ["Remember that I'm vegan.", "/new", *UNRELATED_EN],
       ask="Any ideas for a quick dinner tonight?", recalled=["vegan"], needs_profile=True),
    _c("adv-en-day-trip", "advice", "en",
       ["Remember that I live in Vienna.", "/new", *UNRELATED_EN],
       ask="Where could I go for a day trip this weekend?", recalled=["Vienna"],
       needs_profile=True),
    _c("adv-zh-framework", "advice", "zh",
       ["记住我是做量化的，主要用 Python。", "/new", *UNRELATED_ZH],
       ask="帮我看看我现在适合学什么框架", recalled=["Python"], needs_profile=True),
    _c("adv-zh-satay", "advice", "zh",
       ["我对花生过敏。", "/new", *UNRELATED_ZH],
       ask="沙爹酱我能吃吗？", recalled=["花生"], needs_profile=True),
    _c("adv-zh-dinner", "advice", "zh",
       ["记住我吃素。", "/new", *UNRELATED_ZH],
       ask="今晚做点什么菜好？", recalled=["素"], needs_profile=True),
    _c("adv-zh-weekend", "advice", "zh",
       ["记住我住在成都。", "/new", *UNRELATED_ZH],
       ask="这个周末去哪儿玩比较好？", recalled=["成都"], needs_profile=True),
    _c("adv2-en-recipe", "advice", "en",
       ["Remember that I'm pescatarian.", "/new", *UNRELATED_EN],
       ask="Can you suggest something to cook for Sunday lunch?", recalled=["pescatarian"],
       needs_profile=True),
    _c("adv2-en-tool", "advice", "en",
       ["Remember that I'm a data engineer and I work mostly with Spark.", "/new", *UNRELATED_EN],
       ask="Which laptop would suit me best?", recalled=["data engineer"], needs_profile=True),
    _c("adv2-en-weekend", "advice", "en",
       ["Remember that I live in Lyon.", "/new", *UNRELATED_EN],
       ask="Any ideas for Saturday?", recalled=["Lyon"], needs_profile=True),
    _c("adv2-en-holiday", "advice", "en",
       ["Remember that I have two kids, aged 4 and 7.", "/new", *UNRELATED_EN],
       ask="Where should we go for the summer holidays?", recalled=["kids"],
       needs_profile=True),
    _c("adv2-en-order", "advice", "en",
       ["I'm allergic to shellfish.", "/new", *UNRELATED_EN],
       ask="What should I order at the Thai place tonight?", recalled=["shellfish"],
       needs_profile=True),
    _c("adv2-en-dessert", "advice", "en",
       ["I'm lactose intolerant.", "/new", *UNRELATED_EN],
       ask="What dessert could I bring to the party?", recalled=["lactose"],
       needs_profile=True),
    _c("adv2-zh-order", "advice", "zh",
       ["我对海鲜过敏。", "/new", *UNRELATED_ZH],
       ask="今晚在外面吃，帮我点几个菜吧。", recalled=["海鲜"], needs_profile=True),
    _c("adv2-zh-tool", "advice", "zh",
       ["记住我是一名小学老师。", "/new", *UNRELATED_ZH],
       ask="有什么适合我的效率工具推荐吗？", recalled=["老师"], needs_profile=True),
    _c("adv2-zh-weekend", "advice", "zh",
       ["记住我住在杭州。", "/new", *UNRELATED_ZH],
       ask="周末有什么好去处？", recalled=["杭州"], needs_profile=True),
    _c("adv2-zh-holiday", "advice", "zh",
       ["记住我有两个孩子，一个5岁一个8岁。", "/new", *UNRELATED_ZH],
       ask="暑假带家人去哪里旅游合适？", recalled=["孩子"], needs_profile=True),
    _c("adv2-zh-diet", "advice", "zh",
       ["记住我在减脂，不吃油炸的东西。", "/new", *UNRELATED_ZH],
       ask="晚饭吃点啥好？", recalled=["油炸"], needs_profile=True),
    _c("adv2-zh-learn", "advice", "zh",
       ["记住我是做前端的，主要写 TypeScript。", "/new", *UNRELATED_ZH],
       ask="我下一步该学点什么？", recalled=["TypeScript"], needs_profile=True),
    _c("adv3-en-shifts", "advice", "en",
       ["Remember that I'm a nurse and I work night shifts.", "/new", *UNRELATED_EN],
       ask="What should I eat before work?", recalled=["night shifts"], needs_profile=True),
    _c("adv3-zh-medicine", "advice", "zh",
       ["我对青霉素过敏。", "/new", *UNRELATED_ZH],
       ask="感冒了吃什么药好？", recalled=["青霉素"], needs_profile=True),
)
KINDS = ("open_vocabulary", "junk", "constraint", "request", "correction", "ending", "advice")


@dataclass
class Outcome:
    """What a replayed case left behind, and the checks it failed (empty: passed)."""

    case: Case
    active: list[str] = field(default_factory=list)
    inactive: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def _has(texts: list[str], needle: str) -> bool:
    return any(needle.lower() in t.lower() for t in texts)


def _shown_outside_episodes(why: str) -> list[str]:
    """The lines of a ``/why`` answer that show what the model was given, except earlier
    conversations' summaries and exchanges (``[episode]`` / ``[round]`` items), which hold the
    user's own words whether or not a fact was kept."""
    lines = why.splitlines()[1:]
    return [line for line in lines if "[episode]" not in line and "[round]" not in line]


def judge(case: Case, active: list[str], inactive: list[str], shown: list[str]) -> list[str]:
    """The checks of ``case`` that the stored facts and the ``/why`` lines fail."""
    failures = []
    if case.nothing and (active or inactive):
        failures.append(f"wrote {active + inactive}")
    failures += [f"no active fact with {s!r} (active: {active})" for s in case.active
                 if not _has(active, s)]
    failures += [f"active fact with {s!r} (active: {active})" for s in case.not_active
                 if _has(active, s)]
    failures += [f"no history with {s!r} (history: {inactive})" for s in case.history
                 if not _has(inactive, s)]
    failures += [f"{s!r} not recalled for {case.ask!r}" for s in case.recalled
                 if not _has(shown, s)]
    return failures


async def _replay_one(app, case: Case) -> Outcome:
    from adapters.console import run_console

    lines = list(case.turns)
    if case.ask:
        lines += ["/new", case.ask, "/why"]
    out = io.StringIO()
    await run_console(app.engine.handle, user=case.id, banner="probe",
                      stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out, terminal=False)
    user = await app.store.identities.find_user("console", case.id)
    facts = await app.memory.facts_for(user.id, history=True) if user else []
    active = [f.text for f in facts if f.status.value == "active"]
    inactive = [f.text for f in facts if f.status.value != "active"]
    shown: list[str] = []
    if case.ask:
        why = out.getvalue().split("> /why\n", 1)[-1]
        shown = _shown_outside_episodes(why.split("\nGoodbye.", 1)[0])
    return Outcome(case, active, inactive, shown, judge(case, active, inactive, shown))


async def replay(cases=CASES, *, data_dir: Path, embedder=None) -> dict[str, Outcome]:
    """Replay ``cases`` through the console of one app on ``data_dir`` (offline model,
    ``embedder`` or the default one), one console user per case; returns outcomes by id."""
    from bot.app import build_app
    from bot.settings import Settings

    settings = Settings(data_dir=data_dir, llm_provider="offline")
    app = await build_app(settings, embedder=embedder)
    try:
        await app.start()
        return {case.id: await _replay_one(app, case) for case in cases}
    finally:
        await app.aclose()


def summary(outcomes: dict[str, Outcome]) -> list[str]:
    """One line per kind, ``kind: passed/total``, then the whole probe."""
    total, passed = Counter(), Counter()
    for o in outcomes.values():
        total[o.case.kind] += 1
        passed[o.case.kind] += o.passed
    lines = [f"{kind}: {passed[kind]}/{total[kind]}" for kind in KINDS if total[kind]]
    lines.append(f"all: {sum(passed.values())}/{sum(total.values())}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.semantic_probe [-v] [--kind K]``: replay and print the summary."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as tests/conftest.py, before loading
    parser = argparse.ArgumentParser(prog="python -m tests.semantic_probe")
    parser.add_argument("-v", "--verbose", action="store_true", help="list failing checks")
    parser.add_argument("--kind", choices=KINDS, help="replay one kind only")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.kind in (None, c.kind)]
    with tempfile.TemporaryDirectory() as folder:
        outcomes = asyncio.run(replay(cases, data_dir=Path(folder) / "data"))
    if args.verbose:
        for o in outcomes.values():
            if not o.passed:
                print(f"FAIL {o.case.id}: " + "; ".join(o.failures))
    print("\n".join(summary(outcomes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
