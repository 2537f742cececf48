#!/usr/bin/env bash
# The command line as a whole: an unknown command is a usage error (exit 2) that names it and lists the
# commands, with or without --help, so that a script that mistypes a command fails; the main help and a
# command's help still exit 0.
source "$2/tests/support/e2e.sh"

# The commands the main help lists, in its order: the message lists the same.
expect_rc 0 "$ortkit" --help
commands="$(sed -n '/^Subcommands:/,$p' "$work/out" | awk 'NR > 1 && NF { print $1 }' | paste -sd, - | sed 's/,/, /g')"
[ -n "$commands" ] || fail "the main help lists no commands"
for args in "frobnicate" "frobnicate --help" "frobnicate model.onnx --format json" "frobnicate -h"; do
  # shellcheck disable=SC2086
  expect_rc 2 "$ortkit" $args
  expect_msg "unknown command 'frobnicate'"
  expect_msg "the commands are: $commands"
done
expect_rc 2 "$ortkit" Check  # commands are lower case, as written in the help
expect_msg "unknown command 'Check'"

expect_rc 0 "$ortkit" --help
expect_msg "Subcommands:"
expect_rc 0 "$ortkit" check --help
expect_msg "Usage: ortkit check"
expect_rc 0 "$ortkit" --version
expect_msg "^ortkit "
expect_rc 2 "$ortkit"
expect_msg "A subcommand is required"
echo "cli: OK"
