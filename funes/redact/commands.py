"""Passwords on command lines: the flags and forms each tool takes them in. Patterns are
matched on the ASCII-lower-cased text (`-P` is written `-p`); values are read from the text.

funes.redact.rules has the long flags every tool shares (`--password`, `--token`…),
`mysql -p…` and `sshpass -p`; funes.redact.context has curl. These are the tools whose
password flag is a short letter or a word that means nothing elsewhere:

* `redis-cli -a P` / `--pass P`, `sqlcmd -P P`, `ldapsearch|ldapadd|ldapmodify|ldapdelete|
  ldapwhoami -w P`, `psexec -p P`, `docker|podman|helm|oras login … -p P`, `mysql`/
  `mysqldump`/`mysqladmin` with a quoted `-p'P'`, `smbclient -U user%P`, `htpasswd -b file
  user P`, `net use … /user:U P`;
* `echo P | <cmd> --password-stdin` (and `printf`), the password piped in;
* `gh secret set NAME --body P` / `-b P`, `vercel env add`-style `… set NAME P`.

A value is the next shell word (quotes removed); `$VAR`, `$(…)`, `<placeholder>` and
`-`-prefixed words (another flag) are not values.
"""

from __future__ import annotations

import re

from funes.redact.rules import Rule, Span, rule
from funes.redact.values import is_placeholder

_WORD = r"(?:'(?P<vs>[^'\n]*)'|\"(?P<vd>(?:[^\"\\\n]|\\.)*)\"|\\\"(?P<ve>[^\"\n\\]*)\\\"|(?P<vb>[^\s'\"|;&]+))"

_FLAG_TOOLS = (
    r"(?:redis-cli[^\n|;&]{0,200}?[ \t](?:-a|--pass)"
    r"|sqlcmd[^\n|;&]{0,200}?[ \t]-p"
    r"|ldap(?:search|add|modify|delete|whoami|passwd)[^\n|;&]{0,300}?[ \t]-w"
    r"|psexec(?:\.exe)?[^\n|;&]{0,200}?[ \t]-p"
    r"|(?:docker|podman|helm|oras|buildah|skopeo|nerdctl)[ \t]+(?:registry[ \t]+)?login"
    r"[^\n|;&]{0,200}?[ \t]-p"
    r"|mysql(?:dump|admin|import|show)?[^\n|;&]{0,200}?[ \t]-p(?=['\"])"
    r"|htpasswd[ \t]+-[a-zA-Z]*b[a-zA-Z]*[ \t]+[^\s]+[ \t]+[^\s]+"
    r"|net[ \t]+use[^\n|;&]{0,200}?/user:[^\s]+"
    r"|(?:gh|glab)[ \t]+(?:secret|variable)[ \t]+set[ \t]+[^\s]+[^\n|;&]{0,100}?[ \t](?:--body|-b))"
    r"(?:[ \t]*=[ \t]*|[ \t]+|(?=['\"]))" + _WORD
)
_SMB = r"smbclient[^\n|;&]{0,200}?[ \t](?:-u|--user)[ \t=]*['\"]?[^\s%'\"]+%(?P<vb>[^\s'\"]+)"
_STDIN = (
    r"(?:echo|printf)[ \t]+(?:-n[ \t]+|-e[ \t]+)*"
    + _WORD
    + r"[ \t]*\|[^\n;&]{0,200}?--password-stdin"
)
_ANCHORS = ("redis-cli", "sqlcmd", "ldap", "psexec", "docker", "podman", "helm", "oras",
            "buildah", "skopeo", "nerdctl", "mysql", "htpasswd", "net use", "gh ", "glab")  # fmt: skip


def _value(text: str, m: re.Match[str]) -> Span | None:
    for g in ("vs", "vd", "ve", "vb"):
        if g in m.re.groupindex and m.group(g) is not None:
            start, end = m.span(g)
            break
    else:
        return None
    value = text[start:end]
    if end <= start or is_placeholder(value) or value.startswith(("-", "$", "`")):
        return None
    if value.startswith(("/", "~/", "./")) and "." in value.rsplit("/", 1)[-1]:
        return None  # a file, not the password
    return start, end


def _flag_tool(text: str, m: re.Match[str]) -> Span | None:
    start_char = m.start()
    if start_char > 0 and (text[start_char - 1].isalnum() or text[start_char - 1] in "_"):
        return None
    return _value(text, m)


COMMAND_RULES: tuple[Rule, ...] = (
    rule("cli_secret", _FLAG_TOOLS, _ANCHORS, _flag_tool, lower=True, lookback=3),
    rule("cli_secret", _SMB, ["smbclient"], _value, lower=True),
    rule("cli_secret", _STDIN, ["echo", "printf"], _value, lower=True),
)
