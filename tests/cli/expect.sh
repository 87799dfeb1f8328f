#!/usr/bin/env bash
# Runs a command and checks its exit code, stdout and stderr.
# usage: expect.sh RC STDOUT_REGEX STDERR_REGEX -- command...
#   A regex of '-' means the stream must be empty. A stderr regex must match a one-line stderr.
set -u
want_rc=$1 out_re=$2 err_re=$3
shift 3
[ "$1" = "--" ] && shift
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
fail=0
if [ "$rc" != "$want_rc" ]; then echo "exit code $rc, expected $want_rc"; fail=1; fi
check() { # name file regex
  local name=$1 file=$2 re=$3
  if [ "$re" = "-" ]; then
    if [ -s "$file" ]; then echo "$name should be empty"; fail=1; fi
  elif ! grep -Eq -- "$re" "$file"; then
    echo "$name does not match /$re/"; fail=1
  fi
}
check stdout "$out" "$out_re"
check stderr "$err" "$err_re"
if [ "$err_re" != "-" ] && [ "$(wc -l <"$err")" -ne 1 ]; then echo "stderr should be exactly one line"; fail=1; fi
if [ $fail -ne 0 ]; then
  echo "--- command: $*"; echo "--- stdout:"; cat "$out"; echo "--- stderr:"; cat "$err"
fi
exit $fail
