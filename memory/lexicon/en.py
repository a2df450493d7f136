"""English lexicon of the memory core (see ``memory.lexicon``).

Entries are lowercase tokens as ``memory.language.tokens`` makes them: contractions expanded
("i'm" -> "i am", "don't" -> "do not", "can't" -> "can not"), possessive "'s" a token of its
own. Phrase templates (``TOPIC_PHRASES``) use ``{v}`` for the value and ``{*}`` for one to six
skipped tokens; ``{v:kind}`` restricts the value to a word class of ``VALUE_CLASSES`` (or a
number, a name, a time zone: ``memory.statements``). Between two tokens of a template any
number of ``ADVERBS`` may stand ("I now live in", "I really love").
"""

from __future__ import annotations

# ----------------------------------------------------------------- tokens and contractions

#: Contractions and their expansion (apostrophes normalised to "'").
CONTRACTIONS: dict[str, tuple[str, ...]] = {
    "i'm": ("i", "am"), "im": ("i", "am"), "i've": ("i", "have"), "i'd": ("i", "would"),
    "i'll": ("i", "will"), "we're": ("we", "are"), "we've": ("we", "have"),
    "you're": ("you", "are"), "it's": ("it", "is"), "that's": ("that", "is"),
    "there's": ("there", "is"), "what's": ("what", "is"), "who's": ("who", "is"),
    "don't": ("do", "not"), "dont": ("do", "not"), "doesn't": ("does", "not"),
    "didn't": ("did", "not"), "can't": ("can", "not"), "cannot": ("can", "not"),
    "won't": ("will", "not"), "isn't": ("is", "not"), "aren't": ("are", "not"),
    "wasn't": ("was", "not"), "haven't": ("have", "not"), "hasn't": ("has", "not"),
    "wouldn't": ("would", "not"), "shouldn't": ("should", "not"), "couldn't": ("could", "not"),
    "let's": ("let", "us"),
    # typed without the apostrophe ("i cant eat gluten")
    "cant": ("can", "not"), "doesnt": ("does", "not"), "didnt": ("did", "not"),
    "isnt": ("is", "not"), "arent": ("are", "not"), "wasnt": ("was", "not"),
    "havent": ("have", "not"), "hasnt": ("has", "not"), "wouldnt": ("would", "not"),
    "shouldnt": ("should", "not"), "couldnt": ("could", "not"), "ive": ("i", "have"),
}
#: Abbreviations whose full stop ends no sentence ("Dr. Okafor").
ABBREVIATIONS = frozenset("dr mr mrs ms st mt jr sr prof co inc ltd vs etc approx no".split())

# ----------------------------------------------------------------- the speaker and others

#: Words for the speaker as subject or possessor.
SPEAKER_SUBJECTS = frozenset({"i", "my", "we", "our"})
#: Every word for the speaker (subject, object, possessive).
SPEAKER_WORDS = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
#: Pronouns of a third person as subject ("he remembers ...").
SUBJECT_PRONOUNS = frozenset("he she they it there".split())
#: Pronouns a value may not be (the thing is named elsewhere).
PRONOUNS = frozenset("it that this them these those him her one there something".split())
#: Words for the listener: a clause naming them speaks to or about the listener ("I'm always
#: here for you", "believe in yourself"), not about the speaker.
LISTENER = frozenset("you your yours yourself yourselves ya".split())
#: Set phrases that name the listener without speaking of them ("I work with kids, you know").
LISTENER_FILLERS: tuple[tuple[str, ...], ...] = (
    ("you", "know"), ("you", "see"), ("thank", "you"), ("mind", "you"), ("as", "you", "know"),
    ("if", "you", "ask", "me"), ("believe", "it", "or", "not"),
)
#: Words a pleasantry, thanks, greeting or acknowledgement is made of ("Thanks, Caroline!",
#: "Yep!", "Nice one!", "Good luck!"): a sentence of these alone (and names) states nothing.
PLEASANTRIES = frozenset(
    "thanks thank thx ty you yep yeah yes yup ok okay sure cool nice great awesome wow haha "
    "lol hi hello hey bye goodbye welcome congrats congratulations cheers one so much lot a "
    "again too indeed exactly absolutely totally definitely right true agreed glad good sounds "
    "luck take care see soon later talk have day night morning evening weekend amazing "
    "wonderful lovely sweet perfect fantastic oh ah aw aww hmm well same here me no problem "
    "worries pleasure all the best anytime".split())
