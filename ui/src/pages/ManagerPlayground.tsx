// The console's playground: through the manager's /v1 gateway, authenticated by the session.
import { Typography } from "antd";
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router-dom";
import Playground from "../components/Playground";

const noHeaders = () => ({});

export default function ManagerPlayground() {
  const { t } = useTranslation();
  const [search] = useSearchParams();
  return (
    <>
      <Typography.Title level={3} style={{ marginTop: 0 }}>{t("playground.title")}</Typography.Title>
      <Playground headers={noHeaders} initialModel={search.get("model")} codeNeedsKey />
    </>
  );
}
