#!/usr/bin/env bash
# Runs a command across N "hosts" on this machine: each host is a Linux
# network namespace with its own UTS namespace and hostname, joined to the
# others by a data network (veth pairs into a switch namespace, optionally
# rate-shaped with tbf) and a separate unshaped control network for mpirun's
# daemons (docs/Runtime.md, "Several hosts"). The command runs in host 0
# with MULTIHOST_MPIRUN set to an mpirun command line that places
# --ranks-per-host ranks on every host; every namespace is torn down at the
# end, also on failure, interrupt or TERM (timeout(1)); what runs in them is
# killed. Prints each host's data-link bytes sent
# and received (tc counters) after the command, to stderr.
#
#   scripts/multihost.sh [--hosts 2] [--ranks-per-host 1] [--rate 1gbit]
#                        -- COMMAND [ARGS...]
#   e.g. scripts/multihost.sh -- sh -c '$MULTIHOST_MPIRUN build/bin/dist-run step.mlir'
#
# Exits 77 (with the reason) when namespaces cannot be made here (not root,
# no iproute2, no unshare), 1 instead under DIST_REQUIRE_ALL_TIERS=1;
# otherwise the command's exit status.
# Facts this relies on: ../shared/MACHINE-NOTES.md, "Several hosts on one
# machine"; OpenMPI names its shared-memory segments after the hostname, so
# each host needs its own (a segfault in MPI_Comm_dup otherwise).
set -euo pipefail

hosts=2 per_host=1 rate=
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --ranks-per-host) per_host=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "multihost: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "multihost: no command given (after --)" >&2; exit 2; }
case $hosts in ''|*[!0-9]*) echo "multihost: --hosts must be a number" >&2; exit 2 ;; esac
[ "$hosts" -ge 1 ] && [ "$hosts" -le 8 ] || { echo "multihost: --hosts in 1..8" >&2; exit 2; }

# Under DIST_REQUIRE_ALL_TIERS=1 (CI) a tier that cannot run fails.
skip() {
  if [ "${DIST_REQUIRE_ALL_TIERS:-0}" = 1 ]; then
    echo "multihost: cannot run ($1), and DIST_REQUIRE_ALL_TIERS=1 makes that a failure" >&2
    exit 1
  fi
  echo "multihost: skipped: $1" >&2; exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
for tool in ip tc unshare mpirun; do
  command -v "$tool" >/dev/null || skip "'$tool' is not installed"
done

# Names unique to this run, so that concurrent runs do not collide.
tag=dmh$$
sw=$tag-sw
host() { echo "$tag-h$1"; }
data_ip() { echo "10.201.$(($$ % 200)).$(($1 + 1))"; }
ctl_ip() { echo "10.202.$(($$ % 200)).$(($1 + 1))"; }
work=$(mktemp -d)

teardown() {
  local status=$?
  # Deleting a namespace does not end what runs in it (mpirun, its daemon,
  # the ranks): kill those first.
  for i in $(seq 0 $((hosts - 1))); do
    ip netns pids "$(host "$i")" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  done
  for i in $(seq 0 $((hosts - 1))); do ip netns del "$(host "$i")" 2>/dev/null || true; done
  ip netns del "$sw" 2>/dev/null || true
  rm -rf "$work"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

ip netns add "$sw" 2>/dev/null || skip "cannot create a network namespace"
ip -n "$sw" link set lo up
for net in d c; do
  ip -n "$sw" link add name "sw$net" type bridge
  ip -n "$sw" link set "sw$net" up
done
for i in $(seq 0 $((hosts - 1))); do
  h=$(host "$i")
  ip netns add "$h"
  ip -n "$h" link set lo up
  for net in d c; do
    ip link add name "$tag$net$i" type veth peer name "$tag$net${i}s"
    ip link set "$tag$net$i" netns "$h"
    ip link set "$tag$net${i}s" netns "$sw"
    ip -n "$sw" link set "$tag$net${i}s" master "sw$net" up
    ip -n "$h" link set "$tag$net$i" name "eth$net" up
  done
  ip -n "$h" addr add "$(data_ip "$i")/24" dev ethd
  ip -n "$h" addr add "$(ctl_ip "$i")/24" dev ethc
  if [ -n "$rate" ]; then
    # A bucket of >= ~100 us of line rate: smaller ones split TSO frames
    # and starve the link (MACHINE-NOTES.md).
    ip netns exec "$h" tc qdisc add dev ethd root tbf rate "$rate" burst 1mb latency 50ms
  fi
  echo "$(ctl_ip "$i") slots=$per_host" >> "$work/hostfile"
  echo "$(ctl_ip "$i") $h" >> "$work/hosts"
done

# mpirun starts its daemon on another host through this agent: the host
# (a control address) names the namespace; the daemon gets the host's own
# UTS namespace and hostname.
cat > "$work/agent" <<EOF
#!/bin/sh
# multihost.sh's plm_rsh_agent: AGENT [options] HOST COMMAND...
while [ "\${1#-}" != "\$1" ]; do shift; done
ns=\$(awk -v a="\$1" '\$1 == a { print \$2 }' "$work/hosts")
[ -n "\$ns" ] || { echo "multihost agent: unknown host \$1" >&2; exit 1; }
shift
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$0"; exec sh -c "\$*"' "\$ns" "\$@"
EOF
chmod +x "$work/agent"

# The environment the ranks get: PATH, LD_LIBRARY_PATH and every DIST_*
# variable set here (the watchdog, traces, checks).
forward="-x PATH${LD_LIBRARY_PATH:+ -x LD_LIBRARY_PATH}"
for v in $(env | sed -n 's/^\(DIST_[A-Za-z0-9_]*\)=.*/\1/p'); do forward="$forward -x $v"; done

data_net="10.201.$(($$ % 200)).0/24"
ctl_net="10.202.$(($$ % 200)).0/24"
export MULTIHOST_MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none \
--hostfile $work/hostfile -np $((hosts * per_host)) --map-by ppr:$per_host:node \
--mca plm_rsh_agent $work/agent --mca plm_rsh_no_tree_spawn 1 \
--mca btl tcp,vader,self --mca btl_tcp_if_include $data_net \
--mca oob_tcp_if_include $ctl_net $forward"
export MULTIHOST_HOSTS=$hosts MULTIHOST_DATA_NET=$data_net

status=0
ip netns exec "$(host 0)" unshare --uts sh -c 'hostname "$0"; exec "$@"' \
  "$(host 0)" "$@" || status=$?

for i in $(seq 0 $((hosts - 1))); do
  stats=$(ip -n "$(host "$i")" -s link show ethd)
  tx=$(echo "$stats" | awk '/TX:/ { getline; print $1, $2 }')
  rx=$(echo "$stats" | awk '/RX:/ { getline; print $1, $2 }')
  retrans=$(ip netns exec "$(host "$i")" nstat -az TcpRetransSegs 2>/dev/null |
            awk '$1 == "TcpRetransSegs" { print $2 }')
  echo "multihost: host $i data link: sent ${tx% *} bytes in ${tx#* } packets," \
    "received ${rx% *} bytes in ${rx#* } packets; TCP segments retransmitted:" \
    "${retrans:-unknown}" >&2
done
exit "$status"