#: Subjects of a saying about everyone (a maxim, not a statement about the speaker).
GENERIC_SUBJECTS = frozenset("everyone everybody nobody anyone anybody people life".split())
#: Abstract nouns sayings are about: with a verb right after them, a saying ("money doesn't
#: grow on trees", "time heals everything"; not "time zone is CET").
ABSTRACT_SUBJECTS = frozenset(
    "money time love honesty patience practice knowledge health happiness success failure "
    "kindness friendship truth nothing everything".split())

# ----------------------------------------------------------------- questions

#: Words that open a question.
QUESTION_WORDS = frozenset("what how why when where who whom whose which".split())
#: Verbs that open a yes/no question when a subject follows ("do you", "is it").
AUXILIARIES = frozenset(
    "do does did am is are was were can could would will should shall may might have has had"
    .split())
#: Subjects after a sentence-opening auxiliary that make it a question ("can you", "is it").
QUESTION_SUBJECTS = frozenset("i you he she it we they there this that my your".split())

# ----------------------------------------------------------------- requests and tasks

#: Verbs that ask the assistant to keep something (longest first where they share a start).
REQUEST_VERBS: tuple[tuple[str, ...], ...] = (
    ("keep", "in", "mind"), ("keeping", "in", "mind"), ("bear", "in", "mind"),
    ("make", "a", "note", "of"), ("make", "a", "note"), ("take", "note", "of"), ("take", "note"),
    ("note", "down"), ("jot", "down"), ("write", "down"), ("do", "not", "forget"),
    ("never", "forget"), ("remember",), ("remembering",), ("note",), ("noting",),
    ("memorise",), ("memorize",), ("for", "the", "record"), ("for", "future", "reference"),
    ("just", "so", "you", "know"), ("fyi",), ("for", "your", "information"), ("for", "context"),
    ("you", "should", "know"), ("keep", "a", "note", "of"), ("keep", "a", "note"),
    ("save", "this"), ("save", "that"), ("store", "this"), ("store", "that"),
    # the object inside the verb: "keep that in mind", "bear this in mind"
    *((verb, it, "in", "mind") for verb in ("keep", "bear") for it in ("that", "this", "it")),
)
#: Standing instructions: what follows (or precedes) holds from now on.
STANDING_PHRASES: tuple[tuple[str, ...], ...] = (
    ("from", "now", "on"), ("going", "forward"), ("from", "here", "on"), ("in", "future"),
    ("in", "the", "future"), ("from", "today", "on"),
)
#: Polite frames that make a request out of a question ("could you remember ...?").
POLITE_ASKS: tuple[tuple[str, ...], ...] = (
    ("would", "you", "mind"), ("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"),
    ("i", "would", "like", "you", "to"), ("i", "want", "you", "to"), ("i", "need", "you", "to"),
)
#: Words before a request verb that leave it a request ("please", "so", "also", "and").
SOFTENERS = frozenset("please pls plz kindly also and so ok okay hey just quick".split())
#: Words that close a message without being part of the statement before them ("... btw").
CLOSERS = frozenset("btw anyway ok okay alright please pls thanks thx lol haha".split())
#: Words after a request verb that say for whom or for when, not what ("remember for me
#: that ...", "keep this in mind for later: ...").
REQUEST_TAILS: tuple[tuple[str, ...], ...] = (
    ("for", "me"), ("for", "later"), ("for", "next", "time"), ("for", "the", "future"),
    ("for", "future", "reference"), ("from", "now", "on"),
)
#: Complementisers and objects after a request verb: "remember that ...", "remember: ...".
COMPLEMENTISERS = frozenset({"that", ":", ",", "-", "—", "–", "this"})
#: A request verb with only this as its object points back ("..., remember that").
POINTING = frozenset({"that", "this", "it", "something"})
#: Tag questions after a request ("..., okay?").
TAGS = frozenset({"ok", "okay", "alright", "right", "please", "yes"})
#: An object that makes "remember X" a task: "remember to call", "remind me".
TASK_OPENERS = frozenset({"to"})
#: Verbs that make a request a task (something to be done, not something about the user).
TASK_VERBS = frozenset({"remind", "ping", "tell", "call", "text", "email", "wake"})
#: Hypothetical or subordinate openers: the statement after them does not hold as said.
SUBORDINATORS = frozenset(
    "if when whenever after before since until till once unless whether suppose supposing "
    "imagine hypothetically assuming because although though while as".split())
