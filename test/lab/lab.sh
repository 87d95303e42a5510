#!/usr/bin/env bash
# Netwarden's namespace lab: a few fake hosts on a private bridge, for scans that need a real
# Ethernet segment (ARP discovery, MACs and vendors, absent hosts, filtered ports, moving hosts).
#
#   lab.sh up [N_HOSTS]            bridge nwlab0 (10.66.0.1/24) and hosts h1..hN (default 4)
#   lab.sh down [--force]          kill the lab's listeners, delete its namespaces, veths and bridge
#   lab.sh status                  what exists, for people
#   lab.sh hosts                   one line per host: NAME NAMESPACE IP MAC up|down (for scripts)
#   lab.sh listen HOST PORT banner TEXT    TCP server greeting with TEXT (SSH, FTP, SMTP …)
#   lab.sh listen HOST PORT http SERVER    HTTP server answering with `Server: SERVER`
#   lab.sh unlisten HOST PORT
#   lab.sh sshd HOST               a real OpenSSH server on the host's tcp/22 (prints its host key's
#                                  SHA256 fingerprint); no one can log in to it, see start_sshd
#   lab.sh filter HOST PORT        iptables DROP for that TCP port inside the host's namespace
#   lab.sh unfilter HOST PORT
#   lab.sh stop HOST | start HOST  take the host off the segment / put it back (namespace kept)
#   lab.sh move HOST NEW_IP [--keep-neighbour]
#                                  give the host a new address in 10.66.0.0/24, keeping its MAC; with
#                                  --keep-neighbour the scanner's ARP entry for the old address stays
#                                  (refreshed to REACHABLE: a stale entry, as right after a renumbering)
#   lab.sh setmac HOST MAC         give the host's eth0 another MAC (a phone's new random MAC); the
#                                  scanner's ARP entry for its address is forgotten
#   lab.sh ip HOST | mac HOST      the host's current address / its MAC
#   lab.sh neigh-flush             forget the scanner's ARP entries on nwlab0 (cold cache for a benchmark)
#
# HOST is `h3`, `3` or `nwlab-h3`. Host i is namespace nwlab-h<i>, veth nwl<i>a (host side, a port of
# nwlab0) / eth0 inside (created as nwl<i>b), address 10.66.0.(10+i)/24, and a fixed MAC from this
# cycle of OUIs: B8:27:EB (Raspberry Pi Foundation), 00:1C:42 (Parallels), 02:66:00 (locally
# administered, i.e. "randomised"), 00:16:3E (Xensource), DC:A6:32 (Raspberry Pi Trading),
# 00:0C:29 (VMware); so h1 = B8:27:EB:66:00:01, h3 = 02:66:00:66:00:03.
#
# NETWORK SAFETY. The lab only creates and deletes its own objects: the bridge nwlab0, veths named
# nwl<N>a/nwl<N>b and namespaces named nwlab-h<N>. It never touches eth0 or any other existing
# interface, never changes a global sysctl or the host's firewall (iptables rules are added only
# inside lab namespaces), and adds no default route anywhere: the lab hosts can reach nothing but
# 10.66.0.0/24. `up` refuses to run when another interface already has an address in 10.66.0.0/24.
#
# br_netfilter: on this kind of machine net.bridge.bridge-nf-call-iptables is 1, so frames bridged
# *between two lab hosts* traverse the host's iptables FORWARD chain. Scans do not depend on that:
# the scanner is the host itself (10.66.0.1 on nwlab0), so its traffic to the lab goes through the
# host's OUTPUT/INPUT chains, which the lab leaves alone; nmap's raw ARP/SYN frames are sent on the
# bridge device directly. A host FORWARD policy of DROP (Docker sets one) would only break lab-host
# to lab-host traffic, which nothing here uses. `status` prints the br_netfilter setting.
#
# State (listener PIDs and logs, the owner) lives in /run/nwlab; /run/lock/nwlab.lock serialises
# concurrent calls. `up` records its caller (NWLAB_OWNER, default the parent process) as the lab's
# owner; while that process is alive, `up` and `down` from another process exit with status 3
# (so a test run cannot tear down a benchmark's lab): wait, or use `down --force`.
#
# sshd: the lab's SSH servers are Debian's /usr/sbin/sshd (openssh-server; NWLAB_SSHD overrides)
# started with a configuration of the lab's own (`sshd -D -f`, never /etc/ssh/sshd_config): a host
# key made by ssh-keygen for this lab run in $STATE/sshd/h<N> (kept while the lab is up, so a host
# that moves or changes its MAC keeps it; gone at `down`), listening only on the host's address
# inside its namespace, no PAM, and no way in (DenyUsers *, no password or keyboard-interactive
# method, no authorized keys, MaxSessions 0, ForceCommand /bin/false). `move` restarts it on the
# new address; `down` kills it with the other listeners. sshd needs its privilege-separation
# directory /run/sshd (created root-owned 0755 if absent; Debian's own service uses the same).
#
# Idempotent: `up` twice is fine (it repairs what is missing and puts stopped hosts back), `down`
# with nothing to remove is fine. A failure during `up` tears the whole lab down.
set -euo pipefail

