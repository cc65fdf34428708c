#!/bin/sh
# Every relative link in README.md and docs/*.md resolves: the file (or folder) exists and, for a
# link into a Markdown page, its #anchor is one of that page's headings as GitHub spells them.
# Links inside code (fenced blocks, `spans`) and to other sites are not checked. Output is TAP,
# one case a page, a line naming each broken link. Usage: check-doc-links.sh [SOURCE_ROOT]
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
exec python3 - README.md docs/*.md <<'EOF'
import os, re, sys

def strip_code(text):
    """The page without fenced blocks and code spans, line numbers kept."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+)(.+?)\1", "", line))
    return out

def anchors(path, cache={}):
    """GitHub's heading ids: lower case, punctuation but - and _ dropped, spaces to -, repeats -1, -2."""
    if path not in cache:
        seen, ids = {}, set()
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        fence = None
        for line in lines:
            m = re.match(r"\s*(```+|~~~+)", line)
            if fence:
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                    fence = None
                continue
            if m:
                fence = m.group(1)
                continue
            h = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not h:
                continue
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h.group(1))
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            ids.add(slug if n == 0 else "%s-%d" % (slug, n))
        cache[path] = ids
    return cache[path]

link = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
pages = sys.argv[1:]
print("1..%d" % len(pages))
failed = 0
for i, page in enumerate(pages, 1):
    with open(page, encoding="utf-8") as f:
        lines = strip_code(f.read())
    bad = []
    for no, line in enumerate(lines, 1):
        for m in link.finditer(line):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(dest):
                bad.append("%s:%d: %s: no such file" % (page, no, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("%s:%d: %s: no heading #%s in %s" % (page, no, target, anchor, dest))
    for b in bad:
        print("# " + b)
    if bad:
        failed += 1
        print("not ok %d - %s: %d broken links" % (i, page, len(bad)))
    else:
        print("ok %d - %s" % (i, page))
sys.exit(1 if failed else 0)
EOF
