"""Answer extraction from raw model output.  Never raises."""
from __future__ import annotations

import re

MAX_INPUT = 20000

# A span never contains its own opener: scanning from every opener to the end of the text is
# quadratic (9,000 unclosed "\\(" took 3.5 s); stopping at the next opener keeps each regex linear.
_TAG_RE = re.compile(r"<final_answer>((?:(?!<final_answer>).)*?)</final_answer>", re.S | re.I)
_ANSWER_IS_RE = re.compile(
    r"(?:final\s+answer|the\s+answer|answer)\s*(?:is|=|:)\s*:?\s*(.+)", re.I)
_ANSWER_COLON_RE = re.compile(r"\**\s*(?:final\s+)?answer\s*:?\s*\**\s*:?\s*(.+)", re.I)
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


def _clean(ans: str) -> str:
    ans = ans.strip()
    ans = re.sub(r"^\*+|\*+$", "", ans).strip()
    # "\[ \boxed{x} \]" remnants / math delimiters around the whole answer
    for pat in (r"^\\\[(.*)\\\]$", r"^\\\((.*)\\\)$", r"^\$\$(.*)\$\$$", r"^\$(.*)\$$"):
        m = re.match(pat, ans, re.S)
        if m:
            ans = m.group(1).strip()
    ans = ans.rstrip(" .;,")
    return ans.strip()


_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z(\[]|\s*$)|\s+I hope it is correct")


def _unit_like(s: str) -> bool:
    """"km/s", "m s^-1", "kg m^{-3}", "N/C": short letter runs, digits only in exponents, no words."""
    s = s.strip()
    return bool(s) and len(s) <= 20 and re.fullmatch(r"[A-Za-zµΩ°/^*·.\s\-{}\d]+", s) is not None and \
        all(len(w) <= 3 for w in re.findall(r"[A-Za-z]+", s)) and \
        not re.search(r"(?<![\^\-{*])\b\d", s) and \
        not re.search(r"\b(?:in|at|on|of|for|to|the|an|and|or|is|as|by|per|so|it|ie|eg|not|est|ca)\b", s, re.I)


