#!/usr/bin/env bash
# The scripted agent of the demo's review-and-land ending: claims its task, commits its work in
# its own git worktree (the board's hooks add the Board-Task / Board-Generation trailers) and
# finishes the task with that commit, which then waits for review.
#
# Environment: BOARD_BIN (the board binary; default `board` on PATH), DEMO_TASK (the task id),
# DEMO_FILE (the file it writes), DEMO_MESSAGE (the commit message), DEMO_PAUSE (1: stop itself
# with SIGSTOP right after its commit, as a laptop lid or a stuck process would; `board demo`
# lets the claim lapse, lets another agent take the task and resumes it: its late `done` meets
# the fence).
set -u
board=${BOARD_BIN:-board}
task=$DEMO_TASK
if ! out=$("$board" claim "$task" --json); then
    echo "$BOARD_AGENT: claim of #$task failed: $out" >&2
    exit 1
fi
gen=0
[[ $out =~ \"generation\":([0-9]+) ]] && gen=${BASH_REMATCH[1]}
echo "$DEMO_MESSAGE ($BOARD_AGENT)" >>"$DEMO_FILE"
if ! { git add "$DEMO_FILE" && git commit -q -m "$DEMO_MESSAGE"; }; then
    echo "$BOARD_AGENT: its commit for #$task failed" >&2
    exit 1
fi
if [ "${DEMO_PAUSE:-0}" = 1 ]; then
    kill -STOP $$ # paused past the lease; the late done below must be fenced
fi
if ! "$board" done "$task" --generation "$gen" --commit HEAD --note "finished by $BOARD_AGENT" >/dev/null 2>&1; then
    echo "$BOARD_AGENT: its late done of #$task (generation $gen) was rejected" >&2
fi
