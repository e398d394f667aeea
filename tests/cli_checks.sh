# shellcheck shell=bash disable=SC2154
# Shared by the command-line tests (test_cli.sh, test_cnn_cli.sh); source it after setting
# `tmp` (a scratch folder) and `failures=0`.

# expect_status STATUS DESCRIPTION -- COMMAND...: runs COMMAND (stdout in $tmp/out, stderr in
# $tmp/err) and checks its exit status; a status-2 failure must be one line on stderr.
expect_status() {
  local want=$1 what=$2; shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"; local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit status $got, expected $want"; cat "$tmp/err"; failures=$((failures + 1))
  elif [ "$want" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -ne 1 ]; then
    echo "FAIL: $what: expected one line on stderr, got:"; cat "$tmp/err"; failures=$((failures + 1))
  else
    echo "ok: $what ($(head -c 120 "$tmp/err"))"
  fi
}

# expect_text FILE TEXT...: FILE contains every TEXT (fixed strings).
expect_text() {
  local file=$1 text; shift
  for text in "$@"; do
    grep -qF -- "$text" "$file" || { echo "FAIL: $file lacks '$text'"; failures=$((failures + 1)); }
  done
}

# no_gpu: true where no GPU can be used (then --gpu must be refused).
no_gpu() { ! command -v nvidia-smi > /dev/null || ! nvidia-smi > /dev/null 2>&1; }
