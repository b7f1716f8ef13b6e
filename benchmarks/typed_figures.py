"""Finds the measured figures typed by hand into the guide, the READMEs and rigs.toml's comments (issue 81).

A figure is a number with a unit of measure: a time (`7.8 ms`), a share (`93%`), a rate (`8,516/s`), a size
(`151 MB`), a ratio (`x0.892`, `1.23x`) or an approximation (`~130,000`). Outside a generated span
(`<!-- fig:NAME -->`), a code span or block and a comment, each must be one of two things a comment declares:

- given, a figure nobody measured: a parameter, a threshold, a worked example, a seed's published number.
  `<!-- given: ±3% (the default threshold); 250 ms (a window) -->` names each with why, in parentheses.
- past, a measurement of one dated run, told as what it read then and not generated again:
  `<!-- past: 2026-12-05 (why) -->` makes every figure of its paragraph (a list item, a table row) such a
  measurement; alone in a paragraph of its own, every figure of its section and the sections below it (a log).
  The date must be in the text it covers, so that a reader sees when it was measured.

Anything else is a measurement of today's results, which a figure span generates, or the check names it.
"""
import re

# A number with a unit, or a ratio or approximation with a number. The unit must end the token, so that `3 s` and
# `10%` are figures and `5 samples`, `issue 81` and `x86` (an architecture) are not.
FIGURE = re.compile(
    r"(?<![\w.+/-])(?:[~±x]\s?|[+-])?(?:\d[\d,]*(?:\.\d+)?-)?\d[\d,]*(?:\.\d+)?"
    r"(?:\s?(?:%|ns|µs|us|ms|s|min|/s|KB|MB|GB|KiB|MiB|GiB)|x| times)(?![\w/])"
    r"|(?<![\w.+/-])(?:~\s?|x(?!86\b|64\b))\d[\d,]*(?:\.\d+)?(?![\w])")
SPAN = re.compile(r"<!-- fig:[^ ]+ -->.*?<!-- /fig -->", re.S)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"(`+)[^`].*?\1", re.S)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
COMMENT = re.compile(r"<!--(.*?)-->", re.S)
HEADING = re.compile(r"^(#{1,6}) ", re.M)
GIVEN = re.compile(r"\s*given:(.*)", re.S)
PAST = re.compile(r"\s*past: (\d{4}-\d{2}-\d{2}) \((.+)\)\s*$", re.S)
GIVEN_ITEM = re.compile(r"\s*(.+?)\s+\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*$", re.S)


def blank(m):
    """The match replaced by spaces, its newlines kept, so that offsets and line numbers stay."""
    return re.sub(r"[^\n]", " ", m.group(0))


def bare(figure):
    """A figure as a given names it: without a `±`, spaces folded."""
    return " ".join(figure.lstrip("±").split())


def sections(text):
    """(start, end, level) of each section: the text before the first heading, then each heading's to the next
    heading of any level."""
    starts = [(m.start(), len(m.group(1))) for m in HEADING.finditer(FENCE.sub(blank, text))]
    bounds = [(0, 0)] + starts
    return [(start, bounds[i + 1][0] if i + 1 < len(bounds) else len(text), level)
            for i, (start, level) in enumerate(bounds)]


def paragraphs(text):
    """(start, end) of each paragraph: a run of non-blank lines, each heading, list item and table row on its own."""
    blocks, start = [], None
    offset = 0
    for line in text.split("\n"):
        end = offset + len(line) + 1
        item = re.match(r"\s*(?:[-*] |\d+\. |\||#{1,6} )", line)
        if not line.strip() or item:
            if start is not None:
                blocks.append((start, offset))
            start = offset if line.strip() else None
            if line.startswith("#"):
                blocks.append((offset, end))
                start = None
        elif start is None:
            start = offset
        offset = end
    if start is not None:
        blocks.append((start, offset))
    return blocks


