#!/usr/bin/env python3
"""Scripted fake LLM server for end-to-end tests of coding agents (stdlib only).

funes' own copy of ../shared/agent-e2e/recipe/fakellm.py, adapted: `--log`, and the final
answer quotes the tool results it got back (so a test can read them in the agent's answer).

Speaks three wire formats on one port:
  * Anthropic Messages     POST /v1/messages           (stream SSE or JSON)
  * OpenAI Chat Completions POST /v1/chat/completions   (stream SSE or JSON)
  * OpenAI Responses       POST /v1/responses          (stream SSE or JSON)
plus GET /v1/models and a catch-all that answers 404 JSON.

Script: if the latest user prompt contains ``CALL_TOOL:<substr>`` (optionally
followed by a JSON object of arguments, e.g. ``CALL_TOOL:ping{"text":"hi"}``)
and the request offers a tool whose name contains <substr>, and no tool result
has been sent back yet for this prompt, the reply is a single tool call.
Otherwise the reply is the canned text ``FAKE_REPLY: <first words of prompt>``, followed
(after tool calls) by ``(tool results received: <names>)`` and one line per tool result:
``TOOL_RESULT <name>: <its text, whitespace collapsed, first RESULT_CHARS characters>``.

Every request is appended (path, headers subset, body) to $FAKELLM_LOG
(default /tmp/e2e/fakellm-requests.jsonl) so a test can check, e.g., that an
MCP tool was offered to the model.

Usage: python3 fakellm.py [--port 0] [--port-file PATH] [--log PATH]
"""

import argparse
import contextlib
import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = os.environ.get("FAKELLM_LOG", "/tmp/e2e/fakellm-requests.jsonl")
_lock = threading.Lock()
RESULT_CHARS = 1500
TRIGGER = re.compile(r"CALL_TOOL:([A-Za-z0-9_.\-]+)(\{.*?\})?", re.S)


def log_request(path, headers, body):
    rec = {
        "t": time.time(),
        "path": path,
        "headers": {
            k: v
            for k, v in headers.items()
            if k.lower()
            in (
                "user-agent",
                "content-type",
                "x-api-key",
                "authorization",
                "anthropic-version",
                "anthropic-beta",
                "originator",
                "session_id",
                "x-stainless-package-version",
            )
        },
        "body": body,
    }
    with _lock, open(LOG, "a") as f:
        f.write(json.dumps(rec) + "\n")


def text_of(content):
    """Flatten any of the three APIs' content representations to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for c in content:
            if isinstance(c, str):
                out.append(c)
            elif isinstance(c, dict) and c.get("type") in ("text", "input_text", "output_text"):
                out.append(c.get("text", ""))
        # agents prepend injected context blocks (<system-reminder>, <environment_context>...):
        # prefer the blocks that are not such wrappers
        real = [t for t in out if not t.lstrip().startswith("<")]
        return "\n".join(real or out)
    return ""


def result_text(content):
    """A tool result's text, whatever the API wraps it in (string, blocks, JSON output)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for c in content:
            if isinstance(c, str):
                out.append(c)
            elif isinstance(c, dict):
                out.append(str(c.get("text", c.get("output", ""))))
        return "\n".join(out)
    if isinstance(content, dict):
        return result_text(content.get("content") or content.get("output") or content.get("text"))
    return str(content)


def decide(prompt, tool_names, called, results=()):
    """Return ('tool', name, args_json) or ('text', reply).

    tool_names: names offered in this request; called: names already called since the
    prompt; results: (tool name, result text) pairs sent back since the prompt.  Claude Code may offer MCP tools only after its async MCP connect, and then
    offers `WaitForMcpServers`: the script calls that first when the wanted tool is absent.
    """
    m = TRIGGER.search(prompt or "")
    if m:
        want = m.group(1)
        args = m.group(2) or "{}"
        cands = (
            [n for n in tool_names if n == want]
            or [n for n in tool_names if n.endswith(want)]
            or [n for n in tool_names if want in n]
        )
        done_want = any(c == want or c.endswith(want) or want in c for c in called)
        if cands and not done_want:
            return ("tool", cands[0], args)
        if (
            not cands
            and not done_want
            and "WaitForMcpServers" in tool_names
            and "WaitForMcpServers" not in called
        ):
            return ("tool", "WaitForMcpServers", "{}")
    words = " ".join((prompt or "").split()[:12])
    suffix = f" (tool results received: {', '.join(sorted(called))})" if called else ""
    quoted = "".join(
        f"\nTOOL_RESULT {name}: {' '.join(str(text).split())[:RESULT_CHARS]}"
        for name, text in results
    )
    return ("text", f"FAKE_REPLY: {words}{suffix}{quoted}")


