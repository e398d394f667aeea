# shellcheck shell=bash disable=SC2154
# Shared by the command-line tests that signal a run in the background (test_checkpoint_cli.sh,
# test_signal_after_fit.sh); source it after setting `tmp` (a scratch folder).

# in_background DIR [LOG] -- COMMAND...: starts COMMAND in DIR with its output in $tmp/out and
# $tmp/err (with LOG: in LOG.out and LOG.err), and SIGINT not ignored (job control on: a script's
# background jobs otherwise ignore it, and the app leaves an ignored signal ignored). Sets `pid`.
in_background() {
  local dir=$1 log=$tmp/; shift
  if [ "$1" != "--" ]; then log=$1.; shift; fi
  shift
  set -m
  (cd "$dir" && exec "$@") > "${log}out" 2> "${log}err" &
  pid=$!
  set +m
}

# wait_for CONDITION...: polls the condition for up to 30 s.
wait_for() {
  local i
  for i in $(seq 1500); do "$@" && return 0; sleep 0.02; done
  return 1
}
