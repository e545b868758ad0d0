"""Answer extraction from raw model output.  Never raises."""
from __future__ import annotations

import bisect
import functools
import html
import math
import re
from dataclasses import dataclass

MAX_INPUT = 20000

# A span never contains its own opener: scanning from every opener to the end of the text is
# quadratic (9,000 unclosed "\\(" took 3.5 s); stopping at the next opener keeps each regex linear.
_TAG_RE = re.compile(r"<final_answer>((?:(?!<final_answer>).)*?)</final_answer>", re.S | re.I)
_BOLD_RE = re.compile(r"\*\*([^*\n]{1,200})\*\*")
_DISPLAY_RE = re.compile(r"\\\[((?:[^\\]|\\(?![\[\]]))*?)\\\]", re.S)
_PAREN_RE = re.compile(r"\\\(((?:[^\n\\]|\\(?![()]))*?)\\\)")  # inline math stays on one line (as math-verify)
_DOLLAR_RE = re.compile(r"(?<!\\)\$\$(.*?)(?<!\\)\$\$|(?<!\\)\$((?:[^$\n]|(?<=\\)\$)+)(?<!\\)\$", re.S)


def find_braced(text: str, start: int):
    """Given index of '{', return (content, end) with nested braces, or None."""
    close = _brace_matches(text).get(start)
    return None if close is None else (text[start + 1:close], close + 1)


_MATCH_CACHE: dict = {}


def _brace_matches(text: str) -> dict:
    """{index of '{': index of its matching '}'} for the whole text, in one pass (linear time).

    Scanning forward from every opening brace is quadratic: 2,800 unclosed ``\\boxed{`` in a 20,000
    character answer took 8-12 s per check (25 s under threads)."""
    key = id(text), len(text)
    got = _MATCH_CACHE.get(key)
    if got is not None and got[0] is text:
        return got[1]
    stack, out = [], {}
    for i, c in enumerate(text):
        if c == "{":
            stack.append(i)
        elif c == "}" and stack:
            out[stack.pop()] = i
    if len(_MATCH_CACHE) > 64:
        _MATCH_CACHE.clear()
    _MATCH_CACHE[key] = (text, out)
    return out


def extract_boxed(text: str):
    """Content of the last \\boxed{...} / \\fbox{...} (nested braces ok)."""
    if not text:
        return None
    last = None
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        got = find_braced(text, m.end() - 1)
        if got is not None:
            last = got[0]
    if last is None:
        m = None
        for m in re.finditer(r"\\boxed\s+([^\s$]+)", text):
            pass
        if m is not None:
            last = m.group(1)
    return last.strip() if last is not None else None


_SPACING_ENDS = re.compile(r"^(?:\\[,;:! ]|\\q?quad(?![a-zA-Z])|\s)+|(?:\\[,;:! ]|\\q?quad(?![a-zA-Z])|\s)+$")
# markdown emphasis, a pair of markers around words ("*approximately* **14 m/s**", "__6 m__"); "10**8",
# "2*pi*r", "5 *10^3", "v_0" stay
_EMPHASIS = re.compile(r"(?:(?<=[\s(\[:])|^)(\*{1,3}|_{1,3})(?=[^\s*_])([^*_\n]{1,100}?)(?<=[^\s*_])\1(?=[\s.,;:!?)\]]|$)")


def clean_answer(ans: str) -> str:
    ans = ans.strip()
    ans = _EMPHASIS.sub(r"\2", ans).strip() if re.search(r"[*_]", ans) else ans
    ans = re.sub(r"^(?:\*+|_{1,3}(?!\{))|\*+$|(?<=\S)_{1,3}$", "", ans).strip()
    # "\[ \boxed{x} \]" remnants / math delimiters around the whole answer
    for pat in (r"^\\\[(.*)\\\]$", r"^\\\((.*)\\\)$", r"^\$\$(.*)\$\$$", r"^\$(.*)\$$"):
        m = re.match(pat, ans, re.S)
        if m:
            ans = m.group(1).strip()
    ans = _SPACING_ENDS.sub("", ans)  # "\\boxed{\\, a = 2.45 \\,}": spacing around the box's content
    ans = ans.rstrip(" .;,")
    return ans.strip()


_SENTENCE_END = re.compile(r"(?<!i\.e)(?<!e\.g)\.(?=\s+[A-Z(\[]|\s*$)|\s+I hope it is correct")  # "i.e. [2, 4]" goes on


def _unit_like(s: str) -> bool:
    """"km/s", "m s^-1", "kg m^{-3}", "N/C": short letter runs, digits only in exponents, no words."""
    s = s.strip()
    return bool(s) and len(s) <= 20 and re.fullmatch(r"[A-Za-zµΩ°/^*·.\s\-{}\d]+", s) is not None and \
        all(len(w) <= 3 for w in re.findall(r"[A-Za-z]+", s)) and \
        not re.search(r"(?<![\^\-{*])\b\d", s) and \
        not re.search(r"\b(?:in|at|on|of|for|to|the|an|and|or|is|as|by|per|so|it|ie|eg|not|est|ca)\b", s, re.I)


# a qualifier written after a value that bounds it or offers a range ("10 m at least", "5 m/s or so", "5 [max]",
# "5 m/s (lower bound)"): the value is no committed answer, as "at least 10 m" is not; an approximation
# ("5 m/s approx.", "about 5 m/s") states the value and stays.  max / minimum / bound count only where they close
# the remark ("5 m/s at maximum height" is the value at a place)
TRAIL_BOUND = re.compile(
    r"(?i)\b(?:at (?:the )?(?:least|most|best|worst)|or (?:so|thereabouts|more|less|fewer|greater|higher|lower|larger"
    r"|smaller|bigger|above|below|over|under|longer|shorter|faster|slower|better|worse|up|beyond|greater)"
    r"|and (?:up|upwards?|above|over|more|higher|beyond|below|under|less|lower)|give or take|more or less"
    r"|(?:at (?:a |the )?)?(?:max|maximum|minimum|maximal|minimal|maximally|minimally|tops)(?=\s?(?:[)\].,;:!]|$))"
    r"|(?:lower|upper|a) (?:bound|limit)|bounds?(?=\s?(?:[)\].,;:!]|$)))\b|(?<![A-Za-z])-?ish\b")
# a comparison word right after the value and its unit ("10 J less", "5 m/s faster than the truck", "2 m higher"):
# a difference, not the quantity asked for ("4 times greater" states a factor and stays)
TRAIL_COMPARE = re.compile(
    r"(?i)^\s?(?:(?!times\b|fold\b|x\b)[^\s\d,;]{1,20}\s)?(?:less|more|fewer|greater|smaller|larger|bigger|higher|lower"
    r"|faster|slower|longer|shorter|heavier|lighter|further|farther)\b")


def qualified_after(a: str) -> bool:
    """Whether a bound, range or comparison follows the last number written in a."""
    last = max(a.rfind(c) for c in "0123456789")
    if last < 0:
        return False
    tail = a[last + 1:last + 121]
    return TRAIL_BOUND.search(tail) is not None or TRAIL_COMPARE.search(tail) is not None


# what follows "giving" when it is the answer: the value, maybe a unit or a noun ("giving 3 lines", "yielding
# 4.2 m/s"), to the end of the sentence; never "giving 9 lines or fewer", "giving 25 J per block", "giving
# 25 J, which is then split"
_GIVEN_VALUE = re.compile(r"[-+]?\.?\d[^\s,;]{0,30}(?:\s[^\s,;]{1,20}){0,3}\s?")
_GIVEN_VALUE_QUALIFIED = re.compile(r"(?i)\b(?:or|and|than|more|less|fewer|each|per|every|at|if|when|before|after|then"
                                    r"|for|of|in|to|by|with|from|minus|plus|maybe|perhaps|possibly|not)\b|\?")
# a statement after "but" that holds its value as an answer, not as a remark: the value ends the sentence
# ("..., but since it asks for the earlier time, t = -1 s"), and no word before it doubts or rejects it
_STATED_LAST = re.compile(r"(?:\sis\s|=|\bbe\s)\s?[-+−]?\.?\d[^\s,;]{0,30}(?:\s[A-Za-zµΩ°/^*·\-]{1,12}){0,2}\s?$")
_DOUBTED = re.compile(r"(?i)\b(?:doubt\w*|argu\w*|claim\w*|suggest\w*|think|guess\w*|unsure|sure|possible|estimat\w*"
                      r"|bound|discard\w*|reject\w*|unphysical|wrong|incorrect|not|never|cannot|isn't|can't|some|others?"
                      r"|assum\w*|suppos\w*|approximat\w*|roughly|about)\b")


