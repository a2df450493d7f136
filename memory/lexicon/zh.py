"""Chinese lexicon of the memory core (see ``memory.lexicon``).

Entries are plain strings matched as they are written. Phrase templates (``TOPIC_PHRASES``)
use ``{v}`` for the value and ``{*}`` for up to 20 skipped characters within a sentence;
``{v:kind}`` restricts the value to a word class of ``VALUE_CLASSES`` (or a number).
Between 我 and the rest of a template any number of ``ADVERBS`` may stand (我现在住在,
我上个月刚搬到).
"""

from __future__ import annotations

# ----------------------------------------------------------------- the speaker and others

#: The speaker.
SPEAKER = "我"
#: Words for the speaker as subject or possessor (我的X, 我家的X).
SPEAKER_SUBJECTS = ("我们", "我家", "我")
#: After 我 these make it the object of a verb or preposition: 给我, 叫我, 帮我.
OBJECT_MARKERS = ("给", "让", "叫", "帮", "对", "跟", "和", "陪", "教", "告诉", "提醒", "问",
                  "替", "请", "为", "把", "被", "向")
#: People of the speaker's life: 我朋友, 我老婆 is another subject, not the speaker.
OTHER_PEOPLE = (
    "朋友", "同事", "老婆", "老公", "妻子", "丈夫", "太太", "先生", "媳妇", "爱人", "孩子",
    "儿子", "女儿", "妈妈", "爸爸", "母亲", "父亲", "哥哥", "姐姐", "弟弟", "妹妹", "老板",
    "领导", "邻居", "室友", "家人", "男朋友", "女朋友", "对象", "同学", "老师", "爷爷", "奶奶",
    "外公", "外婆", "父母", "爸妈", "宝宝", "狗", "猫")
#: Other subjects that open a part of a sentence (他, 她, 你, 我们).
OTHER_SUBJECTS = ("他", "她", "你", "它", "我们", "大家", "别人")
#: Conjunctions that open a later part of a sentence (而是对虾过敏, 但是在腾讯工作).
CONJUNCTIONS = ("而且", "并且", "但是", "而", "但", "也", "还")
#: Pronouns a value may not be.
PRONOUNS = frozenset("它 这 那 这个 那个 这样 那样 这些 那些 它们 他 她 他们 她们".split())
#: Words for the listener: a clause naming them speaks to or about the listener (我一直在你身边,
#: 相信你自己), not about the speaker.
LISTENER = ("你", "您")
#: Set phrases that name the listener without speaking of them (跟你说，我住在上海).
LISTENER_FILLERS = ("我跟你说", "跟你说", "和你说", "告诉你", "你知道吗", "你知道", "你看", "谢谢你",
                    "谢谢您", "你好", "您好")
#: Words for the speaker's household after 我 / 我们 (我们全家都吃素, 我家一家人都不吃辣).
HOUSEHOLD = ("一家人", "全家", "一家", "家")
#: What a pleasantry, thanks, greeting or acknowledgement is made of (谢谢, 好的, 嗯嗯, 哈哈):
#: a sentence of these alone (and a short name) states nothing. Longest first.
PLEASANTRIES = ("谢谢你们", "谢谢你", "谢谢您", "谢谢", "多谢", "谢啦", "感谢", "好的", "好吧", "好呀",
                "好啊", "嗯嗯", "嗯", "哈哈", "哈", "收到", "没问题", "不客气", "没事", "你好", "您好",
                "早上好", "早安", "晚安", "再见", "拜拜", "恭喜", "太好了", "太棒了", "真棒", "加油",
                "辛苦了", "是的", "没错", "对", "行", "好", "哇", "啊", "呀", "哦", "噢", "嘿", "啦",
                "呢", "吧", "了")
#: Degree words that make a clause a judgement: a note of one is a maxim (保持好心态非常重要).
DEGREE_WORDS = ("非常", "特别", "十分", "很", "挺", "太", "最", "超", "比较")
#: Subjects of a saying about everyone (一切都会好起来的, 人生只有一次).
GENERIC_SUBJECTS = ("一切", "大家", "每个人", "人生", "生活", "任何人", "人")
#: Abstract nouns sayings are about, as the first word (jieba) of a clause (失败是成功之母,
#: 坚持就是胜利; not 健康检查在周五, one word).
ABSTRACT_SUBJECTS = frozenset("失败 成功 金钱 健康 知识 爱情 友谊 坚持 努力 耐心 诚实 善良 真理 幸福 "
                              "机会 实践".split())
