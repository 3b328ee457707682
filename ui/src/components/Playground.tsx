// The chat playground, in the manager's console (through its /v1 gateway, the login session
// authenticating) and as tandem serve's own page (against itself, its --api-key asked once):
// deployment picker, system prompt, editable message list, streamed Markdown answers with the
// reasoning collapsed, a thinking switch (chat_template_kwargs.enable_thinking), sampling
// parameters, Stop, TTFT and tokens/s per answer, View code, and Compare (two side by side).
import { CodeOutlined, DeleteOutlined, SendOutlined, StopOutlined } from "@ant-design/icons";
import {
  Alert, Button, Card, Col, Collapse, Form, Input, InputNumber, Modal, Row, Select, Slider, Space, Switch, Tabs, Tag, Typography,
} from "antd";
import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import ReactMarkdown from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import "highlight.js/styles/github.css";
import { errorMessage } from "../lib/api";
import { streamChat, type Answer } from "../lib/chat";
import { chatRequestBody, curlCode, nodeCode, pythonCode, type ChatMessage, type ChatParameters } from "../lib/codegen";

export interface PlaygroundProps {
  /** Extra request headers (tandem serve's API key); the manager's session needs none. */
  headers: () => Record<string, string>;
  /** The deployment to pick first (from "Open in playground"). */
  initialModel?: string | null;
  /** Whether the generated code sends an API key (the manager's gateway always needs one). */
  codeNeedsKey: boolean;
  /** Called on a 401, so tandem serve's page can ask for the key again. */
  onUnauthorized?: () => void;
}

interface Turn extends ChatMessage {
  answer?: Answer;
}

function Markdown({ text }: { text: string }) {
  return (
    <div className="tandem-markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeHighlight]}>{text}</ReactMarkdown>
    </div>
  );
}

function AnswerStats({ answer }: { answer?: Answer }) {
  const { t } = useTranslation();
  if (!answer) return null;
  return (
    <Space size={4} wrap data-testid="answer-stats">
      {answer.ttftMs !== undefined && <Tag>{t("playground.ttft")} {answer.ttftMs.toFixed(0)} ms</Tag>}
      {answer.tokensPerSecond !== undefined && <Tag>{answer.tokensPerSecond.toFixed(1)} {t("playground.tokensPerSecond")}</Tag>}
      {answer.completionTokens !== undefined && <Tag>{t("playground.tokens", { count: answer.completionTokens })}</Tag>}
      {answer.finishReason === "abort" && <Tag color="orange">{t("playground.stopped")}</Tag>}
    </Space>
  );
}

