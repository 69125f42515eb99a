#!/usr/bin/env bash
# TLS and basic authentication in front of `reveal agent` (issue #18), as docs/AGENT.md "HTTP
# endpoints" tells operators to set them up: the nginx server block and the Prometheus scrape job
# are taken from that page as written (ports and file paths replaced), with a self-signed
# certificate and an htpasswd file made here. Against an agent replaying a fixture recording on
# loopback:
#   https /metrics and /incidents: 401 without the password or with a wrong one, 200 with it;
#   /healthz: 200 without it; another path 404; plain HTTP to the TLS port refused (400); a POST
#   with a body refused before it reaches the agent (413);
#   Prometheus scraping with the documented job: the target up, reveal_* series stored; the same
#   job with a wrong password: the target down, its error a 401.
# About 20 seconds. Needs Debian's nginx-light (nginx), apache2-utils (htpasswd), openssl, curl
# and prometheus: scripts/setup.sh installs them; a missing one fails the test.
# usage: agent_tls_proxy_test.sh REVEAL FIXTURES
set -uo pipefail
REVEAL=$1
FIX=$2
DOC=$(cd "$(dirname "$0")/../.." && pwd)/docs/AGENT.md
T=$(mktemp -d -p /tmp)  # not $TMPDIR: nginx's workers must be able to enter it
chmod 755 "$T"  # nginx's workers (user nobody when started as root) read the htpasswd file
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"  # fail, expect_exit
PATH=$PATH:/usr/sbin  # nginx, for a user without sbin in PATH
for tool in nginx htpasswd openssl curl prometheus; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool missing: run scripts/setup.sh"; exit 1; }
done
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
APORT=$(port) PPORT=$(port) PROMPORT=$(port)
# The fenced block of docs/AGENT.md whose first line is $1.
block() {
  awk -v first="$1" '/^```/ { if (inb) exit; fence = !fence; want = fence; next }
                     want { want = 0; if ($0 == first) inb = 1 } inb' "$DOC"
}

# --- the agent, the certificate, the password ------------------------------------------------
"$REVEAL" agent --replay "$FIX/recordings/fleet-a.db" --listen "127.0.0.1:$APORT" --store "$T/a.db" -q \
  >"$T/agent.log" 2>&1 &
pids+=($!)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$T/node.key" -out "$T/node.crt" >"$T/openssl.log" 2>&1 ||
  { echo "FAIL: openssl: $(cat "$T/openssl.log")"; exit 1; }
htpasswd -cb "$T/htpasswd" prometheus s3cret >/dev/null 2>&1 || { echo "FAIL: htpasswd"; exit 1; }  # as the doc's -c
chmod 644 "$T/htpasswd"
printf 's3cret' >"$T/password"
printf 'wrong' >"$T/wrong.password"

