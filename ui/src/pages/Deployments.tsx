// Deployments (/v2/models) live: replicas ready/total with −/+, state, actions; a row expands
// into its instances (and a deployment across machines into one row per subordinate worker,
// each with its own state); View logs follows an instance's log.
import {
  CaretRightOutlined, CopyOutlined, DeleteOutlined, EditOutlined, FileTextOutlined, MessageOutlined,
  MinusOutlined, PauseOutlined, PlusOutlined,
} from "@ant-design/icons";
import { App, Button, Drawer, Popconfirm, Space, Table, Tooltip, Typography } from "antd";
import { useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate } from "react-router-dom";
import LogViewer from "../components/LogViewer";
import StateTag from "../components/StateTag";
import { api, type Deployment, type Instance } from "../lib/api";
import { deploymentState, editableCopy } from "../lib/deployments";
import { useWatch } from "../lib/useWatch";

interface InstanceRow {
  key: string;
  instance: Instance;
  worker: string;
  devices: string;
  port?: number;
  state: string;
  message?: string;
  restarts?: number;
  subordinate: boolean;
  children?: InstanceRow[];
}

function instanceRows(instances: Instance[]): InstanceRow[] {
  return instances.map((i) => {
    const subordinates = i.distributed_servers?.subordinate_workers ?? [];
    const row: InstanceRow = {
      key: `i${i.id}`, instance: i, worker: `${i.worker_name ?? ""} ${i.worker_ip ? `(${i.worker_ip})` : ""}`,
      devices: (i.gpu_ids ?? []).join(", "), port: i.port, state: i.state, message: i.state_message,
      restarts: i.restart_count, subordinate: false,
    };
    if (subordinates.length > 0) {
      row.children = subordinates.map((s) => ({
        key: `i${i.id}-w${s.worker_id}`, instance: i, worker: `${s.worker_name ?? s.worker_id} ${s.worker_ip ? `(${s.worker_ip})` : ""}`,
        devices: "", state: s.state ?? "PENDING", message: s.state_message, subordinate: true,
      }));
    }
    return row;
  });
}

