"""A corpus of FAKE secrets in realistic shapes, and look-alikes that must not be flagged.

Nothing here is a real credential: every value is drawn at run time from a seeded random
generator over the alphabet of its real format, and assembled from pieces, so this file itself
holds no secret-shaped string (push protection and `detect-secrets scan` stay quiet on it).

`secret_cases()` → list of SecretCase(name, text, values): `text` is a transcript-like snippet,
`values` the substrings that must never survive redaction.
`lookalike_cases()` → list of (name, text) that must produce no finding at all.
`transcript_blocks(target_bytes)` → realistic agent-transcript block texts (JSON tool calls,
git logs, diffs, test output, lockfiles, base64 images, UUIDs) for throughput measurements.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass
from pathlib import Path

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DI = string.digits
ALNUM = UP + LO + DI
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def _p(*parts: str) -> str:
    """Join prefix pieces (kept apart in the source so scanners don't see a token literal)."""
    return "".join(parts)


class Gen:
    """Seeded random strings over a format's alphabet."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        while True:
            out = "".join(self.r.choice(alphabet) for _ in range(n))
            low = out.lower()
            # keep fakes clear of the placeholder vocabulary the scanners ignore
            if not any(w in low for w in ("example", "xxxx", "here", "your", "dummy", "redacted")):
                return out

    def mixed(self, alphabet: str, n: int) -> str:
        """Like s() but using every character class (digit, upper, lower) the alphabet has."""
        want = [
            cls for cls in (str.isdigit, str.isupper, str.islower) if any(cls(c) for c in alphabet)
        ]
        while True:
            out = self.s(alphabet, n)
            if all(any(cls(c) for c in out) for cls in want):
                return out

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.r.randbytes(nbytes)).decode()

    def b64url(self, obj: dict[str, object]) -> str:
        return (
            base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode())
            .decode()
            .rstrip("=")
        )


@dataclass(frozen=True)
class SecretCase:
    name: str
    text: str
    values: tuple[str, ...]


def _pem(g: Gen, label: str, lines: int = 12) -> tuple[str, str]:
    body_lines = [g.b64(48) for _ in range(lines)]
    body = "\n".join(body_lines)
    dash = "-" * 5
    key = f"{dash}BEGIN {label}{dash}\n{body}\n{dash}END {label}{dash}"
    return key, body_lines[3]


def _jwt(g: Gen) -> str:
    head = g.b64url({"alg": "HS256", "typ": "JWT"})
    payload = g.b64url(
        {"sub": g.s(DI, 8), "name": "Test User", "iat": 1700000000 + g.r.randint(0, 10**6)}
    )
    sig = g.s(URLSAFE, 43)
    return f"{head}.{payload}.{sig}"


def _tool_use(command: str) -> str:
    """A Bash tool_use block as Claude Code transcripts store it: compact JSON."""
    return json.dumps(
        {"command": command, "description": "Run command"},
        ensure_ascii=False,
        separators=(",", ":"),
    )


def secret_cases(seed: int = 7) -> list[SecretCase]:
    g = Gen(seed)
    cases: list[SecretCase] = []

    def add(name: str, text: str, *values: str) -> None:
        cases.append(SecretCase(name, text, tuple(values)))

    akia = _p("AK", "IA") + g.s(UP + "234567", 16)
    asia = _p("AS", "IA") + g.s(UP + "234567", 16)
    aws_secret = g.mixed(B64, 40)
    add("aws access key id in env", f"export AWS_ACCESS_KEY_ID={akia}\n", akia)
    add(
        "aws temporary key id in json",
        json.dumps({"AccessKeyId": asia, "Expiration": "2025-01-01T00:00:00Z"}),
        asia,
    )
    add(
        "aws secret unquoted ini",
        f"[default]\naws_access_key_id = {akia}\naws_secret_access_key = {aws_secret}\nregion = eu-west-1\n",
        aws_secret,
        akia,
    )
    s2 = g.mixed(B64, 40)
    add("aws secret in export", f"export AWS_SECRET_ACCESS_KEY={s2}", s2)
    s3 = g.mixed(B64, 40)
    tok = g.b64(180)
    add(
        "aws sts json output",
        json.dumps(
            {"Credentials": {"AccessKeyId": asia, "SecretAccessKey": s3, "SessionToken": tok}},
            indent=2,
        ),
        s3,
        tok,
        asia,
    )

    ghp = _p("gh", "p_") + g.mixed(ALNUM, 36)
    add(
        "github classic token in remote url",
        _tool_use(f"git remote set-url origin https://{ghp}@github.com/acme/api.git"),
        ghp,
    )
    gho = _p("gh", "o_") + g.mixed(ALNUM, 36)
    add("github oauth token env", f"GH_TOKEN={gho} gh pr list", gho)
    pat = _p("github", "_pat_") + g.mixed(ALNUM, 22) + "_" + g.mixed(ALNUM, 59)
    add("github fine-grained pat", f"Use this token: {pat}\n", pat)
    ghs = _p("gh", "s_") + g.mixed(ALNUM, 36)
    add("github app token as url user", f"https://x-access-token:{ghs}@github.com/acme/infra", ghs)

    legacy = "sk-" + g.mixed(ALNUM, 20) + _p("T3Blb", "kFJ") + g.mixed(ALNUM, 20)
    add("openai legacy key", f'openai.api_key = "{legacy}"', legacy)
    proj = _p("sk-", "proj-") + g.mixed(URLSAFE, 156)
    add("openai project key in .env", f"OPENAI_API_KEY={proj}\nDEBUG=1\n", proj)
    svc = _p("sk-", "svcacct-") + g.mixed(URLSAFE, 120)
    add(
        "openai service account key",
        _tool_use(f"curl https://api.openai.com/v1/models -H 'Authorization: Bearer {svc}'"),
        svc,
    )
    p2 = _p("sk-", "proj-") + g.mixed(URLSAFE, 120)
    add("openai key passed to constructor", f'client = OpenAI(api_key="{p2}")', p2)
    ant = _p("sk-", "ant-", "api03-") + g.mixed(URLSAFE, 93) + "AA"
    add("anthropic key in code", f'client = anthropic.Anthropic(api_key="{ant}")', ant)
    ant2 = _p("sk-", "ant-", "api03-") + g.mixed(URLSAFE, 93) + "AA"
    add("anthropic key in dotenv", f"ANTHROPIC_API_KEY={ant2}", ant2)

    hf = _p("h", "f_") + g.mixed(UP + LO, 34)
    add("hugging face token login flag", _tool_use(f"huggingface-cli login --token {hf}"), hf)
    hf2 = _p("h", "f_") + g.mixed(UP + LO, 34)
    add("hugging face token env", f"export HF_TOKEN={hf2}", hf2)

    xoxb = _p("xo", "xb-") + g.s(DI, 12) + "-" + g.s(DI, 13) + "-" + g.mixed(ALNUM, 24)
    add("slack bot token", f'SLACK_BOT_TOKEN="{xoxb}"', xoxb)
    xoxp = (
        _p("xo", "xp-") + g.s(DI, 12) + "-" + g.s(DI, 12) + "-" + g.s(DI, 13) + "-" + g.s(HEX, 32)
    )
    add("slack user token in yaml", f"slack:\n  token: {xoxp}\n", xoxp)
    hook_path = "T" + g.s(UP + DI, 10) + "/B" + g.s(UP + DI, 10) + "/" + g.mixed(ALNUM, 24)
    add(
        "slack webhook url",
        f"curl -X POST -d @msg.json https://hooks.{_p('sla', 'ck')}.com/services/{hook_path}",
        hook_path.split("/")[-1],
    )

    sk_live = _p("sk", "_live_") + g.mixed(ALNUM, 99)
    add("stripe live secret key", f"STRIPE_SECRET_KEY={sk_live}", sk_live)
    rk_test = _p("rk", "_test_") + g.mixed(ALNUM, 24)
    add("stripe restricted test key in code", f'stripe.api_key = "{rk_test}"', rk_test)

    aiza = _p("AI", "za") + g.mixed(URLSAFE, 35)
    add(
        "google api key in url",
        f"GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={aiza}",
        aiza,
    )

    jwt = _jwt(g)
    add(
        "jwt bearer header",
        _tool_use(f'curl -s -H "Authorization: Bearer {jwt}" https://api.internal/v1/me'),
        jwt,
    )
    jwt2 = _jwt(g)
    add("jwt in json response", json.dumps({"id_token": jwt2, "expires_in": 3600}), jwt2)

    rsa, rsa_line = _pem(g, "RSA PRIVATE KEY")
    add("pem rsa private key multi-line", f"$ cat ~/.ssh/deploy_key\n{rsa}\n", rsa_line)
    ossh, ossh_line = _pem(g, "OPENSSH PRIVATE KEY", 8)
    add("pem openssh private key", ossh, ossh_line)
    ec, ec_line = _pem(g, "PRIVATE KEY", 5)
    sa = json.dumps(
        {
            "type": "service_account",
            "project_id": "demo-proj",
            "private_key": ec + "\n",
            "client_email": "svc@demo-proj.iam.gserviceaccount.com",
        }
    )
    add("pem in json-escaped service account", sa, ec_line)
    ec2, ec2_line = _pem(g, "EC PRIVATE KEY", 4)
    add(
        "pem inside a tool_use write",
        json.dumps(
            {"file_path": "/tmp/k.pem", "content": ec2}, ensure_ascii=False, separators=(",", ":")
        ),
        ec2_line,
    )

    pw = g.mixed(ALNUM + "!#%^", 14)
    add("postgres url password", f"DATABASE_URL=postgres://app:{pw}@db.internal:5432/app", pw)
    pw = g.mixed(ALNUM, 18)
    add("redis url with empty user", f"redis-cli -u redis://:{pw}@cache.internal:6379/0 ping", pw)
    pw = g.mixed(ALNUM, 16)
    add(
        "mongodb srv url",
        f'mongoose.connect("mongodb+srv://admin:{pw}@cluster0.ab1cd.mongodb.net/prod")',
        pw,
    )
    pw = g.mixed(ALNUM, 10)
    add(
        "mysql url in json-escaped tool_use",
        _tool_use(f'export DATABASE_URL="mysql://root:{pw}@localhost/shop" && npm test'),
        pw,
    )

    short = g.mixed(ALNUM, 7)
    add("dotenv short password", f"DB_HOST=localhost\nDB_PASSWORD={short}\nDB_PORT=5432\n", short)
    short2 = g.mixed(ALNUM, 10)
    add("dotenv short api key", f"API_KEY={short2}\n", short2)
    cyr = "пароль" + g.s(DI, 3) + "ё"
    add("non-ascii password in dotenv", f"POSTGRES_PASSWORD={cyr}\n", cyr)
    uml = "Grüße" + g.s(DI, 4) + "ß!"
    add(
        "non-ascii password in cat .env via tool_use",
        _tool_use(f"printf 'ADMIN_PASSWORD={uml}\\n' >> .env"),
        uml,
    )
    dj = "django-insecure-" + g.s(LO + DI + "!@#$%^&*(-_=+)", 50).replace("'", "")
    add("django secret key quoted", f"SECRET_KEY = '{dj}'", dj)
    exp = g.mixed(ALNUM, 32)
    add("shell export quoted", f'export JWT_SECRET="{exp}"', exp)

    fp = g.mixed(ALNUM + "!@", 12)
    add("password flag with space", _tool_use(f"mysqladmin --user=root --password {fp} status"), fp)
    fp2 = g.mixed(ALNUM, 12)
    add("password flag with equals", f"pg_dump --password={fp2} mydb > dump.sql", fp2)
    ft = g.mixed(ALNUM, 40)
    add("token flag", f"vault login --token {ft}", ft)
    pp = f"{g.s(LO, 6)} {g.s(LO, 7)} {g.s(LO, 5)}"
    add("passphrase flag quoted", f'gpg --batch --passphrase "{pp}" -d secrets.gpg', pp)

    basic = base64.b64encode(f"admin:{g.mixed(ALNUM, 12)}".encode()).decode()
    add("basic auth header", f"GET /api HTTP/1.1\nHost: x\nAuthorization: Basic {basic}\n", basic)
    opaque = g.mixed(ALNUM, 48)
    add(
        "bearer opaque token in json headers",
        json.dumps({"headers": {"Authorization": f"Bearer {opaque}"}}),
        opaque,
    )
    cu = g.mixed(ALNUM, 14)
    add("curl user password", f"curl -u deploy:{cu} https://ci.internal/job/build", cu)

    yp = g.mixed(ALNUM, 12)
    add(
        "docker compose yaml password",
        f"services:\n  db:\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: {yp}\n",
        yp,
    )
    jp = g.mixed(ALNUM + "-", 16)
    add("json config password", json.dumps({"db": {"user": "app", "password": jp}}, indent=2), jp)
    pyp = g.mixed(ALNUM, 11)
    add("python password literal", f'conn = connect(host="db", password="{pyp}")', pyp)
    npm = _p("np", "m_") + g.mixed(ALNUM, 36)
    add("npmrc auth token", f"//registry.npmjs.org/:_authToken={npm}\n", npm)
    gl = _p("gl", "pat-") + g.mixed(URLSAFE, 20)
    add(
        "gitlab personal access token", f"git clone https://oauth2:{gl}@gitlab.com/acme/app.git", gl
    )
    sg = "SG." + g.mixed(URLSAFE, 22) + "." + g.mixed(URLSAFE, 43)
    add("sendgrid api key", f"SENDGRID_API_KEY='{sg}'", sg)
    mp = g.mixed(ALNUM, 9)
    add("mysql -p attached password", f"mysql -h db -u root -p{mp} shop < schema.sql", mp)
    lp = g.mixed(ALNUM, 13)
    add(
        "libpq keyword connection string",
        f'psql "host=db.internal port=5432 user=app password={lp} dbname=app"',
        lp,
    )
    ap = g.mixed(ALNUM + "!", 15)
    add(
        "ado.net connection string",
        f"Server=tcp:sql.internal,1433;Database=shop;User ID=app;Password={ap};Encrypt=True;",
        ap,
    )
    jd = g.mixed(ALNUM, 12)
    add(
        "jdbc url query password",
        f"jdbc:mysql://db:3306/shop?user=app&password={jd}&useSSL=true",
        jd,
    )
    dauth = base64.b64encode(f"robot:{g.mixed(ALNUM, 20)}".encode()).decode()
    add("docker config auth", json.dumps({"auths": {"registry.internal": {"auth": dauth}}}), dauth)
    xk = g.mixed(ALNUM, 32)
    add("x-api-key header", f"curl -H 'x-api-key: {xk}' https://api.internal", xk)
    ps = _p("sk-", "proj-") + g.mixed(URLSAFE, 100)
    add("powershell env assignment", f'$env:OPENAI_API_KEY="{ps}"', ps)
    pg = g.mixed(ALNUM, 12)
    add("pgpassword inline", f"PGPASSWORD={pg} psql -h db -U app -c 'select 1'", pg)
    sp = g.mixed(ALNUM, 10)
    add("sshpass password", f"sshpass -p '{sp}' ssh deploy@10.0.0.5 uptime", sp)
    return cases


def lookalike_cases(seed: int = 11) -> list[tuple[str, str]]:
    g = Gen(seed)
    sha = hashlib.sha1(b"commit").hexdigest()
    sha2 = hashlib.sha256(b"blob").hexdigest()
    sha512 = base64.b64encode(hashlib.sha512(b"pkg").digest()).decode()
    u = str(uuid.UUID(int=g.r.getrandbits(128), version=4))
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + g.r.randbytes(600)).decode()
    bcrypt = "$2b$12$" + g.s(ALNUM + "./", 53)
    return [
        (
            "git log with shas",
            f"commit {sha}\nAuthor: Dev <dev@acme.test>\nDate:   Mon Jan 1\n\n    fix: token refresh\n",
        ),
        (
            "short sha in commit output",
            f"[main {sha[:7]}] rotate the api key handling\n 2 files changed",
        ),
        ("uuid", f'{{"session_id": "{u}", "turn": 3}}'),
        ("docker image digest", f"image: ghcr.io/acme/api@sha256:{sha2}"),
        (
            "npm integrity sha512",
            json.dumps(
                {
                    "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
                    "integrity": f"sha512-{sha512}",
                }
            ),
        ),
        (
            "sha1 integrity",
            f'"integrity": "sha1-{base64.b64encode(hashlib.sha1(b"x").digest()).decode()}"',
        ),
        ("base64 png data uri", f'<img src="data:image/png;base64,{png}">'),
        ("env placeholder braces", "API_KEY=${API_KEY}\nDB_PASSWORD=${DB_PASSWORD:-}\n"),
        ("your key here", "OPENAI_API_KEY=YOUR_KEY_HERE\n"),
        ("angle token placeholder", 'curl -H "Authorization: Bearer <token>" https://api.test'),
        ("xxx placeholder", "api_key=xxx\npassword: '****'\n"),
        (
            "env var name as value",
            json.dumps({"provider": "openai", "api_" + "key_env": "OPENAI_" + "API_KEY"}),
        ),
        ("export without value", "export OPENAI_API_KEY\necho $OPENAI_API_KEY | wc -c"),
        ("bcrypt password hash", f'password_hash = "{bcrypt}"'),
        ("max tokens", json.dumps({"model": "gpt-4o", "max_tokens": 4096, "temperature": 0.2})),
        (
            "tokenizer special tokens",
            json.dumps(
                {
                    "eos_token": "</s>",
                    "pad_token": "[PAD]",
                    "unk_token": "<unk>",
                    "bos_token": "<s>",
                }
            ),
        ),
        ("python token from function", "token = get_token()\npassword = getpass.getpass()\n"),
        ("kwarg passthrough", "client = Client(host=host, password=password, token=token)"),
        (
            "prose about secrets",
            "The token expired, so rotate your password and update the API key in the vault.",
        ),
        (
            "sk-learn prose",
            "We use sk-learn-compatible-estimators and task-scheduler-for-nightly-builds here.",
        ),
        (
            "aws documented example key",
            "aws_access_key_id = " + _p("AK", "IA", "IOSFODNN7", "EXAMPLE"),
        ),
        ("public key ssh-rsa", f"ssh-rsa {g.b64(270)} dev@laptop"),
        (
            "certificate pem",
            f"-----BEGIN CERTIFICATE-----\n{g.b64(48)}\n{g.b64(48)}\n-----END CERTIFICATE-----",
        ),
        ("public key pem", f"-----BEGIN PUBLIC KEY-----\n{g.b64(48)}\n-----END PUBLIC KEY-----"),
        (
            "private key placeholder",
            f"{'-' * 5}BEGIN {_p('PRIV', 'ATE')} KEY{'-' * 5}\n...\n{'-' * 5}END PRIVATE KEY{'-' * 5}",
        ),
        (
            "url without password",
            "https://dev@github.com/acme/api.git and postgres://localhost:5432/app",
        ),
        ("ipv6 url", "curl http://[::1]:8080/healthz"),
        ("scp style git url", "git@github.com:acme/api.git"),
        (
            "bearer env reference",
            'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user',
        ),
        ("github actions secret reference", "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n"),
        (
            "password min length setting",
            "PASSWORD_MIN_LENGTH=12\nTOKEN_URL=https://oauth2.googleapis.com/token\n",
        ),
        ("docker password-stdin", 'echo "$CR_PAT" | docker login ghcr.io -u acme --password-stdin'),
        ("tokenizers parallelism", "TOKENIZERS_PARALLELISM=false python train.py"),
        ("stripe publishable key", "pk_live_" + g.mixed(ALNUM, 24)),
        (
            "test summary pass counts",
            "PASSED tests/test_auth.py::test_token_refresh\n===== 12 passed, 1 skipped in 0.52s =====\nPass: 12\n",
        ),
        ("css colours and hex", "color: #ff00aa; background: #0b0c0d; --token-color: #123456;"),
        (
            "go sum hashes",
            f"golang.org/x/crypto v0.17.0 h1:{base64.b64encode(hashlib.sha256(b'g').digest()).decode()}",
        ),
        ("cargo lock checksum", f'checksum = "{sha2}"'),
        ("ulid and request ids", f"request_id=01ARZ3NDEKTSV4RRFFQ69G5FAV trace={sha2[:32]}"),
        (
            "kubernetes secret ref",
            "valueFrom:\n  secretKeyRef:\n    name: db-secret\n    key: password\n",
        ),
        (
            "dotted reference",
            "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']\napi_key = settings.OPENAI_API_KEY\n",
        ),
        ("pagination token", json.dumps({"items": [], "nextPageToken": "CAoQAA"})),
        (
            "token prefix in docs",
            "GitHub tokens start with ghp_ and fine-grained ones with github_pat_.",
        ),
        ("empty assignments", "DB_PASSWORD=\nAPI_KEY=''\n"),
        (
            "password file path flag",
            "mysql --defaults-file=~/.my.cnf --password-file=/run/secrets/db",
        ),
        ("private key path flag", "ssh -i ~/.ssh/id_ed25519 --private-key ~/.ssh/id_ed25519 host"),
        ("etag header", f'ETag: "{sha}"'),
        ("session id hex", f"sessionid={sha2[:32]}"),
    ]


_WORDS = (  # noqa: SIM905
    "refactor the parser so each record becomes one turn and test the edge cases around "
    "timestamps fix flaky retry logic add logging for the index run make recall faster "
    "the embedding batch size should stay under the memory budget and the store keeps "
    "one file per memory with WAL enabled we checked the migration path twice"
).split()


def transcript_blocks(target_bytes: int = 5_000_000, seed: int = 3) -> list[str]:
    """Agent-transcript-like block texts totalling about `target_bytes` UTF-8 bytes.

    A mix of prose, compact-JSON Bash tool calls, git logs, diffs, pytest output, lockfile
    excerpts with integrity hashes, JSON API responses with UUIDs, stack traces and base64
    images: the look-alike-rich text a scanner must be fast and quiet on.
    """
    g = Gen(seed)
    blocks: list[str] = []
    total = 0

    def prose(n: int) -> str:
        return " ".join(g.r.choice(_WORDS) for _ in range(n)).capitalize() + "."

    makers = [
        lambda: prose(g.r.randint(20, 120)),
        lambda: _tool_use(
            f"cd /work/app && git log --oneline -n {g.r.randint(3, 20)} && pytest -q tests/test_{g.s(LO, 6)}.py"
        ),
        lambda: "\n".join(
            f"commit {hashlib.sha1(g.r.randbytes(8)).hexdigest()}\nAuthor: Dev <dev@acme.test>\n\n    {prose(8)}\n"
            for _ in range(6)
        ),
        lambda: "\n".join(
            [
                "diff --git a/funes/store.py b/funes/store.py",
                f"index {g.s(HEX, 7)}..{g.s(HEX, 7)} 100644",
            ]
            + [
                f"{g.r.choice('+- ')}    {g.s(LO, 6)} = {g.s(LO, 8)}({g.s(LO, 4)}, key={g.s(LO, 5)})"
                for _ in range(30)
            ]
        ),
        lambda: "\n".join(
            f"tests/test_{g.s(LO, 5)}.py::test_{g.s(LO, 8)} PASSED [{i}%]" for i in range(0, 100, 4)
        ),
        lambda: json.dumps(
            {
                f"node_modules/{g.s(LO, 7)}": {
                    "version": f"1.{g.r.randint(0, 9)}.0",
                    "resolved": f"https://registry.npmjs.org/{g.s(LO, 6)}/-/x-1.0.0.tgz",
                    "integrity": "sha512-" + base64.b64encode(g.r.randbytes(64)).decode(),
                }
                for _ in range(8)
            },
            indent=2,
        ),
        lambda: json.dumps(
            {
                "id": str(uuid.UUID(int=g.r.getrandbits(128), version=4)),
                "items": [
                    {
                        "uuid": str(uuid.UUID(int=g.r.getrandbits(128), version=4)),
                        "token_count": g.r.randint(1, 900),
                    }
                    for _ in range(10)
                ],
            }
        ),
        lambda: (
            "Traceback (most recent call last):\n"
            + "".join(
                f'  File "/work/app/{g.s(LO, 6)}.py", line {g.r.randint(1, 400)}, in {g.s(LO, 7)}\n    return {g.s(LO, 5)}(key, token=token)\n'
                for _ in range(8)
            )
            + "KeyError: 'api_key'"
        ),
        lambda: (
            f'{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{base64.b64encode(g.r.randbytes(3000)).decode()}"}}}}'
        ),
        lambda: "\n".join(
            f"{g.s(LO, 8)}=={g.r.randint(0, 9)}.{g.r.randint(0, 20)}.{g.r.randint(0, 9)} --hash=sha256:{g.s(HEX, 64)}"
            for _ in range(12)
        ),
    ]
    while total < target_bytes:
        block = g.r.choice(makers)()
        blocks.append(block)
        total += len(block.encode("utf-8"))
    return blocks


def claude_records(
    texts: list[str], *, session_id: str, cwd: str = "/work/app", seed: int = 5
) -> list[dict[str, object]]:
    """Claude Code transcript records (native JSONL shapes) carrying each text in some block.

    A text that is a compact JSON object becomes a `tool_use` input (Bash / Write); the others
    rotate through a user prompt, an assistant reply and a `tool_result` of a Bash call.
    """
    r = random.Random(seed)
    records: list[dict[str, object]] = []
    parent: str | None = None
    clock = 1_700_000_000

    def emit(kind: str, content: object) -> None:
        nonlocal parent, clock
        clock += r.randint(1, 40)
        uid = str(uuid.UUID(int=r.getrandbits(128), version=4))
        message: dict[str, object] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(
                {
                    "id": f"msg_{r.getrandbits(64):016x}",
                    "type": "message",
                    "model": "claude-sonnet-4-6",
                }
            )
        records.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": cwd,
                "sessionId": session_id,
                "version": "2.1.97",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uid,
                "timestamp": f"2026-04-02T10:{(clock // 60) % 60:02d}:{clock % 60:02d}.000Z",
            }
        )
        parent = uid

    for i, text in enumerate(texts):
        tool_id = f"toolu_{r.getrandbits(64):016x}"
        if text.startswith("{") and text.endswith("}"):
            try:
                payload = json.loads(text)
            except ValueError:
                payload = None
            if isinstance(payload, dict):
                name = "Bash" if "command" in payload else "Write"
                emit(
                    "assistant",
                    [{"type": "tool_use", "id": tool_id, "name": name, "input": payload}],
                )
                emit("user", [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}])
                continue
        slot = i % 3
        if slot == 0:
            emit("user", text)
        elif slot == 1:
            emit("assistant", [{"type": "text", "text": text}])
        else:
            emit(
                "assistant",
                [
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "Bash",
                        "input": {"command": "cat config.txt"},
                    }
                ],
            )
            emit("user", [{"type": "tool_result", "tool_use_id": tool_id, "content": text}])
    return records


def write_claude_session(
    home: Path, texts: list[str], *, session_id: str = "5e55a0b1-0000-4000-8000-000000000001"
) -> Path:
    """Write a Claude Code session under `<home>/.claude/projects/-work-app/` and return its path."""
    project = Path(home) / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True, exist_ok=True)
    path = project / f"{session_id}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for rec in claude_records(texts, session_id=session_id):
            f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path
