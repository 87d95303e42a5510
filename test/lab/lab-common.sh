# Shared by the namespace-lab scripts (lab.sh, agent-lab.sh): sourced, never run. The sourcing
# script sets LAB_NAME (its name in messages), STATE (its state directory), LOCK (its lock file)
# and SERVER (lab_server.py) first. Nothing here touches an interface or a namespace by itself.

die() { echo "$LAB_NAME: $*" >&2; exit 1; }
log() { [[ -n ${NWLAB_QUIET:-} ]] || echo "$LAB_NAME: $*" >&2; }

python_bin() {
  if [[ -n ${NWLAB_PYTHON:-} ]]; then echo "$NWLAB_PYTHON"
  elif [[ -x /usr/bin/python3 ]]; then echo /usr/bin/python3
  else command -v python3 || die "python3 is needed for listeners"
  fi
}

need_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces, veths and a bridge)"
  command -v ip >/dev/null || die "iproute2 (ip) is not installed"
}

# Serialises the calls of one lab: file descriptor 9 holds the lock until the script exits.
lock() {
  mkdir -p "$(dirname "$LOCK")"
  exec 9>"$LOCK"
  flock -w 120 9 || die "another $LAB_NAME has held $LOCK for 2 minutes"
}

pid_alive() { [[ -n $1 ]] && kill -0 "$1" 2>/dev/null; }

# Only processes a lab started: listener PIDs it recorded, and processes inside its own namespaces.
kill_pids() {
  local pids=("$@") pid
  ((${#pids[@]})) || return 0
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 20); do
    local alive=0
    for pid in "${pids[@]}"; do pid_alive "$pid" && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}

# ---------------------------------------------------------------------------------------------
# Listeners (lab_server.py inside a host's namespace)

listener_base() { echo "$STATE/listeners/h$1-$2"; }

stop_listener() {
  local base=$1
  [[ -f $base.pid ]] || return 0
  kill_pids "$(cat "$base.pid")"
  rm -f "$base.pid" "$base.ready"
}

# check_listen_args USAGE PORT KIND: checks PORT and KIND (banner|http); dies with USAGE otherwise.
check_listen_args() {
  local usage=$1 port=$2 kind=$3
  [[ $port =~ ^[0-9]+$ ]] && ((port >= 1 && port <= 65535)) || die "PORT must be 1..65535, got '$port'"
  [[ $kind == banner || $kind == http ]] || die "$usage"
}

# start_listener NS HOST_INDEX PORT KIND TEXT: (re)starts the listener and waits until it serves.
start_listener() {
  local ns=$1 i=$2 port=$3 kind=$4 text=$5 base py pid
  mkdir -p "$STATE/listeners"
  base=$(listener_base "$i" "$port")
  stop_listener "$base"
  py=$(python_bin)
  ip netns exec "$ns" setsid "$py" "$SERVER" --port "$port" --kind "$kind" --text "$text" --ready "$base.ready" \
    </dev/null >"$base.log" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$base.pid"
  for _ in $(seq 1 200); do
    [[ -s $base.ready ]] && break
    pid_alive "$pid" || break
    sleep 0.05
  done
  if [[ ! -s $base.ready ]]; then
    kill_pids "$pid"
    rm -f "$base.pid"
    die "listener h$i:$port did not start: $(tail -n 5 "$base.log" 2>/dev/null)"
  fi
  # The server reports its own PID: that is the one to kill (ip/setsid exec into it, but be sure).
  head -n1 "$base.ready" >"$base.pid"
  printf '%s\t%s\n' "$kind" "$text" >"$base.info"
  log "h$i listens on tcp/$port ($kind: $text)"
}