# the words that introduce a condition on a value, with its variable ("when t", "at \\theta"): read here before an
# "=" and by the answer checker after a value
CONDITION_VAR = r"\s(?:when|whenever|at|for|if|once|after|before|until|where|with)\s\\?[A-Za-z]\w{0,10}"
# a condition's variable right before an "=" ("x = 9 m when t = 3 s", "v = 4 m/s at t = 2 s")
_CONDITION_BEFORE = re.compile(r"\d[^=]{0,30}" + CONDITION_VAR + r"\s?$")


def answer_sentence(s: str) -> str:
    """The answer part of "... answer is <X>. I hope it is correct." (Minerva's format) or of
    "The volume of $V$ is 120." : cut at the end of the sentence (outside $...$), then keep what
    follows the last " is " / "=", then the math span if the rest is one."""
    dollars, last = 0, 0
    for m in _SENTENCE_END.finditer(s):
        dollars += s.count("$", last, m.start())  # counted once per character: linear
        last = m.start()
        if dollars % 2 == 0:
            s = s[:m.start()]
            break
    outside = re.sub(r"\$[^$]*\$", lambda m: "#" * len(m.group()), s)
    whole = outside  # the sentence before any clause is cut off
    m = re.search(r",\s(?:which|since|because|as|so|i\.e\.|that|where|but)\b", outside)
    if m and "=" in outside[:m.start()] and re.match(r",\s(?:so|thus|therefore|hence)\b[^,;]{0,40}?=\s?[-+]?\.?\d",
                                                     outside[m.start():]):
        m = None  # "1/R = 3/10, so R = 10/3 Ω": working, then the clause that concludes with the value
    if m and (re.search(r"\b(?:not|isn't|cannot be|can't be|never)\s[^,\d]{0,16}[-+]?\d[^,]{0,20}$", outside[:m.start()])
              or re.search(r"\d[^,\d]{0,20}\s(?:(?:does|do|did)(?:n't|n’t|\snot)\s(?:work|hold|fit)|fails|is\s(?:wrong|false|incorrect))$",
                           outside[:m.start()])):
        m = None
        # "The tension is not 98 N, because ... = 118 N", "5 m/s doesn't work, so ... 7 m/s": the value before the
        # clause is rejected
    if m and outside[m.start():m.end()].endswith("but") and \
            re.search(r"\b(?:would|could|might)\b", outside[:m.start()]) and \
            _STATED_LAST.search(outside[m.end():]) and not _DOUBTED.search(outside[m.end():]) and \
            not re.search(r"\b(?:would|could|might|may|if|maybe|perhaps|possibly|or)\b", outside[m.end():]):
        m = None  # "Keeping the positive root would give 2 s, but ... t = -1 s": the value before "but" is
        # hypothetical, the one stated after it is the answer
    if m and re.search(r"\d", outside[:m.start()]):
        # "The answer is 12 N, which is above the 10 N limit": the value is stated before the clause
        s, outside = s[:m.start()], outside[:m.start()]
    m = re.search(r"\s(?:because|since)\s", outside)
    if m and not re.search(r"[;\d]", outside[m.end():]) and re.search(
            r"(?:\d[\w.%°µΩ/^*\-]{0,12}(?:\s[A-Za-zµΩ°/^*\-]{1,12})?|(?:^|\s)\(?[A-H]\)?)$", outside[:m.start()]):
        # "the answer is C because the period depends on length only", "5 m/s since it is constant": the
        # reason after the value (no comma before it, no value in it) is not the answer
        s, outside = s[:m.start()], outside[:m.start()]
    be = [m.start() for m in re.finditer(r"(?<!not)(?<!cannot)(?<!can't)(?<!never) be ", outside)]
    # "n = 3, giving 3 lines", "..., yielding 4.2 m/s": the value the working ends on
    gives = [m.end() - 1 for m in re.finditer(r"\b(?:giving|yielding|resulting in|for a total of)\s(?=[-+]?\.?\d)", outside)
             if _GIVEN_VALUE.fullmatch(whole[m.end():]) and not _GIVEN_VALUE_QUALIFIED.search(whole[m.end():])
             and not re.search(r"(?i)\b(?:answer|would|could|might|if|suppose|assume)\b", outside[:m.start()])]
    cut = max(outside.rfind(" is "), outside.rfind("="), be[-1] if be else -1, outside.rfind(" equals "),
              gives[-1] if gives else -1)
    prev = max(outside.rfind(" is ", 0, max(cut, 0)), outside.rfind("=", 0, max(cut, 0)))
    if cut > 0 and prev >= 0 and outside[cut] == "=" and re.search(
            r"\d[^,;=]{0,30}(?:[,;]\s*(?:or\s+|and\s+)?|\s(?:or|and)\s+)[A-Za-z\\][\w{}\\']{0,20}\s*$", outside[prev:cut]):
        cut = -1  # "v1 = 25 m/s, v2 = 30 m/s": two values, kept whole (and refused), not the last one
    if cut > 0 and prev >= 0 and outside[cut] == "=" and _CONDITION_BEFORE.search(outside[prev:cut]):
        cut = prev  # "x = 9 m when t = 3 s": the last "=" states the condition, the value is the one before it
    if cut >= 0 and s[cut:].strip(" =is"):
        s = s[cut:].lstrip("=").strip()
        s = re.sub(r"^(?:is|be|equals)\s", "", s)
    outside = re.sub(r"\$[^$]*\$", lambda m: "#" * len(m.group()), s)
    m = re.search(r",\s+(?:which|since|because|as|so|i\.e\.|that|where|and|but|not)\b", outside)
    if m:  # "the answer is 9, which matches ... about 10 units": the clause is not the answer
        s = s[:m.start()]
    # "6.3 (rounded)", "(i.e. 3/4)" are remarks; "5 m/s (or 50 m/s)" is a hedge and stays (refused later)
    # "5 (km/s)" is a unit and stays too
    # a parenthetical with a number is another value ("3 m/s (4 m/s with friction)"), unless it says it
    # restates this one ("(i.e. 3/4)", "(approximately 0.33)")
    # "5 m/s (lower bound)", "x = 3, y = 4 (not final)": a remark that bounds or withdraws the value stays
    s = re.sub(r"\s+\((?![^()]*\b(?:or|either|alternatively|maybe|perhaps|possibly|otherwise)\b[^()]*(?:\d|\b[A-H]\b))"
               r"(?![^()]*\b(?:not|wrong|incorrect|rejected|discarded|bound|at least|at most|minimum|maximum|upper|lower"
               r"|tentative|unsure|guess|uncertain|unverified|unconfirmed|not sure|maybe|perhaps|possibly|probably)\b)"
               r"(?=[^()\d]*\)|\s?(?:i\.e\.|ie\b|≈|approx|about|roughly|rounded|exact|to \d|in \w))"
               r"(?=[^()]*(?:[a-z]{2}|\b[ie]\.[eg]\.))([^()]*)\)\s*$", lambda m: m.group() if _unit_like(m.group(1)) else "", s)
    spans = re.findall(r"\$([^$]+)\$", s)
    if len(spans) == 1 and not s.replace("$" + spans[0] + "$", "").strip(" .,:;"):
        return spans[0]
    return s


def last_boxed(text: str):
    """(content, end) of the last \\boxed{...}; (None, -1) when there is none."""
    last, end = None, -1
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        got = find_braced(text, m.end() - 1)
        if got is not None:
            last, end = got
    if last is None:
        return extract_boxed(text), len(text) if extract_boxed(text) is not None else -1
    return last.strip(), end


# ------------------------------------------------------------------------------- reading the answer
#
# A careful grader reads one committed answer: the last one stated (a final-answer tag, a box, an
# answer sentence, or a correction of them), and refuses it when it is followed by an alternative.
# Every pattern below runs on text whose whitespace runs are collapsed first (one space, or one
# newline), and no pattern has two adjacent unbounded repeats over the same characters: each is
# linear in the text's length ("The answer" + 20,000 spaces took minutes before).

