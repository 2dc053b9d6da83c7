#!/usr/bin/env bash
# One verify case: prints "<verdict> <rel error> <backend> | <args>" (session 29's one.sh, session 32 paths).
D=${D:-.device/s32}
args="$*"
out=$(timeout 150 $D/qgemm verify --backend jit $args 2>&1); rc=$?
if ! echo "$out" | grep -q "^result"; then
  out=$(timeout 150 $D/qgemm verify --backend auto $args 2>&1); rc=$?
fi
verdict=$(echo "$out" | awk '/^result/{print $2}')
err=$(echo "$out" | awk '/^rel error/{print $3}')
be=$(echo "$out" | awk '/^backend/{print $2}')
echo "${verdict:-RC$rc} ${err:--} ${be:--} | $args"
if [ "$verdict" != "PASS" ]; then echo "$out" | sed 's/^/    /' | tail -12; fi