# ---------------------------------------------------------------- Anthropic
def anthropic_plan(body):
    msgs = body.get("messages", [])
    tools = [t.get("name") for t in body.get("tools", []) or [] if t.get("name")]
    prompt, called = "", set()
    names, results = {}, []  # tool_use id -> name; (id, text) newest first
    for m in reversed(msgs):
        c = m.get("content")
        if m.get("role") == "assistant":
            if isinstance(c, list):
                for b in c:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        called.add(b.get("name"))
                        names[b.get("id")] = b.get("name")
            continue
        if m.get("role") != "user":
            continue
        if isinstance(c, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in c
        ):
            results += [
                (b.get("tool_use_id"), result_text(b.get("content")))
                for b in c
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            continue
        prompt = text_of(c)
        if prompt.strip():
            break
    return decide(prompt, tools, called, [(names.get(i, "?"), t) for i, t in reversed(results)])


def anthropic_events(body, plan):
    mid = "msg_fake_" + uuid.uuid4().hex[:16]
    model = body.get("model", "fake-model")
    usage0 = {
        "input_tokens": 10,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage0,
            },
        },
    )
    if plan[0] == "tool":
        _, name, args = plan
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_fake_" + uuid.uuid4().hex[:12],
                    "name": name,
                    "input": {},
                },
            },
        )
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": args},
            },
        )
        stop = "tool_use"
    else:
        text = plan[1]
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": part},
                },
            )
        stop = "end_turn"
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 12},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def anthropic_json(body, plan):
    if plan[0] == "tool":
        content = [
            {
                "type": "tool_use",
                "id": "toolu_fake_" + uuid.uuid4().hex[:12],
                "name": plan[1],
                "input": json.loads(plan[2]),
            }
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": plan[1]}]
        stop = "end_turn"
    return {
        "id": "msg_fake_" + uuid.uuid4().hex[:16],
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake-model"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 12},
    }


# ---------------------------------------------------------------- Chat Completions
def chat_plan(body):
    msgs = body.get("messages", [])
    tools = []
    for t in body.get("tools", []) or []:
        fn = t.get("function") or {}
        if fn.get("name"):
            tools.append(fn["name"])
    prompt, called = "", set()
    names, results = {}, []
    for m in reversed(msgs):
        if m.get("role") == "assistant":
            for tc in m.get("tool_calls") or []:
                called.add((tc.get("function") or {}).get("name"))
                names[tc.get("id")] = (tc.get("function") or {}).get("name")
            continue
        if m.get("role") == "tool":
            results.append((m.get("tool_call_id"), result_text(m.get("content"))))
            continue
        if m.get("role") == "user":
            prompt = text_of(m.get("content"))
            if prompt.strip():
                break
    return decide(prompt, tools, called, [(names.get(i, "?"), t) for i, t in reversed(results)])


def chat_chunks(body, plan):
    cid = "chatcmpl-fake" + uuid.uuid4().hex[:12]
    model = body.get("model", "fake-model")
    base = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    yield dict(
        base,
        choices=[
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
        ],
    )
    if plan[0] == "tool":
        _, name, args = plan
        yield dict(
            base,
            choices=[
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_fake_" + uuid.uuid4().hex[:12],
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    },
                    "finish_reason": None,
                }
            ],
        )
        yield dict(
            base,
            choices=[
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": args}}]},
                    "finish_reason": None,
                }
            ],
        )
        finish = "tool_calls"
    else:
        text = plan[1]
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            yield dict(
                base, choices=[{"index": 0, "delta": {"content": part}, "finish_reason": None}]
            )
        finish = "stop"
    yield dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])
    if (body.get("stream_options") or {}).get("include_usage"):
        yield dict(
            base,
            choices=[],
            usage={"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22},
        )


def chat_json(body, plan):
    msg = {"role": "assistant", "content": None}
    if plan[0] == "tool":
        msg["tool_calls"] = [
            {
                "id": "call_fake_" + uuid.uuid4().hex[:12],
                "type": "function",
                "function": {"name": plan[1], "arguments": plan[2]},
            }
        ]
        finish = "tool_calls"
    else:
        msg["content"] = plan[1]
        finish = "stop"
    return {
        "id": "chatcmpl-fake" + uuid.uuid4().hex[:12],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22},
    }


# ---------------------------------------------------------------- Responses
NS = "::"  # internal marker for Responses-API namespaced tools (codex: namespace mcp__<server>)


def responses_plan(body):
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    tools = []
    for t in body.get("tools", []) or []:
        if t.get("type") == "namespace":
            tools += [t["name"] + NS + c["name"] for c in t.get("tools", []) if c.get("name")]
        elif t.get("name"):
            tools.append(t["name"])
        elif (t.get("function") or {}).get("name"):
            tools.append(t["function"]["name"])
    prompt, called = "", set()
    names, results = {}, []
    for it in reversed(items):
        typ = it.get("type", "message")
        if typ.endswith("_call"):
            name = (it.get("namespace") + NS if it.get("namespace") else "") + str(it.get("name"))
            called.add(name)
            names[it.get("call_id")] = name
            continue
        if typ.endswith("_call_output"):
            results.append((it.get("call_id"), result_text(it.get("output"))))
            continue
        if typ == "message" and it.get("role") == "user":
            t = text_of(it.get("content"))
            # codex injects <environment_context>/<user_instructions> as user messages: skip them
            if t.strip() and not t.lstrip().startswith("<"):
                prompt = t
                break
    return decide(prompt, tools, called, [(names.get(i, "?"), t) for i, t in reversed(results)])