_ANSWER_IS = re.compile(r"(?:final\s?answer|the\s?answer|answer)[*_]{0,2}\s?(?:is(?![\w'’])\s?:?|must\sbe(?![\w'’])|=|:)\s?[*_]{0,3}\s?:?\s?",
                        re.I)
_BOLD_ANSWER = re.compile(r"\*\*\s?(?:final\s)?answer\s?:?\s?\*\*\s?:?\s?(.+)", re.I)
# a correction of what was stated before: the value stated after it replaces the earlier answer
CORRECTION = re.compile(
    r"\b(?:actually|wait|oops|correction|corrected|i forgot|i missed|on second thought|let me reconsider|reconsider(?:ing)?|scratch that"
    r"|(?<!\bif )(?<!\bhad )(?<!\bunless )(?<!\bwhether )(?<!\bcase )(?<!\bin case )i made an? (?:[a-z]+ )?(?:error|mistake|slip|typo)|that(?:'s| is| was) (?:wrong|incorrect|a mistake)|i was wrong|no,? wait"
    r"|let me (?:redo|correct|recompute|recalculate|re-?read|re-?check|re-?examine|(?:double-?)?check|verify)|instead)\b", re.I)
# a value stated after the committed answer as another possibility
_ALTERNATIVE_AFTER = re.compile(
    r"(?:^\s?|[.!?\n]\s?)(?:(?:hmm+|um+|well|but|maybe|so),?\s)?(?:alternatively|or(?=[\s,])|otherwise|either)\b|\b(?:could|might|may|can) also be\b"
    r"|\bor (?:possibly|perhaps|maybe)\b|\b(?:if|when) [^.\n]{0,60}\b(?:instead|then)\b", re.I)
_HEDGED_SENTENCE = re.compile(r"\b(?:could|might|may|can) also be\b[^.\n]{0,40}\d|\bor (?:possibly|perhaps|maybe)\b[^.\n]{0,40}\d"
                              r"|\d[^.\n\d]{0,80}\b(?:otherwise|or else|else)\b[^.\n]{0,40}\d"  # "12 N if ..., otherwise 10 N"
                              r"|\balternatively\b[^.\n]{0,40}\d", re.I)
SENT_END = re.compile(r"[.!?](?=\s|$)|\n")
FINALLY = re.compile(r"(?i)\bfinally\b|\bin the end\b")  # "... and finally \\boxed{8}": the last one is chosen
# where a corrected value is stated: "is", "=", "it's B", "..., so B and D" (the last one of the sentence)
_STATE_CUT = re.compile(r"(?:\bis|\bbe|\bequals?|\bbecomes|\bgives|=|:|\bto|(?P<weak>\b(?:it|that|this|answer|choice|option|one)['’]s"
                        r"|\b(?:so|thus|hence|therefore),?|\bno,\s(?:just|only)))\s", re.I)
# a sentence of a correction that takes back what the one before it said: "... so A, B and D... no."
_RETRACTION = re.compile(r"\s?(?:(?:hmm+|um+),?\s)?no\b[,.!]", re.I)
# after "it's" / "so" a value is an answer only when nothing qualifies it: "it's 5 m/s faster than the bus",
# "so 6 N each", "it's 6 J per block", "so 10 m maybe" state no answer
_QUALIFIED = re.compile(r"(?i)\b(?:than|more|less|fewer|faster|slower|longer|shorter|higher|lower|larger|smaller|greater"
                        r"|each|per(?!\s(?:second|sec|s|minute|min|hour|h|hr|day|year|met(?:er|re)|m|kilogram|kg|lit(?:er|re)|l"
                        r"|mole?|square|cubic|cm|km)\b)|every|apiece|plus|minus|times|twice|half|extra|left|remaining|needed"
                        r"|off|short|over|under|too|also)\b")
# ... and one offered with a doubt or a condition ("so either 6 J or 8 J", "if a = 2, so 10 m", "so 10 m
# maybe") is no commitment: the correction is refused (the answer before it was taken back)
_HEDGED_CORRECTION = re.compile(r"(?i)\b(?:if|unless|whether|maybe|perhaps|possibly|probably|likely|would|could|might"
                                r"|either|or|at least|at most|up to)\b|\?")


# "it's 12 N if the surface is rough, otherwise 10 N": a value for each case, no one answer
_CONDITIONAL_ALTERNATIVE = re.compile(r"(?i)\b(?:otherwise|or else|else)\b[^.\n]{0,40}\d")


def collapse_space(text: str) -> str:
    """Whitespace runs -> one space (one newline when the run holds one); zero-width characters removed
    (a zero-width space inside a number is no separator: "1\u200b5" is 15)."""
    text = _ZERO_WIDTH.sub("", text)
    return _WS.sub(lambda m: "\n" if "\n" in m.group() else " ", text)


_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_WS = re.compile(r"\s+")


def drop_truncated_copy(text: str) -> str:
    """A generation cut off in the middle of repeating itself ("The power is 35 A. The power is 35"):
    the unfinished last sentence is a prefix of a complete earlier one, and is dropped, so that the
    complete copies are read (never "35" read in the reference's unit)."""
    body = text.rstrip()
    if not body or body[-1] in ".!?)}]$*>":
        return text
    cut = max(body.rfind(". "), body.rfind("\n"), body.rfind("! "), body.rfind("? "))
    frag = body[cut + 1:].strip()
    if len(frag) < 6 or cut < 0:
        return text
    if body.startswith(". ", cut) and re.search(r"(?:\b(?:is|[Aa]nswer|[Oo]ption|[Cc]hoice)\s?:?\s?\**|^)\(?[A-H]\)?\**$",
                                                 body[max(0, cut - 16):cut]):
        # "The answer is C. 3.1 m/s": the period marks an option letter, the text after it is the option's
        # text written with the letter (compared with the options), not an unfinished copy of a sentence
        return text
    earlier = body[:cut + 1]
    i = earlier.rfind(frag)
    if i >= 0 and len(earlier) > i + len(frag) and earlier[i + len(frag)] not in ".!?\n":
        return earlier
    return text


@dataclass(frozen=True)
class Reading:
    """The committed answer of a model output.

    answer:  its text (None when nothing states an answer);
    refused: why it is not one answer, or None (an alternative stated after it, a flip-flop);
    source:  tag | box | sentence | correction | tail."""
    answer: str | None
    refused: str | None = None
    source: str = "none"
    end: int = -1


def _boxes(text: str) -> list:
    """[(start, end, content)] of every \\boxed{}; boxes joined only by a separator ("\\boxed{3} or
    \\boxed{4}", "\\boxed{B}, \\boxed{D}") are one statement with the separator kept ("3 or 4")."""
    out = []
    for m in re.finditer(r"\\(?:boxed|fbox)\s?\{", text):
        got = find_braced(text, m.end() - 1)
        if got is None:
            continue
        content, end = got
        if out:
            s0, e0, c0 = out[-1]
            gap = text[e0:m.start()]
            j = re.fullmatch(r"[\s$]*+(?:(,|;|&|and|or|\\text\{\s?or\s?\}|\\quad|\\qquad)[\s$]*+)?", gap)
            if j is not None and e0 <= m.start():
                sep = (j.group(1) or ",").strip()
                sep = "or" if "or" in sep else ("," if sep.startswith("\\") else sep)
                out[-1] = (s0, end, f"{c0.strip()} {sep} {content.strip()}" if sep in ("or", "and")
                           else f"{c0.strip()}{sep} {content.strip()}")
                continue
        out.append((m.start(), end, content.strip()))
    return out


def _sentence_end(text: str, pos: int) -> int:
    """End of the sentence that starts at pos (outside $...$)."""
    dollars, last = 0, pos
    for m in SENT_END.finditer(text, pos):
        dollars += text.count("$", last, m.start())  # counted once per character: linear
        last = m.start()
        if dollars % 2 == 0:
            return m.end()
    return len(text)


