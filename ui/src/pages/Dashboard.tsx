// Dashboard: workers, devices, deployments and instances by state (live), cluster CPU and
// memory use, and from GET /v2/dashboard (the gateway's last 15 minutes in 10 s steps) the
// request rate, output tokens/s and TTFT p50/p95 as charts, and the busiest deployments.
import { Card, Col, Progress, Row, Space, Statistic, Table, Tag, Typography } from "antd";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { api, type Deployment, type Device, type Instance, type Worker } from "../lib/api";
import { useWatch } from "../lib/useWatch";

interface Point { time: number; requests_per_s: number; output_tokens_per_s: number; ttft_p50_ms: number | null; ttft_p95_ms: number | null }
interface Busiest { model_name: string; requests: number; output_tokens: number }
interface DashboardData { step_s: number; points: Point[]; busiest: Busiest[] }

function countBy<T>(rows: T[], key: (row: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(key(row), (counts.get(key(row)) ?? 0) + 1);
  return [...counts.entries()].sort();
}

function CountCard({ title, total, by }: { title: string; total: number; by: [string, number][] }) {
  const { t } = useTranslation();
  return (
    <Card size="small">
      <Statistic title={title} value={total} />
      <Space size={4} wrap>
        {by.map(([state, n]) => <Tag key={state}>{t(`state.${state}`, { defaultValue: state })}: {n}</Tag>)}
      </Space>
    </Card>
  );
}

export default function Dashboard() {
  const { t } = useTranslation();
  const workers = useWatch<Worker>("/v2/workers");
  const devices = useWatch<Device>("/v2/gpu-devices");
  const models = useWatch<Deployment>("/v2/models");
  const instances = useWatch<Instance>("/v2/model-instances");
  const [data, setData] = useState<DashboardData | null>(null);
  useEffect(() => {
    let stopped = false;
    const load = () => api<DashboardData>("GET", "/v2/dashboard").then((d) => !stopped && setData(d), () => {});
    load();
    // A time series: refreshed each step (the live tables above come from watch streams).
    const timer = setInterval(load, 10_000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  const cpu = workers.rows.map((w) => w.status?.cpu?.utilization_rate).filter((v): v is number => v !== undefined);
  const memTotal = workers.rows.reduce((s, w) => s + (w.status?.memory?.total ?? 0), 0);
  const memUsed = workers.rows.reduce((s, w) => s + (w.status?.memory?.used ?? 0), 0);
  const points = (data?.points ?? []).map((p) => ({ ...p, label: new Date(p.time * 1000).toLocaleTimeString() }));
  const chart = (title: string, lines: { key: keyof Point; name: string; color: string }[], unit: string) => (
    <Card size="small" title={title}>
      <ResponsiveContainer width="100%" height={200}>
        <LineChart data={points}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="label" minTickGap={40} fontSize={11} />
          <YAxis fontSize={11} unit={unit} />
          <Tooltip />
          <Legend />
          {lines.map((l) => <Line key={l.key} type="monotone" dataKey={l.key} name={l.name} stroke={l.color} dot={{ r: 2 }} isAnimationActive={false} connectNulls />)}
        </LineChart>
      </ResponsiveContainer>
    </Card>
  );
  return (
    <Space direction="vertical" style={{ width: "100%" }} size="middle">
      <Typography.Title level={3} style={{ margin: 0 }}>{t("dashboard.title")}</Typography.Title>
      <Row gutter={[16, 16]}>
        <Col xs={12} lg={6}><CountCard title={t("menu.workers")} total={workers.rows.length} by={countBy(workers.rows, (w) => w.state)} /></Col>
        <Col xs={12} lg={6}><CountCard title={t("menu.devices")} total={devices.rows.length} by={countBy(devices.rows, (d) => d.type)} /></Col>
        <Col xs={12} lg={6}><CountCard title={t("menu.deployments")} total={models.rows.length} by={countBy(models.rows, (m) => (m.replicas > 0 ? "running" : "stopped"))} /></Col>
        <Col xs={12} lg={6}><CountCard title={t("dashboard.instances")} total={instances.rows.length} by={countBy(instances.rows, (i) => i.state)} /></Col>
      </Row>
      <Row gutter={[16, 16]}>
        <Col xs={24} lg={12}>
          <Card size="small" title={t("dashboard.cpu")}>
            <Progress percent={cpu.length ? Math.round(cpu.reduce((a, b) => a + b, 0) / cpu.length) : 0} />
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card size="small" title={t("dashboard.memory")}>
            <Progress percent={memTotal ? Math.round((memUsed / memTotal) * 100) : 0} />
          </Card>
        </Col>
      </Row>
      <Row gutter={[16, 16]}>
        <Col xs={24} xl={8}>{chart(t("dashboard.requestRate"), [{ key: "requests_per_s", name: t("dashboard.requestsPerSecond"), color: "#2f6fed" }], "")}</Col>
        <Col xs={24} xl={8}>{chart(t("dashboard.outputTokens"), [{ key: "output_tokens_per_s", name: t("dashboard.tokensPerSecond"), color: "#13a36b" }], "")}</Col>
        <Col xs={24} xl={8}>{chart(t("dashboard.ttft"), [{ key: "ttft_p50_ms", name: "p50", color: "#e58b00" }, { key: "ttft_p95_ms", name: "p95", color: "#d4380d" }], " ms")}</Col>
      </Row>
      <Card size="small" title={t("dashboard.busiest")}>
        <Table<Busiest>
          rowKey="model_name"
          size="small"
          pagination={false}
          dataSource={data?.busiest ?? []}
          columns={[
            { title: t("deployments.name"), dataIndex: "model_name" },
            { title: t("dashboard.requests15m"), dataIndex: "requests" },
            { title: t("dashboard.outputTokens15m"), dataIndex: "output_tokens" },
          ]}
        />
      </Card>
    </Space>
  );
}
