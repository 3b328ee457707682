// Devices (/v2/gpu-devices) live: id, worker, type, vendor, memory.
import { Space, Table, Tag, Typography } from "antd";
import { useTranslation } from "react-i18next";
import type { Device } from "../lib/api";
import { bytes } from "../lib/format";
import { useWatch } from "../lib/useWatch";

export default function Devices() {
  const { t } = useTranslation();
  const devices = useWatch<Device>("/v2/gpu-devices");
  return (
    <Space direction="vertical" style={{ width: "100%" }}>
      <Typography.Title level={3} style={{ margin: 0 }}>{t("devices.title")}</Typography.Title>
      <Table<Device>
        rowKey="id"
        loading={!devices.loaded}
        pagination={false}
        dataSource={[...devices.rows].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))}
        columns={[
          { title: t("devices.name"), dataIndex: "name" },
          { title: t("devices.worker"), render: (_, d) => `${d.worker_name}${d.worker_ip ? ` (${d.worker_ip})` : ""}` },
          { title: t("devices.type"), render: (_, d) => <Tag>{d.type}</Tag> },
          { title: t("devices.vendor"), render: (_, d) => d.vendor ?? "-" },
          { title: t("devices.index"), dataIndex: "index" },
          { title: t("devices.memory"), render: (_, d) => (d.memory_total ? `${bytes(d.memory_used ?? 0)} / ${bytes(d.memory_total)}` : "-") },
        ]}
      />
    </Space>
  );
}