def statements(text: str) -> list:
    """[(start, end, answer, source)] of every statement of an answer, in text order."""
    st = []
    for m in _TAG_RE.finditer(text):
        inner = m.group(1)
        bx = _boxes(inner)  # "\\boxed{3} or \\boxed{4}" in the tag is one statement, "3 or 4"
        b = bx[-1][2] if bx else None
        st.append((m.start(), m.end(), clean_answer(b if b is not None else inner), "tag"))
    for s, e, c in _boxes(text):
        if not any(ts <= s < te for ts, te, _, src in st if src == "tag"):
            st.append((s, e, clean_answer(c), "box"))
    pos = 0
    for ln in text.splitlines(keepends=True):
        found = list(_ANSWER_IS.finditer(ln))
        # every "answer is" of the line whose sentence ends before the next one ("The answer is (B).
        # The answer is (C). ..." is a loop of statements); one introducing another ("Final Answer: The
        # final answer is $x$.") is part of it
        for k, mm in enumerate(found):
            stop = found[k + 1].start() if k + 1 < len(found) else len(ln)
            rest = ln[mm.end():stop]
            if k + 1 < len(found) and _sentence_end(rest, 0) >= len(rest) and not re.search(r"[.!?]\s*$", rest):
                continue
            if "\\boxed" in rest or "\\fbox" in rest or "<final_answer>" in rest.lower():
                continue  # the box (or tag) it introduces is the statement
            cand = clean_answer(answer_sentence(rest))
            if cand:
                st.append((pos + mm.start(), pos + mm.end() + _sentence_end(rest, 0), cand, "sentence"))
        if not found:
            mb = _BOLD_ANSWER.search(ln)
            if mb and clean_answer(mb.group(1)):
                st.append((pos + mb.start(), pos + len(ln), clean_answer(mb.group(1)), "sentence"))
        pos += len(ln)
    st.sort(key=lambda t: t[0])
    return st


# "B", "(C)", "B and D", "A, C": option letters (capitals only: "that's c" names the speed of light)
_LETTER_LIST = re.compile(r"\(?[A-H]\)?(?:\s?(?:,|;|&|\band\b)?\s?\(?[A-H]\)?){0,7}")


# the opening of a sentence after a correction cue that writes the corrected value alone ("Wait, no, (B).")
_BARE_CORRECTED = re.compile(r"[\s,;:\-–—]*(?:(?:no|nope|sorry|i mean|rather|make that)\b[,:!]?\s?)?[\s,;:\-–—]*"
                             r"(?=[-+]?\.?\d|\(?[A-H]\)?(?![A-Za-z]))")


def _correction(text: str, after: int):
    """(start, answer) stated after the last correction cue that follows position `after`, or None."""
    cue = None
    for cue in CORRECTION.finditer(text, max(after, 0)):
        pass
    if cue is None:
        return None
    region = text[cue.end():]
    best = None
    checking = re.fullmatch(r"(?i)let me (?:re-?read|re-?check|re-?examine|(?:double-?)?check|verify)", cue.group()) is not None
    # a sentence runs to a stop followed by a space (the point of "9.8" or "4.08 s" is no stop)
    for sm in re.finditer(r"(?:[^.!?\n]|[.!?](?!\s|$))+(?:[.!?](?=\s|$)|\n|$)", region):
        sent = sm.group()
        found = list(_STATE_CUT.finditer(sent))
        bare = _BARE_CORRECTED.match(sent) if not found else None
        if bare is not None:
            # "Wait, no, (B).", "- wait, 12 N.": the corrected value written alone after the cue
            cand = clean_answer(answer_sentence(sent[bare.end():]))
            value = re.fullmatch(r"[-+]?\.?\d[\d.,]*\s?(.*)", cand) if cand else None
            if cand and (_LETTER_LIST.fullmatch(cand) or value and (not value.group(1) or _unit_like(value.group(1)))):
                # a value alone, maybe with its unit ("Actually, 2 forces act." corrects nothing)
                best = (cue.start(), cand, cue.end() + sm.end(), _HEDGED_CORRECTION.search(sent) is not None
                        or _CONDITIONAL_ALTERNATIVE.search(sent) is not None)
                continue
        if not found:
            if best is not None and _RETRACTION.match(sent):
                best = None  # "Wait, so A, B and D... no.": the corrected answer is taken back
            continue
        cand = clean_answer(answer_sentence(sent[found[-1].end():]))
        weak = bool(found[-1].group("weak"))
        if cand and weak and (_QUALIFIED.search(sent[found[-1].end():]) or checking):
            # "Wait, it's 5 m/s faster than the bus.": a remark, not a corrected answer; after "let me check",
            # "..., so 6 N" is the check's working (the lighter block's force), not a new answer
            if not checking and len(re.findall(r"\d+(?:\.\d+)?", cand)) >= 2 and re.search(r"[,;]\s|\band\b", cand):
                # "Wait, so 10 m total, 5 m each way": new values (a total and its parts) replace the answer
                # without committing to one of them
                best = (cue.start(), cand, cue.end() + sm.end(), True)
            continue
        if cand and (re.search(r"\d", cand) or _LETTER_LIST.fullmatch(cand) or (
                len(cand) <= 40 and re.search(r"\b(?:should|must|correct|instead|actually|rather)\b", sent, re.I)
                and re.fullmatch(r"[$\\\w\s^{}()*/+\-.,']+", cand) and len(cand.split()) <= 4)):
            hedged = (weak and _HEDGED_CORRECTION.search(sent) is not None) or \
                _CONDITIONAL_ALTERNATIVE.search(sent) is not None
            best = (cue.start(), cand, cue.end() + sm.end(), hedged)
    return best


@functools.lru_cache(maxsize=8)
def prepare(text: str) -> str:
    """The text an answer is read from: its last MAX_INPUT characters, whitespace runs collapsed, chat
    turns cut, a truncated repeat of the last complete copy dropped.  Memoised (a pure function of one
    string): one check reads the same output several times (its answer, its letters, the listed options,
    the statements before and the sentences after the answer), and prepares it once."""
    # whitespace collapsed before the cut ("9.8" + 20,000 spaces + "m/s^2" keeps its number); the part
    # collapsed is bounded, so the cost stays linear in MAX_INPUT
    text = collapse_space(text[-4 * MAX_INPUT:])[-MAX_INPUT:]
    text = _CHAT_TURN.sub("\n", text)  # "... is 19. <|im_start|>user": a chat token ends the line
    text = _ENTITY.sub(_entity, text) if "&" in text else text  # "&lt;5 m/s" is "<5 m/s", a bound
    # markdown strikethrough ("~~5 m/s~~ 7 m/s"): the struck text is withdrawn, never the answer ("5~~m/s", a
    # LaTeX space, is no strikethrough: a word character touches it)
    text = _STRUCK.sub(" ", text) if "~~" in text else text
    return drop_truncated_copy(text)


# an HTML character reference with its semicolon ("&lt;", "&ge;", "&#8805;"); a LaTeX "&" (an alignment tab) stays
_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]{2,8});")
_STRUCK = re.compile(r"(?<![~\\\w])~~(?=[^\s~])[^~\n]{0,200}?(?<=[^\s~])~~(?![~\w])")


def _entity(m) -> str:
    got = html.unescape(m.group())
    return got if len(got) == 1 and got not in "\x00" else m.group()


def read_answer(text) -> Reading:
    """The committed answer of a raw model output (see Reading); never raises."""
    if not isinstance(text, str):
        return Reading(None)
    return _read(prepare(text))


# a sentence that takes back what was just stated: "No, that is wrong.", "- no, that's false", "This doesn't work.",
# "I was wrong."; "that is not wrong", "it is wrong to use g = 10" take nothing back
_RETRACTED = re.compile(
    r"(?i)(?:^\s?|[.!?\n]\s?|[-–—,;:]\s?)(?:(?:hmm+|um+|oh|oops|wait),?\s)?(?:no(?:pe)?\b[,.!]?\s?)?"
    r"(?:(?:(?:that|this|it|which)(?:['’]s|\s(?:is|was))|i\swas)\s(?:(?:all|clearly|definitely|obviously)\s)?"
    r"(?:wrong|incorrect|false|not\s(?:right|correct)|a\smistake|impossible|not\spossible)"
    r"|(?:that|this|it)\s(?:does|did)(?:n't|n’t|\snot)\swork)(?=\s?(?:[.!,;]|$|\s(?:because|since|as)\b))"
    r"|(?:^\s?|[.!\n]\s?|[-–—]\s?)no(?:pe)?[.!]?\s?$")  # "Is that wrong? No." keeps it