def _answer_sentence(s: str) -> str:
    """The answer part of "... answer is <X>. I hope it is correct." (Minerva's format) or of
    "The volume of $V$ is 120." : cut at the end of the sentence (outside $...$), then keep what
    follows the last " is " / "=", then the math span if the rest is one."""
    for m in _SENTENCE_END.finditer(s):
        if s[:m.start()].count("$") % 2 == 0:
            s = s[:m.start()]
            break
    outside = re.sub(r"\$[^$]*\$", lambda m: "#" * len(m.group()), s)
    cut = max(outside.rfind(" is "), outside.rfind("="))
    prev = max(outside.rfind(" is ", 0, max(cut, 0)), outside.rfind("=", 0, max(cut, 0)))
    if cut > 0 and prev >= 0 and outside[cut] == "=" and re.search(
            r"\d[^,;=]{0,30}(?:[,;]\s*(?:or\s+|and\s+)?|\s(?:or|and)\s+)[A-Za-z\\][\w{}\\']{0,20}\s*$", outside[prev:cut]):
        cut = -1  # "v1 = 25 m/s, v2 = 30 m/s": two values, kept whole (and refused), not the last one
    if cut >= 0 and s[cut:].strip(" =is"):
        s = s[cut:].lstrip("=").strip()
        s = s[3:] if s.startswith("is ") else s
    outside = re.sub(r"\$[^$]*\$", lambda m: "#" * len(m.group()), s)
    m = re.search(r",\s+(?:which|since|because|as|so|i\.e\.|that|where|and|but|not)\b", outside)
    if m:  # "the answer is 9, which matches ... about 10 units": the clause is not the answer
        s = s[:m.start()]
    # "6.3 (rounded)", "(i.e. 3/4)" are remarks; "5 m/s (or 50 m/s)" is a hedge and stays (refused later)
    # "5 (km/s)" is a unit and stays too
    s = re.sub(r"\s+\((?![^()]*\b(?:or|either|alternatively|maybe|perhaps|possibly|otherwise)\b[^()]*\d)"
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


_ANSWER_IS = re.compile(r"(?:final\s+answer|the\s+answer|answer)\s*(?:is(?![\w'’])\s*:?|=|:)\s*\**\s*:?\s*", re.I)


def _answer_is(text: str):
    """(position, answer) of the last "answer is / Answer:" statement, or None."""
    pos = 0
    found = None
    for ln in text.splitlines(keepends=True):
        mm = None
        for mm in _ANSWER_IS.finditer(ln):
            pass  # the last "answer is" of the line: "Final Answer: The final answer is $x$."
        if mm:
            cand = _clean(_answer_sentence(ln[mm.end():]))
            if cand:
                found = (pos + mm.start(), cand)
        else:
            mb = re.search(r"\*\*\s*(?:final\s+)?answer\s*:?\s*\*\*\s*:?\s*(.+)", ln, re.I)
            if mb and _clean(mb.group(1)):
                found = (pos + mb.start(), _clean(mb.group(1)))
        pos += len(ln)
    return found


def extract_answer(text):
    """Best-effort final answer string from raw output, or None."""
    if not isinstance(text, str):
        return None
    if len(text) > MAX_INPUT:
        text = text[-MAX_INPUT:]
    text = _CHAT_TURN.sub("\n", text)  # "... is 19. <|im_start|>user": a chat token ends the line
    m = None
    for m in _TAG_RE.finditer(text):
        pass
    if m is not None:
        inner = m.group(1)
        b = extract_boxed(inner)
        return _clean(b if b is not None else inner) or None
    b, b_end = last_boxed(text)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    said = _answer_is(text)
    if said is not None and (b is None or said[0] > b_end):
        # "Final Answer: The final answer is $10,455$." after an intermediate \boxed{255}
        return said[1]
    if b is not None:
        return _clean(b) or None
    # no marker: the last math span, unless a sentence with a number follows it ("... increases
    # by 100%."), then that sentence's answer ("the probability ... is 2/3.")
    spans = []
    for rx in (_BOLD_RE, _DISPLAY_RE, _PAREN_RE, _DOLLAR_RE):
        for m in rx.finditer(text):
            spans.append((m.end(), next(g for g in m.groups() if g is not None)))
    last_end, last_span = max(spans, key=lambda t: t[0]) if spans else (0, None)
    tail = _tail_sentence(text[last_end:])
    if tail and re.search(r"\d", tail):
        return _clean(tail) or None
    if last_span is not None:
        return _clean(last_span) or None
    return _clean(lines[-1]) if lines else None


_CHAT_TOKEN = re.compile(r"<\|[a-z_]+\|>.*", re.S)
_CHAT_TURN = re.compile(r"<\|[a-z_]+\|>(?:user|assistant|system)?")


def _tail_sentence(text: str) -> str | None:
    """The answer part of the last sentence that is not a courtesy ("I hope it is correct")."""
    text = _CHAT_TOKEN.sub("", text).strip()
    rest = _PAREN_RE.sub(" ", _DOLLAR_RE.sub(" ", text))
    if re.search(r"(?<!\\)\$|\\\(|\\\)", rest):
        return None  # a math span that is unclosed or runs over lines ("Answer $ \n 9 \n $"), as math-verify
    sentences = [x for x in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if x.strip()]
    for sent in reversed(sentences):
        if re.search(r"\bhope\b|\blet me know\b|\bthank", sent, re.I):
            continue
        return _answer_sentence(sent)
    return None


_SEP = r"(?:\s*(?:,|&|\band\b|\bor\b)\s*|\s+)"  # one reading of each separator: no backtracking blow-up
_LETTERS = r"\(?([A-Z]\)?(?:" + _SEP + r"\(?[A-Z]\)?)*)\)?(?![A-Za-z])"
_LETTERS_TIGHT = r"\(?([A-Z]\)?(?:\s*(?:,|&|\band\b|\bor\b)\s*\(?[A-Z]\)?)*)\)?(?![A-Za-z])"
# "or" is read as part of the list ("The answer is (A) or (B)" is two letters, refused for a
# single-answer question, never A). A bare "option A" / "choice A" is not an answer statement
# ("Consider option A. So we get C." is not A); "option A is correct", "answer: option A", "I choose
# option D" and a closing "... so option D." are.
_LETTER_PATTERNS = [
    r"correct\s+(?:option|answer|choice)s?\s*(?:is|are|:)?\s*:?\s*" + _LETTERS,
    r"answers?\s*(?:is|are|:)?\s*:?\s*(?:(?:therefore|thus|clearly|hence)\s+)?(?:(?:option|choice)s?\s*)?"
    + _LETTERS_TIGHT,
    r"(?:option|choice)s?\s*" + _LETTERS_TIGHT + r"(?=\s+(?:is|are)\s+(?:the\s+)?(?:correct|right|true|answer))",
    r"\b(?:choose|chose|select|pick|mark)\s+(?:(?:option|choice)s?\s*)?" + _LETTERS_TIGHT,
    r"(?:option|choice)s?\s*" + _LETTERS_TIGHT + r"(?=\s*[.!]?\s*$)",  # "... so option D." ends the text
]


def letters_in(s: str, valid: str):
    """The letters (of `valid`) that a short answer names: "ACD", "(A) and (C)", "options B, D"; else None."""
    s = s.strip().strip("*$ .")
    s = re.sub(r"\\(?:text|mathrm|textbf)\{([^}]*)\}", r"\1", s)
    # plain run of letters "ACD"
    if re.fullmatch(r"[A-Z]{1,10}", s) and all(c in valid for c in s):
        return [c for c in s]
    toks = re.findall(r"\(?\b([A-Z])\b\)?", s)
    rest = re.sub(r"\(?\b[A-Z]\b\)?|,|\band\b|&|\s|\.|\bor\b|\bboth\b|\boptions?\b", "", s)
    if toks and not rest and all(t in valid for t in toks):
        return toks
    return None


def extract_letters(text, multi: bool = False, valid: str = "ABCD"):
    """MCQ letters from raw output.  multi -> frozenset (possibly empty); else str or None."""
    empty = frozenset() if multi else None
    if not isinstance(text, str):
        return empty
    text = text[-MAX_INPUT:]
    cands = []
    m = None
    for m in _TAG_RE.finditer(text):
        pass
    if m is not None:
        cands.append(extract_boxed(m.group(1)) or m.group(1))
    b = extract_boxed(text)
    if b is not None:
        cands.append(b)
    for pat in _LETTER_PATTERNS:
        found = list(re.finditer(pat, text, re.I if False else 0))
        if not found:
            found = list(re.finditer(pat.replace("correct\\s", "[Cc]orrect\\s").replace("answers?", "[Aa]nswers?").replace(
                "(?:option|choice)s?", "(?:[Oo]ption|[Cc]hoice)s?"), text))
        if found:
            cands.append(found[-1].group(1))
    a = extract_answer(text)
    if a is not None:
        cands.append(a)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if lines:
        cands.append(lines[-1])
        mm = re.match(r"\s*\(?([A-Z])[).]", lines[-1])
        if mm and len(set(re.findall(r"\(([A-Z])\)", lines[-1]))) <= 1:
            cands.append(mm.group(1))
    for c in cands:
        if not c:
            continue
        got = letters_in(c, valid)
        if got:
            if multi:
                return frozenset(got)
            if len(set(got)) == 1:
                return got[0]
    return empty
