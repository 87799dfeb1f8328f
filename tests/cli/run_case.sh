#!/usr/bin/env bash
# Runs one command-line test case, a tests/cli/cases/*.case file (format: tests/cli/README.md).
# usage: run_case.sh CASE_FILE DDLSIM BUILD_DIR SOURCE_DIR   (run from SOURCE_DIR, as ctest does)
set -u
case_file=$1 ddlsim=$2 build_dir=$3 source_dir=$4

# Parse the file into blocks: one per `run:` line, with its expected exit code and stream patterns.
runs=() exits=() outs=() errs=() absents=() keeps=() skip=""
n=-1
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  case $line in '' | '#'*) continue ;; esac
  key=${line%%:*} value=${line#*:}
  [ "$key" = "$line" ] && { echo "$case_file:$lineno: expected 'key: value'"; exit 2; }
  value=${value# }
  case $key in
    name) ;; # read by CMake
    skip) skip=$value ;;
    run) n=$((n + 1)) runs[n]=$value exits[n]=0 outs[n]="*" errs[n]="-" absents[n]="" keeps[n]="" ;;
    exit | stdout | stderr | absent | unchanged)
      [ $n -lt 0 ] && { echo "$case_file:$lineno: '$key:' before any 'run:'"; exit 2; }
      case $key in
        exit) exits[n]=$value ;;
        stdout) if [ "${outs[n]}" = "*" ]; then outs[n]=$value; else outs[n]+=$'\n'$value; fi ;;
        stderr) errs[n]=$value ;;
        absent) absents[n]+=$value$'\n' ;;
        unchanged) keeps[n]+=$value$'\n' ;;
      esac ;;
    *) echo "$case_file:$lineno: unknown key '$key'"; exit 2 ;;
  esac
done <"$case_file"
[ $n -lt 0 ] && { echo "$case_file: no 'run:' line"; exit 2; }

out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

check() { # stream file pattern: '-' must be empty, '*' anything, else an extended regex some line matches
  local stream=$1 file=$2 re=$3
  if [ "$re" = "-" ]; then
    [ -s "$file" ] && { echo "$stream should be empty"; return 1; }
  elif [ "$re" != "*" ] && ! grep -Eq -- "$re" "$file"; then
    echo "$stream does not match /$re/"; return 1
  fi
  return 0
}

paths() { # the paths of a newline-separated list, with @BUILD@ and @SRC@ substituted
  local p
  while IFS= read -r p; do
    [ -z "$p" ] && continue
    p=${p//@BUILD@/$build_dir}
    echo "${p//@SRC@/$source_dir}"
  done <<<"$1"
}

for ((i = 0; i <= n; i++)); do
  mapfile -t absent_paths < <(paths "${absents[i]}")
  mapfile -t kept_paths < <(paths "${keeps[i]}")
  for p in "${absent_paths[@]}"; do rm -f -- "$p"; done
  sums=()
  for p in "${kept_paths[@]}"; do sums+=("$(sha256sum <"$p" 2>/dev/null || echo missing)"); done
  # Split like the shell (quotes), then substitute the paths word by word: paths may hold spaces.
  eval "words=(${runs[i]})" || { echo "$case_file: cannot split: ${runs[i]}"; exit 2; }
  for w in "${!words[@]}"; do
    v=${words[w]//@DDLSIM@/$ddlsim}
    v=${v//@BUILD@/$build_dir}
    words[w]=${v//@SRC@/$source_dir}
  done
  "${words[@]}" >"$out" 2>"$err"
  rc=$?
  # An AddressSanitizer build (scripts/sanitize.sh) warns once per process, on stderr, that SimGrid's context
  # switches hide the stack from it (docs/safety.md, "Sanitizers"): those three lines, and only they, are dropped.
  if grep -q '^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return' "$err"; then
    sed -i -e '/^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return: /d' \
      -e '/^False positive error reports may follow$/d' \
      -e '/^For details see https:\/\/github.com\/google\/sanitizers\/issues\/189$/d' "$err"
  fi
  [ -n "$skip" ] && [ "$rc" = "$skip" ] && { echo "skipped: exit $rc from: ${words[*]}"; cat "$out" "$err"; exit "$rc"; }
  fail=0
  [ "$rc" != "${exits[i]}" ] && { echo "exit code $rc, expected ${exits[i]}"; fail=1; }
  while IFS= read -r re; do check stdout "$out" "$re" || fail=1; done <<<"${outs[i]}"
  check stderr "$err" "${errs[i]}" || fail=1
  if [ "${errs[i]}" != "-" ] && [ "${errs[i]}" != "*" ] && [ "$(wc -l <"$err")" -ne 1 ]; then
    echo "stderr should be exactly one line"; fail=1
  fi
  for p in "${absent_paths[@]}"; do
    [ -e "$p" ] && { echo "$p should not have been written"; fail=1; }
    compgen -G "$p.ddlsim-*.tmp" >/dev/null && { echo "a temporary file of $p was left behind"; fail=1; }
  done
  for k in "${!kept_paths[@]}"; do
    [ "$(sha256sum <"${kept_paths[k]}" 2>/dev/null || echo missing)" = "${sums[k]}" ] ||
      { echo "${kept_paths[k]} was changed"; fail=1; }
  done
  if [ $fail -ne 0 ]; then
    echo "--- command $((i + 1)) of $((n + 1)): ${words[*]}"; echo "--- stdout:"; cat "$out"; echo "--- stderr:"; cat "$err"
    exit 1
  fi
done
exit 0
