#!/usr/bin/env bash
# The proxy hop, measured as a process: `courier serve` (release; with one worker thread, and
# with its default of one per CPU) beside its peers, each in front of one nginx backend
# answering a small JSON at /users/N:
#
# - nginx (one worker process, and two), as a reverse proxy;
# - a bare hyper-util proxy (benches/bare_hop.rs: hyper's server and pooled client with nothing
#   of courier's, on one thread) and hyper's floor (the same with `--inline`: hyper's HTTP/1.1
#   server and an upstream connection per browser connection, driven in its task);
# - what a team writes instead (benches/peer_hop.rs, benches/peer_hop.mjs): a bare axum +
#   hyper-util pass-through that checks nothing, the backend-for-frontend written by hand on
#   axum + reqwest (`_s/_g/_m/_v` read, `_v` parsed, the upstream called), and the same in Node
#   (`http` + `fetch`).
#
# Loaded with wrk at 64 connections, every request another user's (distinct reads: nothing for
# coalescing to share), each with the headers a browser sends with a `fetch` (user agent,
# `accept-*`, two cookies, referer, `sec-fetch-*`, `sec-ch-ua*`); the calls to courier carry their
# variables as the browser package sends them (`_v={"id":N}`, URL-encoded). Then the same from 64
# signed-in users: each request with one user's session cookie and a request id of its own, and
# courier's source with its session and forwarding on. For each proxy, every round:
# requests per second, p50 and p99, and its CPU time per request (user and system, from
# /proc/PID/stat over the measured 10 s). Then, with `--callgrind`, the instructions per request
# of courier (`--threads 1`) and of the two bare proxies under `valgrind --tool=callgrind`
# (counted after a warm-up, over 15 s of wrk at 8 connections), which do not move with the
# machine's load, and where courier's go beyond the floor's, part by part
# (benches/callgrind_parts.py).
#
#   bash benches/proxy_hop.sh [--callgrind] [ROUNDS]
#   bash benches/proxy_hop.sh --target [ROUNDS]
#
# With `--target`, the proxy hop's targets alone, each against its peer measured just before or
# after it, so that what the machine's neighbours do moves both alike: in each short round, on
# each load, `courier serve --threads 1`, hyper's floor, the axum + hyper-util pass-through, nginx
# with one worker and with two, and `courier serve` with a thread per CPU, one after another (5 s
# each after 1 s of warm-up). Per round: courier's CPU per request over the floor's (and its
# parts in user mode and in the kernel), its rate over the pass-through's, its p99 over nginx's
# (one thread against one worker, against two workers, and a thread per CPU against two
# workers), and the floor's own p99 over nginx's; then the median of each ratio over the rounds
# (ROUNDS, 7 unless given), and the medians of the two figures it divides.
#
# With COURIER_BEFORE=/path/to/another/courier, that build's `courier serve` is measured in
# each round too, and counted under callgrind, for a before and after on the same load. With
# COURIER_SERVE_FLAGS (`--rate-limit 100000000`, say), this build's `courier serve --threads 1`
# is counted with those flags, and COURIER_BEFORE's without: what a setting costs. With
# KEEP_PROFILES=DIR, the callgrind profiles are kept in DIR (for callgrind_annotate --inclusive).
#
# Needs nginx, wrk, Node (and valgrind for --callgrind): apt-get install nginx-light wrk nodejs
# valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
callgrind=false
target=false
if [ "${1:-}" = "--callgrind" ]; then callgrind=true; shift; fi
if [ "${1:-}" = "--target" ]; then target=true; shift; fi
if $target; then rounds=${1:-7}; else rounds=${1:-2}; fi
serve_flags=${COURIER_SERVE_FLAGS:-}

cargo build --quiet --release -p courier-cli
bin=$(pwd)/target/release/courier
bare_bin=$(pwd)/$(cargo bench --bench bare_hop --no-run 2>&1 | sed -n 's/.*Executable.*(\(.*\))/\1/p')
peer_bin=$(pwd)/$(cargo bench --bench peer_hop --no-run 2>&1 | sed -n 's/.*Executable.*(\(.*\))/\1/p')
dir=$(mktemp -d)
trap 'kill $(cat "$dir"/*.pid 2>/dev/null) 2>/dev/null; kill $serve $serve2 $before $bare $inline $passing $by_hand $node 2>/dev/null; rm -rf "$dir"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
backend=$(free_port); proxy=$(free_port); proxy2=$(free_port); courier=$(free_port); courier2=$(free_port)
hyper=$(free_port); floor=$(free_port); passing_port=$(free_port); by_hand_port=$(free_port)
node_port=$(free_port)