def _retracted(after: str) -> bool:
    """Whether the text after an answer takes it back (a retraction with no value stated after it)."""
    m = _RETRACTED.search(after[:400])
    return m is not None and not re.search(r"\d", after[m.end():]) and not re.search(r"\d", after[:m.start()])


def _read(text: str, st=None) -> Reading:
    st = statements(text) if st is None else st
    last_end = st[-1][1] if st else -1
    corr = _correction(text, st[-1][0] if st else 0)
    if corr is not None and (not st or corr[0] >= last_end or (corr[0] > st[-1][0] and corr[2] >= last_end)):
        # the correction after the last statement, or one inside it ("The answer is (C) - wait, no, (B).")
        # what follows the corrected value's sentence is after the answer ("... is (B)... so I'd say B or D")
        ans, src, end = corr[1], "correction", corr[2]
    elif st:
        start, end, ans, src = st[-1]
        if src == "sentence" and ans and _NOT_OWN.search(text[max(0, start - 40):start]):
            # "Alternative answer: 5 m/s", "Expected answer: 5 m/s", "Let me check whether the answer is 5 m/s":
            # an answer offered as another's, as a second possibility or as a premise is not committed to
            return Reading(ans, "an alternative, someone else's or a supposed answer is not a committed one", src, end)
    else:
        ans, src, end = _fallback(text), "tail", len(text)
    if not ans:
        return Reading(None)
    if src == "tail":
        i = text.rfind(ans)
        head = text[max(0, i - 200):max(i, 0)]
        head = head[max(head.rfind(". "), head.rfind("\n"), head.rfind("? "), head.rfind("! ")) + 1:]
        stated = head + text[i:i + len(ans)] if i >= 0 else ""
        if stated and _PREMISE.match(stated) and not _PREMISE_CONCLUDED.search(stated):
            # "Suppose v = 5 m/s.", "Given: v = 5 m/s", "The initial speed is 5 m/s.": the value of a premise (with
            # nothing concluded from it) is no answer
            return Reading(ans, "a value supposed, given or restated is not an answer", src, end)
        if i > 0 and re.search(r"\b(?:or|alternatively|either|maybe|perhaps|possibly|otherwise)\b[\s*_$(\[\\]{0,12}$",
                                text[max(0, i - 60):i], re.I) and re.search(r"\d", text[max(0, i - 300):i]):
            # "$5 m/s$ or $6 m/s$", "**5 m/s** (or **6 m/s**)": the last span is offered as an alternative
            return Reading(ans, "an alternative value is stated before the answer", src, end)
    if src != "tail" and _retracted(text[end:]):
        # "The answer is 5 m/s. No, that is wrong.", "\\boxed{5} - no, that is false.": the output takes back the
        # answer it stated, and states no other
        return Reading(ans, "the answer is taken back after it is stated", src, end)
    if src == "correction" and corr[3]:
        return Reading(ans, "the corrected answer is hedged or conditional", src, end)
    after = text[end:]
    if src != "tail" and re.search(r"[\d$\\=]|\b(?![aAI]\b)[a-zA-Z]\b", after) and _ALTERNATIVE_AFTER.search(after):
        return Reading(ans, "an alternative value is stated after the answer", src, end)
    if src in ("tail", "correction") and _HEDGED_SENTENCE.search(text[-300:]):
        return Reading(ans, "the answer sentence names another possible value", src, end)
    return Reading(ans, None, src, end)


# the words right before "answer is" / "answer:" that make it not the output's own committed answer
_NOT_OWN = re.compile(r"(?i)\b(?:alternative|alternate|another|other|second|backup|possible|expected|reference|textbook"
                      r"|book['’]?s?|manual['’]?s?|official|key['’]?s?|whether|if|suppose|supposing|assume|assuming"
                      r"|unless|check|verify|test)\s(?:the\s)?(?:final\s)?$")
# the opening of a sentence that supposes, restates or sets up a value rather than concluding one
_PREMISE = re.compile(r"(?i)\s?(?:suppose|supposing|assume|assuming|let['’]?s (?:try|assume|suppose|say)|try|guess|hypothes[ie]s"
                      r"|goal|target|given|known|if|let me (?:check|verify|see)|we (?:want|need) to (?:verify|check|show|find)"
                      r"|i['’]?d expect|expected|the reference|the (?:problem|question) (?:says|states|gives)"
                      r"|the initial\b|initially|starting (?:from|with))\b")
_PREMISE_CONCLUDED = re.compile(r"(?i)(?:\b(?:then|so|thus|therefore|hence|gives?|giving|we (?:get|find|obtain))\b|,)[^.\n]{0,80}\d")


def extract_answer(text):
    """The committed answer's text (see read_answer), or None when there is none or it is refused."""
    r = read_answer(text)
    return r.answer if r.refused is None else None


def _fallback(text: str):
    """No statement: the last math span, unless a sentence with a number follows it ("... increases
    by 100%."), then that sentence's answer ("the probability ... is 2/3."); else the last line."""
    spans = []
    for rx in (_BOLD_RE, _DISPLAY_RE, _PAREN_RE, _DOLLAR_RE):
        for m in rx.finditer(text):
            spans.append((m.end(), next(g for g in m.groups() if g is not None)))
    last_end, last_span = max(spans, key=lambda t: t[0]) if spans else (0, None)
    if last_span is not None and re.search(r"\d", last_span) and \
            not re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+|(?<=\d)[eE](?=[-+]?\d)", "", last_span)):
        # "N_A = $6.02 \times 10^{23}$ mol^-1", "$5$ km.": the unit written after a number in a math span is
        # its unit (after an expression, "$mgh$ J", it is decoration)
        unit = re.match(r"[ \t]?([^\n.;,!?$]{1,20}?)\s?(?:[.;,!?](?=\s|$)|\n|$)", text[last_end:])
        if unit and _unit_like(unit.group(1)) and re.search(r"[A-Za-zµΩ°]", unit.group(1)):
            return clean_answer(last_span + " " + unit.group(1).strip()) or None
        # "$10$ m at least", "$5$ m/s or so", "$10$ J less", "$5$ per second": the words after the span qualify
        # the value or state its unit, and are never dropped (a bare 10 read in the reference's unit)
        after = re.match(r"[ \t]?([^\n.;,!?$]{1,60}?)\s?(?:[.;,!?](?=\s|$)|\n|$)", text[last_end:])
        if after and (qualified_after("0" + after.group(1)) or re.match(r"(?i)per [a-z]", after.group(1))):
            return clean_answer(last_span + " " + after.group(1).strip()) or None
    tail = _tail_sentence(text[last_end:])
    # "The phase difference is π radians.", "The speed is four meters per second."
    if tail and (re.search(r"\d|π|\\pi(?![a-zA-Z])", tail) or (last_span is None and NUMBER_WORD.search(tail))):
        return clean_answer(tail) or None
    if last_span is not None:
        return clean_answer(last_span) or None
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return clean_answer(lines[-1]) if lines else None


_CHAT_TOKEN = re.compile(r"<\|[a-z_]+\|>.*", re.S)
_CHAT_TURN = re.compile(r"<\|[a-z_]+\|>(?:user|assistant|system)?")


def _tail_sentence(text: str) -> str | None:
    """The answer part of the last sentence that is not a courtesy ("I hope it is correct")."""
    text = _CHAT_TOKEN.sub("", text).strip()
    rest = _PAREN_RE.sub(" ", _DOLLAR_RE.sub(" ", text))
    if re.search(r"(?<!\\)\$|\\\(|\\\)", rest):
        return None  # a math span that is unclosed or runs over lines ("Answer $ \n 9 \n $"), as math-verify
    sentences = [x for x in re.split(r"(?<=[.!?])\s(?=[A-Z])", text) if x.strip()]
    for sent in reversed(sentences):
        if re.search(r"\bhope\b|\blet me know\b|\bthank", sent, re.I):
            continue
        return answer_sentence(sent)
    return None


# ------------------------------------------------------------------------------------ multiple choice

_LETTER_EMPHASIS = re.compile(r"\*{1,3}|(?<![A-Za-z0-9])_{1,3}|_{1,3}(?![A-Za-z0-9])")
# two letters offered as alternatives ("B or D", "**B** or **D**"): a hedge, never the set {B, D}
_OR_JOINED = re.compile(r"(?<![A-Za-z])\(?[A-H]\)?[*_]{0,3},?\s?[*_]{0,3}(?i:or)[*_]{0,3},?\s[*_]{0,3}\(?[A-H]\)?(?![A-Za-z])")


