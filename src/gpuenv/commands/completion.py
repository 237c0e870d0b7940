"""`gpuenv completion bash|zsh|fish`: a shell completion script, made from the command line's own
argparse definition (every command's parser, walked), so that it names every command, option
and choice there is and no other.

zsh loads the bash script through its own bash-completion layer (bashcompinit): one generated
script, the same answers in both shells.
"""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Command
from gpuenv.standins.record import record

SHELLS = ("bash", "zsh", "fish")
# What a value is, by its metavar: completed as file names, as directory names, or not at all.
_FILES = ("FILE", "FILE_OR_DIR", "PATH", "URL|FILE")
_DIRS = ("DIR",)


@record(frozen=True)
class Spec:
    """What one parser accepts: its options (with what each one's value is), its positionals'
    choices (in order), and its subcommands."""

    options: tuple[tuple[str, str, str], ...]  # (option string, value kind, help); kind "": no value
    positionals: tuple[str, ...]  # each positional's value kind
    subcommands: tuple[tuple[str, Spec], ...] = ()


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("shell", choices=SHELLS, metavar="bash|zsh|fish", help="the shell to complete gpuenv in")


def run(args: argparse.Namespace) -> int:
    specs = _specs()
    sys.stdout.write({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](specs))
    return 0


def _specs() -> dict[str, tuple[str, Spec]]:
    """Each command's summary and Spec, from the parser `gpuenv NAME` builds."""
    from gpuenv.cli import COMMANDS, command, parser_for

    return {name: (command(name).summary, spec_of(parser_for(name))) for name in COMMANDS}


def spec_of(parser: argparse.ArgumentParser) -> Spec:
    options: list[tuple[str, str, str]] = []
    positionals: list[str] = []
    subcommands: tuple[tuple[str, Spec], ...] = ()
    # argparse has no public walk of a parser: its actions list is what argcomplete and shtab read.
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            subcommands = tuple((name, spec_of(sub)) for name, sub in action.choices.items())
        elif action.option_strings:
            kind = "" if action.nargs == 0 else _kind(action)
            options += [(o, kind, _help(action)) for o in action.option_strings]
        else:
            positionals.append(_kind(action))
    return Spec(tuple(options), tuple(positionals), subcommands)


def _kind(action: argparse.Action) -> str:
    """'words:a b c' for choices, 'file', 'dir', 'user' (an account), or 'any' (free text:
    nothing to offer)."""
    if action.choices:
        return "words:" + " ".join(str(c) for c in action.choices)
    if action.dest == "user":
        return "user"
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    return "dir" if metavar in _DIRS else "file" if metavar in _FILES else "any"


def _help(action: argparse.Action) -> str:
    text = action.help if isinstance(action.help, str) and action.help != argparse.SUPPRESS else ""
    return " ".join(text.replace("%%", "%").split())


# -- bash (and zsh) ----------------------------------------------------------------------------


def _bash_values(kind: str) -> str:
    """The COMPREPLY for a value of ``kind`` (the word being completed is $cur)."""
    if kind.startswith("words:"):
        return f'COMPREPLY=($(compgen -W {_sh(kind[6:])} -- "$cur"))'
    if kind == "dir":
        return 'COMPREPLY=($(compgen -d -- "$cur"))'
    if kind == "file":
        return 'COMPREPLY=($(compgen -f -- "$cur"))'
    if kind == "user":
        return 'COMPREPLY=($(compgen -u -- "$cur"))'
    return "COMPREPLY=()"


def _bash_values_arms(prefix: str, spec: Spec) -> list[str]:
    """Case arms completing the value of each of ``prefix``'s options that takes one."""
    return [
        f"        {_sh(f'{prefix} {option}')}) {_bash_values(kind)}; return ;;"
        for option, kind, _ in spec.options
        if kind
    ]


def _bash_body(prefix: str, spec: Spec, depth: int) -> list[str]:
    """What to offer in ``prefix``'s words when the previous word takes no value: an option
    (the word starts with -), a subcommand, or the next positional's values."""
    words = " ".join(o for o, _, _ in spec.options)
    lines = [f"        {_sh(prefix)})", '            if [[ $cur == -* ]]; then', f'                COMPREPLY=($(compgen -W {_sh(words)} -- "$cur"))']  # fmt: skip
    if spec.subcommands:
        names = " ".join(n for n, _ in spec.subcommands)
        lines += [f"            elif (( npos == {depth} )); then", f'                COMPREPLY=($(compgen -W {_sh(names)} -- "$cur"))']  # fmt: skip
    else:
        for i, kind in enumerate(spec.positionals):
            last = i == len(spec.positionals) - 1
            test = f"npos >= {depth + i}" if last else f"npos == {depth + i}"
            lines += [f"            elif (( {test} )); then", f"                {_bash_values(kind)}"]
    lines += ["            fi", "            ;;"]
    return lines


