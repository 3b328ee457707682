"""HTTP client run inside a namespace: `python3 dp_client.py SPEC_JSON` → JSON lines on stdout.

SPEC: {"base": "http://ip:port", "get": [paths]} → {"path": {"status", "body"}}
   or {"base": ..., "requests": [body, ...], "concurrency": N, "timeout": s,
       "path": "/v1/completions" (or "/v1/chat/completions"), "headers": {...}}
      → [{"status", "token_ids", "text", "error", "finish_reason"}, ...] (streaming when the
        body says so; an SSE `error` event is reported as error; chat text is the content).
"""
import concurrent.futures as cf
import http.client
import json
import sys
import urllib.parse


def conn_for(base, timeout):
    u = urllib.parse.urlparse(base)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)


def one(base, body, timeout, path="/v1/completions", headers=None):
    out = {"status": 0, "token_ids": [], "text": "", "error": None, "finish_reason": None}
    try:
        conn = conn_for(base, timeout)
        conn.request("POST", path, body=json.dumps(body),
                     headers={"Content-Type": "application/json", **(headers or {})})
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
            for ch in ev.get("choices", []):
                out["token_ids"] += ch.get("token_ids") or []
                out["text"] += ch.get("text", "") or (ch.get("delta") or {}).get("content") or ""
                if ch.get("finish_reason"):
                    out["finish_reason"] = ch["finish_reason"]
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
    with cf.ThreadPoolExecutor(spec.get("concurrency", 16)) as pool:
        results = list(pool.map(
            lambda b: one(base, b, timeout, spec.get("path", "/v1/completions"),
                          spec.get("headers")), spec["requests"]))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