def letters_in(s: str, valid: str):
    """The letters (of `valid`) that a short answer names: "ACD", "(A) and (C)", "options B, D",
    "[B, D]", "B;D"; else None."""
    s = s.strip().strip("*$ .[]")
    s = re.sub(r"\\(?:text|mathrm|textbf)\{([^}]*)\}", r"\1", s).strip().strip("*$ .[]")
    # markdown emphasis around each letter: "**B** and **D**", "__A__, __C__"
    s = _LETTER_EMPHASIS.sub("", s) if ("*" in s or "_" in s) else s
    # "The answer is (c)", "(b) and (d)": a lowercase letter in parentheses is the option's label; "c",
    # "b, d" as the whole answer of a statement are letters too ("a" alone is the article)
    s = re.sub(r"\(([a-h])\)", lambda m: f"({m.group(1).upper()})", s)
    if re.fullmatch(r"[a-h]\)", s):
        s = s[0].upper()  # "answer: c)": a lowercase letter with its closing parenthesis is the option's label
    if re.fullmatch(r"[b-h]|[a-h](?:\s?(?:,|;|&|\band\b)\s?[a-h])+", s):
        s = s.upper()
    if re.fullmatch(r"[A-Z]{1,10}", s) and all(c in valid for c in s):
        return [c for c in s]
    toks = re.findall(r"\(?\b([A-Z])\b\)?", s)
    rest = re.sub(r"\(?\b[A-Z]\b\)?|[,;&.\s]|\band\b|\bor\b|\bboth\b|\boptions?\b|\bchoices?\b", "", s, flags=re.I)
    if toks and not rest and all(t in valid for t in toks):
        return toks
    return None


def letter_and_text(s: str, valid: str):
    """(letter, option text) of "(C) 108 km/h", "C. 108 km/h", "C 108", "option C: 108"; None otherwise
    ("A ball ..." is prose, not option A)."""
    s = re.sub(r"\\(?:text|mathrm|textbf)\{([^}]*)\}", r"\1", s.strip().strip("*$ []")).strip()
    m = re.match(r"(?:(?:option|choice)\s?)?(?:\(([A-H])\)|([A-H])(?=[.:)]|\s[-+\d\\$.(]|$))[.:)]?\s?(.*)", s, re.S | re.I)
    if not m:
        return None
    letter = m.group(1) or m.group(2)
    if letter not in valid:
        return None
    text = m.group(3).strip().rstrip(".").strip()
    if re.fullmatch(r"\([^()]*\)", text):
        text = text[1:-1].strip()  # "C (12 N)": the option's text in parentheses
    return letter, text


# each letter maybe in bold ("**B** and **D**")
_LETTERS = r"(?:\(?[A-H]\)?|\([a-h]\))(?:\*{0,2}(?:\s?(?:,|;|&|/|\band\b|\bor\b)\s?|\s)\*{0,2}(?:\(?[A-H]\)?|\([a-h]\))){0,7}+"
# statements of a letter that are not "answer is" sentences (those are read by read_answer); each is
# linear: the repeats are bounded and separated by required tokens
_LETTER_STATEMENTS = [re.compile(p) for p in (
    r"(?:[Cc]orrect|[Rr]ight|[Bb]est|[Tt]rue)\s(?:option|answer|choice|statement)s?\s?(?:is|are|:)?\s?"
    r"(?:thus\s|therefore\s|hence\s)?(?:(?:option|choice)s?\s?)?[*\[]{0,2}(" + _LETTERS + r")(?![A-Za-z])",
    r"(?:[Oo]ption|[Cc]hoice)s?\s?(" + _LETTERS + r")(?![A-Za-z])\s(?:is|are)\s(?:the\s)?(?:correct|right|true|answer|best)",
    r"(?:^|[\s,;:(])(?:[Bb]oth\s)?\*{0,2}(" + _LETTERS + r")\*{0,2}(?![A-Za-z])\s(?:is|are)\s(?:all\s)?(?:the\s)?(?:correct|right|true)\b",
    r"\b(?:[Cc]hoose|[Cc]hose|[Ss]elect|[Pp]ick|[Mm]ark|go with|[Gg]oing with)\s(?:(?:option|choice)s?\s?)?(" + _LETTERS
    + r")(?![A-Za-z])",
    r"\b(?:[Mm]y|[Tt]he|[Ff]inal)\s(?:final\s)?(?:answer|choice|pick)\s?:\s?(?:(?:option|choice)s?\s?)?(" + _LETTERS
    + r")(?![A-Za-z])",
    r"\b(?:[Hh]ence|[Tt]hus|[Ss]o|[Tt]herefore),?\s(?:the\s(?:answer|option)\sis\s)?(?:(?:option|choice)\s?)?"
    r"(\([A-H]\)|[A-H](?=[.!](?:\s|$)|\s?$))(?!\s?(?:is|are)\s(?:not\b|false|wrong|incorrect|invalid))"
    r"(?!\s?(?:,|;|&|\band\b)\s?\(?[A-H]\b)",  # "Hence (B) and (D) are correct" states both
    # "Therefore (D)", "Therefore D." (the letter is the sentence); "so (A) is false" names no choice
    r"(?:[Oo]ption|[Cc]hoice)s?\s?(" + _LETTERS + r")(?=\s?[.!]?\s?$)",  # "... so option D." ends the text
)]


_BARE_LINE = re.compile(r"(?m)^[ \t]*\**\(?([A-H])\)?[.)]?\**[ \t]*$")
_CONCLUDING = (0, 4, 5)  # indexes of _LETTER_STATEMENTS that state a conclusion ("correct answer is", "Hence (C)")


@dataclass(frozen=True)
class LetterReading:
    letters: tuple        # the letters chosen, in the order written (empty when none)
    refused: str | None   # why the choice is not one answer (alternation, hedge)
    text: str | None      # the option text written after the letter, or the answer text with no letter
    rest: str | None = None  # a letter given alone on the first line: the explanation written after it


def _letters_of(ans: str, valid: str):
    got = letters_in(ans, valid)
    if got:
        return got, None
    lt = letter_and_text(ans, valid)
    if lt:
        return [lt[0]], lt[1] or None
    return None, None


def _lists_options(ans: str) -> bool:
    """"(A) Electron (B) Meson (C) Photon", or one option a line ("A. 2.4 V\\nB. 3.3 V"): two or more
    letters each followed by its own text is a copy of the options, not a choice ("(A) and (C)" is one)."""
    marked = set(re.findall(r"\(([A-H])\)\s?(?!and\b|or\b|&)[^\s(),;&.]", ans))
    lined = set(re.findall(r"(?m)^\s?([A-H])[.)]\s\S", ans))
    return len(marked) >= 2 or len(lined) >= 2


_OPTION_MARK = re.compile(r"(?:(?<=\s)|^)\(?([A-H])[).:]\s")


def listed_options(text) -> dict:
    """{letter: text} of the option list an output writes out itself ("A) 1.0 m/s  B) 2.0 m/s  C) ...",
    one option a line, or "(A) ... (B) ..."): the first run of three or more markers lettered A, B, C, ...
    in order; {} when there is none."""
    if not isinstance(text, str):
        return {}
    body = prepare(text)
    run = []
    for m in _OPTION_MARK.finditer(body):
        want = chr(ord("A") + len(run))
        if m.group(1) == want:
            run.append(m)
        elif len(run) >= 3:
            break
        else:
            run = [m] if m.group(1) == "A" else []
    if len(run) < 3:
        return {}
    out = {}
    for i, m in enumerate(run):
        stop = run[i + 1].start() if i + 1 < len(run) else body.find("\n", m.end())
        out[m.group(1)] = body[m.end():stop if stop >= 0 else len(body)].strip()
    return out


