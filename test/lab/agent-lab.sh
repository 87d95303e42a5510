#!/usr/bin/env bash
# Netwarden's routed-network lab for agents (issue 13 item 5): a server that cannot reach a lab
# segment, and an agent that can.
#
#   agent-lab.sh up                 namespaces nwa-server, nwa-agent and hosts nwa-h1..nwa-h3
#   agent-lab.sh down               kill the lab's processes, delete its namespaces and links
#   agent-lab.sh listen HOST PORT banner|http TEXT   a listener in the host's namespace
#   agent-lab.sh unlisten HOST PORT
#   agent-lab.sh stop HOST | start HOST              take the host off the segment / put it back
#   agent-lab.sh mac HOST           the host's fixed MAC
#   agent-lab.sh status             what exists, for people
#
# Layout (every object is the lab's own; nothing existing is touched):
#
#   root namespace ── nwa-r0 10.66.0.249/30 ═══ 10.66.0.250/30 nwa-s0 ── nwa-server
#                                                                 10.66.0.253/30 nwa-s1
#                                                                        ║
#                                                                 10.66.0.254/30 nwa-a1
#   nwa-agent: bridge nwlab1 10.66.1.1/24 ── nwa-h1 10.66.1.11, nwa-h2 10.66.1.12, nwa-h3 10.66.1.13
#
# The test (root namespace) reaches the server at 10.66.0.250; the agent reaches it at 10.66.0.253.
# nwa-server has routes to its two /30 links only: no route to 10.66.1.0/24 (checked by `up`) and no
# default route, so nothing the server does can reach the lab hosts, or anything else. The bridge
# nwlab1 lives inside nwa-agent, so frames between the agent and the hosts never cross the root
# namespace's firewall. Host i is namespace nwa-h<i>, veth nwa-h<i>a (a port of nwlab1, in
# nwa-agent) / eth0 inside, address 10.66.1.(10+i), MAC 02:66:01:00:00:0<i> (locally administered).
#
# NETWORK SAFETY. The lab creates and deletes only its own objects: namespaces named nwa-*, the
# root-side veth nwa-r0, and what lives inside its namespaces. It never touches eth0 or any other
# existing interface, changes no global sysctl, adds no iptables rule and no default route anywhere.
# `up` refuses to run when another root-namespace interface has an address in 10.66.0.248/30.
#
# State (listener PIDs and logs) lives in /run/nwa-lab; /run/lock/nwa-lab.lock serialises calls.
# Idempotent: `up` tears down what a previous run left and builds afresh; `down` with nothing to remove is fine.
set -euo pipefail

STATE=${NWA_LAB_STATE_DIR:-/run/nwa-lab}
LOCK=/run/lock/nwa-lab.lock
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SERVER=$HERE/lab_server.py
LAB_NAME=agent-lab.sh
# shellcheck source=lab-common.sh
source "$HERE/lab-common.sh"
HOSTS=3
BRIDGE=nwlab1

