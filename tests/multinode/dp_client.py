"""HTTP client run inside a namespace: `python3 dp_client.py SPEC_JSON` → JSON lines on stdout.

SPEC: {"base": "http://ip:port", "get": [paths]} → {"path": {"status", "body"}}
   or {"base": ..., "requests": [body, ...], "concurrency": N, "timeout": s,
       "path": "/v1/completions" (or "/v1/chat/completions"), "headers": {...},
       "progress": bool}
      → [{"status", "token_ids", "text", "error", "finish_reason"}, ...] (streaming when the
        body says so; an SSE `error` event is reported as error; chat text is the content).
A request body may carry "_headers": {...}, sent as that request's own HTTP headers (over the
spec's) and removed from the body. With "progress": true, before the results line, one line
per event as it happens (flushed): {"event": "first_token", "i": i} when request i's stream
brings its first token, and {"event": "done", "i": i, "status", "error", "finish_reason",
"num_tokens"} when request i has ended.
"""
import concurrent.futures as cf
import http.client
import json
import sys
import threading
import urllib.parse

_print_lock = threading.Lock()


def emit(obj):
    with _print_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def conn_for(base, timeout):
    u = urllib.parse.urlparse(base)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)


def one(base, body, timeout, path="/v1/completions", headers=None, on_first_token=None):
    out = {"status": 0, "token_ids": [], "text": "", "error": None, "finish_reason": None}
    body = dict(body)
    headers = {**(headers or {}), **body.pop("_headers", {})}
    try:
        conn = conn_for(base, timeout)
        conn.request("POST", path, body=json.dumps(body),
                     headers={"Content-Type": "application/json", **headers})
        resp = conn.getresponse()
        out["status"] = resp.status
        if not body.get("stream"):
            data = json.loads(resp.read())
            if resp.status != 200:
                out["error"] = data.get("error", {}).get("message", str(data))
                return out
            choice = data["choices"][0]
            text = choice["message"]["content"] if "message" in choice else choice["text"]
            out.update(token_ids=choice.get("token_ids") or [], text=text or "",
                       finish_reason=choice["finish_reason"])
            return out
        if resp.status != 200:
            out["error"] = resp.read().decode(errors="replace")
            return out
        for line in resp:
            line = line.decode().strip()
            if not line.startswith("data: "):
                continue
            payload = line[6:]
            if payload == "[DONE]":
                break
            ev = json.loads(payload)
            if "error" in ev:
                out["error"] = ev["error"].get("message", str(ev["error"]))
                continue
            had_tokens = bool(out["token_ids"] or out["text"])
            for ch in ev.get("choices", []):
                out["token_ids"] += ch.get("token_ids") or []
                out["text"] += ch.get("text", "") or (ch.get("delta") or {}).get("content") or ""
                if ch.get("finish_reason"):
                    out["finish_reason"] = ch["finish_reason"]
            if on_first_token and not had_tokens and (out["token_ids"] or out["text"]):
                on_first_token()
        conn.close()
    except Exception as e:  # noqa: BLE001 - reported to the test
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def main():
    spec = json.loads(sys.argv[1])
    base, timeout = spec["base"], spec.get("timeout", 120)
    if "get" in spec:
        res = {}
        for path in spec["get"]:
            try:
                conn = conn_for(base, timeout)
                conn.request("GET", path)
                r = conn.getresponse()
                res[path] = {"status": r.status, "body": r.read().decode(errors="replace")}
            except Exception as e:  # noqa: BLE001
                res[path] = {"status": 0, "body": str(e)}
        print(json.dumps(res))
        return
    progress = spec.get("progress", False)

    def run_one(i, body):
        first = (lambda: emit({"event": "first_token", "i": i})) if progress else None
        out = one(base, body, timeout, spec.get("path", "/v1/completions"), spec.get("headers"),
                  on_first_token=first)
        if progress:
            emit({"event": "done", "i": i, "status": out["status"], "error": out["error"],
                  "finish_reason": out["finish_reason"], "num_tokens": len(out["token_ids"])})
        return out

    with cf.ThreadPoolExecutor(spec.get("concurrency", 16)) as pool:
        results = list(pool.map(run_one, range(len(spec["requests"])), spec["requests"]))
    emit(results)


if __name__ == "__main__":
    main()