#: Words that open an imperative to the listener (要坚持下去, 一定要相信自己, 千万别放弃).
IMPERATIVE_OPENERS = ("一定要", "千万", "不要", "要", "别", "好好", "得")

# ----------------------------------------------------------------- questions

#: Particles that end a question (我需要带护照吗).
QUESTION_PARTICLES = ("吗", "么", "呢", "嘛")
#: Question words (谁, 什么, 哪, 怎么 ...): a sentence holding one asks, unless 都/也 follows
#: (什么都吃: "eats anything").
QUESTION_WORDS = ("什么", "怎么", "为什么", "哪里", "哪儿", "哪个", "哪些", "哪家", "哪天", "哪",
                  "谁", "多少", "几个", "几点", "几岁", "几号", "多大", "多久", "如何", "是否")
#: After a question word these make it "any": 什么都, 哪儿都, 谁也.
UNIVERSAL_MARKERS = ("都", "也")
#: A yes/no question in the middle: 是不是, 能不能, 有没有.
ALTERNATIVE_QUESTIONS = ("是不是", "能不能", "可不可以", "有没有", "要不要", "会不会", "对不对",
                         "好不好", "行不行")

# ----------------------------------------------------------------- requests and tasks

#: Verbs that ask the assistant to keep something (longest first).
REQUEST_VERBS = ("跟你说一声", "告诉你一声", "记下来", "记一下", "记下", "记住", "记好", "记着", "记牢", "别忘了", "不要忘了",
                 "不要忘记", "别忘记", "记得", "记录一下", "备注一下", "记个事")
#: Standing instructions: 以后, 今后, 从现在起 at the start of a clause.
STANDING_PHRASES = ("从现在开始", "从现在起", "从今以后", "从今天起", "以后都", "以后", "今后")
#: After a standing phrase: a noun of the future (以后的事), or a deferral of something to
#: later (以后再说, 以后有机会再聊): no standing instruction.
NOT_STANDING = ("的", "再说", "再聊", "再谈", "再看", "再约", "再联系", "有机会", "有空", "有时间")
#: Words before a request verb that leave it a request.
SOFTENERS = ("请你", "麻烦你", "麻烦", "请", "你", "帮我", "能", "可以", "要", "能不能",
             "可不可以", "顺便", "也", "一定要", "一定", "千万", "拜托你", "拜托", "就", "我想让你",
             "我希望你", "我需要你", "我要你")
#: Words after a request verb that belong to it (记住了, 记住这个).
VERB_TAILS = ("这个", "这点", "这件事", "一件事", "一点", "了", "哦", "啊", "呀", "哈", "啦", "吧", "好",
              "点", "一下")
#: A request verb pointing back: "...，记住了".
POINTING = ("这个", "这点", "这件事", "这些", "这事", "这一点")
#: Tags that make a request a polite question: 记住我不吃辣，好吗？
TAGS = ("好吗", "好不好", "可以吗", "行吗", "好么", "行不行", "可以不")
#: Polite question frames of a request: 你能记住...吗.
POLITE_ASKS = ("能不能", "可不可以", "能", "可以", "会")
#: A request body opening with these is a task (提醒我, 带伞, 打电话): 记得 + a task.
TASK_VERBS = ("提醒", "带", "打电话", "给", "买", "交", "去", "回", "发", "拿", "关", "开", "叫",
              "做", "写", "吃药", "喝水", "订", "约", "取", "还", "洗", "收", "寄", "准备", "查")
#: Times that may open a task (明天提醒我, 一会儿去买).
TASK_TIMES = ("明天", "后天", "今晚", "今天", "下周", "待会儿", "待会", "一会儿", "一会", "晚上", "早上",
              "下午", "中午",
              "周末", *(f"{week}{day}" for week in ("周", "星期", "礼拜") for day in "一二三四五六日天"))
#: Digits and numerals of a clock time or date (七点半, 10点, 3号).
NUMERALS = "0123456789零一二三四五六七八九十两"
#: Units after a number that make it a time (早上七点, 三点半, 5号).
TIME_UNITS = ("点半", "点钟", "点", "号", "日", "月", "分", "半")
#: Hypothetical or subordinate openers.
SUBORDINATORS = ("如果", "假如", "假设", "要是", "万一", "比如", "例如", "等", "当")
#: Words after which a clause does not hold as said: suppositions and wishes (我希望我不过敏);
#: 因为 gives a reason that holds (因为我乳糖不耐受).
NOT_HOLDING = (*SUBORDINATORS[:6], "希望", "但愿", "盼望", "想要是", "巴不得")
#: Words that end a clause inside a sentence besides punctuation: a constraint is the clause
#: it is said in (因为我乳糖不耐受所以喝豆浆 -> 我乳糖不耐受).
CLAUSE_WORDS = ("所以", "因为", "但是", "可是", "不过", "因此", "于是")
#: Verbs of saying: 说, 常说 — what follows is someone's words.
REPORTING = ("说", "讲", "问", "告诉")

