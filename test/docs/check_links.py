#!/usr/bin/env python3
"""Checks that every relative markdown link of README.md and docs/*.md (docs/results/*.md too)
resolves: the file or folder it names exists, and its #anchor is a heading of that file (GitHub's
anchors: lower case, punctuation dropped, spaces as '-', '-1', '-2' for repeats). Links inside
code blocks and inline code are not links. Exit status 1, naming each broken link, if any is.
Usage: test/docs/check_links.py [FILE.md ...]   (default: README.md docs/*.md docs/results/*.md)"""
import glob
import os
import re
import sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def anchors(path):
    seen, out, fence = {}, set(), False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
            continue
        m = None if fence else re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', m.group(2))  # links: their text
        slug = re.sub(r'[^\w\- ]', '', text.lower().replace('`', '')).replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else '%s-%d' % (slug, n))
    for m in re.finditer(r'<a (?:name|id)="([^"]+)"', open(path, encoding='utf-8').read()):
        out.add(m.group(1))
    return out


def links(path):
    fence = False
    for number, line in enumerate(open(path, encoding='utf-8'), 1):
        if line.startswith('```'):
            fence = not fence
            continue
        if fence or line.startswith('    '):
            continue
        line = re.sub(r'`[^`]*`', '', line)
        for m in re.finditer(r'\]\(([^)\s]+)\)', line):
            yield number, m.group(1)


def main(files):
    bad = 0
    cache = {}
    for f in files:
        path = os.path.join(root, f)
        for number, target in links(path):
            if re.match(r'^[a-z]+:', target):
                continue  # http:, https:, mailto:
            file_part, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                print('%s:%d: %s: no such file' % (f, number, target))
                bad += 1
                continue
            if anchor and dest.endswith('.md'):
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if anchor not in cache[dest]:
                    print('%s:%d: %s: no heading with the anchor #%s in %s' %
                          (f, number, target, anchor, os.path.relpath(dest, root)))
                    bad += 1
    print('links: %d files checked, %d broken' % (len(files), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    os.chdir(root)
    files = sys.argv[1:] or (['README.md'] + sorted(glob.glob('docs/*.md')) +
                             sorted(glob.glob('docs/results/*.md')))
    sys.exit(main(files))