def read_letters(text, valid: str = "ABCD") -> LetterReading:
    """The option letters a raw output commits to (see read_answer for what "commits" means): the
    last statement of a letter; refused when the statements before it flip back and forth
    ("(C)/(B)/(C)/(D)", a loop of "Answer: (C)", "Answer: (B)", ...)."""
    if not isinstance(text, str):
        return LetterReading((), None, None)
    body = prepare(text)
    st = statements(body)
    r = _read(body, st)
    cands = []  # (position, letters, option text)
    listed = set()  # positions of statements that list the options instead of choosing one
    strong = []  # (start, end, letters) of the committed statements: tag, box, answer sentence
    hedged = set()  # positions of statements whose letters are joined by "or" (alternatives)
    for s0, e, ans, _src in st:
        if _lists_options(ans):
            listed.add(e)
            named = set(re.findall(r"\(([A-H])\)", ans)) | set(re.findall(r"(?m)^\s?([A-H])[.)]", ans))
            cands.append((e, sorted(named), None))
            continue
        got, opt = _letters_of(ans, valid)
        if got and opt is None and _src in ("box", "tag") and len(got) == 1:
            # "\\boxed{B} 12 m": a value written right after the boxed letter, on its line, is written with it
            after = re.split(r"\n|(?<=[^\d\s])\.(?:\s|$)|[.!?]\s", body[e:e + 120])[0]
            after = re.sub(r"^[\s$}]*(?:[-–—:,]\s?)?", "", after).strip(" .")
            if re.match(r"\(?[-+]?\.?\d", after) and len(after) <= 60:
                opt = after
        if got:
            cands.append((e, got, opt))
            strong.append((s0, e, "".join(sorted(set(got)))))
            if _OR_JOINED.search(ans):
                hedged.add(e)
    if r.answer and r.source == "correction":
        got, opt = _letters_of(r.answer, valid)
        if got:
            cands.append((r.end, got, opt))
            if _OR_JOINED.search(r.answer):
                hedged.add(r.end)
    for k, rx in enumerate(_LETTER_STATEMENTS):
        for m in rx.finditer(body):
            got = letters_in(m.group(1), valid) or (re.findall(r"[A-H]", m.group(1)) if "/" in m.group(1) else None)
            if got:
                opt = None
                if len(got) == 1 and m.end() == m.end(1):
                    # "The correct answer is (C) <text>": the text written with the letter, to its sentence end
                    after = body[m.end():m.end() + 400]
                    opt = after[:_sentence_end(after, 0)].strip(" .:)\n") or None
                cands.append((m.end(), got, opt))
                if _OR_JOINED.search(m.group(1)):
                    hedged.add(m.end())
                if k in _CONCLUDING:  # "the correct answer is (C)", "Hence (C)": committed statements too
                    strong.append((m.start(), m.end(), "".join(sorted(set(got)))))
    # a letter alone on its line is a statement of it ("B\n\nC" names two)
    for m in _BARE_LINE.finditer(body):
        if m.group(1) in valid:
            strong.append((m.start(), m.end(), m.group(1)))
    strong.sort(key=lambda x: x[0])
    lines = [ln for ln in body.strip().splitlines() if ln.strip()]
    if not cands and re.fullmatch(r"\s?[a-h]\s?", body):
        cands.append((len(body), [body.strip().upper()], None))  # the whole output is one lowercase letter
    if not cands and lines:
        last = lines[-1].strip()
        if len(re.findall(r"(?m)^\s?\(?[A-H]\)?[.:)]\s", body)) >= 2 and re.match(r"\(?[A-H]\)?[.:)]\s", last):
            # "A: incorrect because ...\nB: incorrect ...\nC: this is": the options discussed one by one
            return LetterReading((), "the options are discussed one by one, none is chosen", None)
        bare = [ln.strip() for ln in lines if re.fullmatch(r"\s?\**\(?[A-H]\)?[.)]?\**\s?", ln)]
        if len(bare) == 1 and bare[0] == lines[0].strip() and re.fullmatch(
                r"(?i)(?:the\s)?(?:final\s)?answer(?:\sis)?\s?:?|explanation\s?:?|[^A-Z\n].*|[A-Z][a-z].*", last):
            # "B\n\nExplanation: ..." / "B\n\nThe answer is:": the letter given alone on the first line
            first = [bare[0].strip("*().")]
            rest = body.strip()[len(lines[0].strip()):].strip()
            if re.search(r"(?<![A-Za-z'’])\(?(?!" + first[0] + r")[A-H]\)?(?![A-Za-z'’])", rest):
                # "B\n\nMaybe C.": another option named after it (an article "A ball" also blocks: no reading)
                return LetterReading(tuple(first), "another option is named after the letter", None)
            if not any(_letters_of(ln.strip(), valid)[0] for ln in lines[1:]):
                return LetterReading(tuple(first), None, None, rest)
        got, opt = _letters_of(last, valid)
        if got is None and "/" in last and re.fullmatch(r"[()A-H/\s]+", last):
            got = re.findall(r"[A-H]", last)
        if got:
            cands.append((len(body), got, opt))
            if _OR_JOINED.search(last):
                hedged.add(len(body))
    if not cands:
        return LetterReading((), r.refused, r.answer)
    cands.sort(key=lambda c: c[0])
    pos, got, opt = cands[-1]
    if pos in listed:
        return LetterReading(tuple(got), "the options are listed, none is chosen", None)
    if pos in hedged and len(set(got)) > 1:
        return LetterReading(tuple(got), "letters joined by 'or' are alternatives, not a set", opt)
    if r.refused and r.end >= pos:
        return LetterReading(tuple(got), r.refused, opt)
    if opt and re.search(r"\b(?:or|alternatively|otherwise|maybe|perhaps|possibly|either)\b,?[\s*_$]{0,6}(?:option\s?)?"
                         r"\(?[A-H]\)?(?![A-Za-z])", opt):
        return LetterReading(tuple(got), "another option is named beside the answer", opt)
    m = _ALTERNATIVE_AFTER.search(body, pos)
    if m and re.search(r"(?<![A-Za-z])\(?[A-H]\)?(?![A-Za-z])", body[m.end():m.end() + 40]):
        return LetterReading(tuple(got), "another option is named after the answer", opt)
    # a value of the chosen letter offered as an alternative right after it ("**(B)** or **(C)**",
    # "Option B is correct, though option C might be")
    if re.match(r"[\s*_$)\]}.]{0,6},?\s?(?:or|maybe|perhaps|possibly|alternatively|though|but|and/or)\b[^.\n]{0,40}?"
                r"(?<![A-Za-z'’])\(?[A-H]\)?(?![A-Za-z'’])", body[pos:pos + 60]):
        return LetterReading(tuple(got), "another option is named after the answer", opt)
    # two committed letter statements that disagree, with no correction cue between them: the output
    # never commits to one letter ("Answer: A ... Answer: B ... Answer: A", a loop; "B\n\nC"), as for values
    final = "".join(sorted(set(got)))
    other = [(s0, e0) for s0, e0, l0 in strong if l0 != final]
    if other:
        cues = sorted(m.start() for rx in (CORRECTION, FINALLY) for m in rx.finditer(body))
        for s0, e0 in other:
            # the text between the two statements, from the start of the earlier one ("The answer is (C) - wait,
            # no, (B).": the cue inside it corrects it)
            lo, hi = (s0, pos) if e0 <= pos else (pos, s0)
            k = bisect.bisect_left(cues, lo)
            if not (k < len(cues) and cues[k] < hi):
                return LetterReading(tuple(got), "two committed answers name different letters", opt)
    seq = ["".join(sorted(set(c[1]))) for c in cands]
    tail = [x for i, x in enumerate(seq) if i == 0 or cands[i][0] != cands[i - 1][0]][-6:]
    # a loop: three or more changes of letter among the last statements (C, B, C, D); one change back
    # and forth (B, then C considered, then B again) is a model settling, and reads B
    if sum(tail[i] != tail[i + 1] for i in range(len(tail) - 1)) >= 3:
        return LetterReading(tuple(got), "alternating answers (a loop that never commits to one)", opt)
    if len(set(got)) > 1 and re.search(r"\(?[A-H]\)?\s?/\s?\(?[A-H]", body[-300:]):
        return LetterReading(tuple(got), "letters separated by slashes are alternatives", opt)
    # the closing words after the chosen letter ("Answer: C. The kinetic energy is doubled."): the
    # checker compares them with the options' texts
    tail = body[pos:].strip()
    return LetterReading(tuple(got), None, opt, tail if 0 < len(tail) <= 300 else None)