#: Verbs of saying: what follows them is someone's words, not the user's statement.
REPORTING = frozenset("said says say told tells asked asks wrote writes thinks thought".split())
#: Openers of a supposition: what follows does not hold as said ("if I moved to Tokyo").
HYPOTHETICAL = frozenset("if suppose supposing imagine hypothetically assuming".split())
#: Words after which a clause does not hold as said: suppositions, conditions and wishes
#: ("if I can find any I'm not allergic to", "I wish I wasn't allergic"); "since" and
#: "because" give a reason that holds ("since I'm lactose intolerant").
NOT_HOLDING = HYPOTHETICAL | frozenset(
    "unless whether when whenever once until till wish wished wishing hope hoping pretend "
    "pretending".split())
#: Words that end a clause inside a sentence: a constraint is the clause it is said in
#: ("I'm lactose intolerant, so I'll need the dairy-free recipe").
CLAUSE_BOUNDARIES = frozenset(
    ", ; : - — – so but because since although though while whereas which who cause if "
    "unless when".split())

# ----------------------------------------------------------------- time, mood, correction

#: What the speaker is (just) doing or feeling as they speak, after "I'm": a request to keep it
#: keeps nothing lasting ("keep in mind, I'm just asking for a friend", "I'm so tired").
PASSING_STATES = frozenset(
    "asking joking kidding wondering thinking saying tired hungry thirsty sleepy bored "
    "stressed exhausted grumpy upset sad angry annoyed nervous".split())
#: Words of a passing state: such a statement holds for the moment only.
TRANSIENT = frozenset(
    "today tonight tomorrow yesterday now-ish tired hungry thirsty sleepy bored busy sick ill "
    "angry sad happy excited stressed exhausted grumpy late back here ready done fine ok okay "
    "good great sorry sure thinking wondering".split())
#: Phrases of a passing state ("right now", "at the moment", "looking for").
TRANSIENT_PHRASES: tuple[tuple[str, ...], ...] = (
    ("right", "now"), ("at", "the", "moment"), ("this", "morning"), ("this", "afternoon"),
    ("this", "evening"), ("this", "week"), ("not", "sure"), ("looking", "for"),
    ("trying", "to"), ("going", "to"), ("about", "to"), ("a", "bit"),
)
#: Openers of a correction ("no, ...", "actually ...").
CORRECTION_OPENERS: tuple[tuple[str, ...], ...] = (
    ("no",), ("nope",), ("not", "quite"), ("that", "is", "wrong"), ("that", "is", "not", "right"),
    ("that", "is", "not", "true"), ("that", "is", "incorrect"), ("actually",), ("correction",),
    ("i", "meant"), ("you", "are", "wrong"), ("wrong",), ("sorry", "i", "meant"),
    ("i", "misspoke"), ("let", "me", "correct"),
)
#: Owning up to a mistake anywhere in a message's first sentence makes it a correction
#: ("Sorry, I got that wrong, it's ...", "Wait, I mixed that up: my bank is DKB").
ERROR_ADMISSIONS: tuple[tuple[str, ...], ...] = (
    ("got", "that", "wrong"), ("got", "it", "wrong"), ("mixed", "that", "up"),
    ("mixed", "them", "up"), ("my", "mistake"), ("my", "bad"), ("oops",), ("typo",),
    ("misspelled",), ("misspelt",), ("misspoke",), ("gave", "you", "the", "wrong"),
    ("told", "you", "the", "wrong"), ("said", "it", "wrong"),
)
#: Words that open a message without being part of what it says.
OPENERS = frozenset(
    "actually no nope well oh ok okay so also and btw anyway hey hmm um sorry wait yes yeah "
    "correction please oops".split())