def responses_output(plan):
    if plan[0] == "tool":
        item = {
            "type": "function_call",
            "id": "fc_fake_" + uuid.uuid4().hex[:12],
            "status": "completed",
            "call_id": "call_fake_" + uuid.uuid4().hex[:12],
            "name": plan[1],
            "arguments": plan[2],
        }
        if NS in plan[1]:
            item["namespace"], item["name"] = plan[1].split(NS, 1)
        return item
    return {
        "type": "message",
        "id": "msg_fake_" + uuid.uuid4().hex[:12],
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": plan[1], "annotations": []}],
    }


def responses_events(body, plan):
    rid = "resp_fake_" + uuid.uuid4().hex[:12]
    model = body.get("model", "fake-model")
    resp = {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    seq = iter(range(1000))
    yield (
        "response.created",
        {"type": "response.created", "sequence_number": next(seq), "response": resp},
    )
    item = responses_output(plan)
    if plan[0] == "tool":
        added = dict(item, arguments="", status="in_progress")
        yield (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": added,
            },
        )
        yield (
            "response.function_call_arguments.delta",
            {
                "type": "response.function_call_arguments.delta",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": 0,
                "delta": item["arguments"],
            },
        )
        yield (
            "response.function_call_arguments.done",
            {
                "type": "response.function_call_arguments.done",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": 0,
                "arguments": item["arguments"],
            },
        )
    else:
        text = plan[1]
        added = dict(item, content=[], status="in_progress")
        yield (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": added,
            },
        )
        yield (
            "response.content_part.added",
            {
                "type": "response.content_part.added",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
        )
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            yield (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": part,
                },
            )
        yield (
            "response.output_text.done",
            {
                "type": "response.output_text.done",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "text": text,
            },
        )
        yield (
            "response.content_part.done",
            {
                "type": "response.content_part.done",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "part": item["content"][0],
            },
        )
    yield (
        "response.output_item.done",
        {
            "type": "response.output_item.done",
            "sequence_number": next(seq),
            "output_index": 0,
            "item": item,
        },
    )
    done = dict(
        resp,
        status="completed",
        output=[item],
        usage={
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 12,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 22,
        },
    )
    yield (
        "response.completed",
        {"type": "response.completed", "sequence_number": next(seq), "response": done},
    )


# ---------------------------------------------------------------- HTTP
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakellm/1"

    def log_message(self, fmt, *args):  # quiet; requests go to LOG
        if os.environ.get("FAKELLM_VERBOSE"):
            sys.stderr.write("fakellm: " + fmt % args + "\n")

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, s):
        b = s.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def _sse_end(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        log_request(self.path, self.headers, None)
        if path.endswith("/models"):
            return self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": "fake-model",
                            "object": "model",
                            "created": 0,
                            "owned_by": "fakellm",
                            "type": "model",
                            "display_name": "Fake Model",
                        }
                    ],
                    "models": [],
                },
            )
        return self._json(
            200 if path in ("", "/", "/health") else 404, {"ok": True, "path": self.path}
        )

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "zstd":
            log_request(self.path, self.headers, {"_unreadable": "zstd"})
            return self._json(415, {"error": "zstd not supported"})
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw[:2000].decode("latin-1")}
        log_request(self.path, self.headers, body)
        path = self.path.split("?")[0].rstrip("/")
        stream = bool(body.get("stream"))
        if path.endswith("/messages/count_tokens"):
            return self._json(200, {"input_tokens": 42})
        if path.endswith("/messages"):
            plan = anthropic_plan(body)
            if not stream:
                return self._json(200, anthropic_json(body, plan))
            self._sse_start()
            for ev, data in anthropic_events(body, plan):
                self._chunk(f"event: {ev}\ndata: {json.dumps(data)}\n\n")
            return self._sse_end()
        if path.endswith("/chat/completions"):
            plan = chat_plan(body)
            if not stream:
                return self._json(200, chat_json(body, plan))
            self._sse_start()
            for ch in chat_chunks(body, plan):
                self._chunk(f"data: {json.dumps(ch)}\n\n")
            self._chunk("data: [DONE]\n\n")
            return self._sse_end()
        if path.endswith("/responses"):
            plan = responses_plan(body)
            if not stream:
                evs = list(responses_events(body, plan))
                return self._json(200, evs[-1][1]["response"])
            self._sse_start()
            for ev, data in responses_events(body, plan):
                self._chunk(f"event: {ev}\ndata: {json.dumps(data)}\n\n")
            return self._sse_end()
        return self._json(
            404, {"error": {"type": "not_found", "message": f"fakellm: no route {self.path}"}}
        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--log", help="request log (default: $FAKELLM_LOG)")
    a = ap.parse_args()
    if a.log:
        global LOG
        LOG = a.log
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(a.port_file + ".tmp", a.port_file)
    print(f"fakellm listening on http://{a.host}:{port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        srv.serve_forever()


if __name__ == "__main__":
    main()