index_of() {
  local h=$1
  h=${h#nwa-}
  h=${h#h}
  [[ $h =~ ^[1-9]$ ]] && ((h <= HOSTS)) || die "not a lab host: '$1' (h1..h$HOSTS)"
  echo "$h"
}
mac_of() { printf '02:66:01:00:00:%02X' "$1"; }
ip_of() { echo "10.66.1.$((10 + $1))"; }

ns_exists() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }
lab_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^nwa-(server|agent|h[0-9]+)$' || true; }

teardown() {
  local pids=() ns f
  if [[ -d $STATE/listeners ]]; then
    for f in "$STATE"/listeners/*.pid; do
      [[ -e $f ]] || continue
      pids+=("$(cat "$f")")
    done
  fi
  # Every process still inside a lab namespace (a server or agent a test left behind included).
  for ns in $(lab_namespaces); do
    # shellcheck disable=SC2207
    pids+=($(ip netns pids "$ns" 2>/dev/null || true))
  done
  kill_pids "${pids[@]}"
  # The root-side link first (its peer goes with it): deleting a namespace only starts the kernel's
  # clean-up, which can leave nwa-r0 and its 10.66.0.249/30 behind for seconds on a busy machine,
  # and the nwlab0 lab refuses to start while any interface holds an address in 10.66.0.0/24.
  ip link del nwa-r0 2>/dev/null || true
  for ns in $(lab_namespaces); do
    ip netns del "$ns" 2>/dev/null || log "could not delete namespace $ns"
  done
  for _ in $(seq 1 100); do
    ip link show nwa-r0 >/dev/null 2>&1 || break
    ip link del nwa-r0 2>/dev/null || true
    sleep 0.2
  done
  ! ip link show nwa-r0 >/dev/null 2>&1 || log "nwa-r0 is still there after 20 s"
  rm -rf "$STATE"
}

cmd_down() {
  need_root
  lock
  teardown
  log "down"
}

quiet_ipv6() {
  # Interface-scoped only: no IPv6 chatter on the lab's links.
  ip netns exec "$1" sh -c 'for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do [ -w "$f" ] && echo 1 > "$f"; done; true'
}

add_ns() {
  ip netns add "$1"
  ip -n "$1" link set dev lo up
}

cmd_up() {
  need_root
  lock
  local clash
  clash=$(ip -4 -o addr show 2>/dev/null | awk '$2 != "nwa-r0" && $4 ~ /^10\.66\.0\.(24[89]|25[01])\// {print $2 " " $4}' || true)
  [[ -z $clash ]] || die "refusing to build the lab: 10.66.0.248/30 is already used by: $clash"
  teardown
  trap 'rc=$?; if ((rc != 0)); then echo "agent-lab.sh: up failed (exit $rc): tearing the lab down" >&2; teardown || true; fi' EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$STATE/listeners"

  add_ns nwa-server
  add_ns nwa-agent
  # root <-> server
  ip link add nwa-r0 type veth peer name nwa-s0
  ip link set dev nwa-s0 netns nwa-server
  [[ -w /proc/sys/net/ipv6/conf/nwa-r0/disable_ipv6 ]] && echo 1 >/proc/sys/net/ipv6/conf/nwa-r0/disable_ipv6
  ip addr add 10.66.0.249/30 dev nwa-r0
  ip link set dev nwa-r0 up
  # server <-> agent
  ip -n nwa-server link add nwa-s1 type veth peer name nwa-a1
  ip -n nwa-server link set dev nwa-a1 netns nwa-agent
  quiet_ipv6 nwa-server
  ip -n nwa-server addr add 10.66.0.250/30 dev nwa-s0
  ip -n nwa-server addr add 10.66.0.253/30 dev nwa-s1
  ip -n nwa-server link set dev nwa-s0 up
  ip -n nwa-server link set dev nwa-s1 up
  # the agent's segment
  ip -n nwa-agent link add "$BRIDGE" type bridge stp_state 0 forward_delay 0
  ip -n nwa-agent link set dev "$BRIDGE" address 02:66:01:00:00:fe
  quiet_ipv6 nwa-agent
  ip -n nwa-agent addr add 10.66.0.254/30 dev nwa-a1
  ip -n nwa-agent addr add 10.66.1.1/24 dev "$BRIDGE"
  ip -n nwa-agent link set dev nwa-a1 up
  ip -n nwa-agent link set dev "$BRIDGE" up

  local i ns
  for i in $(seq 1 "$HOSTS"); do
    ns=nwa-h$i
    add_ns "$ns"
    ip -n nwa-agent link add "nwa-h${i}a" type veth peer name "nwa-h${i}b"
    ip -n nwa-agent link set dev "nwa-h${i}b" netns "$ns"
    ip -n "$ns" link set dev "nwa-h${i}b" name eth0
    ip -n "$ns" link set dev eth0 address "$(mac_of "$i")"
    quiet_ipv6 "$ns"
    ip -n "$ns" addr add "$(ip_of "$i")/24" dev eth0
    ip -n "$ns" link set dev eth0 up
    ip -n nwa-agent link set dev "nwa-h${i}a" master "$BRIDGE"
    ip -n nwa-agent link set dev "nwa-h${i}a" up
  done

  # The point of the lab: the server cannot reach the hosts.
  if ip -n nwa-server route get "$(ip_of 1)" >/dev/null 2>&1; then die "nwa-server has a route to $(ip_of 1); it must not"; fi
  trap - EXIT INT TERM
  log "up: server 10.66.0.250 (agent side 10.66.0.253), agent 10.66.1.1 on $BRIDGE, hosts $(ip_of 1)..$(ip_of "$HOSTS")"
}

cmd_listen() {
  need_root
  local usage='usage: agent-lab.sh listen HOST PORT banner|http TEXT'
  local i port kind text
  i=$(index_of "${1:?$usage}")
  port=${2:?$usage}
  kind=${3:?$usage}
  text=${4:?$usage}
  check_listen_args "$usage" "$port" "$kind"
  lock
  ns_exists "nwa-h$i" || die "host h$i does not exist (agent-lab.sh up first)"
  start_listener "nwa-h$i" "$i" "$port" "$kind" "$text"
}

cmd_unlisten() {
  need_root
  local i port
  i=$(index_of "${1:?usage: agent-lab.sh unlisten HOST PORT}")
  port=${2:?usage: agent-lab.sh unlisten HOST PORT}
  lock
  stop_listener "$(listener_base "$i" "$port")"
}

cmd_stop() {
  need_root
  local i
  i=$(index_of "${1:?usage: agent-lab.sh stop HOST}")
  lock
  ip -n nwa-agent link set dev "nwa-h${i}a" down
  log "h$i stopped (off the segment)"
}

cmd_start() {
  need_root
  local i
  i=$(index_of "${1:?usage: agent-lab.sh start HOST}")
  lock
  ip -n nwa-agent link set dev "nwa-h${i}a" up
}

cmd_status() {
  local ns
  for ns in $(lab_namespaces); do
    echo "$ns: $(ip -n "$ns" -4 -o addr show scope global 2>/dev/null | awk '{print $2 "=" $4}' | paste -sd' ' -)"
  done
  [[ -n $(lab_namespaces) ]] || echo "absent"
}

main() {
  local cmd=${1:-}
  [[ $# -gt 0 ]] && shift
  case $cmd in
    up) cmd_up ;;
    down) cmd_down ;;
    listen) cmd_listen "$@" ;;
    unlisten) cmd_unlisten "$@" ;;
    stop) cmd_stop "$@" ;;
    start) cmd_start "$@" ;;
    mac) mac_of "$(index_of "${1:?usage: agent-lab.sh mac HOST}")" ;;
    status) cmd_status ;;
    *) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
}

main "$@"
