#!/usr/bin/env python3
"""An mdBook preprocessor: the guide's links are written for the repository, this makes them hold in the book.

A page of docs/src links to the reference runs as the repository lays them out (`../../results/querier.jsonl`),
so that they work where the Markdown is read: an editor, a forge. The built book holds only docs/src, plus what
`docs/src/results` (a link to the repository's results/) brings: mdBook copies the data files through it, and
SUMMARY.md makes results/README.md a chapter. So every relative link of every chapter is resolved where its page
really lives in the repository, and pointed at the same file's place in the book: a page of docs/src at itself,
a file of results/ under `results/`, results/README.md at the chapter mdBook made of it (`results/index.md`). A
link that leaves both stays as written, and the built book's link check (`check_book.py`) names it.

Registered in book.toml; mdBook runs it with docs/ as the working directory. `python3 repository_links.py
supports html` answers yes; otherwise it reads [context, book] as JSON on stdin and writes the book.
"""
import json
import os
import re
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(DOCS, "src")
RESULTS = os.path.realpath(os.path.join(SRC, "results"))
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
CODE_SPAN = re.compile(r"`[^`]*`")


def book_place(target):
    """Where the repository's file `target` (an absolute path) is in the book, relative to src; None if nowhere."""
    src = os.path.realpath(SRC)
    for root, prefix in ((src, ""), (RESULTS, "results")):
        if target == root or target.startswith(root + os.sep):
            place = os.path.join(prefix, os.path.relpath(target, root))
            # mdBook's `index` preprocessor makes a README.md chapter the index of its directory.
            return re.sub(r"(^|/)README\.md$", r"\1index.md", place)
    return None


def rewritten(link, page_source, page_path):
    """`link` of the page whose source is `page_source` and whose place in the book is `page_path` (both relative
    to src), pointed at its target's place in the book; unchanged when it is no relative link or has no place."""
    if "://" in link or link.startswith(("#", "mailto:", "/")):
        return link
    file, hash_, anchor = link.partition("#")
    here = os.path.dirname(os.path.realpath(os.path.join(SRC, page_source)))
    place = book_place(os.path.realpath(os.path.join(here, file)))
    if place is None:
        return link
    return os.path.relpath(place, os.path.dirname(page_path) or ".") + hash_ + anchor


def rewrite(content, page_source, page_path):
    out, fenced = [], False
    for line in content.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or "](" not in line:
            out.append(line)
            continue
        # Only the prose: a link written in a code span is text.
        pieces, last = [], 0
        for code in CODE_SPAN.finditer(line):
            pieces.append(LINK.sub(lambda m: m[1] + rewritten(m[2], page_source, page_path) + m[3], line[last:code.start()]))
            pieces.append(code.group(0))
            last = code.end()
        pieces.append(LINK.sub(lambda m: m[1] + rewritten(m[2], page_source, page_path) + m[3], line[last:]))
        out.append("".join(pieces))
    return "\n".join(out)


def chapters(items):
    for item in items:
        if isinstance(item, dict) and "Chapter" in item:
            yield item["Chapter"]
            yield from chapters(item["Chapter"].get("sub_items", []))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "supports":
        return 0
    _, book = json.load(sys.stdin)
    for chapter in chapters(book["items"]):
        if chapter.get("source_path") and chapter.get("path"):
            chapter["content"] = rewrite(chapter["content"], chapter["source_path"], chapter["path"])
    json.dump(book, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
