#!/usr/bin/env bash
# A throwaway sshd on loopback for the pool tests (CTest fixture): keys in DIR, port PORT or the first
# free one from 2231. `start DIR [PORT]` writes DIR/env (KL_SSHD_PORT, KL_SSHD_KEY); `stop DIR` kills the
# listener and the sshd processes of its connections by their pids (dropping live sessions, as a host does).
set -euo pipefail
cmd="$1"; dir="$2"
sshd_bin=/usr/sbin/sshd
stop() {
    [ -f "$dir/sshd.pid" ] || return 0
    local pid; pid=$(cat "$dir/sshd.pid")
    local victims=("$pid") queue=("$pid")
    while [ ${#queue[@]} -gt 0 ]; do
        local p="${queue[0]}"; queue=("${queue[@]:1}")
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
            if [ "$(cat /proc/"$c"/comm 2>/dev/null)" = sshd ]; then victims+=("$c"); queue+=("$c"); fi
        done
    done
    kill -9 "${victims[@]}" 2>/dev/null || true
    rm -f "$dir/sshd.pid"
}
case "$cmd" in
start)
    [ -x "$sshd_bin" ] || { echo "sshd_service: $sshd_bin missing (scripts/install-deps.sh installs openssh-server)" >&2; exit 1; }
    mkdir -p "$dir"; chmod 700 "$dir"
    stop
    [ -f "$dir/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
    [ -f "$dir/user_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/user_key"
    cp "$dir/user_key.pub" "$dir/authorized_keys"; chmod 600 "$dir/authorized_keys"
    mkdir -p /run/sshd
    port="${3:-}"
    if [ -z "$port" ]; then
        for p in $(seq 2231 2299); do
            if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then port=$p; break; fi
        done
    fi
    cat > "$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
MaxStartups 50
PidFile $dir/sshd.pid
CONF
    "$sshd_bin" -f "$dir/sshd_config" -E "$dir/sshd.log"
    for _ in $(seq 50); do [ -s "$dir/sshd.pid" ] && (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
    printf 'KL_SSHD_PORT=%s\nKL_SSHD_KEY=%s\n' "$port" "$dir/user_key" > "$dir/env"
    # One real login, so that a broken setup fails here and not inside a test.
    ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -i "$dir/user_key" -p "$port" 127.0.0.1 true
    ;;
stop) stop ;;
*) echo "usage: sshd_service.sh start|stop DIR [PORT]" >&2; exit 2 ;;
esac
