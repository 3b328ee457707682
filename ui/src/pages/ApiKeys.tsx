// API keys: create (name, expiry, scope, allowed deployments), the value shown once with a copy
// button, masked afterwards; revoke.
import { DeleteOutlined, PlusOutlined } from "@ant-design/icons";
import { Alert, App, Button, Checkbox, Form, Input, Modal, Popconfirm, Select, Space, Table, Tag, Typography } from "antd";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { api, type ApiKey, type Deployment, type User } from "../lib/api";
import { useWatch } from "../lib/useWatch";

const DAY = 86400;
const EXPIRIES = [
  { value: 7 * DAY, key: "days7" },
  { value: 30 * DAY, key: "days30" },
  { value: 180 * DAY, key: "days180" },
  { value: 0, key: "never" },
];

interface KeyForm { name: string; expires_in: number; scope: string[]; allowed_model_names: string[] }

export default function ApiKeys({ me }: { me: User }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const keys = useWatch<ApiKey>("/v2/api-keys");
  const models = useWatch<Deployment>("/v2/models");
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<ApiKey | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [form] = Form.useForm<KeyForm>();

  const create = async () => {
    const values = await form.validateFields();
    setError(null);
    try {
      const key = await api<ApiKey>("POST", "/v2/api-keys", {
        name: values.name.trim(),
        expires_in: values.expires_in,
        scope: values.scope,
        allowed_model_names: values.allowed_model_names ?? [],
      });
      setCreating(false);
      setCreated(key);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  const revoke = async (k: ApiKey) => {
    try {
      await api("DELETE", `/v2/api-keys/${k.id}`);
    } catch (e) {
      message.error(e instanceof Error ? e.message : String(e));
    }
  };
  const scopes = me.is_admin ? ["inference", "management", "*"] : ["inference"];
  return (
    <Space direction="vertical" style={{ width: "100%" }}>
      <Space style={{ justifyContent: "space-between", width: "100%" }}>
        <Typography.Title level={3} style={{ margin: 0 }}>{t("keys.title")}</Typography.Title>
        <Button type="primary" icon={<PlusOutlined />} data-testid="create-key" onClick={() => {
          form.resetFields();
          setError(null);
          setCreating(true);
        }}>{t("keys.create")}</Button>
      </Space>
      <Table<ApiKey>
        rowKey="id"
        loading={!keys.loaded}
        pagination={false}
        dataSource={[...keys.rows].sort((a, b) => a.name.localeCompare(b.name))}
        columns={[
          { title: t("keys.name"), dataIndex: "name" },
          { title: t("keys.key"), render: (_, k) => <code>{`tandem_${k.access_key ?? "…"}_${"•".repeat(8)}`}</code> },
          { title: t("keys.scope"), render: (_, k) => (k.scope ?? []).map((s) => <Tag key={s}>{s}</Tag>) },
          { title: t("keys.models"), render: (_, k) => ((k.allowed_model_names ?? []).length === 0 ? t("keys.allModels") : k.allowed_model_names!.map((m) => <Tag key={m}>{m}</Tag>)) },
          { title: t("keys.expires"), render: (_, k) => (k.expires_at ? new Date(k.expires_at).toLocaleString() : t("keys.never")) },
          { title: t("keys.created"), render: (_, k) => (k.created_at ? new Date(k.created_at).toLocaleString() : "-") },
          {
            title: "",
            render: (_, k) => (
              <Popconfirm title={t("keys.revokeConfirm", { name: k.name })} onConfirm={() => revoke(k)} okText={t("keys.revoke")} cancelText={t("common.cancel")}>
                <Button size="small" danger icon={<DeleteOutlined />}>{t("keys.revoke")}</Button>
              </Popconfirm>
            ),
          },
        ]}
      />
      <Modal open={creating} title={t("keys.create")} onOk={create} onCancel={() => setCreating(false)} okText={t("keys.create")} cancelText={t("common.cancel")} destroyOnHidden>
        {error && <Alert type="error" showIcon message={error} style={{ marginBottom: 12 }} />}
        <Form<KeyForm> form={form} layout="vertical" initialValues={{ expires_in: 30 * DAY, scope: ["inference"], allowed_model_names: [] }}>
          <Form.Item label={t("keys.name")} name="name" rules={[{ required: true, message: t("keys.nameRequired") }, { max: 128 }]}>
            <Input data-testid="key-name" />
          </Form.Item>
          <Form.Item label={t("keys.expiry")} name="expires_in">
            <Select options={EXPIRIES.map((e) => ({ value: e.value, label: t(`keys.${e.key}`) }))} />
          </Form.Item>
          <Form.Item label={t("keys.scope")} name="scope" rules={[{ required: true, type: "array", min: 1, message: t("keys.scopeRequired") }]}>
            <Checkbox.Group options={scopes.map((s) => ({ value: s, label: t(`keys.scopes.${s === "*" ? "all" : s}`) }))} />
          </Form.Item>
          <Form.Item label={t("keys.allowedModels")} name="allowed_model_names" extra={t("keys.allowedModelsHint")}>
            <Select mode="multiple" options={models.rows.map((m) => ({ value: m.name, label: m.name }))} />
          </Form.Item>
        </Form>
      </Modal>
      <Modal open={created !== null} destroyOnHidden title={t("keys.createdTitle")} onCancel={() => setCreated(null)} footer={<Button type="primary" onClick={() => setCreated(null)}>{t("common.done")}</Button>}>
        <Alert type="warning" showIcon message={t("keys.shownOnce")} style={{ marginBottom: 12 }} />
        <Typography.Paragraph copyable={{ text: created?.value ?? "" }} data-testid="new-key-value">
          <code>{created?.value}</code>
        </Typography.Paragraph>
      </Modal>
    </Space>
  );
}
