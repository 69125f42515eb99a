#!/usr/bin/env bash
# Hostile and broken HTTP clients against `reveal agent` (loopback only; issue #18): an agent
# replaying a fixture recording is sent, one after another,
#   a POST announcing a 2 GB body (then 4 MiB of it), a GET announcing one, a gzip-encoded POST,
#   an endless header line, an endless request line, thousands of 8 KB headers, OPTIONS,
#   then 40 slow clients (one byte every 0.5 s) and 200 idle sockets held open together,
# and after each, and throughout the last two, /healthz must answer 200 within 1 s and /metrics
# must answer. Each hostile request must get its status (405, 413, 431) or be closed, within
# seconds; the slow and idle sockets must be closed by the agent within 10 s; the agent's
# resident memory may grow by at most 32 MiB over the whole test (docs/AGENT.md, "HTTP
# endpoints": the limits). About 40 seconds.
# usage: agent_http_abuse_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
T=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$REVEAL" agent --replay "$FIX/recordings/fleet-a.db" --listen "127.0.0.1:$PORT" --store "$T/a.db" -q \
  >"$T/agent.log" 2>&1 &
pid=$!
for _ in $(seq 50); do curl -sf --max-time 1 "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.2; done
curl -sf --max-time 1 "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "FAIL: agent not serving"; cat "$T/agent.log"; exit 1; }

python3 - "$PORT" "$pid" <<'PY' || fail "hostile clients (lines above)"
import gzip, socket, sys, threading, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
bad = []

def rss_mib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")

def get(path, timeout=1.0):
    """(status, seconds) of GET path on a new connection; status 0 on failure."""
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return int(data.split(b" ", 2)[1]), time.monotonic() - t0
    except (OSError, ValueError, IndexError):
        return 0, time.monotonic() - t0

def healthy(when):
    st, dt = get("/healthz")
    if st != 200 or dt > 1.0:
        bad.append(f"{when}: /healthz answered {st} after {dt:.2f} s")
    st, dt = get("/metrics", 2.0)
    if st != 200:
        bad.append(f"{when}: /metrics answered {st} after {dt:.2f} s")

def hostile(name, head, body_bytes=0, body_chunk=b"x" * 65536, want=(), within=5.0):
    """Sends head (and up to body_bytes of body, stopping when the agent stops reading), then
    reads the answer: its status must be in want (or the connection closed when want has 0)."""
    t0 = time.monotonic()
    status = 0
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=within) as s:
            s.settimeout(within)
            try:
                s.sendall(head)
                sent = 0
                while sent < body_bytes and time.monotonic() - t0 < within:
                    s.sendall(body_chunk)
                    sent += len(body_chunk)
            except OSError:
                pass  # the agent closed while we were still sending: fine if it answered first
            try:
                data = s.recv(4096)
                status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else 0
            except (OSError, ValueError, IndexError):
                status = 0
    except OSError as e:
        bad.append(f"{name}: cannot connect: {e}")
        return
    dt = time.monotonic() - t0
    if status not in want:
        bad.append(f"{name}: answered {status or 'nothing'} (want {'/'.join(map(str, want))})")
    if dt > within + 1:
        bad.append(f"{name}: took {dt:.1f} s")
    healthy(f"after {name}")

rss0 = rss_mib()
healthy("at start")
hostile("POST with a 2 GB body", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000000\r\n\r\n",
        4 << 20, want=(405, 0))
hostile("GET with a 2 GB body", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000000\r\n\r\n",
        4 << 20, want=(413, 0))
bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB inflated
hostile("gzip POST", b"POST /incidents HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: "
        + str(len(bomb)).encode() + b"\r\n\r\n" + bomb, want=(405, 0))
hostile("endless header line", b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: ", 8 << 20, b"a" * 65536, want=(431, 400, 0))
hostile("endless request line", b"GET /", 8 << 20, b"a" * 65536, want=(431, 400, 414, 0))
hostile("thousands of 8 KB headers", b"GET /metrics HTTP/1.1\r\nHost: x\r\n", 16 << 20,
        b"".join(b"X-%d: %s\r\n" % (i, b"b" * 8180) for i in range(8)), want=(431, 400, 0))
hostile("OPTIONS", b"OPTIONS /metrics HTTP/1.1\r\nHost: x\r\n\r\n", want=(405,))
hostile("unknown path", b"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", want=(404,))

# Slow and idle clients, all at once, while /healthz and /metrics are asked every 0.5 s.
stop = threading.Event()
socks = []
def slow(i):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        socks.append(s)
        for ch in b"GET /metrics HTTP/1.1\r\nHost: slow\r\n" * 4:
            if stop.is_set():
                return
            s.send(bytes([ch]))
            time.sleep(0.5)
    except OSError:
        pass  # closed by the agent: what we want
threads = [threading.Thread(target=slow, args=(i,), daemon=True) for i in range(40)]
for t in threads:
    t.start()
for _ in range(200):
    try:
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    except OSError as e:
        bad.append(f"idle socket: {e}")
        break
t_end = time.monotonic() + 12
while time.monotonic() < t_end:
    healthy("with 40 slow clients and 200 idle sockets")
    time.sleep(0.5)
# By now (12 s) the agent must have closed the slow and idle connections (5 s deadlines).
def is_open(s):
    s.setblocking(False)
    try:
        while s.recv(65536):  # an answer (503 to those over the limit) before the close
            pass
        return False          # end of stream: the agent closed it
    except BlockingIOError:
        return True           # nothing to read and not closed
    except OSError:
        return False          # reset
still_open = sum(1 for s in socks if is_open(s))
stop.set()
for s in socks:
    s.close()
if still_open:
    bad.append(f"{still_open} of {len(socks)} slow or idle connections still open after 12 s")
healthy("at the end")
grown = rss_mib() - rss0
print(f"agent RSS {rss0:.1f} MiB -> {rss0 + grown:.1f} MiB")
if not grown <= 32:
    bad.append(f"resident memory grew by {grown:.1f} MiB (limit 32)")
for b in bad[:30]:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
kill -0 "$pid" 2>/dev/null || fail "the agent died: $(tail -3 "$T/agent.log")"

((fails == 0)) && echo "PASS: hostile HTTP clients" || { echo "$fails failure(s)"; exit 1; }
