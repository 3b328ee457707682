// Workers live: state, IP, CPU and memory use, labels, devices; maintenance on/off.
import { App, Progress, Space, Switch, Table, Tag, Typography } from "antd";
import { useTranslation } from "react-i18next";
import StateTag from "../components/StateTag";
import { api, type Device, type Worker } from "../lib/api";
import { bytes } from "../lib/format";
import { useWatch } from "../lib/useWatch";

export default function Workers() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const workers = useWatch<Worker>("/v2/workers");
  const devices = useWatch<Device>("/v2/gpu-devices");
  const setMaintenance = async (w: Worker, on: boolean) => {
    try {
      await api("PUT", `/v2/workers/${w.id}`, { maintenance: on });
    } catch (e) {
      message.error(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <Space direction="vertical" style={{ width: "100%" }}>
      <Typography.Title level={3} style={{ margin: 0 }}>{t("workers.title")}</Typography.Title>
      <Table<Worker>
        rowKey="id"
        loading={!workers.loaded}
        pagination={false}
        dataSource={[...workers.rows].sort((a, b) => a.name.localeCompare(b.name))}
        columns={[
          { title: t("workers.name"), dataIndex: "name" },
          { title: t("workers.state"), render: (_, w) => <StateTag state={w.state} message={w.state_message} /> },
          { title: t("workers.ip"), dataIndex: "ip" },
          {
            title: t("workers.cpu"),
            render: (_, w) => <Progress percent={Math.round(w.status?.cpu?.utilization_rate ?? 0)} size="small" style={{ width: 120 }} />,
          },
          {
            title: t("workers.memory"),
            render: (_, w) => {
              const m = w.status?.memory;
              const rate = m?.total ? ((m.used ?? 0) / m.total) * 100 : 0;
              return <Space direction="vertical" size={0}><Progress percent={Math.round(rate)} size="small" style={{ width: 120 }} /><Typography.Text type="secondary" style={{ fontSize: 12 }}>{bytes(m?.used)} / {bytes(m?.total)}</Typography.Text></Space>;
            },
          },
          { title: t("workers.labels"), render: (_, w) => Object.entries(w.labels ?? {}).map(([k, v]) => <Tag key={k}>{k}={v}</Tag>) },
          { title: t("workers.devices"), render: (_, w) => devices.rows.filter((d) => d.worker_id === w.id).map((d) => <Tag key={d.id}>{d.type}:{d.index}</Tag>) },
          { title: t("workers.maintenance"), render: (_, w) => <Switch size="small" checked={!!w.maintenance} onChange={(on) => setMaintenance(w, on)} /> },
        ]}
      />
    </Space>
  );
}
