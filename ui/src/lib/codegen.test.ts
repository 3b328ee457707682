import { describe, expect, it } from "vitest";
import { chatRequestBody, curlCode, nodeCode, pythonCode } from "./codegen";

const body = chatRequestBody(
  "qwen3.5-397b-1",
  [
    { role: "system", content: "Be brief." },
    { role: "user", content: "It's 2+2?" },
  ],
  { temperature: 0, max_tokens: 64, stop: ["\n\n"], enable_thinking: false, top_p: Number.NaN },
);

describe("chatRequestBody", () => {
  it("carries the set parameters, the thinking switch and usage, and drops unset ones", () => {
    expect(body).toEqual({
      model: "qwen3.5-397b-1",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "It's 2+2?" },
      ],
      stream: true,
      temperature: 0,
      max_tokens: 64,
      stop: ["\n\n"],
      chat_template_kwargs: { enable_thinking: false },
      stream_options: { include_usage: true },
    });
  });
});

describe("View code", () => {
  it("curl quotes the body for the shell and leaves the key a placeholder", () => {
    const code = curlCode("http://10.0.0.1:8080", body);
    expect(code).toContain("curl -N 'http://10.0.0.1:8080/v1/chat/completions' \\");
    expect(code).toContain('-H "Authorization: Bearer $TANDEM_API_KEY"');
    expect(code).toContain(`"content": "It'\\''s 2+2?"`);
    // The quoted body, unquoted by a shell, is the body itself.
    const quoted = code.slice(code.indexOf("-d '") + 4, code.lastIndexOf("'"));
    expect(JSON.parse(quoted.replace(/'\\''/g, "'"))).toEqual(body);
  });

  it("Python passes vLLM's extras in extra_body with Python literals", () => {
    const code = pythonCode("http://10.0.0.1:8080", body);
    expect(code).toContain('base_url="http://10.0.0.1:8080/v1"');
    expect(code).toContain('api_key=os.environ["TANDEM_API_KEY"]');
    expect(code).toContain("    temperature=0,");
    expect(code).toContain("    stream=True,");
    expect(code).toContain('extra_body={\n        "chat_template_kwargs": {\n            "enable_thinking": False,\n        },\n    },');
    expect(code).not.toContain("true");
  });

  it("Node sends the body as JSON", () => {
    const code = nodeCode("http://10.0.0.1:8080", body);
    expect(code).toContain('baseURL: "http://10.0.0.1:8080/v1"');
    expect(code).toContain("apiKey: process.env.TANDEM_API_KEY");
    const json = code.slice(code.indexOf("create(") + 7, code.indexOf(");\nfor await"));
    expect(JSON.parse(json)).toEqual(body);
  });
});
