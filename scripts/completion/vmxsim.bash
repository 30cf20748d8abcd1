# bash completion for vmxsim: commands, each command's options (read from its --help), the
# policy presets and knobs, the CPU profiles, and files where a file is expected.
# `make install` puts it where bash-completion finds it; or: . scripts/completion/vmxsim.bash

_vmxsim_commands() { "$1" --commands 2>/dev/null; }

# The long and short options a command's --help lists ("  -p, --policy P", "      --no-db").
_vmxsim_options() {
  "$1" ${2:+"$2"} --help 2>/dev/null |
    sed -n 's/^ \{2,\}\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' | sort -u
}

_vmxsim_presets() { "$1" policies --format csv 2>/dev/null | awk -F, '$1 == "preset" { print $2 }'; }
_vmxsim_knobs() { "$1" policies --format csv 2>/dev/null | awk -F, '$1 == "knob" { print $2 "=" }'; }
_vmxsim_cpus() { "$1" cpus --format csv 2>/dev/null | awk -F, 'NR > 1 { print $1 }'; }

_vmxsim() {
  local prog=$1 cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) cmd=${COMP_WORDS[i]}; break ;;
    esac
  done
  case $prev in
    --policy|-p)
      # presets joined with '+': complete the part after the last '+'
      local head=${cur%+*} words
      [ "$head" = "$cur" ] && head= || head=$head+
      words=$(_vmxsim_presets "$prog" | sed "s/^/$head/")
      COMPREPLY=($(compgen -W "$words" -- "$cur")); return ;;
    --cpu|-c) COMPREPLY=($(compgen -W "$(_vmxsim_cpus "$prog")" -- "$cur") $(compgen -f -- "$cur")); return ;;
    --set) COMPREPLY=($(compgen -W "$(_vmxsim_knobs "$prog")" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
    --format|-f) COMPREPLY=($(compgen -W "table json csv" -- "$cur")); return ;;
    --db|-o|--output|--input|--batch) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  if [ -z "$cmd" ] && [[ $cur != -* ]]; then
    COMPREPLY=($(compgen -W "$(_vmxsim_commands "$prog")" -- "$cur") $(compgen -f -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    case $cmd in
      ''|*.*|*/*) cmd=run ;;                       # vmxsim [options] TRACE is a run
    esac
    COMPREPLY=($(compgen -W "$(_vmxsim_options "$prog" "$cmd")" -- "$cur"))
    return
  fi
  if [ "$cmd" = cpus ]; then                      # cpus --controls CPU...: profiles or files
    COMPREPLY=($(compgen -W "$(_vmxsim_cpus "$prog")" -- "$cur") $(compgen -f -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _vmxsim vmxsim ./vmxsim
