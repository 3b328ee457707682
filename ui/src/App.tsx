// The console's frame: login gate, side menu, header (language, dark mode, user, logout), pages.
import {
  ApiOutlined, AppstoreOutlined, CloudServerOutlined, DashboardOutlined, DatabaseOutlined,
  KeyOutlined, LogoutOutlined, MessageOutlined, UserOutlined,
} from "@ant-design/icons";
import { Button, Layout, Menu, Space, Spin, Typography } from "antd";
import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { Navigate, Route, Routes, useLocation, useNavigate } from "react-router-dom";
import HeaderTools from "./components/HeaderTools";
import { api, setOnUnauthenticated, type User } from "./lib/api";
import ApiKeys from "./pages/ApiKeys";
import Backends from "./pages/Backends";
import Dashboard from "./pages/Dashboard";
import DeployForm from "./pages/DeployForm";
import Deployments from "./pages/Deployments";
import Devices from "./pages/Devices";
import Login from "./pages/Login";
import ManagerPlayground from "./pages/ManagerPlayground";
import Workers from "./pages/Workers";
import { Themed } from "./theme";

const { Header, Sider, Content } = Layout;

function Console({ me, onLogout }: { me: User; onLogout: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const location = useLocation();
  const section = "/" + (location.pathname.split("/")[1] || "dashboard");
  const items = [
    { key: "/dashboard", icon: <DashboardOutlined />, label: t("menu.dashboard") },
    { key: "/deployments", icon: <AppstoreOutlined />, label: t("menu.deployments") },
    { key: "/playground", icon: <MessageOutlined />, label: t("menu.playground") },
    { key: "/workers", icon: <CloudServerOutlined />, label: t("menu.workers") },
    { key: "/devices", icon: <DatabaseOutlined />, label: t("menu.devices") },
    { key: "/backends", icon: <ApiOutlined />, label: t("menu.backends") },
    { key: "/api-keys", icon: <KeyOutlined />, label: t("menu.apiKeys") },
  ];
  return (
    <Layout style={{ minHeight: "100vh" }}>
      <Sider breakpoint="lg" collapsedWidth={56} width={200} theme="dark">
        <div style={{ color: "#fff", fontWeight: 700, fontSize: 18, padding: "16px 20px" }}>tandem</div>
        <Menu theme="dark" mode="inline" selectedKeys={[section]} items={items} onClick={(e) => navigate(e.key)} />
      </Sider>
      <Layout>
        <Header style={{ display: "flex", justifyContent: "flex-end", alignItems: "center", gap: 16, paddingInline: 24 }}>
          <HeaderTools />
          <Space>
            <UserOutlined style={{ color: "#fff" }} />
            <Typography.Text style={{ color: "#fff" }} data-testid="current-user">{me.username}</Typography.Text>
          </Space>
          <Button size="small" icon={<LogoutOutlined />} onClick={onLogout}>{t("header.logout")}</Button>
        </Header>
        <Content style={{ padding: 24 }}>
          <Routes>
            <Route path="/dashboard" element={<Dashboard />} />
            <Route path="/deployments" element={<Deployments />} />
            <Route path="/deployments/new" element={<DeployForm />} />
            <Route path="/deployments/:id/edit" element={<DeployForm />} />
            <Route path="/playground" element={<ManagerPlayground />} />
            <Route path="/workers" element={<Workers />} />
            <Route path="/devices" element={<Devices />} />
            <Route path="/backends" element={<Backends />} />
            <Route path="/api-keys" element={<ApiKeys me={me} />} />
            <Route path="*" element={<Navigate to="/dashboard" replace />} />
          </Routes>
        </Content>
      </Layout>
    </Layout>
  );
}

function Gate() {
  const [me, setMe] = useState<User | null | undefined>(undefined);  // undefined: asking
  const navigate = useNavigate();
  const location = useLocation();
  const refresh = useCallback(() => {
    api<{ user: User | null }>("GET", "/auth/session").then((s) => setMe(s.user), () => setMe(null));
  }, []);
  useEffect(() => {
    setOnUnauthenticated(() => setMe(null));
    refresh();
  }, [refresh]);
  if (me === undefined) return <Spin fullscreen />;
  if (me === null) {
    return (
      <Login
        onLoggedIn={() => {
          refresh();
          if (location.pathname === "/login") navigate("/dashboard");
        }}
      />
    );
  }
  const logout = async () => {
    await api("POST", "/auth/logout").catch(() => undefined);
    setMe(null);
  };
  return <Console me={me} onLogout={logout} />;
}

export default function App() {
  return (
    <Themed>
      <Gate />
    </Themed>
  );
}
