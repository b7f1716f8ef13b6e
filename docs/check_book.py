#!/usr/bin/env python3
"""Checks the built book (`mdbook build docs`): every relative link and image of every page leads to a file of
the book, and every `#anchor` to an element with that id, so the book holds what it links to (issue 62).

usage: python3 docs/check_book.py [docs/book]     # exit 1 naming each broken link
"""
import html.parser
import os
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for name in ("href", "src"):
            if attrs.get(name) is not None:
                self.links.append(attrs[name])


def parse(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    return page


def main():
    book = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "book"))
    pages, broken, checked = {}, [], 0
    for root, _, files in os.walk(book):
        for name in files:
            if name.endswith(".html"):
                pages[os.path.join(root, name)] = None
    for path in sorted(pages):
        for link in parse(path).links:
            url = urllib.parse.urlparse(link)
            # Another site, or a path from the root of wherever the book is served (mdBook's 404 page).
            if url.scheme or url.netloc or link.startswith(("mailto:", "javascript:", "/")):
                continue
            checked += 1
            target = os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(url.path))) \
                if url.path else path
            where = f"{os.path.relpath(path, book)}: {link}"
            if not target.startswith(book + os.sep) and target != book:
                broken.append(f"{where}: leaves the book")
            elif os.path.isdir(target):
                if not os.path.exists(os.path.join(target, "index.html")):
                    broken.append(f"{where}: a directory without index.html")
            elif not os.path.exists(target):
                broken.append(f"{where}: no such file in the book")
            elif url.fragment and target.endswith(".html"):
                if pages.get(target) is None:
                    pages[target] = parse(target)
                if url.fragment not in pages[target].ids:
                    broken.append(f"{where}: no element with id `{url.fragment}` there")
    for b in broken:
        print(b)
    print(f"{checked} links of {len(pages)} pages checked, {len(broken)} broken", file=sys.stderr)
    return 1 if broken or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
