//! Shell completions: clap's, with policy names (built-in and local, asked of the installed
//! binary at completion time, so new local policies complete without regenerating) for
//! `--policy`/`-p` and `policy show`. Directories for `--dir` come from clap's value hints.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

/// The command that lists the policy names, one per line.
const NAMES: &str = "iopscheck policy list --names 2>/dev/null";

const BASH: &str = r#"
# Policy names for --policy/-p and `policy show`; everything else as above.
_iopscheck_with_policies() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" before=""
    [[ $COMP_CWORD -ge 2 ]] && before="${COMP_WORDS[COMP_CWORD-2]}"
    if [[ "$prev" == "=" ]]; then
        prev="$before"
        [[ $COMP_CWORD -ge 3 ]] && before="${COMP_WORDS[COMP_CWORD-3]}" || before=""
    fi
    if [[ "$prev" == "--policy" || "$prev" == "-p" ]] \
        || [[ "$before" == "policy" && "$prev" == "show" ]]; then
        local IFS=$'\n'
        COMPREPLY=( $(compgen -W "$(@NAMES@)" -- "$cur") $(compgen -f -- "$cur") )
        return 0
    fi
    _iopscheck "$@"
}
"#;

const ZSH: &str = r#"
(( $+functions[_iopscheck_policies] )) ||
_iopscheck_policies() {
    local -a names
    names=(${(f)"$(@NAMES@)"})
    _alternative 'policies:policy:compadd -a names' 'files:policy file:_files'
}
"#;

const FISH: &str = r#"
complete -c iopscheck -n "__fish_iopscheck_using_subcommand policy; and __fish_seen_subcommand_from show" -f -a "(@NAMES@)" -d 'policy'
"#;

/// The completion script for `shell`.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iopscheck", &mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let out = match shell {
        Shell::Bash => {
            let fixed = text.replace(
                "complete -F _iopscheck ",
                "complete -F _iopscheck_with_policies ",
            );
            let (head, tail) = match fixed.rfind("\nif [[ \"${BASH_VERSINFO") {
                Some(i) => fixed.split_at(i),
                None => (fixed.as_str(), ""),
            };
            format!("{head}{}{tail}", BASH.replace("@NAMES@", NAMES))
        }
        Shell::Zsh => {
            let body = text
                .replace(
                    "or YAML file]:NAME|FILE:_default'",
                    "or YAML file]:NAME|FILE:_iopscheck_policies'",
                )
                .replace(
                    "or YAML file:_default'",
                    "or YAML file:_iopscheck_policies'",
                );
            match body.split_once('\n') {
                Some((first, rest)) => format!("{first}\n{}{rest}", ZSH.replace("@NAMES@", NAMES)),
                None => body,
            }
        }
        Shell::Fish => {
            let mut s: String = text
                .lines()
                .map(|l| {
                    if l.contains(" -l policy ") && l.ends_with(" -r") {
                        format!("{l} -a \"({NAMES})\"")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            s.push('\n');
            s.push_str(FISH.trim_start().replace("@NAMES@", NAMES).as_str());
            s
        }
        _ => text,
    };
    out.into_bytes()
}
