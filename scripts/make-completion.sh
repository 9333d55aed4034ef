#!/usr/bin/env bash
# Writes the bash completion for rlcheck to stdout from the binary's own help: subcommands,
# then each subcommand's options. Usage: make-completion.sh path/to/rlcheck
set -euo pipefail
rlcheck=$1
commands="redis http compare probe serve run hook-config explain"

options_of() {
  # explain completes check ids (its list, after the heading line).
  if [[ $1 == explain ]]; then
    "$rlcheck" explain | awk 'NR > 1 { print $1 }' | tr '\n' ' '
    return
  fi
  "$rlcheck" "$1" --help | grep -oE '^  -[-a-zA-Z0-9,]+' | tr ',' '\n' | sed 's/^ *//' | sort -u |
    tr '\n' ' '
}

printf '# bash completion for rlcheck (generated from its --help)\n'
printf '_rlcheck() {\n'
printf '  local current=${COMP_WORDS[COMP_CWORD]} command=${COMP_WORDS[1]}\n'
printf '  if [[ $COMP_CWORD -eq 1 ]]; then\n'
printf '    COMPREPLY=($(compgen -W "%s --version --help" -- "$current"))\n' "$commands"
printf '    return\n  fi\n'
printf '  case $command in\n'
for command in $commands; do
  printf '    %s) COMPREPLY=($(compgen -W "%s" -- "$current")) ;;\n' "$command" "$(options_of "$command")"
done
printf '  esac\n'
printf '  if [[ ${#COMPREPLY[@]} -eq 0 ]]; then COMPREPLY=($(compgen -f -- "$current")); fi\n'
printf '}\n'
printf 'complete -o default -F _rlcheck rlcheck\n'
