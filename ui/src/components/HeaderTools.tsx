// Language and dark-mode switches, in both pages' headers.
import { MoonOutlined, SunOutlined } from "@ant-design/icons";
import { Segmented, Select, Space, Tooltip } from "antd";
import { useTranslation } from "react-i18next";
import { LANGUAGES, setLanguage } from "../i18n";
import { useThemeMode } from "../theme";

export default function HeaderTools() {
  const { t, i18n } = useTranslation();
  const { dark, setDark } = useThemeMode();
  return (
    <Space>
      <Select
        aria-label={t("header.language")}
        size="small"
        value={i18n.language}
        onChange={setLanguage}
        options={LANGUAGES.map((l) => ({ value: l.code, label: l.label }))}
        style={{ width: 110 }}
      />
      <Tooltip title={t("header.darkMode")}>
        <Segmented
          data-testid="dark-mode"
          size="small"
          value={dark ? "dark" : "light"}
          onChange={(v) => setDark(v === "dark")}
          options={[
            { value: "light", icon: <SunOutlined />, title: t("header.light") },
            { value: "dark", icon: <MoonOutlined />, title: t("header.dark") },
          ]}
        />
      </Tooltip>
    </Space>
  );
}