# ----------------------------------------------------------------- time, mood, correction

#: What the speaker is (just) doing or feeling as they speak (我只是随便问问, 我开玩笑的, 我好累).
PASSING_STATES = ("随便问问", "问问", "开玩笑", "说说而已", "随口一说", "累", "饿", "困", "烦")
#: Words of a passing state.
TRANSIENT = ("今天", "今晚", "明天", "昨天", "现在", "刚才", "正在", "累", "饿", "困", "无聊", "忙",
             "生病", "难过", "开心", "高兴", "想知道", "打算", "准备", "马上", "烦", "郁闷", "心情")
#: Openers of a correction.
CORRECTION_OPENERS = ("不对", "不是的", "错了", "其实", "更正", "我是说", "你记错了", "我说错了",
                      "说错了", "纠正", "搞错了", "不是")
#: The speaker pointing back at their own earlier words to the listener (我跟你说过我妹妹住在成都):
#: what follows is the statement itself.
SAYING_FRAMES = ("我之前跟你说过", "我跟你说过", "我和你说过", "我告诉过你", "我之前说过", "我说过",
                 "我说过了", "我提过", "跟你说过")
#: Apologies before a correction's opener (不好意思，不对...).
APOLOGIES = ("不好意思", "抱歉", "对不起", "哎呀", "哎", "啊")
#: Owning up to a mistake anywhere in the first sentence (不好意思说错了, 口误，...).
ERROR_ADMISSIONS = ("说错", "记错", "搞错", "弄错", "写错", "打错", "口误", "说的不对", "说得不对")
#: Words that open a message without being part of what it says.
OPENERS = ("其实", "另外", "对了", "还有", "不对", "顺便说一句", "顺便说一下", "顺便", "哦", "嗯",
           "那个", "话说", "我说错了", "更正一下", "更正", "说错了", "纠正一下")

# ----------------------------------------------------------------- statements

#: Adverbs and time words that may stand after 我 (or after an attribute) without changing what
#: a statement says.
ADVERBS = ("现在", "目前", "一直", "平时", "每天", "主要", "一般", "已经", "刚刚", "刚", "早就",
           "最近", "今年", "去年", "上个月", "上月", "上周", "上星期", "上个星期", "前几天", "昨天",
           "前天", "今天", "还", "也", "都", "很", "特别", "非常", "超", "真的", "其实", "本来",
           "早上", "每周", "平常", "通常", "总是", "正在", "在", "那边", "周末", "晚上", "白天", "偶尔",
           "有时候", "经常", "常常", "比较", "挺", "最")
#: Trailing particles and words cut from a value.
VALUE_TAILS = ("了", "啦", "呢", "啊", "吧", "呀", "哦", "现在", "也", "的")
#: Words that may lead a value of a word class (回答要简短, 回答尽量详细).
VALUE_LEADS = ("要", "请", "尽量", "都", "更")
#: Leading particles cut from a value.
VALUE_HEADS = ("了", "是")
#: Degree words that make a value a judgement (很好, 最便宜的): no value of an attribute.
#: Characters that never stand in a proper name taken as a value (``{v:name}``): measure
#: words, demonstratives, particles, degree adverbs and judgements (我是个好人, 我是一个很内向的人,
#: 我是这个项目的负责人 name no place).
NOT_IN_NAMES = frozenset("个的很这那一好坏不没最挺太么什谁都也在了是有被把")
NOT_VALUE_HEADS = ("很", "挺", "太", "非常", "特别", "最", "超", "比较", "有点", "不", "没")
#: Punctuation that ends a value or a clause.
CLAUSE_MARKS = "，,。.；;！!？?、：:\n"
#: Copulas of 我的X是Y (longest first).
COPULAS = ("现在是", "换成了", "换成", "改成了", "改成", "变成了", "变成", "改为", "换为", "是", "叫")
#: Copulas that say the value changed.
CHANGE_COPULAS = ("换成了", "换成", "改成了", "改成", "变成了", "变成", "改为", "换为")
#: 我们: the plural of the speaker.
PLURAL = "们"
#: 我把X换成了Y: the object of the change stands after this.
OBJECT_FRONT = "把"
#: 我的X也是Y: an additional value.
ADDITIVE = ("也",)
#: Possessive markers between 我 and an attribute.
POSSESSIVES = ("家的", "的", "家")
#: Attribute words that name no attribute ("我的意思是", "我的问题是").
NOT_ATTRIBUTES = ("意思", "问题", "想法", "看法", "建议", "计划", "目标", "梦想", "感觉", "担心",
                  "原因", "理由", "错", "天", "妈呀")
