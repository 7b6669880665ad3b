"""The embedded default shell policy, in the same TOML format a policy file uses.

It lives in a Python module rather than a package-data file so that every install (wheel,
editable, zipapp) carries it. The argument-level guards in `guards.py` run on top of these
rules and cannot be switched off by a policy file: they catch code execution hidden inside
otherwise read-only tools (`find -exec`, `sed e`, `git -c core.pager=...`).
"""

from __future__ import annotations

import functools
import tomllib

from pilothouse.tools.shell.rules import RuleSet, rules_from_mapping

DEFAULT_POLICY_TOML = r"""
[commands.git]
value_options = ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                 "--super-prefix"]
[commands.kubectl]
value_options = ["-n", "--namespace", "--context", "--cluster", "--user", "--kubeconfig",
                 "-s", "--server", "--as", "--as-group", "--request-timeout", "-l",
                 "--selector", "-o", "--output", "--token"]
[commands.helm]
value_options = ["-n", "--namespace", "--kube-context", "--kubeconfig"]

[paths]
secret_patterns = [
  "*/.ssh", "*/.ssh/*", "*/.gnupg", "*/.gnupg/*", "*/.aws/credentials", "*/.aws/config",
  "*/.kube/config", "*/.docker/config.json", "*/.git-credentials", "*/.config/gh/hosts.yml",
  "*/.argocd/config", "*/.vault-token", "*/.pypirc", "*/.netrc", ".netrc", ".pgpass", ".npmrc",
  ".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "*.kdbx", "id_rsa*", "id_dsa*",
  "id_ecdsa*", "id_ed25519*", "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/sudoers",
  "/etc/sudoers.d/*", "/proc/*/environ", "/proc/*/mem", "/proc/*/fd/*", "/proc/kcore",
]

# Read-only tools. The guards still inspect their arguments (find -exec, sed -i, awk system).
[[rules]]
command = ["ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "echo", "printf", "tr",
           "sort", "uniq", "cut", "pwd", "date", "find", "sed", "awk", "jq", "yq", "basename",
           "dirname", "realpath", "readlink", "stat", "file", "du", "df", "diff", "cmp", "comm",
           "nl", "tac", "rev", "seq", "true", "false", "test", "[", "which", "whoami", "id",
           "uname", "sha256sum", "sha1sum", "md5sum", "base64", "column", "paste", "join",
           "fold", "expand", "unexpand", "tree", "od", "hexdump", "strings", "cd", "sleep"]
action = "allow"
reason = "read-only tool"

[[rules]]
command = "git"
subcommand = ["status", "log", "diff", "show", "branch", "rev-parse", "ls-files", "blame",
              "shortlog", "describe", "grep", "ls-tree", "cat-file", "reflog"]
action = "allow"
reason = "read-only git command"

[[rules]]
command = "git"
subcommand = "branch"
args = ["-[dDmMcCfu].*",
        "--(delete|move|copy|force|set-upstream-to|unset-upstream|edit-description).*"]
action = "ask"
reason = "git branch with this option changes branches"

[[rules]]
command = "git"
subcommand = ["push", "commit", "reset", "checkout", "switch", "restore", "merge", "rebase",
              "pull", "fetch", "clone", "clean", "stash", "cherry-pick", "revert", "tag", "am",
              "apply", "config", "rm", "mv", "add", "init", "remote", "submodule", "gc"]
action = "ask"
reason = "git command that changes the repository or talks to a remote"

[[rules]]
command = "kubectl"
subcommand = ["get", "describe", "logs", "explain", "api-resources", "api-versions", "version",
              "top", "cluster-info"]
action = "allow"
reason = "read-only kubectl command"

[[rules]]
command = "kubectl"
subcommand = ["get", "describe"]
args = ["secrets?", "secrets?/.*", "secrets?\\..*", ".*,secrets?(,.*)?"]
action = "ask"
reason = "kubectl would print Secret objects"

[[rules]]
command = "kubectl"
subcommand = ["delete", "apply", "edit", "patch", "scale", "rollout", "exec", "port-forward",
              "cp", "run", "create", "replace", "drain", "cordon", "uncordon", "label",
              "annotate", "set", "config", "proxy", "attach", "debug", "taint"]
action = "ask"
reason = "kubectl command that changes the cluster or opens access to it"

[[rules]]
command = ["bash", "sh", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "python", "python3",
           "python3.*", "perl", "ruby", "node", "php", "lua", "deno", "bun", "pwsh", "osascript"]
action = "ask"
reason = "an interpreter runs arbitrary code that the policy cannot inspect"
suggestion = "Prefer a read-only tool; otherwise ask the user to approve this exact command."

[[rules]]
command = ["env", "printenv"]
action = "ask"
reason = "this prints the environment"
suggestion = "Ask for the one value you need, or ask the user to approve."

[[rules]]
command = ["curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "socat", "telnet", "ftp"]
action = "ask"
reason = "this command talks to other machines"

[[rules]]
command = ["xargs", "timeout", "nice", "nohup", "stdbuf", "ionice", "make", "strace", "ltrace"]
action = "ask"
reason = "this command runs other commands"

[[rules]]
command = ["docker", "podman", "helm", "terraform", "pip", "pip3", "npm", "apt", "apt-get"]
action = "ask"
reason = "this command installs software or changes infrastructure"

[[rules]]
command = "tar"
action = "ask"
reason = "tar creates or extracts archives, writing files"

[[rules]]
command = ["sudo", "su", "doas", "pkexec", "runuser", "chroot", "nsenter", "unshare"]
action = "deny"
reason = "privilege escalation never runs from the agent"
suggestion = "Ask the user to run it themselves in their own terminal."

[[rules]]
command = ["mkfs", "mkfs.*", "mke2fs", "fdisk", "sfdisk", "parted", "wipefs", "mkswap", "swapon",
           "swapoff", "mount", "umount", "losetup", "shutdown", "reboot", "halt", "poweroff",
           "init", "telinit", "iptables", "nft", "useradd", "userdel", "usermod", "passwd",
           "chpasswd", "visudo", "crontab", "insmod", "rmmod", "modprobe", "sysctl"]
action = "deny"
reason = "system administration command: it can destroy disks or take the machine down"
suggestion = "Ask the user to do this themselves; the agent never administers the host."

[[rules]]
command = ["eval", "exec", "source", ".", "builtin", "command", "export", "alias", "unset",
           "set", "trap", "declare", "typeset", "local", "readonly", "let", "shopt", "ulimit",
           "umask", "hash", "read", "wait", "jobs", "fg", "bg", "disown"]
action = "deny"
reason = "shell builtins have no effect here (each command runs without a shell) or run hidden code"
suggestion = "Run the program directly; there is no shell state between calls."

[[rules]]
command = ["less", "more", "most", "man", "info", "vi", "vim", "nvim", "view", "nano", "emacs",
           "pico", "ed", "top", "htop", "watch", "screen", "tmux"]
action = "deny"
reason = "interactive program: it waits for a terminal, and pagers and editors can run commands"
suggestion = "Use cat, head -n 100 or tail -n 100 to read, sed or a file tool to edit, ps to list."

[[rules]]
command = "rm"
args = ["/", "/\\*", "--no-preserve-root", "~", "~/", "/[^/]+/?"]
action = "deny"
reason = "rm of the root or a top-level directory never runs"

[[rules]]
command = ["chmod", "chown", "chgrp"]
args = ["/", "/[^/]+/?"]
action = "deny"
reason = "changing permissions of the root or a top-level directory never runs"

[[rules]]
command = "dd"
args = ["of=/dev/.*"]
action = "deny"
reason = "dd onto a device destroys data"

[[rules]]
command = ["kill", "pkill", "killall"]
args = ["-1", "1"]
action = "deny"
reason = "killing every process (or init) never runs"
"""


@functools.cache
def default_rules() -> RuleSet:
    """The embedded policy as a RuleSet (immutable, so parsed once per process)."""
    return rules_from_mapping(tomllib.loads(DEFAULT_POLICY_TOML), origin=0, source="defaults")
