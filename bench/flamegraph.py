#!/usr/bin/env python3
"""A flame graph (SVG) and folded stacks from `perf script -F comm,ip,sym` output.

  perf script -i perf.data -F comm,ip,sym | bench/flamegraph.py --title T --svg out.svg \
      --folded out.folded [--comm postgres]

Each sample's stack, root first, is one line of the folded file ("a;b;c count"), the format
Brendan Gregg's flamegraph.pl reads; the SVG draws them: width is the share of samples, the root
at the bottom. Only samples of processes whose name starts with --comm are kept.
"""
import argparse
import collections
import html
import sys


def read_samples(stream, comm_prefix):
    stack, comm = None, None
    for line in stream:
        if not line.strip():
            if stack and comm is not None and comm.startswith(comm_prefix):
                yield stack
            stack, comm = None, None
            continue
        if not line.startswith((" ", "\t")):
            comm, stack = line.split()[0], []
            continue
        parts = line.strip().split(None, 1)
        name = parts[1] if len(parts) > 1 else parts[0]
        # Argument lists make names unreadable at any width: cut at the first '(' that is not
        # an anonymous namespace's.
        name = name.replace("(anonymous namespace)::", "").replace("gpu_routing::", "")
        name = name.split("(")[0] if not name.startswith("(") else name
        name = name.replace(";", ",")
        stack.append(name)
    if stack and comm is not None and comm.startswith(comm_prefix):
        yield stack


def build_tree(folded):
    root = {"name": "all", "count": 0, "children": {}}
    for stack, count in folded.items():
        node = root
        node["count"] += count
        for name in stack:
            node = node["children"].setdefault(name, {"name": name, "count": 0, "children": {}})
            node["count"] += count
    return root


def color(name):
    if "::" in name or name.startswith(("Cch", "RoutingCall", "pg::", "kept::")):
        return "rgb(230,140,60)"  # ours
    if name.startswith(("[k]", "entry_", "do_", "__x64", "__sys", "sys_")) or name.islower():
        return "rgb(200,200,90)"
    return "rgb(220,90,70)"


def write_svg(root, title, path, width=1200, row=16):
    rows = []

    def walk(node, depth, x):
        rows.append((node, depth, x))
        for child in sorted(node["children"].values(), key=lambda c: c["name"]):
            walk(child, depth + 1, x)
            x += child["count"]

    walk(root, 0, 0)
    depth_max = max(d for _, d, _ in rows)
    height = (depth_max + 3) * row
    total = max(1, root["count"])
    scale = (width - 20) / total
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="monospace" font-size="11">',
        f'<text x="10" y="14">{html.escape(title)} ({total} samples)</text>',
    ]
    for node, depth, x in rows:
        w = node["count"] * scale
        if w < 0.5:
            continue
        y = height - (depth + 1) * row
        share = 100.0 * node["count"] / total
        label = f'{node["name"]} ({share:.1f}%)'
        out.append(
            f'<g><title>{html.escape(label)}</title><rect x="{10 + x * scale:.1f}" y="{y}" '
            f'width="{w:.1f}" height="{row - 1}" fill="{color(node["name"])}"/>'
        )
        chars = int(w / 7)
        if chars >= 4:
            text = label if len(label) <= chars else label[: chars - 2] + ".."
            out.append(f'<text x="{12 + x * scale:.1f}" y="{y + row - 4}">{html.escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--title", default="flame graph")
    parser.add_argument("--svg", required=True)
    parser.add_argument("--folded")
    parser.add_argument("--comm", default="postgres")
    args = parser.parse_args()
    folded = collections.Counter()
    for stack in read_samples(sys.stdin, args.comm):
        folded[tuple(reversed(stack))] += 1
    if not folded:
        sys.exit("flamegraph.py: no samples of processes named " + args.comm)
    if args.folded:
        with open(args.folded, "w") as f:
            for stack, count in sorted(folded.items(), key=lambda kv: -kv[1]):
                f.write(";".join(stack) + f" {count}\n")
    write_svg(build_tree(folded), args.title, args.svg)


if __name__ == "__main__":
    main()
