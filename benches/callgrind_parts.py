#!/usr/bin/env python3
"""Where a proxied read's instructions go, part by part, beside hyper's floor.

Reads two callgrind output files (`valgrind --tool=callgrind`, as `benches/proxy_hop.sh
--callgrind` writes them for `courier serve --threads 1` and for hyper's floor under the same
load), sums each function's own cost (exclusive: what it executes itself, not what it calls),
puts each function in a part by its name (the crate or the work it does), divides by the number
of requests each served, and prints a Markdown table: the part, its instructions per request in
each, the difference and its share of the whole difference.

    python3 benches/callgrind_parts.py COURIER.out REQUESTS FLOOR.out REQUESTS
"""

import re
import sys

# The parts, first match wins: what moves and allocates, then hyper's and tokio's work, then
# each of courier's crates, then what is left of the standard library.
PARTS = [
    ("memcpy (moves of futures and buffers)", r"__mem(cpy|move|set)|memcpy|memmove"),
    ("allocation (mimalloc)", r"^(mi_|_mi_|__mi|__rustc::__rust_(alloc|dealloc|realloc|no_alloc))"),
    (
        "HTTP/1.1 heads parsed (httparse, hyper's parse)",
        r"^httparse|Http1Transaction>::parse|Buffered<T,B>::parse|memchr",
    ),
    (
        "header maps and names (http)",
        r"^http::header|hash_elem_using|StandardHeader|HeaderName|HeaderMap|HeaderValue",
    ),
    ("hyper's connections (dispatch, read, write, encode)", r"hyper::|hyper_util"),
    ("tokio (runtime, I/O readiness, timers, channels)", r"tokio::|mio::"),
    (
        "URIs, extensions, bodies (http, http-body)",
        r"http::uri|http::extensions|http_body|http::request|http::response|http::method",
    ),
    ("axum's routing and extractors", r"axum|matchit"),
    ("courier-server: the proxy route", r"courier_server"),
    ("courier-client: the client, its stack, the pool", r"courier_client"),
    ("courier-layers: coalescing, retry, allow-lists, session, forwarding", r"courier_layers"),
    ("courier-core: the wire, options, the request built", r"courier_core"),
    ("hashing and hash maps", r"hashbrown|core::hash|DefaultHasher|std::hash|siphash"),
    ("bytes", r"bytes::"),
    (
        "the query decoded (form_urlencoded, percent-encoding)",
        r"form_urlencoded|percent_encoding|Utf8Chunks|from_utf8_lossy",
    ),
    ("JSON variables (serde_json and its maps)", r"serde|btree"),
    ("str, Vec, Arc, iterators, drops (core, alloc)", r"core::|alloc::|std::"),
    ("tower", r"tower"),
    ("futures-util", r"futures"),
    ("the rest (libc, system calls)", r".*"),
]


def own_costs(path):
    """Each function's own cost in a callgrind output file."""
    names, costs = {}, {}
    current, after_call = None, False
    name_line = re.compile(r"c?fn=\((\d+)\)(?: (.*))?")
    with open(path) as lines:
        for line in lines:
            if line.startswith(("fn=", "cfn=")):
                found = name_line.match(line.rstrip("\n"))
                if found and found.group(2) is not None:
                    names[found.group(1)] = found.group(2)
                if line.startswith("fn=") and found:
                    current = names.get(found.group(1))
                    after_call = False
            elif line.startswith("calls="):
                # The next cost line is what the call cost, counted in the callee's own.
                after_call = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if after_call:
                    after_call = False
                    continue
                fields = line.split()
                if len(fields) >= 2 and current is not None:
                    costs[current] = costs.get(current, 0) + int(fields[1])
    return costs


def by_part(path, requests):
    parts = {}
    for function, cost in own_costs(path).items():
        name = function.lstrip("<")
        part = next(part for part, pattern in PARTS if re.search(pattern, name))
        parts[part] = parts.get(part, 0) + cost / requests
    return parts


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    courier = by_part(sys.argv[1], int(sys.argv[2]))
    floor = by_part(sys.argv[3], int(sys.argv[4]))
    total_courier, total_floor = sum(courier.values()), sum(floor.values())
    difference = total_courier - total_floor
    print("| part | courier | hyper's floor | difference | share of the difference |")
    print("|---|---|---|---|---|")
    for part, _ in PARTS:
        mine, theirs = courier.get(part, 0), floor.get(part, 0)
        if round(mine) == 0 and round(theirs) == 0:
            continue
        share = 100 * (mine - theirs) / difference if difference else 0
        print(f"| {part} | {mine:,.0f} | {theirs:,.0f} | {mine - theirs:+,.0f} | {share:.0f} % |")
    print(
        f"| total | {total_courier:,.0f} | {total_floor:,.0f} | {difference:+,.0f} | 100 % |"
    )


if __name__ == "__main__":
    main()
