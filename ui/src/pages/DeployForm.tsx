// Deploy, Edit and Clone (/deployments/new, /deployments/:id/edit, /deployments/new?clone=ID):
// source path, backend and version, replicas, scheduling Auto (spread/binpack) or Manual with a
// device picker grouped by worker, backend parameters as multi-line text (one or several flags
// per line, # comments) with the argument list it becomes, env rows, "distributed across
// workers". The server's validation message is shown at the field it names.
import { MinusCircleOutlined, PlusOutlined } from "@ant-design/icons";
import {
  Alert, App, Button, Card, Checkbox, Form, Input, InputNumber, Radio, Select, Space, Switch, Tag, Tree, Typography,
} from "antd";
import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate, useParams, useSearchParams } from "react-router-dom";
import { api, type Backend, type Deployment, type Device, type Page, type Worker } from "../lib/api";
import { cloneName, editableCopy } from "../lib/deployments";
import { fieldOfError } from "../lib/fieldError";
import { parameterEntries, parameterProblem, parameterText, parameterWords } from "../lib/params";

interface FormValues {
  name: string;
  local_path: string;
  backend: string;
  backend_version?: string;
  replicas: number;
  scheduling: "auto" | "manual";
  placement_strategy: string;
  gpu_ids: string[];
  parameters: string;
  env: { name: string; value: string }[];
  distributed: boolean;
  restart_on_error: boolean;
}

function toValues(d: Deployment | null): FormValues {
  const ids = d?.gpu_selector?.gpu_ids ?? [];
  return {
    name: d?.name ?? "",
    local_path: d?.local_path ?? "",
    backend: d?.backend || "tandem",
    backend_version: d?.backend_version || undefined,
    replicas: d?.replicas ?? 1,
    scheduling: ids.length > 0 ? "manual" : "auto",
    placement_strategy: d?.placement_strategy || "spread",
    gpu_ids: ids,
    parameters: parameterText(d?.backend_parameters),
    env: Object.entries(d?.env ?? {}).map(([name, value]) => ({ name, value })),
    distributed: d?.distributed_inference_across_workers ?? false,
    restart_on_error: d?.restart_on_error ?? true,
  };
}

function toBody(v: FormValues, base: Deployment | null): Deployment {
  const body: Deployment = {
    ...(base ? editableCopy(base) : {}),
    id: undefined as unknown as number,
    name: v.name.trim(),
    local_path: v.local_path.trim(),
    backend: v.backend,
    backend_version: v.backend_version ?? "",
    replicas: v.replicas,
    placement_strategy: v.placement_strategy,
    gpu_selector: v.scheduling === "manual" ? { gpu_ids: v.gpu_ids } : null,
    backend_parameters: parameterEntries(v.parameters),
    env: Object.fromEntries((v.env ?? []).filter((e) => e?.name).map((e) => [e.name.trim(), e.value ?? ""])),
    distributed_inference_across_workers: v.distributed,
    restart_on_error: v.restart_on_error,
  };
  delete (body as Partial<Deployment>).id;
  return body;
}