/** One conversation against one deployment. */
function ChatPane(props: {
  models: string[];
  model: string | undefined;
  setModel: (model: string) => void;
  system: string;
  params: ChatParameters;
  headers: () => Record<string, string>;
  sendSignal: { text: string; n: number } | null;
  onBusy: (busy: boolean) => void;
  onUnauthorized?: () => void;
  index: number;
}) {
  const { t } = useTranslation();
  const { model, sendSignal, onBusy } = props;
  const [turns, setTurns] = useState<Turn[]>([]);
  const [editing, setEditing] = useState<number | null>(null);
  const controller = useRef<AbortController | null>(null);
  const bottom = useRef<HTMLDivElement>(null);

  const run = useCallback(
    async (history: Turn[]) => {
      if (!model) return;
      const messages: ChatMessage[] = [];
      if (props.system.trim()) messages.push({ role: "system", content: props.system });
      for (const turn of history) messages.push({ role: turn.role, content: turn.content });
      const body = chatRequestBody(model, messages, props.params);
      const abort = new AbortController();
      controller.current = abort;
      onBusy(true);
      const at = history.length;
      setTurns([...history, { role: "assistant", content: "", answer: { content: "", reasoning: "" } }]);
      // Relative URLs: under tandem serve --root-path the page lives at /prefix/ (the console's
      // index.html sets <base href="/">).
      const final = await streamChat("v1/chat/completions", props.headers(), body, abort.signal, (answer) =>
        setTurns((old) => {
          const next = [...old];
          next[at] = { role: "assistant", content: answer.content, answer };
          return next;
        }),
      );
      if (final.error && /401|api key|API key/.test(final.error)) props.onUnauthorized?.();
      controller.current = null;
      onBusy(false);
    },
    [model, props, onBusy],
  );

  // A pane opened later (Compare) answers only the messages sent after it appeared.
  const firstSignal = useRef(sendSignal?.n ?? 0);
  useEffect(() => {
    if (!sendSignal || sendSignal.n <= firstSignal.current || !sendSignal.text.trim()) return;
    const history = [...turns, { role: "user" as const, content: sendSignal.text }];
    void run(history);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [sendSignal]);

  // Block bodies: scrollIntoView returns a Promise in current Chromium, and an effect must not
  // return anything but a cleanup function.
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
  }, [turns]);
  useEffect(() => () => {
    controller.current?.abort();
  }, []);

  return (
    <Card
      size="small"
      title={
        <Select
          data-testid={`model-select-${props.index}`}
          style={{ minWidth: 240 }}
          placeholder={t("playground.pickModel")}
          value={model}
          onChange={props.setModel}
          options={props.models.map((m) => ({ value: m, label: m }))}
        />
      }
      extra={
        <Space>
          {controller.current && (
            <Button danger size="small" icon={<StopOutlined />} onClick={() => controller.current?.abort()} data-testid={`stop-${props.index}`}>
              {t("playground.stop")}
            </Button>
          )}
          <Button size="small" icon={<DeleteOutlined />} onClick={() => setTurns([])} disabled={!!controller.current}>
            {t("playground.clear")}
          </Button>
        </Space>
      }
      styles={{ body: { height: "calc(100vh - 330px)", minHeight: 240, overflow: "auto" } }}
    >
      {turns.length === 0 && <Typography.Text type="secondary">{t("playground.empty")}</Typography.Text>}
      {turns.map((turn, i) => (
        <div key={i} style={{ marginBottom: 12 }} data-testid={`turn-${props.index}-${i}`} data-role={turn.role}>
          <Typography.Text strong>{t(`playground.role.${turn.role}`)}</Typography.Text>
          {turn.answer?.reasoning && (
            <Collapse
              size="small"
              style={{ margin: "4px 0" }}
              items={[{ key: "r", label: t("playground.reasoning"), children: <Typography.Paragraph type="secondary" style={{ whiteSpace: "pre-wrap", margin: 0 }}>{turn.answer.reasoning}</Typography.Paragraph> }]}
            />
          )}
          {editing === i ? (
            <Input.TextArea
              autoSize
              defaultValue={turn.content}
              autoFocus
              onBlur={(e) => {
                const next = [...turns];
                next[i] = { ...turn, content: e.target.value };
                setTurns(next);
                setEditing(null);
              }}
            />
          ) : (
            <div onDoubleClick={() => !controller.current && setEditing(i)} title={t("playground.editHint")} data-testid={turn.role === "assistant" ? `answer-${props.index}` : undefined} data-raw={turn.role === "assistant" ? turn.content : undefined} data-state={turn.role === "assistant" ? (turn.answer && !turn.answer.done ? "streaming" : "done") : undefined}>
              {turn.role === "assistant" ? <Markdown text={turn.content} /> : <Typography.Paragraph style={{ whiteSpace: "pre-wrap", margin: 0 }}>{turn.content}</Typography.Paragraph>}
            </div>
          )}
          {turn.answer?.error && <Alert type="error" showIcon message={turn.answer.error} />}
          <AnswerStats answer={turn.answer} />
        </div>
      ))}
      <div ref={bottom} />
    </Card>
  );
}

const DEFAULT_PARAMS: ChatParameters = { temperature: 0.7, top_p: 1, max_tokens: 512, enable_thinking: true };