def extract_letters(text, multi: bool = False, valid: str = "ABCD"):
    """MCQ letters from raw output.  multi -> frozenset (possibly empty); else str or None."""
    r = read_letters(text, valid)
    if r.refused or not r.letters:
        return frozenset() if multi else None
    if multi:
        return frozenset(r.letters)
    return r.letters[0] if len(set(r.letters)) == 1 else None


# ------------------------------------------------------------------------------------ number words

_WORDNUM = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_WORDNUM.update({w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())})
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9, "trillion": 10 ** 12}
NUMBER_WORD = re.compile(r"\b(?:" + "|".join(list(_WORDNUM) + list(_SCALES)) + r")\b", re.I)
_DIGIT_WORDS = "zero|one|two|three|four|five|six|seven|eight|nine"
_NUMBER_WORDS = re.compile(r"\b(?:" + "|".join(list(_WORDNUM) + list(_SCALES)) + r")(?:(?:[ -]|\band\b ?)(?:"
                           + "|".join(list(_WORDNUM) + list(_SCALES)) + r")){0,8}+\b"
                           r"(?: point(?: (?:" + _DIGIT_WORDS + r")\b){1,8}+| and a (?:half|quarter)\b)?", re.I)
_FRACTION_WORDS = {"half": 0.5, "quarter": 0.25, "third": 1 / 3, "quarters": 0.25, "thirds": 1 / 3, "halves": 0.5}
# "one tenth", "three fifths", "a hundredth": ordinals as denominators ("second" is left out: "one second")
for _k, _w in enumerate("fourth fifth sixth seventh eighth ninth tenth".split(), 4):
    _FRACTION_WORDS[_w], _FRACTION_WORDS[_w + "s"] = 1 / _k, 1 / _k
for _w, _d in (("hundredth", 100), ("thousandth", 1000)):
    _FRACTION_WORDS[_w], _FRACTION_WORDS[_w + "s"] = 1 / _d, 1 / _d
_NUMERATORS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_FRACTION_ALT = "|".join(sorted(_FRACTION_WORDS, key=len, reverse=True))
_NUMERATOR_ALT = "|".join(_NUMERATORS)
# "a quarter (of an ampere)", "one half", "three quarters", "two thirds", "half a second": a fraction is
# a value only in these forms ("half the distance" is no number)
_FRACTION_PHRASE = re.compile(r"\b(?:(?<!and )(" + _NUMERATOR_ALT + r")[\s-](" + _FRACTION_ALT + r")\b(?:\sof\s(?:an?\s)?)?"
                              r"|half\s(?:of\s)?an?\b\s?)", re.I)
NUMBER_WORD = re.compile(NUMBER_WORD.pattern + r"|\b(?:" + _NUMERATOR_ALT + r")[\s-](?:" + _FRACTION_ALT + r")\b"
                         r"|\bhalf\s(?:of\s)?an?\b", re.I)


def number_words(a: str) -> str:
    """"twenty-five m/s" -> "25 m/s", "one thousand two hundred J" -> "1200 J", "nine point eight" -> 9.8,
    "one and a half seconds" -> 1.5 s, "a quarter of an ampere" -> 0.25 ampere, "half a second" -> 0.5 second
    (only in an answer with no digit)."""
    def value(m):
        total, cur, dec = 0, 0, None
        words = re.findall(r"[a-z]+", m.group().lower())
        for i, w in enumerate(words):
            if dec is not None:
                dec += str(_WORDNUM[w])
            elif w == "point":
                dec = ""
            elif w in ("half", "quarter"):
                cur += 0.5 if w == "half" else 0.25
            elif w in _WORDNUM:
                cur += _WORDNUM[w]
            elif w == "hundred":
                cur = max(cur, 1) * 100
            elif w in _SCALES:
                total += max(cur, 1) * _SCALES[w]
                cur = 0
        n = total + cur
        return f"{int(n)}.{dec}" if dec else f"{n:g}"

    def fraction(m):
        if m.group(2) is None:
            return "0.5 "  # "half a second"
        k = _NUMERATORS[m.group(1).lower()]
        f = _FRACTION_WORDS[m.group(2).lower()]
        if k > 1 and not m.group(2).lower().endswith("s") or k == 1 and m.group(2).lower().endswith("s"):
            return m.group()  # "two quarter", "a quarters": no fraction
        return f"{k * f:.6g} "
    return _NUMBER_WORDS.sub(value, _FRACTION_PHRASE.sub(fraction, a))


# ------------------------------------------------------------------------------ notations with digits
# the table of number notations written with digits that the numeric reader rewrites to plain numbers
# before it reads the answer (number words without digits are number_words above; unicode fractions and
# "1 1/2" are verifiers.answer._fractions / _norm):
#   "5 thousand", "2.5 million J"               a digit number times its scale word
#   "1.2 times 10 to the power -3", "1.2 x ten to the minus three", "10 to the power of 8"   spoken powers
#   "2\\frac{1}{4}", "2\\tfrac14", "2 and 1/4"   mixed numbers (a whole number and a proper fraction)
#   "3!", "5 !"                                  the factorial of a whole number up to 20
_DIGITS_SCALE = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)\s(hundred|thousand|million|billion|trillion)\b(?!-)", re.I)
_POWER_WORD = r"(?:10|ten)\s(?:to\s(?:the\s)?(?:power\s(?:of\s)?)?|raised\sto\s(?:the\s)?(?:power\s(?:of\s)?)?)" \
    r"(minus\s|negative\s|plus\s|[-+\u2212]\s?)?(\d{1,3}|" + _DIGIT_WORDS + r"|ten|eleven|twelve)\b(?:st|nd|rd|th)?(?:\spower)?"
_SPOKEN_POWER = re.compile(r"(?<![\w.])(?:(\d+(?:\.\d+)?)\s?(?:times|x|\*|\u00d7)\s)?" + _POWER_WORD + r"(?![\w.^])", re.I)
_MIXED_LATEX = re.compile(r"(?<![\w.^_\\])(?<!\^\{)(?<!_\{)([-+]?\d+)\s?\\[dt]?frac\s?(?:\{\s?(\d+)\s?\}\s?\{\s?(\d+)\s?\}|(\d)(\d)(?!\d))")
_MIXED_AND = re.compile(r"(?<![\w.,/])(\d+)\sand\s(\d+)\s?/\s?(\d+)(?![\w.,/])")
_FACTORIAL = re.compile(r"(?<![\w.])(\d{1,2})\s?!(?![=!\w])")


def _proper(whole: str, p: str, q: str, m) -> str:
    p, q = int(p), int(q)
    if not 0 < p < q:
        return m.group()  # "2\\frac{5}{4}" is no mixed number (a product to some), left as written
    w = int(whole)
    return f"{(abs(w) + p / q) * (-1 if whole.startswith('-') else 1):.12g}"


def digit_notations(a: str) -> str:
    """The notations of the table above rewritten as plain numbers ("5 thousand J" -> "5000 J",
    "1.2 times 10 to the power -3 A" -> "1.2e-3 A", "2\\frac{1}{4} m" -> "2.25 m", "3!" -> "6")."""
    if not re.search(r"\d", a):
        return a
    a = _DIGITS_SCALE.sub(lambda m: f"{float(m.group(1)) * _SCALES[m.group(2).lower()]:.12g}", a)

    def power(m):
        sign = m.group(2) or ""
        e = m.group(3).lower()
        e = int(e) if e.isdigit() else (_WORDNUM[e] if e in _WORDNUM else None)
        if e is None:
            return m.group()
        neg = sign.strip().lower() in ("minus", "negative", "-", "\u2212")
        return f"{m.group(1) or 1}e{'-' if neg else ''}{e}"
    if re.search(r"(?i)\b(?:10|ten)\s(?:to|raised)\b", a):
        a = _SPOKEN_POWER.sub(power, a)
    if "frac" in a:
        a = _MIXED_LATEX.sub(lambda m: _proper(m.group(1), m.group(2) or m.group(4), m.group(3) or m.group(5), m), a)
    if " and " in a:
        a = _MIXED_AND.sub(lambda m: _proper(m.group(1), m.group(2), m.group(3), m), a)
    if "!" in a:
        a = _FACTORIAL.sub(lambda m: str(math.factorial(int(m.group(1)))) if int(m.group(1)) <= 20 else m.group(), a)
    return a