OPENER_PHRASES: tuple[tuple[str, ...], ...] = (
    ("by", "the", "way"), ("just", "so", "you", "know"), ("fyi",), ("for", "your", "information"),
    ("quick", "one", "before", "we", "start"), ("oh", "and"), ("no", "wait"), ("heads", "up"),
)
#: The speaker pointing back at their own earlier words to the listener: what follows is the
#: statement itself ("I told you my sister lives in Lyon", "as I said, I'm vegan"); a "that"
#: after it belongs to the frame (``FRAME_TAILS``).
SAYING_FRAMES: tuple[tuple[str, ...], ...] = (
    ("i", "told", "you"), ("i", "have", "told", "you"), ("as", "i", "told", "you"),
    ("like", "i", "told", "you"), ("as", "i", "said"), ("like", "i", "said"),
    ("as", "i", "mentioned"), ("like", "i", "mentioned"), ("i", "mentioned"),
    ("as", "i", "have", "said"), ("as", "i", "have", "mentioned"),
)
#: Words after a saying frame that still belong to it ("like I said before, that ...").
FRAME_TAILS = frozenset({"that", "before", "earlier", "already", "once"})

# ----------------------------------------------------------------- statements

#: Adverbs that may stand anywhere in a statement without changing what it says.
ADVERBS = frozenset(
    "now currently really mainly mostly usually primarily originally always also still just "
    "recently actually even finally already only basically generally normally typically "
    "absolutely seriously definitely totally properly simply pretty much very so too "
    "these days nowadays".split())
#: Adverbs of how often: a saying opened by one generalises ("sometimes stumbling blocks can be
#: opened doors").
FREQUENCY_ADVERBS = frozenset("sometimes often rarely seldom occasionally".split())
#: Trailing words cut from a value ("Graz now" -> "Graz").
VALUE_TAILS = frozenset(
    "now currently anymore too though actually again apparently lately nowadays".split())
VALUE_TAIL_PHRASES: tuple[tuple[str, ...], ...] = (
    ("these", "days"), ("at", "the", "moment"), ("any", "more"), ("as", "well"), ("for", "now"),
    ("very", "much"), ("a", "lot"), ("so", "much"), ("completely",),
)
#: Words that end a value ("Sonic, a small company" -> "Sonic"; "Vodafone on 2026-11-25").
VALUE_STOPS = frozenset({",", ";", ".", "!", "?", "(", ")", "\"", "because", "but", "since",
                         "although", "which", "who", "so"})
#: Articles cut from the start of a value.
ARTICLES = frozenset({"a", "an", "the"})
#: Copulas of "my X is Y" (present tense: "my favourite part was ..." tells of an event).
COPULAS = frozenset({"is", "are"})
#: Possessives of "my X is Y" ("our vet is Dr. Haas": the household's is the user's).
POSSESSIVES = frozenset({"my", "our"})
#: Subjects of "I switched / moved / changed (my X) (from A) to Y" ("we switched to Vonovia").
SWITCHERS = frozenset({"i", "we"})
#: Adverbs after a copula that make "X is Y" an update ("the pharmacy is now ...").
NOW_WORDS = frozenset({"now", "currently", "nowadays"})
#: Naming words after a copula ("my landlord is called Mr. Brandt").
NAMING = frozenset({"called", "named"})
#: Words of "I switched / moved / changed (my X) (from A) to Y".
SWITCH_VERBS = frozenset({"switched", "moved", "changed", "swapped", "went", "upgraded"})
#: Of these, the verbs that say a value replaced another even with neither named ("Sal
#: retired, so I switched to Dom": the attribute of the old value the clause names).
REPLACING_VERBS = frozenset({"switched", "changed", "swapped"})
#: "I also like ...", "my X is also ...": an additional value, not a replacement.
ADDITIVE = frozenset({"also", "too"})
#: Attribute words that name no attribute of the user ("my point is ...", "my guess is ...").
NOT_ATTRIBUTES = frozenset(
    "point guess question problem issue concern idea hope fear worry feeling impression thought "
    "answer advice suggestion plan goal dream pleasure bad fault turn wish reason excuse "
    "understanding bet take view sense mistake apologies condolences job's thing".split())
