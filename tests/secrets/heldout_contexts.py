"""How the held-out corpus writes a secret into a Claude Code session: one maker per context.

Each maker takes a `Value` and the seeded `Gen` and returns (variant, blocks), blocks being
(role, payload) pairs for field_corpus.session_records: ("user", text), ("assistant", text),
("tool_use", {"name", "input"}), ("tool_result", text). See heldout_corpus.py for the list.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import quote

from field_corpus import Gen
from heldout_values import Value

Blocks = list[tuple[str, object]]


def _bash(command: str) -> tuple[str, object]:
    return ("tool_use", {"name": "Bash", "input": {"command": command, "description": "Run it"}})


def _out(text: str) -> tuple[str, object]:
    return ("tool_result", text)


def _read(path: str, lines: list[str], start: int = 1) -> Blocks:
    numbered = "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(lines))
    return [("tool_use", {"name": "Read", "input": {"file_path": path}}), _out(numbered)]


def _camel(env: str) -> str:
    parts = env.lower().split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def _snake(env: str) -> str:
    return env.lower()


def _q(v: str) -> str:
    """Shell single-quote `v`."""
    return "'" + v.replace("'", "'\"'\"'") + "'"


def _needs_quotes(v: str) -> bool:
    return any(c in v for c in " \t'\"$;|&<>`\\#")


# -- contexts ----------------------------------------------------------------------------------


def _env_file(v: Value, g: Gen) -> tuple[str, Blocks]:
    style = g.r.randrange(5)
    val = v.value
    if "\n" in val:
        val = '"' + val.replace("\n", "\\n") + '"' if style % 2 else '"' + val + '"'
    elif style == 1 or _needs_quotes(val):
        val = '"' + val.replace('"', '\\"') + '"'
    elif style == 2:
        val = "'" + val + "'"
    line = f"export {v.env}={val}" if style == 3 else f"{v.env}={val}"
    lines = ["# app settings", "APP_ENV=production", "LOG_LEVEL=info", line, "PORT=8080"]
    if style == 4:
        lines = ["NODE_ENV=production", line, "", "# feature flags", "ENABLE_BETA=false"]
    path = g.r.choice([".env", ".env.production", "deploy/.env.local", "services/api/.env"])
    if g.r.random() < 0.5:
        return f"cat:{style}", [_bash(f"cat {path}"), _out("\n".join(lines) + "\n")]
    return f"read:{style}", _read(f"/home/dev/app/{path}", lines)


def _shell(v: Value, g: Gen) -> tuple[str, Blocks]:
    val = _q(v.value) if _needs_quotes(v.value) or "\n" in v.value else v.value
    forms = [
        f"export {v.env}={val} && npm run deploy",
        f"{v.env}={val} python manage.py migrate",
        f"docker run --rm -e {v.env}={val} -p 8080:8080 ghcr.io/acme/api:latest",
        f"gh secret set {v.env} --body {val} --repo acme/api",
        f"fly secrets set {v.env}={val} -a acme-api",
        f"kubectl create secret generic app-secrets --from-literal={_snake(v.env)}={val} -n prod",
        f"heroku config:set {v.env}={val} --app acme-api",
        f'echo "{v.env}={v.value}" >> .env && source .env',
    ]
    i = g.r.randrange(len(forms))
    return f"form:{i}", [_bash(forms[i]), _out("")]


def _yaml(v: Value, g: Gen) -> tuple[str, Blocks]:
    val = v.value
    qval = json.dumps(val, ensure_ascii=False) if _needs_quotes(val) or ": " in val else val
    i = g.r.randrange(6)
    if "\n" in val:
        body = "\n".join("    " + ln for ln in val.split("\n"))
        lines = ["apiVersion: v1", "kind: Secret", "metadata:", "  name: deploy-key",
                 "type: Opaque", "stringData:", f"  {_snake(v.env)}: |", body]  # fmt: skip
        return "k8s_secret_block", [
            _bash("kubectl get secret deploy-key -o yaml"),
            _out("\n".join(lines)),
        ]
    if i == 0:
        lines = ["services:", "  api:", "    image: acme/api:1.4", "    environment:",
                 f"      - {v.env}={val}", "      - TZ=UTC", "    ports:", '      - "8080:8080"']  # fmt: skip
        return "compose_list", _read("/home/dev/app/docker-compose.yml", lines)
    if i == 1:
        lines = ["services:", "  db:", "    image: postgres:16", "    environment:",
                 f"      {v.env}: {qval}", "      POSTGRES_DB: app"]  # fmt: skip
        return "compose_map", _read("/home/dev/app/docker-compose.yml", lines)
    if i == 2:
        lines = ["      containers:", "        - name: api", "          env:",
                 f"            - name: {v.env}", f"              value: {json.dumps(val, ensure_ascii=False)}",
                 "            - name: REGION", '              value: "eu-west-1"']  # fmt: skip
        return "k8s_env", _read("/home/dev/app/k8s/deployment.yaml", lines, 21)
    if i == 3:
        lines = ["apiVersion: v1", "kind: Secret", "metadata:", "  name: app", "stringData:",
                 f"  {_snake(v.env)}: {qval}"]  # fmt: skip
        return "k8s_stringdata", [_bash("cat k8s/secret.yaml"), _out("\n".join(lines))]
    if i == 4:
        key = _camel(v.env)
        lines = ["replicaCount: 2", "image:", "  tag: 1.4.2", "config:", f"  {key}: {qval}"]
        return "helm_values", _read("/home/dev/app/chart/values.yaml", lines)
    section = "database" if v.family == "password" else "integrations"
    leaf = "password" if v.family == "password" else _snake(v.env)
    lines = [f"{section}:", "  host: db.internal", f"  {leaf}: {qval}", "  timeout: 30"]
    return "app_config", _read("/home/dev/app/config/production.yml", lines)


def _json(v: Value, g: Gen) -> tuple[str, Blocks]:
    if v.kind == "docker_config_auth":
        body = json.dumps({"auths": {"ghcr.io": {"auth": v.value}}}, indent=2)
        return "docker_config", [_bash("cat ~/.docker/config.json"), _out(body)]
    if v.kind in ("gcp_service_account", "jwk_private"):
        path = "credentials/sa.json" if v.kind == "gcp_service_account" else "keys/signing.jwk"
        return "key_file", [_bash(f"cat {path}"), _out(v.value)]
    i = g.r.randrange(4)
    if i == 0:
        body = json.dumps(
            {"name": "worker", _camel(v.env): v.value, "retries": 3}, indent=2, ensure_ascii=False
        )
        return "camel", _read("/home/dev/app/config.json", body.split("\n"))
    if i == 1:
        conn = f"Server=db.internal;Database=app;User Id=app;Password={v.value};"
        if v.family != "password":
            body = json.dumps({"Logging": {"LogLevel": {"Default": "Information"}},
                               "Api": {"Key": v.value}}, indent=2, ensure_ascii=False)  # fmt: skip
        else:
            body = json.dumps(
                {"ConnectionStrings": {"Default": conn}}, indent=2, ensure_ascii=False
            )
        return "appsettings", _read("/home/dev/app/appsettings.json", body.split("\n"))
    if i == 2:
        body = json.dumps(
            {"editor.tabSize": 2, f"acme.{_camel(v.env)}": v.value}, indent=4, ensure_ascii=False
        )
        return "vscode", _read("/home/dev/app/.vscode/settings.json", body.split("\n"))
    body = json.dumps({"data": {_snake(v.env): v.value}}, ensure_ascii=False)
    return "compact", [_bash("vault kv get -format=json secret/app | jq .data"), _out(body)]


def _ini_toml(v: Value, g: Gen) -> tuple[str, Blocks]:
    val = v.value
    if v.kind.startswith("npm") or (v.family == "token" and g.r.random() < 0.15):
        return "npmrc", [
            _bash("cat ~/.npmrc"),
            _out(f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={val}\n"),
        ]
    i = 5 if v.kind.startswith("aws_secret") else g.r.randrange(5)
    if i == 0:
        return "toml", _read(
            "/home/dev/app/config.toml",
            [
                "[service]",
                'name = "api"',
                f"{_snake(v.env)} = {json.dumps(val, ensure_ascii=False)}",
            ],
        )
    if i == 1:
        leaf = "password" if v.family == "password" else "api_key"
        return "ini", _read(
            "/home/dev/app/settings.ini",
            ["[server]", "port = 8080", "", "[auth]", "user = svc", f"{leaf} = {val}"],
        )
    if i == 2:
        return "pypirc", [
            _bash("cat ~/.pypirc"),
            _out(
                f"[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = {val}\n"
            ),
        ]
    if i == 3:
        return "netrc", [
            _bash("cat ~/.netrc"),
            _out(f"machine {v.host or 'api.service.test'}\n  login deploy\n  password {val}\n"),
        ]
    if i == 4:
        out = f"protocol=https\nhost=github.com\nusername=dev\npassword={val}\n"
        return "git_credential", [
            _bash("printf 'protocol=https\\nhost=github.com\\n' | git credential fill"),
            _out(out),
        ]
    return "aws_credentials", [
        _bash("cat ~/.aws/credentials"),
        _out(
            f"[default]\naws_access_key_id = ASIA{''.join(g.r.choice('ABCDEFGHJKLMNPQRSTUVWXYZ234567') for _ in range(16))}\naws_secret_access_key = {val}\nregion = eu-west-1\n"
        ),
    ]


def _curl(v: Value, g: Gen) -> tuple[str, Blocks]:
    val, host, auth = v.value, v.host or "api.service.test", v.auth
    url = f"https://{host}/v1/resources"
    cont = g.r.random() < 0.35
    sep = " \\\n  " if cont else " "
    tool = (
        g.r.choice(["curl", "curl", "curl", "wget", "http"])
        if auth not in ("user", "basic_user")
        else "curl"
    )
    if v.kind.endswith("webhook_url"):
        return "webhook_post", [
            _bash(
                f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy done\"}}' {val}"
            ),
            _out("ok"),
        ]
    if v.kind == "azure_sas_signature":
        return "sas_url", [
            _bash(
                f'az storage blob download --blob-url "https://acct.blob.core.windows.net/backups/db.gz?{val}" -f db.gz'
            ),
            _out(
                "Finished[#############################################################]  100.0000%"
            ),
        ]
    if auth in ("user", "basic_user") or v.family == "password":
        user = g.r.choice(["admin", "deploy", "api", ""])
        if auth == "basic_user":
            flag = g.r.choice([f"-u {val}:", f"--user {val}:", f"-u '{val}:'"])
        elif user == "":
            flag = g.r.choice([f"-u :{_q(val)}", f'-u ":{val}"'])
        else:
            flag = g.r.choice(
                [f"-u {user}:{_q(val)}", f"--user {_q(user + ':' + val)}", f'--user="{user}:{val}"']
            )
        if g.r.random() < 0.3 and v.family == "password":
            body = json.dumps({"username": "admin", "password": val}, ensure_ascii=False)
            return "json_body", [
                _bash(
                    f"curl -s -X POST https://{host}/login -H 'Content-Type: application/json' -d '{body}'"
                ),
                _out('{"error":"invalid credentials"}'),
            ]
        return "user_flag", [_bash(f"curl -s{sep}{flag}{sep}{url}"), _out('{"ok":true}')]
    if auth.startswith("query:"):
        return "query", [_bash(f'curl -s "{url}?limit=10&{auth[6:]}={val}"'), _out('{"items":[]}')]
    if auth.startswith("header:"):
        name = auth[7:]
        header = f"{name}{val}" if name.endswith("=") else f"{name}: {val}"
    elif auth in ("none", "raw"):
        header = g.r.choice([f"X-API-Key: {val}", f"Authorization: {val}", f"apikey: {val}"])
    else:
        scheme = {"bearer": "Bearer", "token": "token", "ssws": "SSWS"}.get(auth, "Bearer")
        header = f"Authorization: {scheme} {val}"
    if tool == "wget":
        return "wget", [_bash(f'wget -qO- --header="{header}" {url}'), _out("[]")]
    if tool == "http":
        name, _, hv = header.partition(": ")
        return "httpie", [_bash(f"http GET {url} '{name}:{hv}'"), _out("HTTP/1.1 200 OK")]
    q = g.r.choice(["'", '"'])
    return "header", [
        _bash(f"curl -sS{sep}-H {q}{header}{q}{sep}-H 'Accept: application/json'{sep}{url}"),
        _out('{"data":[]}'),
    ]


def _code(v: Value, g: Gen) -> tuple[str, Blocks]:
    val = v.value
    js = json.dumps(val, ensure_ascii=False)
    camel = _camel(v.env)
    if "\n" in val:
        lines = ["import jwt", "", 'PRIVATE_KEY = """' + val.split("\n")[0]] + val.split("\n")[1:] + ['"""', "", "def sign(claims):", "    return jwt.encode(claims, PRIVATE_KEY, algorithm='RS256')"]  # fmt: skip
        return "py_key", _read("/home/dev/app/tests/keys.py", lines)
    lang = g.r.randrange(11)
    files = [
        (
            "py",
            "/home/dev/app/app/clients.py",
            ["import httpx", "", "def client():", f"    return Acme(api_key={js}, timeout=10)"],
        ),
        (
            "js",
            "/home/dev/app/src/config.js",
            ["module.exports = {", "  port: 3000,", f"  {camel}: {js},", "};"],
        ),
        (
            "ts",
            "/home/dev/app/src/client.ts",
            [f"const {camel} = {js};", "export const api = new Api({ key: " + camel + " });"],
        ),
        (
            "go",
            "/home/dev/app/internal/config/config.go",
            ["var defaults = Config{", '\tRegion: "eu-west-1",', f"\tToken:  {js},", "}"],
        ),
        (
            "java",
            "/home/dev/app/src/main/java/acme/Db.java",
            [
                '    private static final String URL = "jdbc:postgresql://db:5432/app";',
                f"    private static final String PASSWORD = {js};",
            ],
        ),
        (
            "rb",
            "/home/dev/app/config/initializers/acme.rb",
            ["Acme.configure do |c|", f"  c.api_key = {js}", "end"],
        ),
        (
            "php",
            "/home/dev/app/wp-config.php",
            [
                "define( 'DB_USER', 'wp' );",
                f"define( 'DB_PASSWORD', '{val}' );",
                "define( 'DB_HOST', 'localhost' );",
            ],
        ),
        (
            "rs",
            "/home/dev/app/src/main.rs",
            ["fn main() {", f"    let token = {js};", "    let client = Client::new(token);", "}"],
        ),
        (
            "cs",
            "/home/dev/app/Program.cs",
            [f"var client = new AcmeClient(new AcmeOptions {{ ApiKey = {js} }});"],
        ),
        (
            "kt",
            "/home/dev/app/app/src/main/kotlin/Api.kt",
            [f"    private val secret = {js}", '    fun headers() = mapOf("X-Key" to secret)'],
        ),
        (
            "sh",
            "/home/dev/app/scripts/deploy.sh",
            [
                "#!/usr/bin/env bash",
                "set -euo pipefail",
                f"{v.env}={_q(val)}",
                'curl -fsS -H "Authorization: Bearer ${' + v.env + '}" "$API/deploy"',
            ],
        ),
    ]
    name, path, lines = files[lang]
    return name, _read(path, lines, g.r.randint(1, 80))


_PROMPTS = (
    "here's the {what}: {v}",
    "use this {what} for the integration test: {v} — and tell me if the call works",
    "{v}\nthat's the new {what}, put it in the CI secrets",
    "ok I regenerated it, try again with {v}",
    "The {what} is `{v}`. Don't commit it.",
    "can you set {env} to {v} on staging and redeploy?",
    "I rotated the {what} ({v}), please update the vault entry",
    "hier ist der neue {what}: {v}",
    "voici la clé pour la prod : {v}",
    "la contraseña de la base es {v}",
    "{env}={v}",
    "{v}",
)
_PW_PROMPTS = (
    "the postgres password is {v}",
    "log in as admin / {v} and check the dashboard",
    "pw: {v}",
    "use password {v} for the test user",
    "creds for the staging box are deploy:{v}",
    "I set the redis password to {v} yesterday, maybe that's why it fails?",
    "mein Passwort ist {v}",
    "le mot de passe est {v}",
    "password for the vm -> {v}",
    "root password: '{v}'",
)


def _prompt(v: Value, g: Gen) -> tuple[str, Blocks]:
    what = g.r.choice(
        ["api key", "token", "key", "secret", "access token", v.kind.replace("_", " ")]
    )
    pool = _PW_PROMPTS if v.family == "password" else _PROMPTS
    i = g.r.randrange(len(pool))
    text = pool[i].replace("{what}", what).replace("{env}", v.env).replace("{v}", v.value)
    return f"p{i}", [("user", text)]


_BARE = {"github": "gh auth token", "vault": "vault print token", "op": "op read op://prod/api/credential",
         "hf": "cat ~/.cache/huggingface/token", "gcloud": "gcloud auth print-access-token"}  # fmt: skip


def _bare_output(v: Value, g: Gen) -> tuple[str, Blocks]:
    if v.family == "key":
        path = g.r.choice(
            ["~/.ssh/id_ed25519", "~/.ssh/deploy_key", "certs/server.key", "secrets/signing.pem"]
        )
        return "key_file", [_bash(f"cat {path}"), _out(v.value + "\n")]
    cmd = {"github": _BARE["github"], "vault": _BARE["vault"], "huggingface": _BARE["hf"],
           "google": _BARE["gcloud"]}.get(v.kind.split("_")[0])  # fmt: skip
    if cmd is None:
        cmd = g.r.choice(
            [
                _BARE["op"],
                f"cat ~/.config/{v.kind.split('_')[0]}/token",
                f"pass show api/{v.kind.split('_')[0]}",
                f"printenv {v.env}",
            ]
        )
    trailer = g.r.choice(["\n", "", "\n\n"])
    return "bare", [_bash(cmd), _out(v.value + trailer)]


def _log(v: Value, g: Gen) -> tuple[str, Blocks]:
    val, host = v.value, v.host or "api.service.test"
    i = g.r.randrange(6)
    if i == 0:
        txt = ('Traceback (most recent call last):\n  File "/app/sync.py", line 41, in <module>\n    resp.raise_for_status()\n'
               f"requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://{host}/v2/items?page=2&api_key={quote(val, safe='')}")  # fmt: skip
    elif i == 1:
        txt = f"2026-03-04T10:12:09.114Z DEBUG http.client send: b'GET /v1/me HTTP/1.1\\r\\nHost: {host}\\r\\nAuthorization: Bearer {val}\\r\\n\\r\\n'"
    elif i == 2:
        txt = f"INFO  [worker] starting with config {{'region': 'eu-west-1', '{_snake(v.env)}': '{val}', 'workers': 4}}"
    elif i == 3:
        txt = f"panic: dial failed\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:52 +0x1d4\nconfig: &{{Endpoint:https://{host} Token:{val} Timeout:30s}}"
    elif i == 4:
        txt = f'psql: error: connection to server at "db.internal" (10.0.3.4), port 5432 failed: FATAL:  password authentication failed for user "app"\nDSN used: postgresql://app:{quote(val, safe="")}@db.internal:5432/app'
    else:
        txt = f'[2026-03-04 10:12:09] ERROR Request failed {{"method":"POST","url":"https://{host}/v1/send","headers":{{"X-Api-Key":"{val}"}},"status":403}}'
    cmd = g.r.choice(
        [
            "python sync.py",
            "docker logs api --tail 50",
            "go run ./cmd/worker",
            "kubectl logs deploy/api",
        ]
    )
    return f"log{i}", [_bash(cmd), _out(txt)]


def _git_diff(v: Value, g: Gen) -> tuple[str, Blocks]:
    val = v.value
    if "\n" in val:
        added = "\n".join("+" + ln for ln in val.split("\n"))
        hunk = f"diff --git a/certs/dev.key b/certs/dev.key\nnew file mode 100600\n--- /dev/null\n+++ b/certs/dev.key\n@@ -0,0 +1,{val.count(chr(10)) + 1} @@\n{added}"
        return "key_added", [_bash("git show HEAD -- certs/"), _out(hunk)]
    i = g.r.randrange(3)
    line = [f"+{v.env}={val}", f'+    {_snake(v.env)}: "{val}"', f'+  "{_camel(v.env)}": "{val}",'][
        i
    ]
    path = [".env.example", "config/settings.yaml", "config.json"][i]
    hunk = f"diff --git a/{path} b/{path}\nindex 3f2a1c0..9b8d7e2 100644\n--- a/{path}\n+++ b/{path}\n@@ -4,6 +4,7 @@\n LOG_LEVEL=info\n{line}\n PORT=8080"
    return f"diff{i}", [_bash("git diff HEAD~1"), _out(hunk)]


def _assistant(v: Value, g: Gen) -> tuple[str, Blocks]:
    forms = [
        f"I added `{v.env}={v.value}` to `.env` and restarted the service; the health check passes now.",
        f"The key you pasted (`{v.value}`) returns 401, so it was probably revoked.",
        f"Done. I've set the {v.kind.replace('_', ' ')} to {v.value} in the staging config.",
    ]
    i = g.r.randrange(len(forms))
    return f"a{i}", [("user", "please wire it up"), ("assistant", forms[i])]


def _db_cli(v: Value, g: Gen) -> tuple[str, Blocks]:
    val = v.value
    qv = _q(val)
    forms = [
        f'psql "postgresql://app:{quote(val, safe="")}@db.internal:5432/app" -c "select 1"',
        f"PGPASSWORD={qv} psql -h db.internal -U app -d app -c '\\dt'",
        f'psql "host=db.internal port=5432 user=app password={val} dbname=app sslmode=require"',
        f"mysql -h 127.0.0.1 -u root -p{qv} app < schema.sql",
        f"mysql --user=root --password={qv} -e 'show databases'",
        f"mysqldump -uroot -p{qv} shop > shop.sql",
        f"redis-cli -h cache.internal -p 6379 -a {qv} ping",
        f"redis-cli -u 'redis://default:{quote(val, safe='')}@cache.internal:6379/0' info",
        f'mongosh "mongodb://admin:{quote(val, safe="")}@mongo.internal:27017/?authSource=admin"',
        f"sqlcmd -S db.internal -U sa -P {qv} -Q 'SELECT @@VERSION'",
        f"docker login registry.internal -u ci -p {qv}",
        f"ldapsearch -x -H ldap://ldap.internal -D 'cn=admin,dc=acme,dc=dev' -w {qv} -b 'dc=acme,dc=dev'",
        f"sshpass -p {qv} ssh deploy@10.0.3.7 'systemctl restart api'",
        f"smbclient //files.internal/share -U 'backup%{val}' -c ls",
        f"echo {qv} | docker login ghcr.io -u dev --password-stdin",
        f"htpasswd -b -c .htpasswd admin {qv}",
    ]
    i = g.r.randrange(len(forms))
    return f"cli{i}", [_bash(forms[i]), _out("")]


def _url(v: Value, g: Gen) -> tuple[str, Blocks]:
    enc = quote(v.value, safe="")
    forms = [
        ("DATABASE_URL", f"postgres://app:{enc}@db.internal:5432/app"),
        ("REDIS_URL", f"redis://:{enc}@cache.internal:6379/0"),
        ("AMQP_URL", f"amqp://worker:{enc}@rabbit.internal:5672/%2F"),
        ("MONGO_URI", f"mongodb+srv://app:{enc}@cluster0.ab12c.mongodb.net/prod?retryWrites=true"),
        ("SMTP_URL", f"smtp://mailer:{enc}@smtp.internal:587"),
        ("git", f"https://dev:{v.value}@github.com/acme/api.git"),
    ]
    i = g.r.randrange(len(forms))
    name, url = forms[i]
    if name == "git":
        return "git_remote", [
            _bash("git remote -v"),
            _out(f"origin\t{url} (fetch)\norigin\t{url} (push)"),
        ]
    return f"url{i}", [_bash("printenv | grep _URL"), _out(f"{name}={url}\n")]


def _published(v: Value, g: Gen) -> tuple[str, Blocks]:
    assert v.line is not None
    line = v.line.format(v=v.value)
    origin = v.origin.split()[0]
    if origin == "trufflehog":
        body = ["func TestDetector_Pattern(t *testing.T) {", "\ttests := []struct{ name, input string }{", "\t\t{", '\t\t\tname: "valid pattern",', "\t\t\tinput: `" + line.split("\n")[0]] + line.split("\n")[1:] + ["`,", "\t\t},", "\t}"]  # fmt: skip
        return "go_test", _read("/work/scanner/pkg/detectors/vendor/vendor_test.go", body, 14)
    if origin == "noseyparker":
        body = ["  examples:", "  - |"] + ["      " + ln for ln in line.split("\n")]
        return "rule_yaml", _read("/work/scanner/rules/vendor.yml", body, 20)
    if origin == "ggshield":
        return "patch", [_bash("git show --format=%H HEAD~3"), _out(line)]
    return "as_written", _read("/work/scanner/test_data/sample.txt", line.split("\n"))


MAKERS: dict[str, Callable[[Value, Gen], tuple[str, Blocks]]] = {
    "env_file": _env_file, "shell": _shell, "yaml": _yaml, "json": _json, "ini_toml": _ini_toml,
    "curl": _curl, "code": _code, "prompt": _prompt, "bare_output": _bare_output, "log": _log,
    "git_diff": _git_diff, "assistant": _assistant, "db_cli": _db_cli, "url": _url,
    "published": _published,
}  # fmt: skip
