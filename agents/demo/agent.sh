#!/usr/bin/env bash
# The scripted demo agent: the same loop a real agent follows (agents/INSTRUCTIONS.md), with
# `sleep` standing in for the work. Claim → work → note → done, until the backlog is finished.
#
# Environment: BOARD_BIN (the board binary; default `board` on PATH), DEMO_CRASH_ON (crash with
# SIGKILL in the middle of this agent's Nth task, or of the first task after it that nobody
# held before: a task taken over from the paused agent is finished, so the demo shows another
# agent finishing it), DEMO_PAUSE_ON (stop itself with SIGSTOP in
# the middle of its Nth task, as a laptop lid or a stuck process would; `board demo` sends
# SIGCONT once another agent holds that task), DEMO_WORK_MS (how long a task takes, ms).
set -u
board=${BOARD_BIN:-board}
crash_on=${DEMO_CRASH_ON:-0}
pause_on=${DEMO_PAUSE_ON:-0}
work_ms=${DEMO_WORK_MS:-400}
n=0
while true; do
    out=$("$board" claim --wait --timeout 60s --json)
    rc=$?
    if [ "$rc" -eq 3 ]; then
        exit 0 # the backlog is finished
    elif [ "$rc" -ne 0 ]; then
        echo "$BOARD_AGENT: claim failed with exit $rc: $out" >&2
        exit "$rc"
    fi
    [[ $out =~ \"generation\":([0-9]+) ]] && gen=${BASH_REMATCH[1]}
    [[ $out =~ \"id\":([0-9]+) ]] && task=${BASH_REMATCH[1]}
    n=$((n + 1))
    # Work: a little CPU and a little waiting, in slices, as an agent would.
    slices=$((work_ms / 100 + RANDOM % 4))
    for ((i = 0; i < slices; i++)); do
        if [ "$crash_on" -gt 0 ] && [ "$n" -ge "$crash_on" ] && [ "$gen" -eq 1 ] && [ "$i" -eq 1 ]; then
            kill -9 $$ # crash in the middle of the task
        fi
        if [ "$pause_on" -eq "$n" ] && [ "$i" -eq 1 ]; then
            kill -STOP $$ # paused past the lease; the late writes below must be fenced
        fi
        sleep 0.1
    done
    "$board" note "$task" "worked on it for $((slices * 100)) ms" >/dev/null 2>&1
    if ! "$board" done "$task" --generation "$gen" --note "finished by $BOARD_AGENT" >/dev/null 2>&1; then
        echo "$BOARD_AGENT: its late done of #$task (generation $gen) was rejected; picking other work" >&2
    fi
done