export default function DeployForm() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const navigate = useNavigate();
  const { id } = useParams();
  const [search] = useSearchParams();
  const cloneOf = search.get("clone");
  const [form] = Form.useForm<FormValues>();
  const [base, setBase] = useState<Deployment | null>(null);
  const [ready, setReady] = useState(!id && !cloneOf);
  const [backends, setBackends] = useState<Backend[]>([]);
  const [workers, setWorkers] = useState<Worker[]>([]);
  const [devices, setDevices] = useState<Device[]>([]);
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api<Page<Backend>>("GET", "/v2/inference-backends?perPage=1000").then((p) => setBackends(p.items), () => {});
    api<Page<Worker>>("GET", "/v2/workers?perPage=1000").then((p) => setWorkers(p.items), () => {});
    api<Page<Device>>("GET", "/v2/gpu-devices?perPage=1000").then((p) => setDevices(p.items), () => {});
    const source = id ?? cloneOf;
    if (!source) {
      form.setFieldsValue(toValues(null));
      return;
    }
    (async () => {
      try {
        const d = await api<Deployment>("GET", `/v2/models/${source}`);
        const all = await api<Page<Deployment>>("GET", "/v2/models?perPage=1000");
        setBase(id ? d : null);
        const values = toValues(d);
        if (cloneOf) values.name = cloneName(d.name, all.items.map((m) => m.name));
        form.setFieldsValue(values);
        setReady(true);
      } catch (e) {
        setFormError(e instanceof Error ? e.message : String(e));
      }
    })();
  }, [id, cloneOf, form]);

  const backendName = Form.useWatch("backend", form);
  const scheduling = Form.useWatch("scheduling", form);
  const parameters = Form.useWatch("parameters", form) ?? "";
  const backend = backends.find((b) => b.backend_name === backendName);
  const versions = Object.keys(backend?.version_configs ?? {});
  const words = useMemo(() => (parameterProblem(parameters) ? null : parameterWords(parameters)), [parameters]);

  const deviceTree = useMemo(
    () =>
      workers.map((w) => ({
        title: <span><b>{w.name}</b> <Typography.Text type="secondary">{w.ip}</Typography.Text></span>,
        key: `worker:${w.name}`,
        children: devices
          .filter((d) => d.worker_name === w.name || d.worker_id === w.id)
          .sort((a, b) => a.index - b.index)
          .map((d) => ({ title: <span data-testid={`device-${d.name}`}>{d.name} <Tag>{d.type}</Tag></span>, key: d.name })),
      })),
    [workers, devices],
  );

  const submit = async (values: FormValues) => {
    setBusy(true);
    setFormError(null);
    try {
      const body = toBody(values, base);
      if (id) await api("PUT", `/v2/models/${id}`, { ...body, resource_version: base?.resource_version });
      else await api("POST", "/v2/models", body);
      message.success(t(id ? "deploy.saved" : "deploy.created", { name: body.name }));
      navigate("/deployments");
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      const field = fieldOfError(text);
      const formField: Record<string, keyof FormValues> = {
        name: "name", local_path: "local_path", replicas: "replicas", backend: "backend",
        backend_version: "backend_version", backend_parameters: "parameters", env: "env",
        "gpu_selector.gpu_ids": "gpu_ids", gpu_selector: "gpu_ids", placement_strategy: "placement_strategy",
      };
      if (field && formField[field]) form.setFields([{ name: formField[field], errors: [text] }]);
      else setFormError(text);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title={t(id ? "deploy.editTitle" : cloneOf ? "deploy.cloneTitle" : "deploy.title")} style={{ maxWidth: 900 }}>
      {formError && <Alert type="error" showIcon message={formError} style={{ marginBottom: 16 }} />}
      <Form<FormValues> form={form} layout="vertical" onFinish={submit} disabled={!ready} initialValues={toValues(null)}>
        <Form.Item label={t("deploy.name")} name="name" rules={[{ required: true, message: t("deploy.nameRequired") }, { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]*$/, message: t("deploy.nameRule") }]}>
          <Input placeholder="qwen3.5-397b-1" />
        </Form.Item>
        <Form.Item label={t("deploy.localPath")} name="local_path" extra={t("deploy.localPathHint")} rules={[{ required: true, message: t("deploy.localPathRequired") }]}>
          <Input placeholder="/models/Qwen3.5-397B-A17B-w8a8" />
        </Form.Item>
        <Space size="large" wrap>
          <Form.Item label={t("deploy.backend")} name="backend">
            <Select style={{ width: 240 }} options={backends.map((b) => ({ value: b.backend_name, label: b.backend_name }))} onChange={() => form.setFieldValue("backend_version", undefined)} />
          </Form.Item>
          <Form.Item label={t("deploy.version")} name="backend_version">
            <Select style={{ width: 200 }} allowClear placeholder={backend?.default_version || t("deploy.defaultVersion")} options={versions.map((v) => ({ value: v, label: v }))} />
          </Form.Item>
          <Form.Item label={t("deploy.replicas")} name="replicas" rules={[{ required: true }]}>
            <InputNumber min={0} max={64} />
          </Form.Item>
        </Space>
        <Form.Item label={t("deploy.scheduling")} name="scheduling">
          <Radio.Group optionType="button" options={[{ value: "auto", label: t("deploy.auto") }, { value: "manual", label: t("deploy.manual") }]} />
        </Form.Item>
        {scheduling === "manual" ? (
          <Form.Item
            label={t("deploy.devices")}
            name="gpu_ids"
            valuePropName="checkedKeys"
            trigger="onCheck"
            getValueFromEvent={(checked: string[] | { checked: string[] }) =>
              (Array.isArray(checked) ? checked : checked.checked).filter((k) => !k.startsWith("worker:"))}
            rules={[{ validator: (_, v: string[]) => (v && v.length > 0 ? Promise.resolve() : Promise.reject(new Error(t("deploy.devicesRequired")))) }]}
          >
            <Tree checkable defaultExpandAll selectable={false} treeData={deviceTree} />
          </Form.Item>
        ) : (
          <Form.Item label={t("deploy.placement")} name="placement_strategy">
            <Select style={{ width: 240 }} options={[{ value: "spread", label: t("deploy.spread") }, { value: "binpack", label: t("deploy.binpack") }]} />
          </Form.Item>
        )}
        <Form.Item
          label={t("deploy.parameters")}
          name="parameters"
          extra={words ? <span data-testid="parameter-words">{t("deploy.arguments", { count: words.length })}: {words.map((w, i) => <Tag key={i} style={{ marginTop: 4 }}>{w}</Tag>)}</span> : undefined}
          rules={[{ validator: (_, v: string) => { const p = parameterProblem(v ?? ""); return p ? Promise.reject(new Error(p)) : Promise.resolve(); } }]}
        >
          <Input.TextArea autoSize={{ minRows: 4, maxRows: 24 }} spellCheck={false} style={{ fontFamily: "monospace" }} placeholder={"--max-model-len 32768   # one flag or several per line\n--enable-expert-parallel"} />
        </Form.Item>
        <Form.Item label={t("deploy.env")}>
          <Form.List name="env">
            {(fields, { add, remove }) => (
              <Space direction="vertical" style={{ width: "100%" }}>
                {fields.map((field) => (
                  <Space key={field.key} align="baseline">
                    <Form.Item name={[field.name, "name"]} rules={[{ required: true, message: t("deploy.envNameRequired") }, { pattern: /^[A-Za-z_][A-Za-z0-9_]*$/, message: t("deploy.envNameRule") }]} noStyle={false} style={{ marginBottom: 0 }}>
                      <Input placeholder="HCCL_IF_IP" style={{ width: 260, fontFamily: "monospace" }} />
                    </Form.Item>
                    <Form.Item name={[field.name, "value"]} style={{ marginBottom: 0 }}>
                      <Input placeholder="192.168.13.33" style={{ width: 320, fontFamily: "monospace" }} />
                    </Form.Item>
                    <MinusCircleOutlined aria-label={t("common.remove")} onClick={() => remove(field.name)} />
                  </Space>
                ))}
                <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ name: "", value: "" })}>{t("deploy.addEnv")}</Button>
              </Space>
            )}
          </Form.List>
        </Form.Item>
        <Space size="large" wrap>
          <Form.Item name="distributed" valuePropName="checked">
            <Checkbox>{t("deploy.distributed")}</Checkbox>
          </Form.Item>
          <Form.Item label={t("deploy.restartOnError")} name="restart_on_error" valuePropName="checked">
            <Switch />
          </Form.Item>
        </Space>
        <Space>
          <Button type="primary" htmlType="submit" loading={busy}>{t(id ? "common.save" : "deploy.submit")}</Button>
          <Button onClick={() => navigate("/deployments")}>{t("common.cancel")}</Button>
        </Space>
      </Form>
    </Card>
  );
}