BRIDGE=nwlab0
BRIDGE_MAC=02:66:00:00:00:01
NET=10.66.0
HOST_CIDR=$NET.1/24
STATE=${NWLAB_STATE_DIR:-/run/nwlab}
LOCK=/run/lock/nwlab.lock
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SERVER=$HERE/lab_server.py
LAB_NAME=lab.sh
# shellcheck source=lab-common.sh
source "$HERE/lab-common.sh"
OWNER=${NWLAB_OWNER:-$PPID}
OUIS=(B8:27:EB 00:1C:42 02:66:00 00:16:3E DC:A6:32 00:0C:29)
MAX_HOSTS=200
SSHD=${NWLAB_SSHD:-/usr/sbin/sshd}

# ---------------------------------------------------------------------------------------------
# Names

# h3 | 3 | nwlab-h3 -> 3
index_of() {
  local h=$1
  h=${h#nwlab-}
  h=${h#h}
  [[ $h =~ ^[0-9]+$ ]] && ((h >= 1 && h <= MAX_HOSTS)) || die "not a lab host: '$1' (h1..h$MAX_HOSTS)"
  echo $((10#$h))
}
ns_of() { echo "nwlab-h$1"; }
mac_of() { printf '%s:66:%02X:%02X' "${OUIS[$(( ($1 - 1) % ${#OUIS[@]} ))]}" $(($1 / 256)) $(($1 % 256)); }
default_ip_of() { echo "$NET.$((10 + $1))"; }

ns_exists() { [[ -e /run/netns/$1 ]] || ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }
link_exists() { ip link show dev "$1" >/dev/null 2>&1; }
lab_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^nwlab-h[0-9]+$' || true; }
lab_veths() { ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^nwl[0-9]+[ab]$' || true; }
host_indexes() { lab_namespaces | sed 's/^nwlab-h//' | sort -n; }

current_ip() { ip -n "$(ns_of "$1")" -4 -o addr show dev eth0 scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -n1; }

valid_lab_ip() {
  [[ $1 =~ ^10\.66\.0\.([0-9]{1,3})$ ]] || return 1
  local last=$((10#${BASH_REMATCH[1]}))
  ((last >= 2 && last <= 254))
}

# ---------------------------------------------------------------------------------------------
# Ownership

check_owner() {
  local force=${1:-}
  [[ -f $STATE/owner ]] || return 0
  local owner
  owner=$(cat "$STATE/owner" 2>/dev/null || true)
  if [[ -n $owner && $owner != "$OWNER" && $force != --force ]] && pid_alive "$owner"; then
    echo "lab.sh: the lab is in use by process $owner ($(tr '\0' ' ' </proc/"$owner"/cmdline 2>/dev/null | cut -c1-120)); wait for it, or run 'lab.sh down --force'" >&2
    exit 3
  fi
}

# ---------------------------------------------------------------------------------------------
# Tear-down

teardown() {
  local pids=() f ns link
  if [[ -d $STATE/listeners ]]; then
    for f in "$STATE"/listeners/*.pid; do
      [[ -e $f ]] || continue
      pids+=("$(cat "$f")")
    done
  fi
  for ns in $(lab_namespaces); do
    # shellcheck disable=SC2207
    pids+=($(ip netns pids "$ns" 2>/dev/null || true))
  done
  kill_pids "${pids[@]}"
  for ns in $(lab_namespaces); do
    ip netns del "$ns" 2>/dev/null || log "could not delete namespace $ns"
  done
  for link in $(lab_veths); do
    ip link del "$link" 2>/dev/null || true
  done
  if link_exists "$BRIDGE"; then
    ip link set "$BRIDGE" down 2>/dev/null || true
    ip link del "$BRIDGE"
  fi
  rm -rf "$STATE"
}

cmd_down() {
  need_root
  lock
  check_owner "${1:-}"
  teardown
  log "down"
}

# ---------------------------------------------------------------------------------------------
# Set-up

check_address_space() {
  # Another interface with an address in 10.66.0.0/24 would make the lab route traffic elsewhere.
  local clash
  clash=$(ip -4 -o addr show 2>/dev/null | awk -v br="$BRIDGE" '$2 != br && $4 ~ /^10\.66\.0\./ {print $2 " " $4}' || true)
  [[ -z $clash ]] && return 0
  # The agent lab's root-side link (nwa-r0, 10.66.0.249/30) is a sibling lab still in use or being
  # torn down: busy (exit 3, callers wait and retry), not an error.
  if ! grep -qv '^nwa-' <<<"$clash"; then
    echo "$LAB_NAME: the agent lab still holds $clash; wait for it, or run agent-lab.sh down" >&2
    exit 3
  fi
  die "refusing to build the lab: 10.66.0.0/24 is already used by: $clash"
}

per_iface_sysctl() {
  # Interface-scoped only (never a global setting) and only on the lab's own links.
  local path=$1 value=${2:-1}
  [[ -w $path ]] && echo "$value" >"$path" 2>/dev/null || true
}

setup_bridge() {
  if ! link_exists "$BRIDGE"; then
    ip link add "$BRIDGE" type bridge stp_state 0 forward_delay 0
  fi
  ip link set dev "$BRIDGE" address "$BRIDGE_MAC"
  per_iface_sysctl "/proc/sys/net/ipv6/conf/$BRIDGE/disable_ipv6"
  # The scanner's neighbour entries on the lab bridge age in seconds, not the kernel's default half
  # a minute: an entry kept across a move (move --keep-neighbour) is re-checked, and a host that
  # left is found gone, within a few seconds of the scan's probes. The states and transitions are
  # the kernel's own, only quicker.
  per_iface_sysctl "/proc/sys/net/ipv4/neigh/$BRIDGE/base_reachable_time_ms" 4000
  per_iface_sysctl "/proc/sys/net/ipv4/neigh/$BRIDGE/delay_first_probe_time" 1
  if ! ip -4 -o addr show dev "$BRIDGE" | grep -q " $HOST_CIDR "; then
    ip addr add "$HOST_CIDR" dev "$BRIDGE"
  fi
  ip link set dev "$BRIDGE" up
}

setup_host() {
  local i=$1 ns outer inner mac ip
  ns=$(ns_of "$i")
  outer="nwl${i}a"
  inner="nwl${i}b"
  mac=$(mac_of "$i")
  ip=$(default_ip_of "$i")

  # A half-built host (from an interrupted run) is rebuilt from scratch.
  if ns_exists "$ns" && ! ip -n "$ns" link show dev eth0 >/dev/null 2>&1; then
    kill_pids $(ip netns pids "$ns" 2>/dev/null || true)
    ip netns del "$ns"
  fi
  if ! ns_exists "$ns"; then
    link_exists "$outer" && ip link del "$outer"
    link_exists "$inner" && ip link del "$inner"
    ip netns add "$ns"
    ip link add "$outer" type veth peer name "$inner"
    ip link set dev "$inner" netns "$ns"
    ip -n "$ns" link set dev "$inner" name eth0
    ip -n "$ns" link set dev eth0 address "$mac"
    ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/eth0/disable_ipv6 /proc/sys/net/ipv6/conf/lo/disable_ipv6; do [ -w "$f" ] && echo 1 > "$f"; done; true'
    ip -n "$ns" addr add "$ip/24" dev eth0
  fi
  link_exists "$outer" || die "host h$i: its veth $outer is missing; run 'lab.sh down' and 'lab.sh up' again"
  per_iface_sysctl "/proc/sys/net/ipv6/conf/$outer/disable_ipv6"
  ip link set dev "$outer" master "$BRIDGE"
  ip link set dev "$outer" up
  ip -n "$ns" link set dev lo up
  ip -n "$ns" link set dev eth0 up
  [[ -n $(current_ip "$i") ]] || ip -n "$ns" addr add "$ip/24" dev eth0
}

cmd_up() {
  need_root
  local n=${1:-4}
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= MAX_HOSTS)) || die "N_HOSTS must be 1..$MAX_HOSTS, got '$n'"
  lock
  check_owner
  check_address_space
  trap 'rc=$?; if ((rc != 0)); then echo "lab.sh: up failed (exit $rc): tearing the lab down" >&2; teardown || true; fi' EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$STATE/listeners"
  echo "$OWNER" >"$STATE/owner"
  setup_bridge
  local i
  for i in $(seq 1 "$n"); do setup_host "$i"; done
  trap - EXIT INT TERM
  log "up: bridge $BRIDGE $HOST_CIDR, hosts h1..h$n ($(default_ip_of 1)..$(default_ip_of "$n"))"
}

# ---------------------------------------------------------------------------------------------
# Hosts

require_host() {
  local i=$1
  ns_exists "$(ns_of "$i")" || die "host h$i does not exist (lab.sh up N first)"
}

cmd_stop() {
  need_root
  local i
  i=$(index_of "${1:?usage: lab.sh stop HOST}")
  lock
  require_host "$i"
  ip link set dev "nwl${i}a" down
  log "h$i stopped (off the segment)"
}

cmd_start() {
  need_root
  local i
  i=$(index_of "${1:?usage: lab.sh start HOST}")
  lock
  require_host "$i"
  ip link set dev "nwl${i}a" up
  log "h$i started"
}

cmd_move() {
  need_root
  local i new old j
  i=$(index_of "${1:?usage: lab.sh move HOST NEW_IP}")
  new=${2:?usage: lab.sh move HOST NEW_IP}
  local keep=${3:-}
  [[ -z $keep || $keep == --keep-neighbour ]] || die "usage: lab.sh move HOST NEW_IP [--keep-neighbour]"
  valid_lab_ip "$new" || die "NEW_IP must be an address in 10.66.0.2..10.66.0.254, got '$new'"
  lock
  require_host "$i"
  old=$(current_ip "$i")
  [[ $old != "$new" ]] || { log "h$i already has $new"; return 0; }
  for j in $(host_indexes); do
    [[ $j == "$i" ]] && continue
    [[ $(current_ip "$j") != "$new" ]] || die "$new is already used by h$j"
  done
  local ns
  ns=$(ns_of "$i")
  ip -n "$ns" addr flush dev eth0 scope global
  ip -n "$ns" addr add "$new/24" dev eth0
  if [[ -z $keep ]]; then
    # Forget the old address on the scanner's side too, as a real network would after a while.
    [[ -z $old ]] || ip neigh del "$old" dev "$BRIDGE" 2>/dev/null || true
  elif [[ -n $old ]]; then
    # The scanner still believes the old address is this MAC, and will not re-check it for a while.
    ip neigh replace "$old" lladdr "$(mac_of "$i")" dev "$BRIDGE" nud reachable
  fi
  # A real host's SSH server follows its address: the lab's listens on one address only.
  if [[ $(cut -f1 "$(listener_base "$i" 22).info" 2>/dev/null) == sshd ]]; then start_sshd "$i" >/dev/null; fi
  log "h$i moved ${old:-?} -> $new (MAC $(current_mac "$i") kept)"
}

cmd_setmac() {
  need_root
  local i mac ip
  i=$(index_of "${1:?usage: lab.sh setmac HOST MAC}")
  mac=${2:?usage: lab.sh setmac HOST MAC}
  [[ $mac =~ ^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$ ]] || die "MAC must look like 02:66:00:66:01:03, got '$mac'"
  # Unicast only (the lowest bit of the first octet clear).
  (( (16#${mac:0:2} & 1) == 0 )) || die "MAC must be a unicast address, got '$mac'"
  lock
  require_host "$i"
  ip -n "$(ns_of "$i")" link set dev eth0 address "$mac"
  ip=$(current_ip "$i")
  [[ -z $ip ]] || ip neigh del "$ip" dev "$BRIDGE" 2>/dev/null || true
  log "h$i has MAC $mac"
}

# The host's MAC as it is now (setmac may have changed it), else the fixed one.
current_mac() {
  local mac
  mac=$(ip -n "$(ns_of "$1")" -o link show dev eth0 2>/dev/null | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p' | tr 'a-f' 'A-F')
  echo "${mac:-$(mac_of "$1")}"
}

cmd_neigh_flush() {
  need_root
  # The neighbour entries of the lab's own bridge only.
  link_exists "$BRIDGE" || return 0
  ip neigh flush dev "$BRIDGE" 2>/dev/null || true
}

cmd_ip() { local i; i=$(index_of "${1:?usage: lab.sh ip HOST}"); require_host "$i"; current_ip "$i"; }
cmd_mac() { local i; i=$(index_of "${1:?usage: lab.sh mac HOST}"); echo "$(mac_of "$i")"; }

cmd_hosts() {
  local i state flags
  for i in $(host_indexes); do
    state=down
    flags=$(ip -o link show dev "nwl${i}a" 2>/dev/null || true)
    [[ $flags =~ [\<,]UP[,\>] ]] && state=up
    echo "h$i $(ns_of "$i") $(current_ip "$i") $(current_mac "$i") $state"
  done
}

# ---------------------------------------------------------------------------------------------
# Listeners and filters

cmd_listen() {
  need_root
  local usage='usage: lab.sh listen HOST PORT banner|http TEXT'
  local i port kind text
  i=$(index_of "${1:?$usage}")
  port=${2:?$usage}
  kind=${3:?$usage}
  text=${4:?$usage}
  check_listen_args "$usage" "$port" "$kind"
  lock
  require_host "$i"
  start_listener "$(ns_of "$i")" "$i" "$port" "$kind" "$text"
}

cmd_unlisten() {
  need_root
  local i port
  i=$(index_of "${1:?usage: lab.sh unlisten HOST PORT}")
  port=${2:?usage: lab.sh unlisten HOST PORT}
  lock
  stop_listener "$(listener_base "$i" "$port")"
  rm -f "$(listener_base "$i" "$port").info"
}

# start_sshd HOST_INDEX: (re)starts the host's sshd on its current address, port 22 (replacing any
# other listener there), waits until it listens, and prints its host key's fingerprint.
start_sshd() {
  local i=$1 ns ip dir key base pid fingerprint
  [[ -x $SSHD ]] || die "no SSH server at $SSHD (apt-get install openssh-server)"
  command -v ssh-keygen >/dev/null || die "ssh-keygen is not installed (apt-get install openssh-client)"
  ns=$(ns_of "$i")
  ip=$(current_ip "$i")
  [[ -n $ip ]] || die "h$i has no address"
  dir=$STATE/sshd/h$i
  key=$dir/ssh_host_ed25519_key
  mkdir -p "$dir"
  chmod 700 "$STATE/sshd" "$dir"
  # One host key per host and lab run: the same across restarts, moves and MAC changes.
  [[ -s $key ]] || ssh-keygen -q -t ed25519 -N '' -C "nwlab-h$i" -f "$key"
  [[ -d /run/sshd ]] || install -d -m 0755 -o root -g root /run/sshd
  cat >"$dir/sshd_config" <<CONFIG
# Netwarden namespace lab, host h$i: shows its host key to a scanner; nobody can log in.
Port 22
AddressFamily inet
ListenAddress $ip
HostKey $key
PidFile $dir/sshd.pid
UsePAM no
PermitRootLogin no
DenyUsers *
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
PubkeyAuthentication yes
AuthenticationMethods publickey
AuthorizedKeysFile none
AuthorizedPrincipalsFile none
MaxAuthTries 1
MaxSessions 0
ForceCommand /bin/false
DisableForwarding yes
PermitTTY no
PermitTunnel no
PermitUserRC no
LoginGraceTime 10
UseDNS no
PrintMotd no
LogLevel INFO
CONFIG
  base=$(listener_base "$i" 22)
  stop_listener "$base"
  "$SSHD" -t -f "$dir/sshd_config" 2>"$base.log" || die "sshd refused the lab's configuration for h$i: $(tail -n 5 "$base.log")"
  # setsid and `ip netns exec` exec into sshd: the PID is sshd's (-D: it stays in the foreground).
  ip netns exec "$ns" setsid "$SSHD" -D -e -f "$dir/sshd_config" </dev/null >"$base.log" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$base.pid"
  for _ in $(seq 1 100); do
    [[ -n $(ip netns exec "$ns" ss -Hltn "src $ip:22" 2>/dev/null) ]] && break
    pid_alive "$pid" || break
    sleep 0.05
  done
  if [[ -z $(ip netns exec "$ns" ss -Hltn "src $ip:22" 2>/dev/null) ]]; then
    kill_pids "$pid"
    rm -f "$base.pid"
    die "sshd on h$i did not start: $(tail -n 5 "$base.log" 2>/dev/null)"
  fi
  fingerprint=$(ssh-keygen -l -f "$key.pub" | awk '{print $2}')
  printf 'sshd\t%s\n' "$fingerprint" >"$base.info"
  log "h$i runs sshd on $ip:22 (host key $fingerprint)"
  echo "$fingerprint"
}

cmd_sshd() {
  need_root
  local i
  i=$(index_of "${1:?usage: lab.sh sshd HOST}")
  lock
  require_host "$i"
  start_sshd "$i"
}

iptables_in() {
  # Inside the host's namespace only: the scanning host's firewall is never touched.
  local ns=$1
  shift
  ip netns exec "$ns" iptables -w 5 "$@"
}

cmd_filter() {
  need_root
  local i port ns
  i=$(index_of "${1:?usage: lab.sh filter HOST PORT}")
  port=${2:?usage: lab.sh filter HOST PORT}
  [[ $port =~ ^[0-9]+$ ]] && ((port >= 1 && port <= 65535)) || die "PORT must be 1..65535, got '$port'"
  lock
  require_host "$i"
  ns=$(ns_of "$i")
  iptables_in "$ns" -C INPUT -p tcp --dport "$port" -j DROP 2>/dev/null || iptables_in "$ns" -A INPUT -p tcp --dport "$port" -j DROP
  log "h$i drops tcp/$port"
}

cmd_unfilter() {
  need_root
  local i port ns
  i=$(index_of "${1:?usage: lab.sh unfilter HOST PORT}")
  port=${2:?usage: lab.sh unfilter HOST PORT}
  lock
  require_host "$i"
  ns=$(ns_of "$i")
  while iptables_in "$ns" -C INPUT -p tcp --dport "$port" -j DROP 2>/dev/null; do
    iptables_in "$ns" -D INPUT -p tcp --dport "$port" -j DROP
  done
}

# ---------------------------------------------------------------------------------------------

cmd_status() {
  if ! link_exists "$BRIDGE"; then
    echo "bridge $BRIDGE: absent"
  else
    echo "bridge $BRIDGE: $(ip -4 -o addr show dev "$BRIDGE" | awk '{print $4}' | head -n1) $(ip -o link show dev "$BRIDGE" | grep -q '[<,]UP[,>]' && echo up || echo down)"
  fi
  echo "br_netfilter: bridge-nf-call-iptables=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 'n/a (not loaded)')"
  [[ -f $STATE/owner ]] && echo "owner: pid $(cat "$STATE/owner")$(pid_alive "$(cat "$STATE/owner")" || echo ' (gone)')"
  local line i port f drops
  while read -r line; do
    [[ -n $line ]] || continue
    echo "host $line"
    i=${line%% *}
    i=${i#h}
    for f in "$STATE"/listeners/h"$i"-*.pid; do
      [[ -e $f ]] || continue
      port=${f##*-}
      port=${port%.pid}
      echo "  tcp/$port $(cut -f1,2 "${f%.pid}.info" 2>/dev/null | tr '\t' ' ') pid $(cat "$f")$(pid_alive "$(cat "$f")" || echo ' (dead)')"
    done
    drops=$(ip netns exec "$(ns_of "$i")" iptables -w 5 -S INPUT 2>/dev/null | awk '/-j DROP/ {for (k = 1; k <= NF; k++) if ($k == "--dport") print $(k + 1)}' | paste -sd, - || true)
    [[ -z $drops ]] || echo "  drops tcp/$drops"
  done < <(cmd_hosts)
}

usage() { sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

main() {
  local cmd=${1:-}
  [[ $# -gt 0 ]] && shift
  case $cmd in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status ;;
    hosts) cmd_hosts ;;
    listen) cmd_listen "$@" ;;
    unlisten) cmd_unlisten "$@" ;;
    sshd) cmd_sshd "$@" ;;
    filter) cmd_filter "$@" ;;
    unfilter) cmd_unfilter "$@" ;;
    stop) cmd_stop "$@" ;;
    start) cmd_start "$@" ;;
    move) cmd_move "$@" ;;
    ip) cmd_ip "$@" ;;
    mac) cmd_mac "$@" ;;
    setmac) cmd_setmac "$@" ;;
    neigh-flush) cmd_neigh_flush ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