#: People and pets of the speaker's life: "my sister is a doctor" describes the sister (no
#: attribute of the user's), only a name names her ("my sister is called Mia").
FAMILY = frozenset(
    "sister brother mother mom mum father dad wife husband partner son daughter kid kids child "
    "children friend boyfriend girlfriend fiance fiancee dog cat cousin aunt uncle grandma "
    "grandpa grandmother grandfather niece nephew baby parents parent roommate neighbour "
    "neighbor colleague coworker boss family puppy kitten".split())
#: Values that judge or report a passing state rather than name a value ("my dentist is
#: great", "my phone is dead").
NOT_VALUES = frozenset(
    "great terrible awesome nice good bad fine amazing awful horrible annoying expensive cheap "
    "busy closed open far close nearby late early sick tired crazy lovely sweet cool ok okay "
    "wonderful best worst dead broken charging off down out gone lost missing full empty here "
    "there ready done fixed right wrong better worse same different weird strange funny "
    "boring interesting important".split())
#: Modifiers kept in an attribute's key ("favourite band" is not "band").
#: Words left out of an attribute's key: "my new GP", "my current employer", "our vet" name
#: the attribute itself.
KEY_DROPPED = frozenset({"new", "current", "present", "our"})
KEY_MODIFIERS = frozenset({"favourite", "favorite", "least", "main", "primary", "first",
                           "second", "old", "usual", "preferred"})
#: Spellings folded together in keys.
KEY_SPELLINGS = {"favorite": "favourite", "colour": "colour", "color": "colour"}

#: Irregular past forms that are no present tense: "I got allergic" is "the user got allergic",
#: not "gots" (forms shared with the present, "read", "put", "quit", are left out).
PAST_FORMS = frozenset(
    "got made became went came took ate drank felt found left lost met paid ran saw sold sent "
    "spent thought told won wrote bought brought built began broke chose did drove fell forgot "
    "gave grew heard kept knew led meant rode rose said sat slept spoke stood swam taught "
    "understood woke wore caught fought flew hid held sang sank shook stole struck threw".split())
#: Endings: "I'm no longer X", "I quit X", "I don't X anymore".
ENDING_VERBS: tuple[tuple[str, ...], ...] = (
    ("quit",), ("stopped",), ("gave", "up"), ("given", "up"), ("gave", "up", "on"),
    ("given", "up", "on"), ("left",), ("cancelled",),
    ("canceled",), ("stepped", "down", "from"), ("stepped", "down", "as"),
    ("dropped", "out", "of"), ("resigned", "from"), ("retired", "from"), ("got", "rid", "of"),
)
ENDING_ADVERBS: tuple[tuple[str, ...], ...] = (("no", "longer"), ("not", "anymore"),
                                                ("anymore",), ("any", "more"))
#: Time words that tell when something ended, not what ("this autumn", "in October").
TIME_WORDS = frozenset(
    "this last next ago since today yesterday week weekend month year spring summer autumn "
    "fall winter january february march april may june july august september october "
    "november december end beginning start".split())
#: What may not be the thing ended ("I don't know anymore").
NOT_ENDED = frozenset("know think care mind sure remember understand see get it that this".split())

# ----------------------------------------------------------------- constraints

#: Words of a constraint the assistant must respect at once: allergies, diets, conditions.
CONSTRAINT_WORDS = frozenset(
    "allergic allergy allergies intolerant intolerance coeliac celiac vegan vegetarian "
    "pescatarian halal kosher gluten-free lactose-free diabetes diabetic asthma asthmatic "
    "epilepsy epileptic hypertension pregnant anaphylaxis anaphylactic teetotal teetotaller "
    "migraines arthritis dialysis pacemaker insulin warfarin".split())
