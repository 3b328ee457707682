"""The real `openai` npm client (installed by scripts/setup.sh) runs a streaming chat and a
completion against the server."""
import os
import subprocess
import tempfile

from harness import STORIES_GGUF, Server, check, run

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = ("{{ bos_token }}{% for message in messages %}{{ message['content'] }}"
            "{% if not loop.last %}\n{% endif %}{% endfor %}")


def test_openai_npm_client_streaming_chat_and_completion():
    with tempfile.NamedTemporaryFile("w", suffix=".jinja", delete=False) as f:
        f.write(TEMPLATE)
        template = f.name
    try:
        with Server(STORIES_GGUF, "--chat-template", template, "--served-model-name", "stories",
                    "--api-key", "sk-e2e") as srv:
            p = subprocess.run(["node", os.path.join(HERE, "node/openai_client.mjs")],
                               cwd=os.path.join(HERE, "node"), capture_output=True, text=True,
                               timeout=120,
                               env={**os.environ, "BASE_URL": f"http://127.0.0.1:{srv.port}/v1",
                                    "API_KEY": "sk-e2e", "MODEL": "stories"})
            check(p.returncode == 0, f"node client failed:\n{p.stdout}\n{p.stderr}")
            check("chat-stream-ok" in p.stdout and "completion-ok" in p.stdout, p.stdout)
    finally:
        os.unlink(template)


if __name__ == "__main__":
    run([test_openai_npm_client_streaming_chat_and_completion])