#: Verbs that make 我X是Y a thought, not an attribute (我觉得这是对的).
MENTAL_VERBS = ("觉得", "认为", "想", "说", "知道", "希望", "发现", "听说", "以为", "猜", "相信",
                "记得", "喜欢", "爱")
#: Modifiers kept in a key (最喜欢的歌手 is not 歌手).
KEY_MODIFIERS = ("最喜欢", "最爱", "最讨厌", "常用", "主要")

#: Endings: 我不再X, 我戒了X, 我现在不X了, 我没有X了.
ENDING_MARKERS = ("不再", "戒掉了", "戒了", "戒掉", "戒", "停了", "退了", "放弃了", "没有再",
                  "离开了", "退出了", "退掉了", "辞掉了", "取消了")
#: 我从X离职了: leaving what stands between ``SOURCE`` and one of these.
SOURCE = "从"
LEAVING_VERBS = ("离职", "辞职", "退休", "退学", "退出", "毕业", "搬走", "搬出来", "搬出去")
#: Verbs that name nothing ended on their own (我不吃了, 我不去了).
LIGHT_VERBS = frozenset("吃 喝 去 来 做 玩 用 看 学 买 说 写 跑 打 走 要 想 干 弄 搞 等 管 试 找".split())
#: 不 + X + 了 at the end of a clause: a habit that ended (我不打羽毛球了).
NEGATION = "不"
NO_LONGER_HAVE = "没有"
#: What may not be the thing ended (我不知道了).
NOT_ENDED = ("知道", "记得", "想", "懂", "确定", "管", "行", "是", "对")

# ----------------------------------------------------------------- constraints

#: Words of a constraint the assistant must respect at once.
CONSTRAINT_WORDS = ("过敏", "不耐受", "忌口", "吃素", "素食", "清真", "高血压", "糖尿病", "哮喘",
                    "癫痫", "心脏病", "怀孕", "孕期", "备孕", "哺乳", "痛风", "胃病", "肾病", "不能吃",
                    "不能喝", "不吃", "不喝", "戒酒", "过敏源", "吃不了", "喝不了")
#: Constraint words that are a verb: they need a thing after them (我不吃香菜, 我吃不了辣的), not
#: a quantity or nothing (我吃不了那么多, 我不吃了).
FOOD_REFUSALS = ("不能吃", "不能喝", "吃不了", "喝不了", "从不吃", "从不喝", "不吃", "不喝")
QUANTITIES = ("那么多", "这么多", "太多", "很多", "多少", "完", "下", "饱")
#: Words that hold a constraint word without being one (我有点不耐烦, 我吃不消): set aside.
NOT_CONSTRAINTS = ("不耐烦", "吃不消", "吃不了兜着走")
#: Diets eaten (我只吃清真的, 我吃低盐的): 吃 + one of these is a constraint.
RESTRICTED_DIETS = ("清真", "生酮", "无麸质", "低盐", "低糖", "低脂", "无糖", "素", "斋")
#: Adverbs of a constraint after 我 (我只吃清真的, 我有点乳糖不耐, 我完全不吃辣).
CONSTRAINT_ADVERBS = ("只能", "只", "有点", "完全", "一点都", "根本", "从来")
#: Verbs after 我 that predicate a constraint word of the speaker: 我是素食者, 我有高血压,
#: 我患有哮喘, 我查出来有糖尿病 (a verb ending with one of them).
CONSTRAINT_VERBS = ("是", "有", "患", "得了", "得过")
#: Constraint words that take a noun in front: 我对芒果过敏, 我乳糖不耐受, 我花粉过敏.
CONSTRAINT_AFTER_NOUN = ("过敏", "不耐受", "不耐")
#: Characters that may not stand in that noun (我做了素食冰淇淋, 我希望我不过敏).
NOT_IN_CONSTRAINT_NOUN = frozenset("的了不没我你他她想做买吃喝要希望")
#: Negative imperatives: 别, 不要, 请勿.
PROHIBITION_OPENERS = ("请不要", "请别", "不要", "别", "请勿", "勿", "千万别", "千万不要", "不许",
                       "不准")