# --- nginx with the documented server block ---------------------------------------------------
server=$(block "# /etc/nginx/conf.d/reveal.conf; the agent runs with listen = \"127.0.0.1:9797\"")
[[ $server == *"auth_basic"* && $server == *"listen 9443 ssl"* ]] || { echo "FAIL: no nginx block in $DOC"; exit 1; }
server=${server//listen 9443 ssl/listen 127.0.0.1:$PPORT ssl}
server=${server//127.0.0.1:9797/127.0.0.1:$APORT}
server=${server//\/etc\/reveal\/tls\//$T\/}
server=${server//\/etc\/reveal\/htpasswd/$T\/htpasswd}
code=$(sed 's/#.*//' <<<"$server")  # what nginx reads, comments aside
[[ $code != *"/etc/"* && $code != *"9797"* && $code != *"9443"* ]] ||
  { echo "FAIL: the nginx block of $DOC names a path or port this test does not replace: $server"; exit 1; }
mkdir -p "$T/nginx-tmp"
cat >"$T/nginx.conf" <<EOF
pid $T/nginx.pid;
error_log $T/nginx-error.log;
events {}
http {
  access_log off;
  client_body_temp_path $T/nginx-tmp/body;
  proxy_temp_path $T/nginx-tmp/proxy;
$server
}
EOF
nginx -p "$T" -e "$T/nginx-error.log" -c "$T/nginx.conf" -g 'daemon off;' >"$T/nginx.log" 2>&1 &
pids+=($!)

URL=https://127.0.0.1:$PPORT
C=(curl -s --max-time 5 --cacert "$T/node.crt" -o "$T/body" -w '%{http_code}')
for _ in $(seq 50); do [[ $("${C[@]}" "$URL/healthz") == 200 ]] && break; sleep 0.2; done
[[ $("${C[@]}" "$URL/healthz") == 200 ]] ||
  { echo "FAIL: no 200 from /healthz through nginx: $(cat "$T/nginx-error.log" "$T/agent.log" | tail -5)"; exit 1; }
grep -qx ok "$T/body" || fail "/healthz through nginx: $(head -c 200 "$T/body")"

# --- the proxy's answers -----------------------------------------------------------------------
check() {  # check WANT WHAT CURL-ARGS...
  local want=$1 what=$2 got
  shift 2
  got=$("${C[@]}" "$@")
  [[ $got == "$want" ]] || fail "$what: HTTP $got (want $want): $(head -c 200 "$T/body")"
}
check 401 "/metrics without the password" "$URL/metrics"
check 401 "/metrics with a wrong password" -u prometheus:wrong "$URL/metrics"
check 200 "/metrics with the password" -u prometheus:s3cret "$URL/metrics"
grep -q '^reveal_' "$T/body" || fail "/metrics through nginx holds no reveal_ metric"
check 401 "/incidents without the password" "$URL/incidents"
check 200 "/incidents with the password" -u prometheus:s3cret "$URL/incidents"
grep -q '"reveal.incidents/1"' "$T/body" || fail "/incidents through nginx: $(head -c 200 "$T/body")"
check 404 "another path" -u prometheus:s3cret "$URL/debug"
check 413 "a POST with a body" -u prometheus:s3cret --data-binary "@$FIX/recordings/fleet-a.db" "$URL/metrics"
plain=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PPORT/metrics")
[[ $plain == 400 ]] || fail "plain HTTP to the TLS port: HTTP $plain (want 400)"
curl -s --max-time 5 -o /dev/null "$URL/healthz" && fail "a client that does not trust the certificate was served"

# --- Prometheus with the documented scrape job -------------------------------------------------
job=$(block "# prometheus.yml: the scrape job of agents behind such a proxy")
[[ $job == *"scheme: https"* && $job == *"basic_auth"* ]] || { echo "FAIL: no scrape job in $DOC"; exit 1; }
job=${job//\/etc\/prometheus\/reveal-ca.crt/$T\/node.crt}
job=${job//node1:9443/127.0.0.1:$PPORT}
bad=${job//job_name: reveal/job_name: reveal-wrong-password}
bad=${bad//\/etc\/prometheus\/reveal.password/$T\/wrong.password}
bad=${bad#*scrape_configs:}
job=${job//\/etc\/prometheus\/reveal.password/$T\/password}
code=$(sed 's/#.*//' <<<"$job")
[[ $code != *"/etc/"* && $code != *"node1"* ]] ||
  { echo "FAIL: the scrape job of $DOC names a path or target this test does not replace: $job"; exit 1; }
{ printf 'global:\n  scrape_interval: 1s\n'; printf '%s\n%s\n' "$job" "$bad"; } >"$T/prometheus.yml"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
  --web.listen-address="127.0.0.1:$PROMPORT" --log.level=warn >"$T/prometheus.log" 2>&1 &
pids+=($!)
python3 - "$PROMPORT" <<'PY' || fail "Prometheus through nginx (lines above); its log: $(tail -3 "$T/prometheus.log")"
import json, sys, time, urllib.parse, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}/api/v1/"
def get(path):
    try:
        return json.load(urllib.request.urlopen(base + path, timeout=2))["data"]
    except OSError:
        return None
deadline, health = time.monotonic() + 20, {}
while time.monotonic() < deadline:
    t = get("targets") or {}
    health = {x["labels"]["job"]: (x["health"], x.get("lastError", "")) for x in t.get("activeTargets", [])}
    if health.get("reveal", ("",))[0] == "up" and health.get("reveal-wrong-password", ("",))[0] == "down":
        break
    time.sleep(0.5)
ok = True
if health.get("reveal", ("",))[0] != "up":
    print(f"FAIL: the documented job's target is not up: {health.get('reveal')}"); ok = False
h, err = health.get("reveal-wrong-password", ("", ""))
if h != "down" or "401" not in err:
    print(f"FAIL: with a wrong password the target is {h!r}, error {err!r} (want down, 401)"); ok = False
n = get("query?" + urllib.parse.urlencode({"query": 'count({job="reveal",__name__=~"reveal_.+"})'}))
if not n or not n["result"] or int(float(n["result"][0]["value"][1])) < 10:
    print(f"FAIL: Prometheus stored no reveal_ series through nginx: {n}"); ok = False
sys.exit(0 if ok else 1)
PY

if ((fails)); then
  echo "--- nginx error log"; tail -5 "$T/nginx-error.log"
  exit 1
fi
echo "PASS: TLS and basic auth in front of the agent (nginx, Prometheus), as docs/AGENT.md says"