export default function Playground({ headers, initialModel, codeNeedsKey, onUnauthorized }: PlaygroundProps) {
  const { t } = useTranslation();
  const [models, setModels] = useState<string[]>([]);
  const [modelError, setModelError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<(string | undefined)[]>([initialModel ?? undefined, undefined]);
  const [compare, setCompare] = useState(false);
  const [system, setSystem] = useState("");
  const [params, setParams] = useState<ChatParameters>(DEFAULT_PARAMS);
  const [input, setInput] = useState("");
  const [sendSignal, setSendSignal] = useState<{ text: string; n: number } | null>(null);
  const [busy, setBusy] = useState([false, false]);
  const [showCode, setShowCode] = useState(false);

  useEffect(() => {
    (async () => {
      try {
        const response = await fetch("v1/models", { headers: headers(), credentials: "same-origin" });
        const text = await response.text();
        if (!response.ok) {
          if (response.status === 401) onUnauthorized?.();
          setModelError(errorMessage(response.status, text));
          return;
        }
        const names = (JSON.parse(text).data ?? []).map((m: { id: string }) => m.id) as string[];
        setModels(names);
        setModelError(null);
        setChosen((old) => [old[0] && names.includes(old[0]) ? old[0] : names[0], old[1] ?? names[1] ?? names[0]]);
      } catch (e) {
        setModelError(e instanceof Error ? e.message : String(e));
      }
    })();
  }, [headers, onUnauthorized]);

  const anyBusy = busy[0] || (compare && busy[1]);
  const send = () => {
    if (!input.trim() || anyBusy) return;
    setSendSignal({ text: input, n: (sendSignal?.n ?? 0) + 1 });
    setInput("");
  };
  const codeBody = chatRequestBody(chosen[0] ?? "MODEL", [
    ...(system.trim() ? [{ role: "system" as const, content: system }] : []),
    { role: "user", content: input || "Hello!" },
  ], params);
  const origin = window.location.origin;
  const setParam = (name: keyof ChatParameters) => (value: unknown) =>
    setParams((p) => ({ ...p, [name]: value === null ? undefined : value }));

  const panes = compare ? [0, 1] : [0];
  return (
    <Row gutter={16} wrap={false}>
      <Col flex="auto" style={{ minWidth: 0 }}>
        {modelError && <Alert type="error" showIcon message={modelError} style={{ marginBottom: 12 }} />}
        <Row gutter={12}>
          {panes.map((i) => (
            <Col key={i} span={compare ? 12 : 24}>
              <ChatPane
                index={i}
                models={models}
                model={chosen[i]}
                setModel={(m) => setChosen((old) => (i === 0 ? [m, old[1]] : [old[0], m]))}
                system={system}
                params={params}
                headers={headers}
                sendSignal={sendSignal}
                onBusy={(b) => setBusy((old) => (i === 0 ? [b, old[1]] : [old[0], b]))}
                onUnauthorized={onUnauthorized}
              />
            </Col>
          ))}
        </Row>
        <Space.Compact style={{ width: "100%", marginTop: 12 }}>
          <Input.TextArea
            data-testid="chat-input"
            value={input}
            onChange={(e) => setInput(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                send();
              }
            }}
            placeholder={t("playground.inputPlaceholder")}
            autoSize={{ minRows: 2, maxRows: 8 }}
          />
          <Button type="primary" icon={<SendOutlined />} onClick={send} disabled={anyBusy || !chosen[0]} data-testid="send" style={{ height: "auto" }}>
            {t("playground.send")}
          </Button>
        </Space.Compact>
      </Col>
      <Col flex="300px">
        <Card size="small" title={t("playground.parameters")} extra={<Button size="small" icon={<CodeOutlined />} onClick={() => setShowCode(true)} data-testid="view-code">{t("playground.viewCode")}</Button>}>
          <Form layout="vertical" size="small">
            <Form.Item label={t("playground.compare")}>
              <Switch checked={compare} onChange={setCompare} data-testid="compare" />
            </Form.Item>
            <Form.Item label={t("playground.thinking")} extra={t("playground.thinkingHint")}>
              <Switch checked={params.enable_thinking !== false} onChange={(v) => setParams((p) => ({ ...p, enable_thinking: v }))} data-testid="thinking" />
            </Form.Item>
            <Form.Item label={t("playground.system")}>
              <Input.TextArea value={system} onChange={(e) => setSystem(e.target.value)} autoSize={{ minRows: 2, maxRows: 6 }} data-testid="system-prompt" />
            </Form.Item>
            <Form.Item label={`${t("playground.temperature")}: ${params.temperature ?? "-"}`}>
              <Slider min={0} max={2} step={0.05} value={params.temperature} onChange={setParam("temperature")} />
              <InputNumber min={0} max={2} step={0.1} value={params.temperature} onChange={setParam("temperature")} data-testid="temperature" style={{ width: "100%" }} />
            </Form.Item>
            <Form.Item label="top_p">
              <InputNumber min={0} max={1} step={0.05} value={params.top_p} onChange={setParam("top_p")} style={{ width: "100%" }} />
            </Form.Item>
            <Form.Item label="max_tokens">
              <InputNumber min={1} step={64} value={params.max_tokens} onChange={setParam("max_tokens")} data-testid="max-tokens" style={{ width: "100%" }} />
            </Form.Item>
            <Form.Item label="presence_penalty">
              <InputNumber min={-2} max={2} step={0.1} value={params.presence_penalty} onChange={setParam("presence_penalty")} style={{ width: "100%" }} />
            </Form.Item>
            <Form.Item label="frequency_penalty">
              <InputNumber min={-2} max={2} step={0.1} value={params.frequency_penalty} onChange={setParam("frequency_penalty")} style={{ width: "100%" }} />
            </Form.Item>
            <Form.Item label="seed">
              <InputNumber step={1} precision={0} value={params.seed} onChange={setParam("seed")} style={{ width: "100%" }} />
            </Form.Item>
            <Form.Item label="stop">
              <Select mode="tags" value={params.stop ?? []} onChange={setParam("stop")} tokenSeparators={[]} open={false} />
            </Form.Item>
          </Form>
        </Card>
      </Col>
      <Modal open={showCode} onCancel={() => setShowCode(false)} footer={null} width={760} title={t("playground.viewCode")}>
        <Tabs
          items={[
            { key: "curl", label: "curl", children: <pre data-testid="code-curl" className="tandem-code">{curlCode(origin, codeBody, codeNeedsKey)}</pre> },
            { key: "python", label: "Python", children: <pre data-testid="code-python" className="tandem-code">{pythonCode(origin, codeBody)}</pre> },
            { key: "node", label: "Node", children: <pre data-testid="code-node" className="tandem-code">{nodeCode(origin, codeBody)}</pre> },
          ]}
        />
        <Typography.Text type="secondary">{t("playground.codeKeyHint")}</Typography.Text>
      </Modal>
    </Row>
  );
}