def declarations(text, path):
    """Each section's given figures, the spans of text declared past, and the problems of the comments themselves
    (a given without its why, a past whose date the text it covers does not show)."""
    problems, given, past = [], [], []
    parts, blocks = sections(text), paragraphs(text)
    outside_code = CODE.sub(blank, FENCE.sub(blank, text))  # a comment shown as code declares nothing
    for start, end, level in parts:
        names = {}
        for m in COMMENT.finditer(outside_code, start, end):
            line = text.count("\n", 0, m.start()) + 1
            if g := GIVEN.match(m.group(1)):
                for item in g.group(1).split(";"):
                    if not item.strip():
                        continue
                    if i := GIVEN_ITEM.match(item):
                        names[bare(i.group(1))] = line
                    else:
                        problems.append(f"{path}:{line}: given `{item.strip()}` says no why: `FIGURE (why)`")
            elif m.group(1).strip().startswith("past"):
                scope = next(b for b in blocks if b[0] <= m.start() < b[1])
                if not COMMENT.sub("", text[scope[0]:scope[1]]).strip():
                    # A comment alone in its paragraph: the section and the sections below it, a log.
                    scope = (start, next((s for s, _, lvl in parts if s > start and 0 < lvl <= level), len(text)))
                p = PAST.match(m.group(1))
                if not p:
                    problems.append(f"{path}:{line}: a past paragraph is `<!-- past: YYYY-MM-DD (why) -->`")
                elif p.group(1) not in COMMENT.sub("", text[scope[0]:scope[1]]):
                    problems.append(f"{path}:{line}: past {p.group(1)}: the text it covers does not say that date")
                else:
                    past.append(scope)
        given.append(names)
    return parts, given, past, problems


def claims_a_file(text, at, files):
    """Whether the sentence around offset `at` says what one of `files` (committed results) holds: told of the
    past, such a sentence is still a claim on today's file (issue 81: "`results/kafka_topology.jsonl` holds x0.892"
    where the file held x0.9612)."""
    bounds = (". ", "\n\n", " | ")
    begin = max([text.rfind(b, 0, at) for b in bounds] + [0])
    end = min((i for i in (text.find(b, at) for b in bounds) if i >= 0), default=len(text))
    sentence = text[begin:end]
    return any(re.search(re.escape(name) + r"[`)]*\s+(?:now\s+|still\s+)?holds?\b", sentence) for name in files)


def typed(text, path, declare="<!-- given: {} (why) -->", files=()):
    """Each figure of `text` (the file `path`) that nothing generates or declares, and each declaration that
    declares nothing, as `path:line: ...` problems; `declare` is how the file declares a given, `files` the
    names of the committed results a sentence may claim to hold a figure."""
    parts, given, past, problems = declarations(text, path)
    masked = text
    for pattern in (SPAN, FENCE, COMMENT, CODE, LINK_TARGET):
        masked = pattern.sub(blank, masked)
    used = [set() for _ in parts]
    for m in FIGURE.finditer(masked):
        at = next(i for i, (start, end, _) in enumerate(parts) if start <= m.start() < end)
        figure = bare(m.group(0))
        if figure in given[at]:
            used[at].add(figure)
            continue
        if any(start <= m.start() < end for start, end in past):
            if not claims_a_file(COMMENT.sub(blank, text), m.start(), files):
                continue
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{path}:{line}: `{m.group(0).strip()}`: a past figure in a sentence on what a committed "
                            f"file holds today: generate it from that file (a figure span)")
            continue
        line = text.count("\n", 0, m.start()) + 1
        problems.append(f"{path}:{line}: `{m.group(0).strip()}` is typed by hand: generate it from results/ (a figure "
                        f"span), or declare it in its section's `{declare.format(figure)}`")
    for names, seen in zip(given, used):
        for name, line in names.items():
            if name not in seen:
                problems.append(f"{path}:{line}: given `{name}` is not in its section's text")
    return problems