#: Conditions named by two words ("I have high blood pressure", "I'm on blood thinners").
CONSTRAINT_PHRASES: tuple[tuple[str, ...], ...] = (
    ("blood", "pressure"), ("blood", "thinners"), ("high", "cholesterol"),
)
#: Predicates of the speaker that are a constraint themselves ("I can't eat ...").
CONSTRAINT_PREDICATES: tuple[tuple[str, ...], ...] = (
    ("do", "not", "eat"), ("can", "not", "eat"), ("never", "eat"), ("do", "not", "drink"),
    ("can", "not", "drink"), ("must", "not", "eat"), ("can", "not", "have"),
    ("have", "to", "avoid"), ("need", "to", "avoid"), ("must", "avoid"), ("am", "not", "allowed"),
    ("can", "not", "tolerate"),
)
#: Verbs of keeping away from something: a constraint when what follows is a food a diet or a
#: condition excludes ("I don't do dairy", "I avoid gluten", "I stay away from alcohol").
ABSTAINING: tuple[tuple[str, ...], ...] = (
    ("do", "not", "do"), ("avoid",), ("stay", "away", "from"), ("keep", "away", "from"),
    ("can", "not", "do"), ("do", "not", "touch"),
)
#: Foods and drinks diets and conditions exclude.
RESTRICTED_FOODS = frozenset(
    "dairy gluten wheat meat pork beef fish seafood shellfish nuts peanuts eggs egg soy sugar "
    "salt alcohol caffeine lactose milk cheese sesame shrimp prawns spicy garlic onions".split())
#: Verbs that predicate a constraint word of their subject: as a state ("I'm allergic", "I got
#: allergic", "I've been vegan") ...
CONSTRAINT_COPULAS = frozenset("am are is be been got get became become".split())
#: ... or as something the speaker has or keeps to ("I have diabetes", "I suffer from
#: migraines", "I take insulin", "I went vegan", "I follow a halal diet", "I eat kosher").
CONSTRAINT_HAVING = frozenset(
    "have has got suffer suffers diagnosed developed take takes need needs went gone eat eats "
    "follow follows keep keeps".split())
#: Prepositions that open a phrase of its own after such a verb: the constraint word after one
#: is not the speaker's ("I have a friend with diabetes", "I go to vegan restaurants").
PREPOSITIONS = frozenset("to at in on with for from of about near by".split())
#: Negations that leave a constraint unsaid ("I'm not allergic", "I never was vegan").
NEGATIONS = frozenset({"not", "never", "no"})
#: Negative imperatives: "don't ...", "never ...", "please do not ...".
PROHIBITION_OPENERS: tuple[tuple[str, ...], ...] = (
    ("do", "not", "ever"), ("do", "not"), ("never", "ever"), ("never",), ("no",), ("stop",),
    ("please", "do", "not"), ("please", "never"), ("please", "stop"),
)
#: Words after a contacting verb that leave it without an object ("no texts after 10pm",
#: "don't message on weekends"): the prohibition is about contacting the speaker.
TIME_PREPOSITIONS = frozenset("after before during until till past on at in between".split())
#: Verbs of contacting or suggesting: a prohibition about them binds the assistant.
CONTACT_VERBS = frozenset(
    "message messages text texts call calls email emails ping notify contact remind wake "
    "suggest recommend offer send mention bring show use give schedule book disturb bother "
    "address".split())

# ----------------------------------------------------------------- value classes

OCCUPATIONS = frozenset(
    "developer engineer programmer nurse doctor physician teacher professor student designer "
    "manager lawyer accountant researcher scientist writer artist chef cook analyst "
    "consultant quant trader architect pharmacist dentist firefighter counselor counsellor "
    "photographer journalist electrician plumber mechanic pilot driver farmer librarian "
    "therapist psychologist entrepreneur founder salesman saleswoman salesperson marketer "
    "translator musician actor editor paramedic veterinarian vet secretary cashier waiter "
    "waitress barista officer soldier intern".split())
DIETS = frozenset("vegetarian vegan pescatarian keto halal kosher gluten-free".split())
RELATIONSHIPS = frozenset("married single engaged divorced widowed".split())
RELATIONSHIP_EVENTS = frozenset({"got married", "got divorced", "got engaged"})
PROGRAMMING_LANGUAGES = frozenset(
    "python go golang rust java javascript typescript c++ c# c kotlin swift ruby php scala r "
    "julia haskell elixir lua dart matlab perl zig ocaml clojure f# sql".split())
HUMAN_LANGUAGES = frozenset(
    "english chinese mandarin german french spanish japanese korean italian portuguese "
    "russian dutch arabic cantonese".split())
