"""The held-out corpus's non-secret side: texts that hold no credential and must stay intact.

Two sets, measured apart (issue 17's targets: ≤ 5 % and ≤ 1 % redacted):

* `candidates(seed)`: look-alikes a scanner may mistake for a secret, generated at run time —
  hashes in the shapes tools print them (git, sha256sum, go.sum, Cargo.lock, pnpm/yarn/npm
  lockfiles, pip `--hash`, wheel RECORD lines, docker digests), identifiers (UUID, ULID,
  KSUID, nanoid, MongoDB ObjectId, Stripe object ids, GitHub node ids, request/trace ids),
  encoded data (base64 PNG, protobuf, source maps, data URIs), public things (SSH public
  keys, certificates, publishable keys, docs' example tokens, JWKS public keys), secret
  *references* (`${{ secrets.X }}`, `secretKeyRef`, `os.environ`, `vault:` paths, `$VAR`),
  password-policy settings, CLI help text, upper-case prose, DNA/protein sequences, filler
  runs, minified JS — plus the negative examples other scanners publish
  (heldout_samples.json `false_positives`).
* `realistic(limit_per_language)`: real code and data found on this machine, by language:
  Python stdlib, C headers, JavaScript (npm's own modules, minified bundles), Java (the
  JDK's src.zip), Perl, SQL, CSS, Go, shell scripts, HTML/Markdown docs, `/etc` configs and
  JSON lockfiles. Roots that are absent are skipped; the test asserts enough languages were
  found. Deterministic for one machine.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from field_corpus import ALNUM, B64, DI, HEX, LO, URLSAFE, Gen
from heldout_values import published_false_positives


@dataclass(frozen=True, slots=True)
class Text:
    group: str
    name: str
    text: str


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _hashes(g: Gen, add: _Adder) -> None:
    for i in range(8):
        raw = g.r.randbytes(32)
        sha1, sha256 = hashlib.sha1(raw).hexdigest(), hashlib.sha256(raw).hexdigest()
        b64 = base64.b64encode(hashlib.sha256(raw[::-1]).digest()).decode()
        b64_512 = base64.b64encode(hashlib.sha512(raw).digest()).decode()
        urlsafe = base64.urlsafe_b64encode(hashlib.sha256(raw + b"w").digest()).decode().rstrip("=")
        add(
            "hashes",
            f"git show --stat {i}",
            f"commit {sha1}\nMerge: {sha1[:7]} {sha256[:7]}\nAuthor: Dana <dana@acme.dev>\n\n    Rotate the API key handling (#{1200 + i})\n\n src/auth/keys.py | 14 +++++++-------\n",
        )  # noqa: E501
        add(
            "hashes",
            f"go.sum {i}",
            f"github.com/aws/aws-sdk-go-v2 v1.2{i}.0 h1:{b64}\ngithub.com/aws/aws-sdk-go-v2 v1.2{i}.0/go.mod h1:{b64[::-1][1:] + '='}",
        )  # noqa: E501
        add(
            "hashes",
            f"Cargo.lock {i}",
            f'[[package]]\nname = "ring"\nversion = "0.17.{i}"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{sha256}"',
        )  # noqa: E501
        add(
            "hashes",
            f"pnpm-lock {i}",
            f"  /jose@5.2.{i}:\n    resolution: {{integrity: sha512-{b64_512}}}\n    dev: false",
        )  # noqa: E501
        add(
            "hashes",
            f"wheel RECORD {i}",
            f"secretstorage/__init__.py,sha256={urlsafe},{1500 + i}\nsecretstorage/item.py,sha256={urlsafe[::-1]},{5210 + i}",
        )  # noqa: E501
        add(
            "hashes",
            f"docker images {i}",
            f"REPOSITORY   TAG   IMAGE ID       CREATED\nacme/api     1.{i}   {sha256[:12]}   2 days ago\n\nDigest: sha256:{sha256}",
        )  # noqa: E501
        add(
            "hashes",
            f"sha256sum {i}",
            f"{sha256}  dist/funes-0.{i}.0-py3-none-any.whl\n{hashlib.sha256(raw + b'x').hexdigest()}  dist/funes-0.{i}.0.tar.gz",
        )  # noqa: E501
        add(
            "hashes",
            f"s3 etag {i}",
            json.dumps(
                {
                    "Key": f"backups/2026/03/db-{i}.sql.gz",
                    "ETag": f'"{hashlib.md5(raw).hexdigest()}-12"',
                    "Size": 1048576 * (i + 1),
                }
            ),
        )  # noqa: E501
        add(
            "hashes",
            f"password hash {i}",
            f"INSERT INTO users (email, password_hash) VALUES ('u{i}@acme.dev', '$2b$12${g.s(ALNUM + './', 53)}');",
        )  # noqa: E501


def _ids(g: Gen, add: _Adder) -> None:
    for i in range(8):
        u = str(uuid.UUID(int=g.r.getrandbits(128), version=4))
        ulid = "01" + g.s(_CROCKFORD, 24)
        ksuid = g.s(ALNUM, 27)
        nano = g.s(URLSAFE, 21)
        oid = g.s(HEX, 24)
        add(
            "ids",
            f"ulid/ksuid log {i}",
            f"2026-03-04T10:12:0{i}Z INFO order={ulid} job={ksuid} took=41ms",
        )
        add(
            "ids",
            f"nanoid json {i}",
            json.dumps({"id": nano, "_id": {"$oid": oid}, "createdAt": "2026-03-04T10:12:09Z"}),
        )  # noqa: E501
        add(
            "ids",
            f"stripe objects {i}",
            json.dumps(
                {
                    "id": "cus_" + g.s(ALNUM, 14),
                    "default_payment_method": "pm_" + g.s(ALNUM, 24),
                    "latest_invoice": "in_" + g.s(ALNUM, 24),
                    "object": "customer",
                }
            ),
        )  # noqa: E501
        add(
            "ids",
            f"github graphql {i}",
            json.dumps(
                {
                    "node_id": "PR_kwDO" + g.s(URLSAFE, 18),
                    "id": g.r.randint(10**8, 10**9),
                    "head": {"sha": hashlib.sha1(g.r.randbytes(8)).hexdigest()},
                }
            ),
        )  # noqa: E501
        add(
            "ids",
            f"aws response {i}",
            json.dumps(
                {
                    "ResponseMetadata": {
                        "RequestId": u,
                        "HTTPStatusCode": 200,
                        "HostId": g.s(B64, 76),
                    },
                    "Arn": f"arn:aws:iam::{g.s(DI, 12)}:role/deploy",
                }
            ),
        )  # noqa: E501
        add(
            "ids",
            f"kubectl pods {i}",
            f"NAME                        READY   STATUS    RESTARTS   AGE\napi-{g.s(LO + DI, 10)}-{g.s(LO + DI, 5)}   1/1     Running   0          3d\nworker-{g.s(LO + DI, 9)}-{g.s(LO + DI, 5)}  1/1     Running   2          3d",
        )  # noqa: E501
        add(
            "ids",
            f"trace {i}",
            f"traceparent: 00-{g.s(HEX, 32)}-{g.s(HEX, 16)}-01\nx-request-id: {u}\nx-amzn-trace-id: Root=1-{g.s(HEX, 8)}-{g.s(HEX, 24)}",
        )  # noqa: E501
        add(
            "ids",
            f"ipfs cid {i}",
            f"added Qm{g.s('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 44)} site/index.html",
        )  # noqa: E501


def _encoded(g: Gen, add: _Adder) -> None:
    for i in range(4):
        png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + g.r.randbytes(600)).decode()
        add(
            "encoded",
            f"image block {i}",
            json.dumps(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": png},
                }
            ),
        )  # noqa: E501
        add("encoded", f"wrapped base64 {i}", "\n".join(png[j : j + 76] for j in range(0, 760, 76)))
        add(
            "encoded",
            f"protobuf b64 {i}",
            f'grpcurl -d \'{{"payload":"{base64.b64encode(g.r.randbytes(90)).decode()}"}}\' localhost:50051 acme.Ingest/Push',
        )  # noqa: E501
        add(
            "encoded",
            f"source map {i}",
            '{"version":3,"sources":["../src/index.ts"],"names":["main","argv"],"mappings":"'
            + ";".join(
                g.s("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 8)
                + ","
                + g.s("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 6)
                for _ in range(12)
            )
            + '"}',
        )  # noqa: E501
        add(
            "encoded",
            f"css data uri {i}",
            f".icon-{i} {{ background-image: url(data:image/svg+xml;base64,{base64.b64encode(g.r.randbytes(120)).decode()}); }}",
        )  # noqa: E501


def _public(g: Gen, add: _Adder) -> None:
    for i in range(3):
        add(
            "public",
            f"ssh public key {i}",
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(B64, 43)} dev{i}@laptop\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{g.s(B64, 500)} ci@runner",
        )  # noqa: E501
        add(
            "public",
            f"public key pem {i}",
            "-----BEGIN PUBLIC KEY-----\n"
            + "\n".join(g.s(B64, 64) for _ in range(5))
            + "\n"
            + g.s(B64, 20)
            + "==\n-----END PUBLIC KEY-----",
        )  # noqa: E501
        add(
            "public",
            f"certificate chain {i}",
            "-----BEGIN CERTIFICATE-----\n"
            + "\n".join(g.s(B64, 64) for _ in range(8))
            + "\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n"
            + "\n".join(g.s(B64, 64) for _ in range(6))
            + "\n-----END CERTIFICATE-----",
        )  # noqa: E501
        add(
            "public",
            f"jwks {i}",
            json.dumps(
                {
                    "keys": [
                        {
                            "kty": "RSA",
                            "use": "sig",
                            "kid": g.s(HEX, 16),
                            "n": g.s(URLSAFE, 342),
                            "e": "AQAB",
                        }
                    ]
                }
            ),
        )  # noqa: E501
        add(
            "public",
            f"publishable keys {i}",
            f"NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_{g.s(ALNUM, 99)}\nNEXT_PUBLIC_POSTHOG_KEY=phc_{g.s(ALNUM, 43)}\nVITE_SUPABASE_URL=https://{g.s(LO, 20)}.supabase.co",
        )  # noqa: E501
    add(
        "public",
        "aws docs example",
        "aws configure\nAWS Access Key ID [None]: AKIAIOSFODNN7EXAMPLE\nAWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nDefault region name [None]: us-west-2",
    )  # noqa: E501
    add(
        "public",
        "gpg public key",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n"
        + "\n".join(g.s(B64, 64) for _ in range(6))
        + "\n="
        + g.s(B64, 4)
        + "\n-----END PGP PUBLIC KEY BLOCK-----",
    )  # noqa: E501


def _references(g: Gen, add: _Adder) -> None:
    refs = [
        "      - name: Deploy\n        env:\n          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n          AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}\n        run: npm publish",  # noqa: E501
        "        env:\n          - name: DB_PASSWORD\n            valueFrom:\n              secretKeyRef:\n                name: db-credentials\n                key: password",  # noqa: E501
        'variable "db_password" {\n  type      = string\n  sensitive = true\n}\n\nresource "aws_db_instance" "main" {\n  password = var.db_password\n}',  # noqa: E501
        "DATABASE_URL=postgres://${POSTGRES_USER}:${POSTGRES_PASSWORD}@db:5432/${POSTGRES_DB}",
        'api_key = os.environ["OPENAI_API_KEY"]\nclient = OpenAI(api_key=api_key)',
        "const token = process.env.GITHUB_TOKEN ?? core.getInput('token');",
        "password: \"{{ lookup('env', 'DB_PASSWORD') }}\"\napi_token: \"{{ vault_api_token }}\"",
        "spring.datasource.password=${SPRING_DATASOURCE_PASSWORD}\nspring.datasource.username=app",
        "export VAULT_ADDR=https://vault.internal:8200\nvault kv get -field=password secret/prod/db",
        "secret_key = Rails.application.credentials.secret_key_base",
        'let key = std::env::var("STRIPE_SECRET_KEY").expect("STRIPE_SECRET_KEY must be set");',
        'token := os.Getenv("SLACK_BOT_TOKEN")\nif token == "" {\n\tlog.Fatal("SLACK_BOT_TOKEN is required")\n}',
        "PGPASSWORD=$(aws secretsmanager get-secret-value --secret-id prod/db --query SecretString --output text | jq -r .password)",  # noqa: E501
        "docker login -u $DOCKER_USER --password-stdin < ~/.docker-token",
        'curl -H "Authorization: Bearer $(gcloud auth print-access-token)" https://run.googleapis.com/v2/projects',  # noqa: E501
        "password = getpass.getpass(prompt='Vault password: ')",
        "OPENAI_API_KEY=sk-...  # paste your key here",
        "| Variable | Description |\n|---|---|\n| `API_TOKEN` | token used to call the API (required) |\n| `DB_PASSWORD` | database password |",  # noqa: E501
    ]
    for i, t in enumerate(refs):
        add("references", f"reference {i}", t)


def _settings(g: Gen, add: _Adder) -> None:
    texts = [
        "PASSWORD_MIN_LENGTH=12\nPASSWORD_REQUIRE_SYMBOL=true\nTOKEN_EXPIRY_MINUTES=15\nSESSION_COOKIE_SECURE=true",
        "AUTH_PASSWORD_VALIDATORS = [\n    {'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator'},\n]",
        "usage: mysql [OPTIONS] [database]\n  -p, --password[=name]\n                      Password to use when connecting to server. If password is\n                      not given it's asked from the tty.",  # noqa: E501
        "  -a <password>      Password to use when connecting to the server.\n                     You can also use the REDISCLI_AUTH environment variable.",
        "max_tokens: 4096\ntemperature: 0.2\ntop_p: 0.95\nstop_tokens: ['</s>']",
        'tokenizer_config.json: {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "model_max_length": 2048}',  # noqa: E501
        "CREATE TABLE api_keys (\n  id bigserial PRIMARY KEY,\n  key_hash bytea NOT NULL,\n  prefix text NOT NULL,\n  created_at timestamptz DEFAULT now()\n);",  # noqa: E501
        "The token bucket refills at 10 tokens per second; the secret to good throughput is batching.",  # noqa: E501
        "Forgot your password? We'll email you a link to reset it. The link expires in 30 minutes.",
        "$ ssh-keygen -t ed25519 -C dev@acme.dev\nGenerating public/private ed25519 key pair.\nYour identification has been saved in /home/dev/.ssh/id_ed25519\nThe key fingerprint is:\nSHA256:"
        + g.s(B64, 43)
        + " dev@acme.dev",  # noqa: E501
        "primary_key = 'id'\nsort_key = 'created_at'\npartition_key = 'tenant_id'\ncache_key = f'user:{user_id}:profile'",  # noqa: E501
        "KEY_LENGTH = 32\nTOKEN_PREFIX = 'fns_'\nSECRET_NAME = 'prod/db/password'\nAUTH_HEADER = 'Authorization'",  # noqa: E501
    ]
    for i, t in enumerate(texts):
        add("settings", f"setting {i}", t)


def _prose_and_filler(g: Gen, add: _Adder) -> None:
    add(
        "prose",
        "upper-case prose",
        "IMPORTANT: THE ACCESS KEY ROTATION POLICY REQUIRES THAT EVERY CREDENTIAL IS REPLACED WITHIN NINETY DAYS AND THAT THE OLD SECRET IS REVOKED",
    )  # noqa: E501
    add(
        "prose",
        "changelog",
        "v2.3.0\n- Fixed: the password field no longer shows the value in plain text\n- Changed: API keys are now hashed at rest\n- Security: tokens expire after 24h",
    )  # noqa: E501
    add(
        "prose",
        "review comment",
        "I think the cleanest fix is to keep the token in the keyring and read it once at startup; the password prompt should only appear when it's missing.",
    )  # noqa: E501
    add("prose", "dna", ">seq1 Homo sapiens\n" + "\n".join(g.s("ACGT", 70) for _ in range(5)))
    add(
        "prose",
        "protein",
        ">sp|P69905|HBA_HUMAN\n" + "\n".join(g.s("ACDEFGHIKLMNPQRSTVWY", 60) for _ in range(4)),
    )
    add(
        "prose",
        "filler",
        "a" * 64 + "\n" + "1234567890" * 5 + "\n" + "xxx:yyy\n" + "-" * 80 + "\n" + "=" * 40,
    )
    add(
        "prose",
        "test output",
        "PASSED tests/test_auth.py::test_token_refresh\nPASSED tests/test_auth.py::test_password_reset\n===== 48 passed in 3.12s =====",
    )  # noqa: E501
    add(
        "prose",
        "german prose",
        "Das Passwort muss mindestens zwölf Zeichen lang sein und darf nicht dem Benutzernamen entsprechen.",
    )  # noqa: E501
    add(
        "prose",
        "minified js",
        '!function(e,t){"use strict";var n=e.document,r=Object.getPrototypeOf,i=[].slice,o=function(e){return null!=e&&e===e.window};function a(e,t,n){var r,i,o=(n=n||x).createElement("script");if(o.text=e,t)for(r in c)(i=t[r]||t.getAttribute&&t.getAttribute(r))&&o.setAttribute(r,i);n.head.appendChild(o).parentNode.removeChild(o)}}(window);',
    )  # noqa: E501
    add(
        "prose",
        "css",
        ":root{--color-primary:#3b82f6;--token-radius:6px}.btn-primary{background:#1d4ed8;color:#fff}.key-icon{mask:url(#key)}",
    )  # noqa: E501
    add(
        "prose",
        "sql",
        "SELECT u.id, u.email, count(t.id) AS tokens\nFROM users u LEFT JOIN api_tokens t ON t.user_id = u.id AND t.revoked_at IS NULL\nGROUP BY u.id HAVING count(t.id) > 5;",
    )  # noqa: E501


class _Adder:
    def __init__(self) -> None:
        self.out: list[Text] = []

    def __call__(self, group: str, name: str, text: str) -> None:
        self.out.append(Text(group, name, text))


def candidates(seed: int = 47) -> list[Text]:
    g = Gen(seed)
    add = _Adder()
    for part in (_hashes, _ids, _encoded, _public, _references, _settings, _prose_and_filler):
        part(g, add)
    for i, (source, text) in enumerate(published_false_positives()):
        add("published_fp", f"{source} #{i}", text)
    return add.out


# -- real code and data on this machine ---------------------------------------------------

_ROOTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("python", "@stdlib", (".py",)),
    ("c", "/usr/include", (".h",)),
    ("javascript", "/usr/lib/node_modules/npm/node_modules", (".js", ".mjs", ".cjs")),
    ("javascript", "/usr/share/javascript", (".js",)),
    ("json", "/usr/lib/node_modules/npm/node_modules", ("package.json",)),
    ("perl", "/usr/share/perl", (".pm",)),
    ("sql", "/usr/share/postgresql", (".sql",)),
    ("css", "/usr/share/doc/python3/_static", (".css",)),
    ("css", "/usr/share/javascript", (".css",)),
    ("go", "/usr/share/doc/git/contrib", (".go",)),
    ("shell", "/usr/share/doc/git/contrib", (".sh",)),
    ("markdown", "/usr/share/doc", (".md",)),
    ("config", "/etc", (".conf", ".cfg", ".ini")),
    ("lockfile", "/var/cache/agent-e2e", ("package-lock.json",)),
]


def _files(root: str, suffixes: tuple[str, ...]) -> Iterator[Path]:
    if root == "@stdlib":
        import sysconfig

        base = Path(sysconfig.get_paths()["stdlib"])
        for p in sorted(base.rglob("*.py")):
            rel = p.relative_to(base).parts
            if not any(
                x.startswith(("test", "idle", "lib2to3", "site-packages", "turtledemo"))
                for x in rel
            ):
                yield p
        return
    base = Path(root)
    if not base.is_dir():
        return
    try:
        for p in sorted(base.rglob("*")):
            if p.name.endswith(suffixes) and p.is_file() and "test" not in p.name.lower():
                yield p
    except OSError:
        return


def _java_sources(limit: int, g: Gen) -> list[tuple[str, str]]:
    for zpath in sorted(Path("/usr/lib/jvm").glob("*/lib/src.zip")) + sorted(
        Path("/usr/lib/jvm").glob("*/src.zip")
    ):
        try:
            with zipfile.ZipFile(zpath) as z:
                names = sorted(n for n in z.namelist() if n.endswith(".java") and "/java/" in n)
                g.r.shuffle(names)
                return [(n, z.read(n).decode("utf-8", "replace")) for n in names[:limit]]
        except (OSError, zipfile.BadZipFile):
            continue
    return []


def _slice(text: str, g: Gen, size: int = 1500) -> str:
    if len(text) <= size:
        return text
    start = g.r.randrange(0, len(text) - size)
    start = text.rfind("\n", 0, start) + 1
    return text[start : start + size]


def realistic(limit_per_language: int = 60, seed: int = 53) -> list[Text]:
    """Slices (~1,500 characters) of real files, `limit_per_language` per language at most."""
    g = Gen(seed)
    out: list[Text] = []
    per_lang: dict[str, int] = {}
    for lang, root, suffixes in _ROOTS:
        files = list(_files(root, suffixes))
        g.r.shuffle(files)
        for path in files:
            if per_lang.get(lang, 0) >= limit_per_language:
                break
            try:
                if path.stat().st_size > 5_000_000:
                    continue
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if len(text) < 200:
                continue
            out.append(Text(lang, str(path), _slice(text, g)))
            per_lang[lang] = per_lang.get(lang, 0) + 1
    for name, text in _java_sources(limit_per_language, g):
        out.append(Text("java", name, _slice(text, g)))
    return out