export default function Deployments() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const navigate = useNavigate();
  const models = useWatch<Deployment>("/v2/models");
  const instances = useWatch<Instance>("/v2/model-instances");
  const [logsOf, setLogsOf] = useState<Instance | null>(null);
  const byModel = useMemo(() => {
    const map = new Map<number, Instance[]>();
    for (const i of instances.rows) map.set(i.model_id, [...(map.get(i.model_id) ?? []), i]);
    return map;
  }, [instances.rows]);

  const setReplicas = async (d: Deployment, replicas: number) => {
    try {
      await api("PUT", `/v2/models/${d.id}`, { ...editableCopy(d), replicas: Math.max(0, replicas) });
    } catch (e) {
      message.error(e instanceof Error ? e.message : String(e));
    }
  };
  const remove = async (d: Deployment) => {
    try {
      await api("DELETE", `/v2/models/${d.id}`);
    } catch (e) {
      message.error(e instanceof Error ? e.message : String(e));
    }
  };

  const rows = [...models.rows].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <Space direction="vertical" style={{ width: "100%" }} size="middle">
      <Space style={{ justifyContent: "space-between", width: "100%" }}>
        <Typography.Title level={3} style={{ margin: 0 }}>{t("deployments.title")}</Typography.Title>
        <Button type="primary" icon={<PlusOutlined />} onClick={() => navigate("/deployments/new")}>
          {t("deployments.deploy")}
        </Button>
      </Space>
      {models.error && <Typography.Text type="danger">{models.error}</Typography.Text>}
      <Table<Deployment>
        rowKey="id"
        loading={!models.loaded}
        dataSource={rows}
        pagination={false}
        expandable={{
          rowExpandable: (d) => (byModel.get(d.id) ?? []).length > 0,
          expandedRowRender: (d) => (
            <Table<InstanceRow>
              size="small"
              pagination={false}
              dataSource={instanceRows(byModel.get(d.id) ?? [])}
              expandable={{ defaultExpandAllRows: true }}
              columns={[
                { title: t("instances.name"), render: (_, r) => (r.subordinate ? t("instances.subordinate") : r.instance.name) },
                { title: t("instances.worker"), dataIndex: "worker" },
                { title: t("instances.devices"), dataIndex: "devices" },
                { title: t("instances.port"), dataIndex: "port" },
                { title: t("instances.state"), render: (_, r) => <StateTag state={r.state} message={r.message} /> },
                { title: t("instances.restarts"), dataIndex: "restarts" },
                {
                  title: "",
                  render: (_, r) =>
                    r.subordinate ? null : (
                      <Button size="small" icon={<FileTextOutlined />} onClick={() => setLogsOf(r.instance)}>
                        {t("instances.viewLogs")}
                      </Button>
                    ),
                },
              ]}
            />
          ),
        }}
        columns={[
          { title: t("deployments.name"), dataIndex: "name", render: (name: string) => <Typography.Text strong>{name}</Typography.Text> },
          {
            title: t("deployments.backend"),
            render: (_, d) => `${d.backend || "tandem"}${d.backend_version ? ` ${d.backend_version}` : ""}`,
          },
          {
            title: t("deployments.replicas"),
            render: (_, d) => {
              const ready = (byModel.get(d.id) ?? []).filter((i) => i.state === "RUNNING").length;
              return (
                <Space size={4} data-testid={`replicas-${d.name}`}>
                  <Button size="small" icon={<MinusOutlined />} aria-label={t("deployments.fewer")} disabled={d.replicas === 0} onClick={() => setReplicas(d, d.replicas - 1)} />
                  <span style={{ minWidth: 36, textAlign: "center", display: "inline-block" }} data-testid={`replicas-count-${d.name}`}>
                    {ready}/{d.replicas}
                  </span>
                  <Button size="small" icon={<PlusOutlined />} aria-label={t("deployments.more")} onClick={() => setReplicas(d, d.replicas + 1)} />
                </Space>
              );
            },
          },
          {
            title: t("deployments.state"),
            render: (_, d) => {
              const { state, message: why } = deploymentState(d, byModel.get(d.id) ?? []);
              return <span data-testid={`state-${d.name}`}><StateTag state={state} message={why} /></span>;
            },
          },
          {
            title: t("deployments.actions"),
            render: (_, d) => (
              <Space size={4} wrap>
                <Tooltip title={t("deployments.edit")}><Button size="small" icon={<EditOutlined />} aria-label={t("deployments.edit")} onClick={() => navigate(`/deployments/${d.id}/edit`)} /></Tooltip>
                {d.replicas === 0 ? (
                  <Tooltip title={t("deployments.start")}><Button size="small" icon={<CaretRightOutlined />} aria-label={t("deployments.start")} onClick={() => setReplicas(d, 1)} /></Tooltip>
                ) : (
                  <Tooltip title={t("deployments.stop")}><Button size="small" icon={<PauseOutlined />} aria-label={t("deployments.stop")} onClick={() => setReplicas(d, 0)} /></Tooltip>
                )}
                <Tooltip title={t("deployments.clone")}><Button size="small" icon={<CopyOutlined />} aria-label={t("deployments.clone")} onClick={() => navigate(`/deployments/new?clone=${d.id}`)} /></Tooltip>
                <Tooltip title={t("deployments.openPlayground")}><Button size="small" icon={<MessageOutlined />} aria-label={t("deployments.openPlayground")} onClick={() => navigate(`/playground?model=${encodeURIComponent(d.name)}`)} /></Tooltip>
                <Popconfirm title={t("deployments.deleteConfirm", { name: d.name })} onConfirm={() => remove(d)} okText={t("common.delete")} cancelText={t("common.cancel")}>
                  <Button size="small" danger icon={<DeleteOutlined />} aria-label={t("common.delete")} />
                </Popconfirm>
              </Space>
            ),
          },
        ]}
      />
      <Drawer
        open={logsOf !== null}
        onClose={() => setLogsOf(null)}
        width="80%"
        title={logsOf ? t("logs.title", { name: logsOf.name }) : ""}
        destroyOnHidden
      >
        {logsOf && <LogViewer instance={logsOf} />}
      </Drawer>
    </Space>
  );
}
