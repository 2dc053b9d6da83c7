#!/usr/bin/env bash
# One verify case on .device/ps: prints "<verdict> <rel error> <backend> | <args>" (session 18's
# one.sh; jit first, then the router's choice where jit declines).
args="$*"
out=$(timeout 150 .device/ps/qgemm verify --backend jit $args 2>&1); rc=$?
if ! echo "$out" | grep -q "^result"; then
  out=$(timeout 150 .device/ps/qgemm verify --backend auto $args 2>&1); rc=$?
fi
verdict=$(echo "$out" | awk '/^result/{print $2}')
err=$(echo "$out" | awk '/^rel error/{print $3}')
be=$(echo "$out" | awk '/^backend/{print $2}')
echo "${verdict:-RC$rc} ${err:--} ${be:--} | $args"
if [ "$verdict" != "PASS" ]; then echo "$out" | sed 's/^/    /' | tail -12; fi