cat > "$dir/backend.conf" <<EOF
worker_processes 1;
error_log $dir/backend-error.log warn;
pid $dir/backend.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/b1; proxy_temp_path $dir/b2; fastcgi_temp_path $dir/b3;
    uwsgi_temp_path $dir/b4; scgi_temp_path $dir/b5;
    server {
        listen 127.0.0.1:$backend;
        location /users/ {
            default_type application/json;
            return 200 '{"id":7,"name":"user 7","email":"user7@example.com"}';
        }
    }
}
EOF
proxy_conf() { # NAME WORKERS PORT: nginx as a reverse proxy of the backend
  cat > "$dir/$1.conf" <<EOF
worker_processes $2;
error_log $dir/$1-error.log warn;
pid $dir/$1.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/$1-1; proxy_temp_path $dir/$1-2; fastcgi_temp_path $dir/$1-3;
    uwsgi_temp_path $dir/$1-4; scgi_temp_path $dir/$1-5;
    upstream backend { server 127.0.0.1:$backend; keepalive 64; }
    server {
        listen 127.0.0.1:$3;
        location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
EOF
}
proxy_conf proxy 1 "$proxy"
proxy_conf proxy2 2 "$proxy2"
cat > "$dir/courier.toml" <<EOF
[sources.demo]
base_url = "http://127.0.0.1:$backend"

[sources.demo.groups.users]
prefix = "/users"
expose = true

[sources.demo.groups.users.endpoints.get]
get = "/:id"

# The same endpoint for signed-in users: their session cookie and forwarded headers on each call.
[sources.signed]
base_url = "http://127.0.0.1:$backend"

[sources.signed.session]
cookies = ["sid"]

[sources.signed.forward]
request_id = true
client_address = true
user_agent = true
locale = true

[sources.signed.groups.users]
prefix = "/users"
expose = true

[sources.signed.groups.users.endpoints.get]
get = "/:id"
EOF
script() { # PATH_PREFIX FILE [PATH_SUFFIX]: every request another id, with a browser's headers
  cat > "$2" <<EOF
local n = 0
local headers = {
  ["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  ["Accept"] = "*/*",
  ["Accept-Language"] = "en-GB,en;q=0.9",
  ["Accept-Encoding"] = "gzip, deflate, br, zstd",
  ["Cookie"] = "session=2f9c1d7e4b8a; theme=dark",
  ["Referer"] = "http://127.0.0.1/app/users",
  ["Sec-Fetch-Site"] = "same-origin",
  ["Sec-Fetch-Mode"] = "cors",
  ["Sec-Fetch-Dest"] = "empty",
  ["Sec-Ch-Ua"] = '"Chromium";v="131", "Not_A Brand";v="24"',
  ["Sec-Ch-Ua-Mobile"] = "?0",
  ["Sec-Ch-Ua-Platform"] = '"Linux"',
}
request = function()
  n = n % 100000 + 1
  if signed then
    headers["Cookie"] = "sid=session-" .. (n % 64) .. "; theme=dark"
    headers["X-Request-Id"] = "request-" .. n
  end
  return wrk.format(nil, "$1" .. n .. "${3:-}", headers)
end
EOF
}
signed() { # FILE: the script in FILE, from 64 signed-in users (a session cookie each, a request id)
  { echo "signed = true"; cat "$1"; } > "${1%.lua}-signed.lua"
}
script "/users/" "$dir/nginx.lua"
# The variables as the browser package sends them: `{"id":N}`, URL-encoded.
script "/api/request?_s=demo&_g=users&_m=get&_v=%7B%22id%22%3A" "$dir/courier.lua" "%7D"
script "/api/request?_s=signed&_g=users&_m=get&_v=%7B%22id%22%3A" "$dir/courier-users.lua" "%7D"
signed "$dir/nginx.lua"
signed "$dir/courier-users.lua"
signed "$dir/courier.lua"

nginx -p "$dir" -c "$dir/backend.conf" -g "daemon on;"
nginx -p "$dir" -c "$dir/proxy.conf" -g "daemon on;"
nginx -p "$dir" -c "$dir/proxy2.conf" -g "daemon on;"
"$bin" serve -c "$dir/courier.toml" -l "127.0.0.1:$courier" --threads 1 > "$dir/serve.log" 2>&1 &
serve=$!
"$bin" serve -c "$dir/courier.toml" -l "127.0.0.1:$courier2" > "$dir/serve2.log" 2>&1 &
serve2=$!
# Another build of courier to set beside this one (its default flags), when one is named.
before=
if [ -n "${COURIER_BEFORE:-}" ]; then
  courier3=$(free_port)
  "$COURIER_BEFORE" serve -c "$dir/courier.toml" -l "127.0.0.1:$courier3" > "$dir/serve3.log" 2>&1 &
  before=$!
fi
"$bare_bin" "127.0.0.1:$hyper" "http://127.0.0.1:$backend" > "$dir/bare.log" 2>&1 &
bare=$!
"$bare_bin" "127.0.0.1:$floor" "http://127.0.0.1:$backend" --inline > "$dir/inline.log" 2>&1 &
inline=$!
"$peer_bin" axum "127.0.0.1:$passing_port" "http://127.0.0.1:$backend" > "$dir/passing.log" 2>&1 &
passing=$!
"$peer_bin" reqwest "127.0.0.1:$by_hand_port" "http://127.0.0.1:$backend" > "$dir/by_hand.log" 2>&1 &
by_hand=$!
node benches/peer_hop.mjs "127.0.0.1:$node_port" "http://127.0.0.1:$backend" > "$dir/node.log" 2>&1 &
node=$!
sleep 1

ticks() { # CPU clock ticks used so far by the processes given, in user mode and in the kernel
  local user=0 system=0 pid u s
  for pid in "$@"; do
    if [ ! -r "/proc/$pid/stat" ]; then
      echo "process $pid has exited; the last lines of each process's log:" >&2
      tail -n 3 "$dir"/*.log >&2
      exit 1
    fi
    read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat")
    user=$((user + u)) system=$((system + s))
  done
  echo "$user $system"
}
warm=2 window=10
if $target; then warm=1 window=5; fi
# What the last `measure` saw: requests a second, p99 (in ms), and CPU µs per request: in all,
# in user mode and in the kernel.
rate= p99= cpu= user= system=
measure() { # NAME URL SCRIPT PID...
  local name=$1 url=$2 lua=$3; shift 3
  wrk -t1 -c64 -d${warm}s -s "$lua" "$url" > /dev/null
  local before after out requests p50
  before=$(ticks "$@")
  out=$(wrk -t1 -c64 -d${window}s --latency -s "$lua" "$url")
  after=$(ticks "$@")
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  rate=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
  read -r user system cpu < <(python3 -c "
b, a, tick, n = '$before'.split(), '$after'.split(), $(getconf CLK_TCK), $requests
user, system = ((int(y) - int(x)) * 1e6 / tick / n for x, y in zip(b, a))
print(round(user, 1), round(system, 1), round(user + system, 1))")
  printf '| %s | %s | %s | %s | %s µs |\n' "$name" "$rate" "$p50" "$p99" "$cpu"
  # wrk writes a latency as 850.00us, 2.67ms or 1.02s.
  p99=$(echo "$p99" | awk '/us$/ {print $1 / 1000; next} /ms$/ {print $1 + 0; next} /s$/ {print $1 * 1000}')
}
nginx_worker=$(pgrep -P "$(cat "$dir/proxy.pid")")
nginx_workers=$(pgrep -P "$(cat "$dir/proxy2.pid")" | tr '\n' ' ')
echo "| proxy | requests/s | p50 | p99 | its CPU per request |"
echo "|---|---|---|---|---|"
round() { # SUFFIX PROXIED COURIER BY_HAND: every proxy on one load, each with its wrk script
  local suffix=$1 proxied=$2 courier_lua=$3 by_hand_lua=$4
  measure "nginx (one worker)$suffix" "http://127.0.0.1:$proxy" "$proxied" "$nginx_worker"
  # shellcheck disable=SC2086 # one pid per worker
  measure "nginx (two workers)$suffix" "http://127.0.0.1:$proxy2" "$proxied" $nginx_workers
  measure "courier serve --threads 1$suffix" "http://127.0.0.1:$courier" "$courier_lua" "$serve"
  measure "courier serve (one thread per CPU)$suffix" "http://127.0.0.1:$courier2" "$courier_lua" "$serve2"
  if [ -n "$before" ]; then
    measure "courier serve, $COURIER_BEFORE$suffix" "http://127.0.0.1:$courier3" "$courier_lua" "$before"
  fi
  measure "bare hyper-util$suffix" "http://127.0.0.1:$hyper" "$proxied" "$bare"
  measure "hyper, in one task$suffix" "http://127.0.0.1:$floor" "$proxied" "$inline"
  measure "axum + hyper-util pass-through$suffix" "http://127.0.0.1:$passing_port" "$proxied" "$passing"
  measure "axum + reqwest BFF, by hand$suffix" "http://127.0.0.1:$by_hand_port" "$by_hand_lua" "$by_hand"
  measure "Node BFF (http + fetch), by hand$suffix" "http://127.0.0.1:$node_port" "$by_hand_lua" "$node"
}
# The targets: each round, courier beside the peer each figure is set against, on both loads.
if $target; then
  ratios="$dir/ratios"
  target_round() { # LOAD PROXIED COURIER
    local load=$1 proxied=$2 courier_lua=$3 c_rate c_p99 c_cpu c_user c_system
    measure "courier serve --threads 1, $load" "http://127.0.0.1:$courier" "$courier_lua" "$serve"
    c_rate=$rate c_p99=$p99 c_cpu=$cpu
    c_user=$user c_system=$system
    measure "hyper, in one task, $load" "http://127.0.0.1:$floor" "$proxied" "$inline"
    local floor_p99=$p99
    echo "$load cpu $c_cpu $cpu" >> "$ratios"
    echo "$load user $c_user $user" >> "$ratios"
    echo "$load system $c_system $system" >> "$ratios"
    measure "axum + hyper-util pass-through, $load" "http://127.0.0.1:$passing_port" "$proxied" "$passing"
    echo "$load rate $c_rate $rate" >> "$ratios"
    measure "nginx (one worker), $load" "http://127.0.0.1:$proxy" "$proxied" "$nginx_worker"
    echo "$load p99-one $c_p99 $p99" >> "$ratios"
    echo "$load floor-p99-one $floor_p99 $p99" >> "$ratios"
    # shellcheck disable=SC2086 # one pid per worker
    measure "nginx (two workers), $load" "http://127.0.0.1:$proxy2" "$proxied" $nginx_workers
    echo "$load p99-two $c_p99 $p99" >> "$ratios"
    echo "$load floor-p99-two $floor_p99 $p99" >> "$ratios"
    local two=$p99
    measure "courier serve (one thread per CPU), $load" "http://127.0.0.1:$courier2" "$courier_lua" "$serve2"
    echo "$load p99-each $p99 $two" >> "$ratios"
  }
  for _ in $(seq "$rounds"); do
    target_round "distinct reads" "$dir/nginx.lua" "$dir/courier.lua"
    target_round "signed in" "$dir/nginx-signed.lua" "$dir/courier-users-signed.lua"
  done
  python3 - "$ratios" <<'PY'
import statistics, sys
rows, sides = {}, {}
for line in open(sys.argv[1]):
    *load, what, courier, peer = line.split()
    rows.setdefault((" ".join(load), what), []).append(float(courier) / float(peer))
    sides.setdefault((" ".join(load), what), []).append((float(courier), float(peer)))
names = {
    "cpu": ("CPU per request, over hyper's floor's", "at most 1.3"),
    "user": ("its part in user mode, over the floor's", ""),
    "system": ("its part in the kernel, over the floor's", ""),
    "rate": ("requests a second, over the axum + hyper-util pass-through's", "at least 1.0"),
    "p99-one": ("p99, over nginx's with one worker", "at most 1.0"),
    "p99-two": ("p99, over nginx's with two workers", "at most 1.0"),
    "p99-each": ("p99 with a thread per CPU (`courier serve`'s default), over nginx's with two workers", "at most 1.0"),
    "floor-p99-one": ("hyper's floor's own p99, over nginx's with one worker", ""),
    "floor-p99-two": ("hyper's floor's own p99, over nginx's with two workers", ""),
}
print()
print("| load | `courier serve --threads 1`, unless said | each round | median | the two medians | target |")
print("|---|---|---|---|---|---|")
for (load, what), values in rows.items():
    label, goal = names[what]
    rounds = " ".join(f"{v:.2f}" for v in values)
    courier, peer = (statistics.median(side) for side in zip(*sides[(load, what)]))
    print(f"| {load} | {label} | {rounds} | {statistics.median(values):.2f} | {courier:g} / {peer:g} | {goal} |")
PY
  exit 0
fi
for _ in $(seq "$rounds"); do
  round "" "$dir/nginx.lua" "$dir/courier.lua" "$dir/courier.lua"
  # The same from 64 signed-in users: courier's source with its session and forwarding on.
  round ", signed in" "$dir/nginx-signed.lua" "$dir/courier-users-signed.lua" "$dir/courier-signed.lua"
done

count() { # NAME PORT SCRIPT COMMAND...: instructions per request under callgrind
  local name=$1 port=$2 lua=$3; shift 3
  local out="$dir/cg-$(echo "$name" | tr -c 'a-zA-Z0-9\n' '-')"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" > "$dir/vg-$port.log" 2>&1 &
  local pid=$! requests instructions
  sleep 6
  wrk -t1 -c8 -d4s -s "$lua" "http://127.0.0.1:$port" > /dev/null
  callgrind_control -z "$pid" > /dev/null 2>&1
  requests=$(wrk -t1 -c8 -d15s -s "$lua" "http://127.0.0.1:$port" | awk '/requests in/ {print $1}')
  callgrind_control -d "$pid" > /dev/null 2>&1
  sleep 1
  kill "$pid"; wait "$pid" 2>/dev/null || true
  instructions=$(callgrind_annotate "$out.1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  echo "$requests" > "$out.requests"
  if [ -n "${KEEP_PROFILES:-}" ]; then mkdir -p "$KEEP_PROFILES"; cp "$out.1" "$out.requests" "$KEEP_PROFILES/"; fi
  echo "$name under callgrind: $requests requests, $((instructions / requests)) instructions each"
}
parts() { # COURIER_NAME FLOOR_NAME: where courier's instructions go beyond the floor's, part by part
  local courier="$dir/cg-$(echo "$1" | tr -c 'a-zA-Z0-9\n' '-')" floor="$dir/cg-$(echo "$2" | tr -c 'a-zA-Z0-9\n' '-')"
  echo
  echo "$1 beside $2, each part's own instructions per request:"
  python3 benches/callgrind_parts.py "$courier.1" "$(cat "$courier.requests")" "$floor.1" "$(cat "$floor.requests")"
}

if $callgrind; then
  kill "$serve" "$bare" "$inline" "$passing" "$by_hand" "$node"
  wait "$serve" "$bare" "$inline" "$passing" "$by_hand" "$node" 2>/dev/null || true
  echo
  count "courier serve --threads 1" "$courier" "$dir/courier.lua" \
    "$bin" serve -c "$dir/courier.toml" -l "127.0.0.1:$courier" --threads 1 $serve_flags
  if [ -n "$before" ]; then
    kill "$before"; wait "$before" 2>/dev/null || true
    count "courier serve --threads 1, $COURIER_BEFORE" "$courier3" "$dir/courier.lua" \
      "$COURIER_BEFORE" serve -c "$dir/courier.toml" -l "127.0.0.1:$courier3" --threads 1
  fi
  count "courier serve --threads 1, signed in" "$courier" "$dir/courier-users-signed.lua" \
    "$bin" serve -c "$dir/courier.toml" -l "127.0.0.1:$courier" --threads 1 $serve_flags
  count "bare hyper-util" "$hyper" "$dir/nginx.lua" \
    "$bare_bin" "127.0.0.1:$hyper" "http://127.0.0.1:$backend"
  count "hyper, in one task" "$floor" "$dir/nginx.lua" \
    "$bare_bin" "127.0.0.1:$floor" "http://127.0.0.1:$backend" --inline
  count "hyper, in one task, signed in" "$floor" "$dir/nginx-signed.lua" \
    "$bare_bin" "127.0.0.1:$floor" "http://127.0.0.1:$backend" --inline
  parts "courier serve --threads 1" "hyper, in one task"
  parts "courier serve --threads 1, signed in" "hyper, in one task, signed in"
fi
