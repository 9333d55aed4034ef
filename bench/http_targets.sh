# shellcheck shell=bash
# shellcheck disable=SC2034  # SERVE_URL, NGINX_URL, NGINX_VERSION are read by the callers
# bench/http_targets.sh -- the HTTP targets of bench/http.sh and bench/open_model.sh; sourced
# after lib.sh. Expects WORK, REDIS_PORT and RLCHECK set; sets SERVE_PID, SERVE_URL (start_serve),
# NGINX_PID, NGINX_URL, NGINX_VERSION (start_nginx). `cleanup` is the callers' EXIT trap: it
# stops what these started, then Redis, and removes WORK.

cleanup() {
  local rc=$?
  stop_pid "$SERVE_PID"   # before Redis, so it does not log a Redis outage
  stop_pid "$NGINX_PID"   # nginx: SIGTERM is its fast shutdown, workers go with the master
  if [[ -n $REDIS_PID ]] && kill -0 "$REDIS_PID" 2>/dev/null; then
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    stop_pid "$REDIS_PID"
  fi
  [[ -n $WORK ]] && rm -rf "$WORK"
  exit "$rc"
}

# rlcheck serve on an ephemeral port: the port it really bound is in its "listening on" line.
start_serve() {
  local log=$WORK/serve.log port
  "$RLCHECK" serve --redis "redis://127.0.0.1:$REDIS_PORT" --listen 127.0.0.1:0 --strategy lua \
    --limit 1000000 --identity-header X-API-Key 2>"$log" &
  SERVE_PID=$!
  for _ in $(seq 1 100); do
    kill -0 "$SERVE_PID" 2>/dev/null || die "rlcheck serve exited: $(tr '\n' ' ' <"$log")"
    port=$(sed -n 's|^rlcheck serve: listening on http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$log")
    if [[ -n $port ]]; then
      SERVE_URL=http://127.0.0.1:$port/
      return 0
    fi
    sleep 0.05
  done
  die "rlcheck serve did not say where it listens: $(tr '\n' ' ' <"$log")"
}

# nginx answering every request with a static 200, from a config in the temp dir: one worker
# (the machine is shared with both clients), no access log, keep-alive for the whole run.
# Returns 1 (no row) when nginx is not installed or will not start.
start_nginx() {
  local nginx port dir=$WORK/nginx
  nginx=$(command -v nginx || true)
  [[ -z $nginx && -x /usr/sbin/nginx ]] && nginx=/usr/sbin/nginx
  [[ -n $nginx ]] || { note "nginx not installed: no nginx row (apt-get install -y nginx-light)"; return 1; }
  mkdir -p "$dir"
  for _ in $(seq 1 20); do
    port=$((20000 + RANDOM % 40000))
    port_in_use "$port" && continue
    cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    location / { default_type text/plain; return 200 "ok\n"; }
  }
}
EOF
    "$nginx" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" 2>>"$dir/stderr.log" &
    NGINX_PID=$!
    for _ in $(seq 1 100); do
      kill -0 "$NGINX_PID" 2>/dev/null || break
      if port_in_use "$port" && [[ $(cat "$dir/nginx.pid" 2>/dev/null) == "$NGINX_PID" ]]; then
        NGINX_VERSION=$("$nginx" -v 2>&1 | sed 's|.*nginx/||')
        NGINX_URL=http://127.0.0.1:$port/
        return 0
      fi
      sleep 0.05
    done
    stop_pid "$NGINX_PID"
    NGINX_PID=""
  done
  note "nginx did not start: no nginx row ($(tr '\n' ' ' <"$dir/stderr.log"))"
  return 1
}

