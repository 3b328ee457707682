// The app's frame shared by both pages: Ant Design's theme (light or dark, remembered), its
// locale following the UI language.
import { App as AntApp, ConfigProvider, theme } from "antd";
import enUS from "antd/locale/en_US";
import zhCN from "antd/locale/zh_CN";
import { createContext, useContext, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";

interface ThemeState {
  dark: boolean;
  setDark: (dark: boolean) => void;
}
const ThemeContext = createContext<ThemeState>({ dark: false, setDark: () => {} });
export const useThemeMode = () => useContext(ThemeContext);

function initialDark(): boolean {
  const saved = localStorage.getItem("tandem.dark");
  if (saved !== null) return saved === "1";
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}

export function Themed({ children }: { children: ReactNode }) {
  const { i18n } = useTranslation();
  const [dark, setDarkState] = useState(initialDark);
  const setDark = (value: boolean) => {
    localStorage.setItem("tandem.dark", value ? "1" : "0");
    setDarkState(value);
  };
  return (
    <ThemeContext.Provider value={{ dark, setDark }}>
      <ConfigProvider
        locale={i18n.language === "zh" ? zhCN : enUS}
        theme={{ algorithm: dark ? theme.darkAlgorithm : theme.defaultAlgorithm, token: { colorPrimary: "#2f6fed" } }}
      >
        <AntApp>{children}</AntApp>
      </ConfigProvider>
    </ThemeContext.Provider>
  );
}
