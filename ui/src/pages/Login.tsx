// Login with the manager's users (POST /auth/login sets the session cookie).
import { Alert, Button, Card, Form, Input, Typography } from "antd";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import HeaderTools from "../components/HeaderTools";
import { api } from "../lib/api";

export default function Login({ onLoggedIn }: { onLoggedIn: () => void }) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (values: { username: string; password: string }) => {
    setBusy(true);
    setError(null);
    try {
      await api("POST", "/auth/login", values);
      onLoggedIn();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div style={{ minHeight: "100vh", display: "flex", flexDirection: "column", alignItems: "center", justifyContent: "center", gap: 16 }}>
      <HeaderTools />
      <Card title={<Typography.Title level={3} style={{ margin: 0 }}>tandem</Typography.Title>} style={{ width: 380 }}>
        <Form layout="vertical" onFinish={submit} initialValues={{ username: "admin" }}>
          <Form.Item label={t("login.username")} name="username" rules={[{ required: true, message: t("login.usernameRequired") }]}>
            <Input autoComplete="username" autoFocus />
          </Form.Item>
          <Form.Item label={t("login.password")} name="password" rules={[{ required: true, message: t("login.passwordRequired") }]}>
            <Input.Password autoComplete="current-password" />
          </Form.Item>
          {error && <Alert type="error" message={error} showIcon style={{ marginBottom: 16 }} />}
          <Button type="primary" htmlType="submit" block loading={busy}>{t("login.submit")}</Button>
        </Form>
        <Typography.Paragraph type="secondary" style={{ marginTop: 16, marginBottom: 0, fontSize: 12 }}>
          {t("login.firstRunHint")}
        </Typography.Paragraph>
      </Card>
    </div>
  );
}
