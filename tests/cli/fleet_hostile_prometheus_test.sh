#!/usr/bin/env bash
# `reveal detect --prometheus` against a broken or hostile server (issue #18), the real binary
# under /usr/bin/time -v: a Python fake Prometheus on 127.0.0.1 lists one host, announces one
# series and then answers query_range with
#   stream  a valid start and then 2 GB of points (chunked),
#   bomb    a gzip answer (Content-Encoding: gzip) that inflates to 1 GiB of JSON white space,
#   drip    a valid answer sent one byte every 100 ms (--timeout 1),
#   away    a redirect to another port (of every request, the host list's first),
#   hosts   the host list (/api/v1/label/instance/values): a valid start and then 2 GB of names,
# and each must end in exit 3 with one error line naming the server, within a few seconds, with
# a peak RSS (Maximum resident set size) under 200 MB. Prints the RSS of each next to that of a
# run against a closed port (the binary's own floor).
# usage: fleet_hostile_prometheus_test.sh REVEAL [FIXTURES]
set -uo pipefail
REVEAL=$1
T=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail
[[ -x /usr/bin/time ]] || { echo "FAIL: /usr/bin/time is missing (Debian package time)"; exit 1; }
"$REVEAL" detect --prometheus http://127.0.0.1:9 --start -1m >"$T/out" 2>"$T/err"
if grep -q "built without HTTP support" "$T/err"; then
  echo "SKIP: this reveal has no --prometheus (built with REVEAL_STATIC_DEPS)"
  exit 0
fi

cat >"$T/fake.py" <<'PY'
import http.server, socketserver, sys, time, urllib.parse, zlib
MODE = {}
HOSTS = b'{"status":"success","data":["h"]}'
SERIES = b'{"status":"success","data":[{"__name__":"reveal_x","instance":"h","channel":"t:x","unit":"count"}]}'
HEAD = (b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"reveal_x",'
        b'"instance":"h","channel":"t:x","unit":"count"},"values":[')
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def chunk(self, b):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
    def do_GET(self):
        mode = open(sys.argv[2]).read().strip()
        try:
            if mode == "away":
                self.send_response(302)
                self.send_header("Location", "http://127.0.0.1:9" + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.path.startswith("/api/v1/label/"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if mode == "hosts":
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.chunk(b'{"status":"success","data":[')
                    names = b'"host-0000000000",' * 60000
                    for _ in range((2 << 30) // len(names)):
                        self.chunk(names)
                    return
                self.send_header("Content-Length", str(len(HOSTS)))
                self.end_headers()
                self.wfile.write(HOSTS)
                return
            if self.path.startswith("/api/v1/series"):
                # Every series has an instance label: none matches instance="".
                unlabelled = 'instance=""' in urllib.parse.unquote_plus(self.path)
                body = b'{"status":"success","data":[]}' if unlabelled else SERIES
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if mode == "drip":
                body = HEAD + b'[1800000000,"1"]]}]}}'
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1]); self.wfile.flush(); time.sleep(0.1)
                return
            self.send_header("Transfer-Encoding", "chunked")
            if mode == "bomb":
                self.send_header("Content-Encoding", "gzip")
                self.end_headers()
                z = zlib.compressobj(9, zlib.DEFLATED, 31)
                self.chunk(z.compress(HEAD))
                spaces = b" " * (1 << 20)
                for _ in range(1024):
                    out = z.compress(spaces)
                    if out: self.chunk(out)
                self.chunk(z.flush()); self.wfile.write(b"0\r\n\r\n")
                return
            self.end_headers()
            self.chunk(HEAD)
            points = b'[1800000000,"1"],' * 60000
            for _ in range((2 << 30) // len(points)):
                self.chunk(points)
        except (BrokenPipeError, ConnectionResetError):
            pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo stream >"$T/mode"
python3 "$T/fake.py" "$port" "$T/mode" &
pid=$!
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
  sleep 0.1
done
URL="http://127.0.0.1:$port"
# run NAME WANT-IN-ERROR [ARGS...]: exit 3, one line naming the server and WANT, RSS, time
run() {
  local name=$1 want=$2
  shift 2
  local t0=$SECONDS
  /usr/bin/time -v -o "$T/time" "$REVEAL" detect --start 1800000000 --end 1800000010 --step 1s "$@" \
    >"$T/out" 2>"$T/err"
  local rc=$? took=$((SECONDS - t0))
  local rss_kb
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$T/time")
  grep -v "^Command exited with non-zero status" "$T/err" >"$T/err1"
  printf '%-8s exit %s, %s s, peak RSS %6.1f MiB: %s\n' "$name" "$rc" "$took" "$(awk -v k="$rss_kb" 'BEGIN { print k / 1024 }')" \
    "$(head -c 200 "$T/err1")"
  [[ $rc == 3 ]] || fail "$name: exit $rc (want 3)"
  [[ $(wc -l <"$T/err1") == 1 ]] || fail "$name: not one error line: $(cat "$T/err1")"
  grep -qF -- "$want" "$T/err1" || fail "$name: the error does not say '$want'"
  ((took <= 5)) || fail "$name: took $took s"
  ((rss_kb < 200 * 1024)) || fail "$name: peak RSS $rss_kb kB"
}
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run closed "cannot connect" --prometheus "http://127.0.0.1:$closed"
run stream "Prometheus at $URL: the answer to /api/v1/query_range is over" --prometheus "$URL"
echo bomb >"$T/mode"
run bomb "Prometheus at $URL: the answer to /api/v1/query_range is over" --prometheus "$URL"
echo drip >"$T/mode"
run drip "Prometheus at $URL: no complete answer to /api/v1/query_range within 1 s" --prometheus "$URL" --timeout 1
echo away >"$T/mode"
run away "Prometheus at $URL: refusing the redirect to 'http://127.0.0.1:9/api/v1/label/instance/values?" --prometheus "$URL"
echo hosts >"$T/mode"
run hosts "Prometheus at $URL: the answer to /api/v1/label/instance/values is over" --prometheus "$URL"

((fails == 0)) && echo "PASS: fleet hostile prometheus" || { echo "$fails failure(s)"; exit 1; }
