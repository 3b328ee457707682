// English and Simplified Chinese, complete (locales.test.ts checks that both have the same
// keys). The language is the browser's by default; the header's switch remembers a choice.
import i18n from "i18next";
import { initReactI18next } from "react-i18next";
import en from "./locales/en";
import zh from "./locales/zh";

export const LANGUAGES = [
  { code: "en", label: "English" },
  { code: "zh", label: "简体中文" },
] as const;

export function initialLanguage(): string {
  const saved = localStorage.getItem("tandem.language");
  if (saved === "en" || saved === "zh") return saved;
  return navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en";
}

export function setLanguage(code: string) {
  localStorage.setItem("tandem.language", code);
  void i18n.changeLanguage(code);
  document.documentElement.lang = code === "zh" ? "zh-CN" : "en";
}

void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, zh: { translation: zh } },
  lng: initialLanguage(),
  fallbackLng: "en",
  interpolation: { escapeValue: false },
});
document.documentElement.lang = i18n.language === "zh" ? "zh-CN" : "en";

export default i18n;
