// tandem serve's own page at / (like llama-server's): the playground against this server, no
// login; when the server has --api-key, the key is asked once and kept in this browser.
import { Button, Input, Layout, Modal, Typography } from "antd";
import { StrictMode, useCallback, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { useTranslation } from "react-i18next";
import HeaderTools from "./components/HeaderTools";
import Playground from "./components/Playground";
import "./i18n";
import { Themed } from "./theme";

const KEY = "tandem.serve.apiKey";

function ServePlayground() {
  const { t } = useTranslation();
  const [apiKey, setApiKey] = useState(() => localStorage.getItem(KEY) ?? "");
  const [asking, setAsking] = useState(false);
  const [draft, setDraft] = useState("");
  const [generation, setGeneration] = useState(0);  // remounts the playground after a new key
  const headers = useCallback(
    (): Record<string, string> => (apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
    [apiKey],
  );
  const onUnauthorized = useCallback(() => setAsking(true), []);
  // Ask for the key before the first /v1 call when the server wants one and none is kept.
  const [ready, setReady] = useState(false);
  useEffect(() => {
    fetch("playground/config")  // relative: the page may live under --root-path
      .then((r) => r.json())
      .then((c: { api_key_required?: boolean }) => {
        if (c.api_key_required && !apiKey) setAsking(true);
        else setReady(true);
      })
      .catch(() => setReady(true));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <Layout style={{ minHeight: "100vh" }}>
      <Layout.Header style={{ display: "flex", alignItems: "center", justifyContent: "space-between", paddingInline: 24 }}>
        <Typography.Text style={{ color: "#fff", fontWeight: 700, fontSize: 18 }}>tandem · {t("playground.title")}</Typography.Text>
        <HeaderTools />
      </Layout.Header>
      <Layout.Content style={{ padding: 24 }}>
        {ready && <Playground key={generation} headers={headers} codeNeedsKey={!!apiKey} onUnauthorized={onUnauthorized} />}
      </Layout.Content>
      <Modal
        open={asking}
        title={t("serve.keyTitle")}
        onCancel={() => setAsking(false)}
        footer={
          <Button
            type="primary"
            data-testid="save-key"
            onClick={() => {
              localStorage.setItem(KEY, draft);
              setApiKey(draft);
              setAsking(false);
              setReady(true);
              setGeneration((g) => g + 1);
            }}
          >
            {t("common.save")}
          </Button>
        }
      >
        <Typography.Paragraph>{t("serve.keyHint")}</Typography.Paragraph>
        <Input.Password value={draft} onChange={(e) => setDraft(e.target.value)} data-testid="api-key-input" />
      </Modal>
    </Layout>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Themed>
      <ServePlayground />
    </Themed>
  </StrictMode>,
);
