// An instance's log, live: GET /v2/model-instances/{id}/logs?follow=true&tail=N streamed into a
// terminal-style view that keeps to the bottom while the user has not scrolled up; a worker
// selector for the subordinates of a deployment across machines; Download of what is shown.
import { DownloadOutlined } from "@ant-design/icons";
import { Alert, Button, Select, Space, Switch } from "antd";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage, type Instance } from "../lib/api";
import { readText } from "../lib/sse";

const MAX_CHARS = 2_000_000;  // older text is dropped past this

export default function LogViewer({ instance }: { instance: Instance }) {
  const { t } = useTranslation();
  const [workerId, setWorkerId] = useState<number | undefined>(undefined);
  const [follow, setFollow] = useState(true);
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLPreElement>(null);
  const pinned = useRef(true);

  useEffect(() => {
    const controller = new AbortController();
    setText("");
    setError(null);
    const query = new URLSearchParams({ tail: "500", follow: follow ? "true" : "false" });
    if (workerId !== undefined) query.set("worker_id", String(workerId));
    (async () => {
      try {
        const response = await fetch(`/v2/model-instances/${instance.id}/logs?${query}`, {
          credentials: "same-origin",
          signal: controller.signal,
        });
        if (!response.ok) {
          setError(errorMessage(response.status, await response.text()));
          return;
        }
        for await (const piece of readText(response)) {
          setText((old) => {
            const next = old + piece;
            return next.length > MAX_CHARS ? next.slice(next.length - MAX_CHARS) : next;
          });
        }
      } catch (e) {
        if (!controller.signal.aborted) setError(e instanceof Error ? e.message : String(e));
      }
    })();
    return () => controller.abort();
  }, [instance.id, workerId, follow]);

  useEffect(() => {
    if (pinned.current && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [text]);

  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `${instance.name}${workerId !== undefined ? `-worker-${workerId}` : ""}.log`;
    a.click();
    URL.revokeObjectURL(url);
  };
  const subordinates = instance.distributed_servers?.subordinate_workers ?? [];
  return (
    <Space direction="vertical" style={{ width: "100%" }}>
      <Space wrap>
        {subordinates.length > 0 && (
          <Select
            aria-label={t("logs.worker")}
            style={{ minWidth: 220 }}
            value={workerId ?? -1}
            onChange={(v) => setWorkerId(v === -1 ? undefined : v)}
            options={[
              { value: -1, label: `${t("logs.main")}: ${instance.worker_name ?? ""}` },
              ...subordinates.map((s) => ({ value: s.worker_id, label: `${t("logs.subordinate")}: ${s.worker_name ?? s.worker_id}` })),
            ]}
          />
        )}
        <Space>
          {t("logs.follow")}
          <Switch checked={follow} onChange={setFollow} />
        </Space>
        <Button icon={<DownloadOutlined />} onClick={download} disabled={!text}>{t("logs.download")}</Button>
      </Space>
      {error && <Alert type="error" showIcon message={error} />}
      <pre
        ref={box}
        data-testid="log-text"
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
        style={{
          background: "#111", color: "#d6d6d6", fontSize: 12, lineHeight: 1.45, padding: 12,
          height: "calc(100vh - 220px)", overflow: "auto", margin: 0, whiteSpace: "pre-wrap", wordBreak: "break-all",
        }}
      >
        {text || t("logs.empty")}
      </pre>
    </Space>
  );
}