EDITORS = frozenset({"vim", "neovim", "emacs", "vs code", "vscode", "visual studio code",
                     "pycharm", "intellij", "sublime", "sublime text", "cursor", "zed", "helix"})
SYSTEMS = frozenset({"linux", "macos", "mac os", "windows", "ubuntu", "debian", "fedora",
                     "arch", "arch linux", "a mac", "windows 10", "windows 11"})
PHONES = frozenset({"iphone", "pixel", "samsung", "android phone", "galaxy"})
DRINKS = frozenset(
    "coffee tea espresso latte cappuccino americano matcha chai cocoa juice water milk "
    "smoothie smoothies kombucha decaf".split())
ANSWER_LENGTHS = {"short": "short", "shorter": "short", "brief": "brief", "briefly": "brief",
                  "concise": "concise", "concisely": "concise", "long": "long",
                  "longer": "long", "detailed": "detailed", "in detail": "detailed",
                  "in more detail": "detailed", "more detailed": "detailed",
                  "at length": "long"}
UNITS = frozenset({"metric", "imperial"})
#: Word classes a template's ``{v:kind}`` may name; a value belongs when it is one of the
#: words, or (``head`` classes) its last word is.
VALUE_CLASSES: dict[str, frozenset[str]] = {
    "occupation": OCCUPATIONS, "diet": DIETS, "relationship": RELATIONSHIPS,
    "relationship_event": RELATIONSHIP_EVENTS, "programming_language": PROGRAMMING_LANGUAGES,
    "human_language": HUMAN_LANGUAGES, "editor": EDITORS, "system": SYSTEMS,
    "phone": PHONES, "drink": DRINKS, "answer_length": frozenset(ANSWER_LENGTHS),
    "units": UNITS,
}
#: Classes matched by the value's last word ("quant developer", "black coffee").
HEAD_CLASSES = frozenset({"occupation", "drink"})
#: Classes whose word opens a longer value ("iPhone 15", "Pixel 8").
OPENING_CLASSES = frozenset({"phone"})

# ----------------------------------------------------------------- the topic table's phrases