#: Verbs of contacting or suggesting: a prohibition about them binds the assistant.
CONTACT_VERBS = ("发消息", "发信息", "发通知", "发", "推送", "催", "打电话", "打给", "联系", "提醒", "推荐", "叫我",
                 "喊我", "称呼", "打扰", "通知", "建议", "约", "回复", "用", "说")

# ----------------------------------------------------------------- value classes

OCCUPATIONS = (
    "工程师", "医生", "护士", "老师", "教师", "教授", "学生", "设计师", "经理", "律师", "会计",
    "研究员", "科学家", "作家", "厨师", "分析师", "顾问", "程序员", "码农", "交易员", "建筑师",
    "药剂师", "牙医", "消防员", "摄影师", "记者", "电工", "司机", "农民", "产品经理", "销售", "翻译",
    "演员", "编辑", "秘书", "服务员", "警察", "军人", "实习生", "宝妈", "公务员", "会计师",
    "架构师", "研究生", "博士生", "本科生", "开发", "开发者", "开发人员", "水管工", "机械师",
    "飞行员", "图书管理员", "治疗师", "心理咨询师", "心理学家", "创业者", "创始人", "音乐人",
    "音乐家", "艺术家", "兽医", "收银员", "咖啡师", "运维")
#: Verbs that lead an occupation without being part of it (我是做销售的, 我是当老师的).
OCCUPATION_VERBS = ("做", "当", "干")
DIETS = ("吃素", "是素食主义者", "吃全素", "是纯素食者", "素食")
DIET_FOODS = ("生酮", "清真")
RELATIONSHIPS = ("结婚了", "单身", "离婚了", "订婚了", "已婚")
PROGRAMMING_LANGUAGES = (
    "Python", "python", "Go", "go", "Golang", "Rust", "rust", "Java", "java", "JavaScript",
    "TypeScript", "C++", "C#", "Kotlin", "Swift", "Ruby", "PHP", "Scala", "Julia", "Haskell",
    "Elixir", "Lua", "Dart", "Matlab", "MATLAB", "Perl", "Zig", "SQL")
HUMAN_LANGUAGES = ("中文", "英文", "英语", "汉语", "普通话", "德语", "法语", "西班牙语", "日语",
                   "韩语", "粤语", "俄语")
EDITORS = ("Vim", "vim", "Neovim", "Emacs", "VS Code", "VSCode", "PyCharm", "Cursor")
SYSTEMS = ("Linux", "Windows", "macOS", "Mac", "Ubuntu", "苹果电脑")
PHONES = ("iPhone", "华为", "小米", "苹果")
ANSWER_LENGTHS = {"简短": "简短", "详细": "详细", "简洁": "简洁"}
UNITS = ("公制", "英制")
VALUE_CLASSES: dict[str, tuple[str, ...]] = {
    "occupation": OCCUPATIONS, "diet": DIETS, "diet_food": DIET_FOODS,
    "relationship": RELATIONSHIPS, "programming_language": PROGRAMMING_LANGUAGES,
    "human_language": HUMAN_LANGUAGES, "editor": EDITORS, "system": SYSTEMS, "phone": PHONES,
    "answer_length": tuple(ANSWER_LENGTHS), "units": UNITS,
}
#: Classes matched by the value's end (软件工程师 ends with 工程师); the others by its start
#: (简短一点 starts with 简短).
HEAD_CLASSES = frozenset({"occupation"})

# ----------------------------------------------------------------- the topic table's phrases

