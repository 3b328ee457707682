// Inference backends: the list (live), and a form for custom ones (name ending -custom,
// versions with entrypoint, run command and env, health check path, parameter format) with a
// placeholder cheat-sheet; YAML import and export.
import { DeleteOutlined, DownloadOutlined, EditOutlined, MinusCircleOutlined, PlusOutlined, UploadOutlined } from "@ant-design/icons";
import { Alert, App, Button, Card, Descriptions, Form, Input, Modal, Popconfirm, Select, Space, Table, Tag, Typography, Upload } from "antd";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { api, type Backend } from "../lib/api";
import { backendFromForm, backendFromYaml, backendYaml, formFromBackend, NotABackendError, type BackendForm } from "../lib/backendForm";
import { fieldOfError } from "../lib/fieldError";
import { useWatch } from "../lib/useWatch";

const PLACEHOLDERS = ["model_path", "model_name", "port", "worker_ip", "gpu_count", "gpu_ids", "ENV_NAME"];

export default function Backends() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const backends = useWatch<Backend>("/v2/inference-backends");
  const [editing, setEditing] = useState<Backend | "new" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [form] = Form.useForm<BackendForm>();

  const open = (b: Backend | "new", values?: Partial<Backend>) => {
    setError(null);
    form.resetFields();
    form.setFieldsValue(formFromBackend(values ?? (b === "new" ? { version_configs: { "": { entrypoint: "tandem serve", run_command: "{{model_path}} --host {{worker_ip}} --port {{port}} --served-model-name {{model_name}}" } } } : b)));
    setEditing(b);
  };
  const save = async () => {
    const values = await form.validateFields();
    const body = backendFromForm(values);
    try {
      if (editing && editing !== "new") await api("PUT", `/v2/inference-backends/${editing.id}`, body);
      else await api("POST", "/v2/inference-backends", body);
      setEditing(null);
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      const field = fieldOfError(text);
      if (field === "backend_name" || field === "health_check_path" || field === "parameter_format") {
        form.setFields([{ name: field, errors: [text] }]);
      } else {
        setError(text);
      }
    }
  };
  const importYaml = async (file: File) => {
    try {
      open("new", backendFromYaml(await file.text()));
    } catch (e) {
      if (e instanceof NotABackendError) message.error(t("backends.yamlNotObject"));
      else message.error(e instanceof Error ? e.message : String(e));
    }
    return false;
  };
  const exportYaml = (b: Backend) => {
    const url = URL.createObjectURL(new Blob([backendYaml(b)], { type: "application/yaml" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `${b.backend_name}.yaml`;
    a.click();
    URL.revokeObjectURL(url);
  };
  const remove = async (b: Backend) => {
    try {
      await api("DELETE", `/v2/inference-backends/${b.id}`);
    } catch (e) {
      message.error(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <Space direction="vertical" style={{ width: "100%" }}>
      <Space style={{ justifyContent: "space-between", width: "100%" }}>
        <Typography.Title level={3} style={{ margin: 0 }}>{t("backends.title")}</Typography.Title>
        <Space>
          <Upload accept=".yaml,.yml" showUploadList={false} beforeUpload={importYaml}>
            <Button icon={<UploadOutlined />}>{t("backends.import")}</Button>
          </Upload>
          <Button type="primary" icon={<PlusOutlined />} onClick={() => open("new")} data-testid="add-backend">{t("backends.add")}</Button>
        </Space>
      </Space>
      <Table<Backend>
        rowKey="id"
        loading={!backends.loaded}
        pagination={false}
        dataSource={[...backends.rows].sort((a, b) => a.backend_name.localeCompare(b.backend_name))}
        columns={[
          { title: t("backends.name"), render: (_, b) => <Space>{b.backend_name}{b.backend_name === "tandem" && <Tag color="blue">{t("backends.builtin")}</Tag>}</Space> },
          { title: t("backends.versions"), render: (_, b) => Object.keys(b.version_configs ?? {}).map((v) => <Tag key={v}>{v || t("backends.unnamedVersion")}</Tag>) },
          { title: t("backends.healthCheck"), dataIndex: "health_check_path" },
          { title: t("backends.parameterFormat"), dataIndex: "parameter_format" },
          {
            title: t("deployments.actions"),
            render: (_, b) => (
              <Space size={4}>
                {b.backend_name !== "tandem" && <Button size="small" icon={<EditOutlined />} aria-label={t("deployments.edit")} onClick={() => open(b)} />}
                <Button size="small" icon={<DownloadOutlined />} onClick={() => exportYaml(b)}>{t("backends.export")}</Button>
                {b.backend_name !== "tandem" && (
                  <Popconfirm title={t("backends.deleteConfirm", { name: b.backend_name })} onConfirm={() => remove(b)} okText={t("common.delete")} cancelText={t("common.cancel")}>
                    <Button size="small" danger icon={<DeleteOutlined />} aria-label={t("common.delete")} />
                  </Popconfirm>
                )}
              </Space>
            ),
          },
        ]}
      />
      <Modal open={editing !== null} onCancel={() => setEditing(null)} onOk={save} width={860} okText={t("common.save")} cancelText={t("common.cancel")}
        title={editing === "new" ? t("backends.add") : t("backends.edit")} destroyOnHidden>
        {error && <Alert type="error" showIcon message={error} style={{ marginBottom: 12 }} />}
        <Form<BackendForm> form={form} layout="vertical">
          <Form.Item label={t("backends.name")} name="backend_name" extra={t("backends.nameHint")}
            rules={[{ required: true, message: t("backends.nameRequired") }, { pattern: /-custom$/, message: t("backends.nameRule") }]}>
            <Input placeholder="vllm-ascend-custom" disabled={editing !== "new"} />
          </Form.Item>
          <Form.Item label={t("backends.description")} name="description"><Input /></Form.Item>
          <Card size="small" title={t("backends.placeholders")} style={{ marginBottom: 16 }}>
            <Descriptions size="small" column={2} items={PLACEHOLDERS.map((p) => ({ key: p, label: <code>{`{{${p}}}`}</code>, children: t(`backends.placeholder.${p}`) }))} />
          </Card>
          <Form.List name="versions">
            {(fields, { add, remove }) => (
              <Space direction="vertical" style={{ width: "100%" }}>
                {fields.map((field) => (
                  <Card key={field.key} size="small" title={t("backends.version")} extra={<MinusCircleOutlined onClick={() => remove(field.name)} aria-label={t("common.remove")} />}>
                    <Form.Item label={t("backends.versionName")} name={[field.name, "version"]} rules={[{ required: true, message: t("backends.versionRequired") }]}><Input placeholder="0.18.0rc1" /></Form.Item>
                    <Form.Item label={t("backends.entrypoint")} name={[field.name, "entrypoint"]}><Input placeholder="tandem serve" style={{ fontFamily: "monospace" }} /></Form.Item>
                    <Form.Item label={t("backends.runCommand")} name={[field.name, "run_command"]}><Input.TextArea autoSize style={{ fontFamily: "monospace" }} /></Form.Item>
                    <Form.Item label={t("backends.env")} name={[field.name, "env"]} extra={t("backends.envHint")}><Input.TextArea autoSize style={{ fontFamily: "monospace" }} /></Form.Item>
                  </Card>
                ))}
                <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ version: "", entrypoint: "tandem serve", run_command: "", env: "" })}>{t("backends.addVersion")}</Button>
              </Space>
            )}
          </Form.List>
          <Space size="large" wrap style={{ marginTop: 16 }}>
            <Form.Item label={t("backends.defaultVersion")} name="default_version"><Input style={{ width: 200 }} /></Form.Item>
            <Form.Item label={t("backends.healthCheck")} name="health_check_path"><Input style={{ width: 200 }} /></Form.Item>
            <Form.Item label={t("backends.parameterFormat")} name="parameter_format">
              <Select style={{ width: 200 }} options={[{ value: "space", label: t("backends.formatSpace") }, { value: "equal", label: t("backends.formatEqual") }]} />
            </Form.Item>
          </Space>
          <Form.Item label={t("backends.defaultParameters")} name="default_backend_param"><Input.TextArea autoSize style={{ fontFamily: "monospace" }} /></Form.Item>
        </Form>
      </Modal>
    </Space>
  );
}