#: Statements of each topic of ``memory.topics`` (first match wins, in this order).
TOPIC_PHRASES: dict[str, tuple[str, ...]] = {
    "residence": ("i live in {v}", "i am living in {v}", "i moved to {v}", "i have moved to {v}",
                  "i am based in {v}", "i reside in {v}"),
    "hometown": ("i am from {v}", "i grew up in {v}", "i was born in {v:name}"),
    "employer": ("i work as {*} at {v}", "i work as {*} for {v}", "i work at {v}",
                 "i work for {v}", "i am working at {v}", "i am working for {v}",
                 "i am employed at {v}", "i am employed by {v}", "i joined {v}"),
    "job": ("i work as {v} at", "i work as {v} for", "i work as {v} in", "i work as {v}",
            "i am {v:occupation}"),
    "diet": ("i am {v:diet}", "i am on a {v} diet"),
    "allergy": ("i am allergic to {v}", "i have a {v} allergy", "i have an {v} allergy"),
    "avoid_food": ("i do not eat {v}", "i can not eat {v}", "i never eat {v}"),
    "primary_language": ("i use {v:programming_language}", "i code in {v:programming_language}",
                         "i program in {v:programming_language}",
                         "i write {v:programming_language}",
                         "i switched from {*} to {v:programming_language}",
                         "i switched to {v:programming_language}",
                         "i changed to {v:programming_language}"),
    "reply_language": ("answer in {v:human_language}", "reply in {v:human_language}",
                       "respond in {v:human_language}", "talk to me in {v:human_language}",
                       "write to me in {v:human_language}", "speak to me in {v:human_language}",
                       "answer me in {v:human_language}", "reply to me in {v:human_language}",
                       "speak {v:human_language}"),
    "wife_name": ("my wife is called {v:name}", "my wife is named {v:name}"),
    "husband_name": ("my husband is called {v:name}", "my husband is named {v:name}"),
    "name": ("call me {v:name}", "i am called {v:name}"),
    "timezone": ("i am in {v:timezone}",),
    "birthday": ("i was born on {v}",),
    "age": ("i am {v:number} years old", "i am {v:number} years of age", "i am {v:number} yo",
            "i am {v:number}", "i turned {v:number}", "i have turned {v:number}"),
    "relationship": ("i am {v:relationship}", "i {v:relationship_event}"),
    "editor": ("i use {v:editor}",),
    "operating_system": ("i use {v:system}", "i run {v:system}", "i am on {v:system}"),
    "morning_drink": ("i drink {v} every morning", "i drink {v} each morning",
                      "i drink {v} in the morning", "i switched to {v} in the morning",
                      "i switched to {v:drink}", "i changed to {v:drink}"),
    "answer_length": ("i prefer {v:answer_length} answers", "i prefer {v:answer_length} replies",
                      "keep your answers {v:answer_length}", "keep the answers {v:answer_length}",
                      "keep answers {v:answer_length}", "keep your replies {v:answer_length}",
                      "keep it {v:answer_length}", "keep them {v:answer_length}",
                      "give me {v:answer_length} answers", "give {v:answer_length} answers",
                      "write {v:answer_length} answers", "send {v:answer_length} answers",
                      "give me {v:answer_length} replies", "write me {v:answer_length} answers",
                      "answer {v:answer_length}", "reply {v:answer_length}",
                      "respond {v:answer_length}", "answer more {v:answer_length}"),
    "units": ("use {v:units} units", "use {v:units}", "i prefer {v:units} units",
              "answer in {v:units}", "always answer in {v:units}", "in {v:units} units"),
    "school": ("i am studying {v}", "i study {v}", "i major in {v}"),
    "car": ("i drive {v}",),
    "phone": ("i use {v:phone}",),
    "opinion": ("i like {v}", "i love {v}", "i enjoy {v}", "i adore {v}"),
    "opinion-": ("i hate {v}", "i dislike {v}", "i can not stand {v}", "i do not like {v}",
                 "i detest {v}", "i have gone off {v}"),
}
#: Attribute words of "my X is Y" that name a topic of the table (synonyms share a key).
ATTRIBUTE_ALIASES: dict[str, str] = {
    "job": "job", "occupation": "job", "profession": "job", "employer": "employer",
    "company": "employer", "name": "name", "birthday": "birthday", "date of birth": "birthday",
    "wife": "wife_name", "wife 's name": "wife_name", "husband": "husband_name",
    "husband 's name": "husband_name", "time zone": "timezone", "timezone": "timezone",
    "editor": "editor", "car": "car", "phone": "phone", "main language": "primary_language",
    "primary language": "primary_language", "main programming language": "primary_language",
    "programming language": "primary_language", "morning drink": "morning_drink",
    "diet": "diet", "hometown": "hometown", "home town": "hometown", "home": "residence",
    "address": "residence", "age": "age", "major": "school", "operating system":
    "operating_system", "os": "operating_system",
}
#: Topics "my X is Y" may set only with a naming copula ("my wife is called Maria"; "my wife is
#: vegan" says something else).
NAMED_ONLY = frozenset({"wife_name", "husband_name"})
#: "Not allergic": endings of the allergy topic.
NOT_ALLERGIC_PHRASES = ("i am not allergic to {v}", "i am no longer allergic to {v}",
                        "i do not have a {v} allergy", "i do not have an {v} allergy",
                        "i no longer have a {v} allergy")

#: Words that tend to open a lasting statement about someone's life: a message with one of
#: them and the speaker in it is worth a model's look (consolidation's candidates).
CANDIDATE_CUES = frozenset(
    "prefer favourite favorite allergic allergy hate love vegetarian vegan never always moved "
    "live living work working job married divorced born birthday graduated started quit "
    "switched retired wife husband partner son daughter kid kids children friend colleague "
    "boss mom dad mother father sister brother dog cat".split())

#: What follows "I" / "my" in a statement that may hold beyond the moment (a repetition
#: candidate): "I have two cats", "I prefer tea", "my wife ...".
STATEMENT_HEADS = frozenset(
    "am have has like love hate prefer use work live own drive play study speak eat drink want "
    "need enjoy go wife husband partner son daughter kid kids children sister brother mother "
    "mom father dad friend colleague dog cat favourite favorite name birthday".split())