TOPIC_PHRASES: dict[str, tuple[str, ...]] = {
    "residence": ("我住在{v}", "我搬家到{v}", "我搬到{v}住", "我搬到{v}", "我在{v}生活",
                  "我于{v}生活"),
    "hometown": ("我来自{v}", "我老家是{v}", "我老家在{v}", "我是{v:name}人"),
    "employer": ("我在{v}工作", "我在{v}上班", "我在{v}任职", "我入职了{v}", "我入职{v}",
                 "我换工作了，现在在{v}", "我换了工作，现在在{v}", "我换公司了，现在在{v}"),
    "job": ("我是一名{v:occupation}", "我是一个{v:occupation}", "我是{v:occupation}",
            "我当{v:occupation}", "我是做{v}的", "我做{v}的", "我在{*}做{v:occupation}",
            "我在{*}当{v:occupation}"),
    "diet": ("我{v:diet}", "我在吃{v:diet_food}", "我吃{v:diet_food}"),
    "allergy": ("我对{v}过敏", "我是对{v}过敏"),
    "avoid_food": ("我不吃{v}", "我从不吃{v}", "我不能吃{v}"),
    "primary_language": ("我用{v:programming_language}", "我写{v:programming_language}",
                         "我改用{v:programming_language}"),
    "reply_language": ("用{v:human_language}回答", "用{v:human_language}回复",
                       "用{v:human_language}跟我说", "用{v:human_language}和我说",
                       "用{v:human_language}交流", "用{v:human_language}聊"),
    "wife_name": (),
    "husband_name": (),
    "name": ("叫我{v}就好", "叫我{v}就行", "叫我{v}吧", "叫我{v}", "我叫{v}"),
    "timezone": (),
    "birthday": ("我是{v}出生",),
    "age": ("我今年{v:number}岁", "我满{v:number}周岁", "我满{v:number}岁", "我过了{v:number}岁"),
    "relationship": ("我{v:relationship}",),
    "editor": ("我用{v:editor}",),
    "operating_system": ("我用{v:system}",),
    "morning_drink": ("我早上喝{v}", "我改喝{v}"),
    "answer_length": ("回答{v:answer_length}", "回复{v:answer_length}"),
    "units": ("用{v:units}",),
    "school": ("我学的是{v}", "我在读{v}"),
    "car": ("我开的是{v}", "我开{v}车", "我开{v}"),
    "phone": ("我用{v:phone}",),
    "opinion": ("我喜欢吃{v}", "我喜欢喝{v}", "我喜欢看{v}", "我喜欢玩{v}", "我喜欢{v}",
                "我爱吃{v}", "我爱喝{v}", "我爱{v}"),
    "opinion-": ("我讨厌{v}", "我不喜欢吃{v}", "我不喜欢{v}", "我受不了{v}", "我不爱吃{v}",
                 "我不爱{v}"),
}
#: Attribute words of 我的X是Y that name a topic of the table.
ATTRIBUTE_ALIASES: dict[str, str] = {
    "工作": "job", "职业": "job", "公司": "employer", "单位": "employer", "名字": "name",
    "生日": "birthday", "老婆": "wife_name", "妻子": "wife_name", "太太": "wife_name",
    "媳妇": "wife_name", "爱人": "wife_name", "老婆名字": "wife_name", "妻子名字": "wife_name",
    "老公": "husband_name", "丈夫": "husband_name", "先生": "husband_name",
    "老公名字": "husband_name", "丈夫名字": "husband_name", "时区": "timezone",
    "编辑器": "editor", "车": "car", "手机": "phone", "专业": "school", "老家": "hometown",
    "家乡": "hometown", "主要编程语言": "primary_language", "编程语言": "primary_language",
    "饮食": "diet", "年龄": "age",
}
#: Topics 我的X叫Y sets only with 叫 (我老婆叫王芳; 我老婆是老师 says something else).
NAMED_ONLY = frozenset({"wife_name", "husband_name"})
NAMING = ("叫",)
NOT_ALLERGIC_PHRASES = ("我对{v}不过敏", "我对{v}不再过敏", "我已经对{v}不过敏", "我不再对{v}过敏",
                        "我已经不再对{v}过敏")

#: Words that tend to open a lasting statement about someone's life (consolidation's
#: candidates).
CANDIDATE_CUES = ("喜欢", "讨厌", "爱吃", "不吃", "不喝", "过敏", "最爱", "偏好", "从不", "总是", "搬",
                  "住在", "工作", "结婚", "生日", "毕业", "戒了", "改用", "老婆", "老公", "妻子", "丈夫",
                  "孩子", "儿子", "女儿", "妈妈", "爸爸", "朋友", "同事", "老板")

#: What follows 我 in a statement that may hold beyond the moment (a repetition candidate).
STATEMENT_HEADS = ("是", "有", "在", "喜欢", "爱", "讨厌", "想", "要", "用", "住", "做", "学", "养", "开",
                   "吃", "喝", "老婆", "老公", "妻子", "丈夫", "孩子", "儿子", "女儿", "妈妈", "爸爸",
                   "朋友", "同事")