def bash(specs: dict[str, tuple[str, Spec]]) -> str:
    flat = [(name, spec, 1) for name, (_, spec) in specs.items()]
    flat += [(f"{name} {sub}", subspec, 2) for name, (_, spec) in specs.items() for sub, subspec in spec.subcommands]
    values = [line for prefix, spec, _ in flat for line in _bash_values_arms(prefix, spec)]
    bodies = [line for prefix, spec, depth in flat for line in _bash_body(prefix, spec, depth)]
    commands = " ".join([*specs, "--help", "--version"])
    with_subcommands = " ".join(name for name, (_, spec) in specs.items() if spec.subcommands)
    return "\n".join([
        "# gpuenv completion for bash (made by `gpuenv completion bash` from its option definitions).",
        "# Load it with: source <(gpuenv completion bash)",
        "_gpuenv() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        "    if (( COMP_CWORD == 1 )); then",
        f'        COMPREPLY=($(compgen -W {_sh(commands)} -- "$cur"))',
        "        return",
        "    fi",
        '    local key="${COMP_WORDS[1]}" i npos=0 skip=0',
        "    # The subcommand, if the command has them, and how many positionals precede the cursor.",
        f"    case \" {with_subcommands} \" in *\" ${{COMP_WORDS[1]}} \"*)",
        '        (( COMP_CWORD > 2 )) && key="$key ${COMP_WORDS[2]}" ;;',
        "    esac",
        '    case "$key $prev" in',
        *values,
        "    esac",
        "    for (( i = 1; i < COMP_CWORD; i++ )); do",
        '        if (( skip )); then skip=0; continue; fi',
        '        case "${COMP_WORDS[i]}" in',
        "            -*) _gpuenv_takes_value \"$key\" \"${COMP_WORDS[i]}\" && skip=1 ;;",
        "            *) (( npos++ )) ;;",
        "        esac",
        "    done",
        '    case "$key" in',
        *bodies,
        "    esac",
        "}",
        "_gpuenv_takes_value() {",
        '    case "$1 $2" in',
        *[f"        {_sh(f'{prefix} {o}')}) return 0 ;;" for prefix, spec, _ in flat for o, kind, _ in spec.options if kind],
        "    esac",
        "    return 1",
        "}",
        "complete -o filenames -F _gpuenv gpuenv",
        "",
    ])  # fmt: skip


def zsh(specs: dict[str, tuple[str, Spec]]) -> str:
    return "\n".join([
        "#compdef gpuenv",
        "# gpuenv completion for zsh (made by `gpuenv completion zsh`): the bash script, through",
        "# zsh's bash-completion layer. Load it with: source <(gpuenv completion zsh)",
        "autoload -U +X compinit && compinit",
        "autoload -U +X bashcompinit && bashcompinit",
        bash(specs),
    ])  # fmt: skip


# -- fish ---------------------------------------------------------------------------------------


def fish(specs: dict[str, tuple[str, Spec]]) -> str:
    lines = [
        "# gpuenv completion for fish (made by `gpuenv completion fish` from its option definitions).",
        "# Load it with: gpuenv completion fish | source",
        "complete -c gpuenv -f",
        "complete -c gpuenv -n __fish_use_subcommand -l help -d 'show help'",
        "complete -c gpuenv -n __fish_use_subcommand -l version -d 'print the version'",
    ]
    for name, (summary, spec) in specs.items():
        lines.append(f"complete -c gpuenv -n __fish_use_subcommand -a {_fish(name)} -d {_fish(summary)}")
        lines += _fish_spec(f"__fish_seen_subcommand_from {name}", spec)
        subs = " ".join(n for n, _ in spec.subcommands)
        for sub, subspec in spec.subcommands:
            lines.append(f"complete -c gpuenv -n {_fish(f'__fish_seen_subcommand_from {name}; and not __fish_seen_subcommand_from {subs}')} -a {_fish(sub)}")  # fmt: skip
            lines += _fish_spec(f"__fish_seen_subcommand_from {name}; and __fish_seen_subcommand_from {sub}", subspec)
    return "\n".join(lines) + "\n"


def _fish_spec(condition: str, spec: Spec) -> list[str]:
    cond = _fish(condition)
    lines = []
    for option, kind, text in spec.options:
        flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
        lines.append(f"complete -c gpuenv -n {cond} {flag}{_fish_values(kind, required=True)} -d {_fish(text)}")
    for kind in spec.positionals:
        if kind != "any":
            lines.append(f"complete -c gpuenv -n {cond}{_fish_values(kind, required=False)}")
    return lines


def _fish_values(kind: str, required: bool) -> str:
    """fish's flags for a value: -r it is required, -F files, -f no files (-x: both of those)."""
    fixed = " -x" if required else " -f"
    if kind.startswith("words:"):
        return f"{fixed} -a {_fish(kind[6:])}"
    if kind == "user":
        return f"{fixed} -a '(__fish_complete_users)'"
    if kind == "dir":
        return f"{fixed} -a '(__fish_complete_directories)'"
    if kind == "file":
        return " -r -F" if required else " -F"
    return " -x" if kind else ""


# -- quoting -------------------------------------------------------------------------------------


def _sh(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _fish(text: str) -> str:
    """A fish single-quoted string (fish reads \\\\ and \\' there)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


COMMANDS = {
    "completion": Command(
        "completion",
        "print a shell completion script (bash, zsh or fish)",
        configure,
        run,
        "bash:  source <(gpuenv completion bash)      (or save it as\n"
        "       /etc/bash_completion.d/gpuenv)\n"
        "zsh:   source <(gpuenv completion zsh)\n"
        "fish:  gpuenv completion fish > ~/.config/fish/completions/gpuenv.fish",
    )
}
